package retry

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Defaults of a Policy, used where a field is left at its zero value.
const (
	DefaultMaxRetries    = 2
	DefaultBase          = time.Second
	DefaultMax           = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second

	// MaxRetriesCap is the most retries a policy ever makes, whatever
	// MaxRetries says: a mistyped count cannot turn one call into an
	// unbounded series of requests.
	MaxRetriesCap = 16
)

// Class says which failures of an operation may be sent again.
//
// The zero value is Billed, the most careful class that still honours a rate
// limiter's Retry-After.
type Class uint8

const (
	// Billed operations cost credits (IP and domain lookups) or must report
	// a failure at once (health). Only a 429 that carries a usable
	// Retry-After is sent again: the rate limiter turned it away before any
	// work was done, so nothing is charged twice. A network failure, a 5xx
	// and everything else is returned at once.
	Billed Class = iota
	// Standard operations are free to repeat (account, export listings and
	// meta, the API leg of a download, opening a stream). A 429 with a usable
	// Retry-After, a 500, 502, 503 or 504, and a network failure or timeout
	// before any response arrived (except a TLS error) are sent again.
	Standard
	// Never is for what must not be repeated at all: the storage leg of a
	// download, and anything after a 2xx response's headers arrived.
	Never
)

// String returns "billed", "standard" or "never".
func (c Class) String() string {
	switch c {
	case Billed:
		return "billed"
	case Standard:
		return "standard"
	case Never:
		return "never"
	}
	return "unknown"
}

// StopReason says why an attempt loop stopped sending. The empty
// StopReason means the loop has not stopped for a failure: the last
// attempt succeeded, or it is going to retry.
type StopReason string

// The reasons a call stops retrying.
const (
	// NotRetryable: the class does not send this outcome again (a 4xx other
	// than a usable 429, a 501 or 505-599, a 3xx on a JSON endpoint, a TLS
	// error, anything in the Never class).
	NotRetryable StopReason = "not_retryable"
	// RateLimitedWithoutRetryAfter: a 429 without a usable Retry-After
	// (the monthly budget is spent, or too many streams are open).
	RateLimitedWithoutRetryAfter StopReason = "rate_limited_without_retry_after"
	// RetryAfterExceedsMax: the server asked for a wait longer than
	// MaxRetryAfter; the error is returned at once, whatever MaxRetries says.
	RetryAfterExceedsMax StopReason = "retry_after_exceeds_max"
	// RetryAfterExceedsDeadline: waiting out the server's Retry-After would
	// pass the caller's deadline. The wait is never shortened instead.
	RetryAfterExceedsDeadline StopReason = "retry_after_exceeds_deadline"
	// PacingExceedsDeadline: the client's rate-limit pacing would hold the
	// next attempt past the caller's deadline; the call stops at once,
	// without waiting and without sending it.
	PacingExceedsDeadline StopReason = "pacing_exceeds_deadline"
	// TeamShareExceedsDeadline: as PacingExceedsDeadline, where the hold
	// is for the team: the client's share of a rate limit that other
	// clients of its team draw on too (other keys, processes or hosts)
	// is less than the limit's rate, and its turn comes after the
	// caller's deadline. Nothing was sent.
	TeamShareExceedsDeadline StopReason = "team_share_exceeds_deadline"
	// BackoffExceedsDeadline: the backoff wait would pass the caller's
	// deadline.
	BackoffExceedsDeadline StopReason = "backoff_exceeds_deadline"
	// AttemptsExhausted: MaxRetries retries were sent already.
	AttemptsExhausted StopReason = "attempts_exhausted"
	// BudgetExhausted: the next wait would make the call's waits add up to
	// more than MaxTotalDelay.
	BudgetExhausted StopReason = "budget_exhausted"
	// MayHaveBeenProcessed: a billed request failed in a way that leaves the
	// outcome unknown (it was written, or a 5xx came back), so the API may
	// have done the work and charged for it; it is not sent again.
	MayHaveBeenProcessed StopReason = "may_have_been_processed"
	// ContextDone: the caller's context was cancelled or expired.
	ContextDone StopReason = "context_done"
	// QuotaExhausted: the client-wide retry quota has no tokens left.
	QuotaExhausted StopReason = "quota_exhausted"
	// HookFailed: the caller's check of a response (a response hook, a
	// go-retryablehttp ResponseHandler) returned an error.
	HookFailed StopReason = "hook_failed"
	// CreditBudgetExhausted: the client's credit budget (a
	// synthient.CreditBudget) had too few credits left for the next
	// request, which was not sent.
	CreditBudgetExhausted StopReason = "credit_budget_exhausted"
	// CreditBudgetFailed: the client's credit budget could not reserve the
	// next request's cost (its store failed), so the request was not sent.
	CreditBudgetFailed StopReason = "credit_budget_failed"
)

// Policy is the configuration of a retry class: how many retries, how
// long to wait between them, and which waits are too long. A Policy is a
// plain value; it is safe for concurrent use as long as it is not modified.
//
// The zero value is a usable Billed policy with no retries; New returns a
// policy with the defaults.
type Policy struct {
	// Class decides which outcomes may be sent again.
	Class Class
	// MaxRetries is the number of retries after the first attempt.
	// Zero or a negative value turns retrying off; more than
	// MaxRetriesCap is read as MaxRetriesCap.
	MaxRetries int
	// Base and Max shape the backoff before retry k (k = 0 for the first
	// retry): min(Base*2^k, Max), of which a uniformly drawn 75% to 100% is
	// waited. Zero or negative means DefaultBase and DefaultMax; a Max
	// below Base is read as Base.
	Base, Max time.Duration
	// MaxRetryAfter is the longest Retry-After that is waited out; a
	// longer one stops the call at once. Zero or negative means
	// DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// MaxTotalDelay, if positive, bounds the sum of all waits of one call:
	// retrying stops when the next wait would make them add up to more.
	// Zero means no budget.
	MaxTotalDelay time.Duration
	// Rand returns a draw in [0, 1] for the jitter. Nil means math/rand/v2.
	// An unusable draw (NaN, infinite, outside [0, 1]) means the longest
	// wait, never a shorter one.
	Rand func() float64
	// Now is the clock for deadline checks and HTTP-date Retry-After
	// values. Nil means time.Now.
	Now func() time.Time
	// Quota, if not nil, is a retry quota shared by every call of this
	// policy: each retry takes tokens from it and a call stops with
	// QuotaExhausted when it is empty.
	Quota *Quota
}

// New returns a Policy of class c with the default retry count, backoff and
// maximum Retry-After.
func New(c Class) Policy {
	return Policy{
		Class:         c,
		MaxRetries:    DefaultMaxRetries,
		Base:          DefaultBase,
		Max:           DefaultMax,
		MaxRetryAfter: DefaultMaxRetryAfter,
	}
}

// Retries returns the number of retries the policy actually makes:
// MaxRetries brought inside [0, MaxRetriesCap].
func (p *Policy) Retries() int {
	return min(max(p.MaxRetries, 0), MaxRetriesCap)
}

func (p *Policy) base() time.Duration {
	if p.Base <= 0 {
		return DefaultBase
	}
	return p.Base
}

func (p *Policy) maxBackoff() time.Duration {
	m := p.Max
	if m <= 0 {
		m = DefaultMax
	}
	return max(m, p.base())
}

func (p *Policy) maxRetryAfter() time.Duration {
	if p.MaxRetryAfter <= 0 {
		return DefaultMaxRetryAfter
	}
	return p.MaxRetryAfter
}

func (p *Policy) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Ceiling returns b(k) = min(Base*2^k, Max), the longest backoff before
// retry k (k = 0 for the first retry). It never overflows.
func (p *Policy) Ceiling(k int) time.Duration {
	b, m := p.base(), p.maxBackoff()
	for i := 0; i < k && b < m; i++ {
		if b > m/2 {
			return m
		}
		b *= 2
	}
	return min(b, m)
}

// Backoff returns the jittered backoff before retry k: a duration drawn
// uniformly from [0.75*b(k), b(k)] with the policy's randomness. An
// unusable draw gives b(k), the longest wait.
func (p *Policy) Backoff(k int) time.Duration {
	b := p.Ceiling(k)
	var u float64
	if p.Rand != nil {
		u = p.Rand()
	} else {
		u = rand.Float64() //nolint:gosec // jitter: spreading retries needs no unpredictable numbers
	}
	if math.IsNaN(u) || u < 0 || u > 1 {
		u = 1
	}
	quarter := b / 4
	// The float product can round above quarter for huge durations.
	return b - quarter + min(time.Duration(u*float64(quarter)), quarter)
}

// Failure describes a request that got no response, as far as the policy
// needs to know.
type Failure struct {
	// NotSent reports that the request provably never left the client
	// (DNS, dial or TLS handshake failure). When false, the request may
	// have reached the server: the outcome is unknown.
	NotSent bool
	// TLS reports a TLS failure (certificate, protocol), never retried.
	TLS bool
	// Timeout reports that a connect, read or write wait ran out.
	Timeout bool
	// Malformed reports that the server answered with bytes that are not
	// HTTP (a bad status line, header line or Content-Length): the request
	// reached it, and sending it again would get the same answer. It is
	// never retried, and the error's text quotes the server's bytes (a
	// redirect's Location, say): do not show it.
	Malformed bool
}

// Attempt is the outcome of one attempt.
type Attempt struct {
	// Status is the response's status code, or 0 when Err is set.
	Status int
	// RetryAfter holds the response's Retry-After field values.
	RetryAfter []string
	// Date is the response's Date field value, the reference for an
	// HTTP-date Retry-After; empty means the policy's clock.
	Date string
	// Err is the transport error when no response arrived.
	Err error
	// Failure classifies Err (see ClassifyError).
	Failure Failure
	// Accepted marks a response the caller takes as the call's result
	// although its status is not 2xx, such as a redirect it follows itself.
	Accepted bool
	// HandlerErr is the error with which the caller's own check of the
	// response (a hook, go-retryablehttp's ResponseHandler) rejected it.
	// The response arrived, so the call stops with HookFailed: nothing is
	// sent again after a response the caller refused.
	HandlerErr error
}

// Decision is a policy's verdict on one attempt.
type Decision struct {
	// Retry reports that the request is to be sent again after Wait.
	Retry bool
	// Wait is the delay before the next attempt when Retry is set.
	Wait time.Duration
	// Reason says why the call stops; empty when Retry is set or the
	// attempt succeeded.
	Reason StopReason
	// Class is the policy's class.
	Class Class
	// Attempt is the 1-based number of the attempt just judged, and
	// MaxAttempts the most attempts the policy allows (1 + retries).
	Attempt, MaxAttempts int
	// RetryAfter is the response's parsed Retry-After, valid when
	// HasRetryAfter is set. A value too large for a Duration is the
	// largest Duration.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// TimeLeft is the time left before the caller's deadline when the
	// decision was made, valid when HasDeadline is set.
	TimeLeft    time.Duration
	HasDeadline bool
}

// Call tracks the retries of one call: how many were made and how much
// was waited. Create one per call with Policy.Start, or use the zero
// value after setting Policy. A Call is not safe for concurrent use.
type Call struct {
	Policy Policy
	// retries made so far, the sum of their waits, and the quota tokens
	// the last retry took.
	retries int
	spent   time.Duration
	taken   int
	settled bool // a success was credited to the quota
	last    Decision
}

// Start returns a Call that applies p to one call.
func (p Policy) Start() *Call {
	return &Call{Policy: p}
}

// Reset readies c for a new call with policy p, keeping no state of the
// previous one.
func (c *Call) Reset(p Policy) {
	*c = Call{Policy: p}
}

// Retries returns the number of retries decided so far.
func (c *Call) Retries() int { return c.retries }

// Spent returns the sum of the waits decided so far.
func (c *Call) Spent() time.Duration { return c.spent }

// Last returns the most recent decision.
func (c *Call) Last() Decision { return c.last }

// Decide judges one attempt and records the decision: whether to send
// the request again, after which wait, or why to stop. ctx is the
// caller's context; its deadline bounds the waits.
//
// An attempt whose response the caller rejected (HandlerErr) stops with
// HookFailed. A 2xx status, or an Accepted one, succeeds (Retry false, empty
// Reason); a 3xx is not retried. Otherwise the
// rules of the class apply, in this order: the context; whether the class
// may send this outcome again; a Retry-After above MaxRetryAfter (whatever
// MaxRetries says); the retry count; the wait, max(jittered backoff,
// Retry-After); the total-delay budget; the caller's deadline; the quota.
func (c *Call) Decide(ctx context.Context, a Attempt) Decision {
	p := &c.Policy
	d := Decision{
		Class:       p.Class,
		Attempt:     c.retries + 1,
		MaxAttempts: p.Retries() + 1,
	}
	now := p.now()
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		d.TimeLeft, d.HasDeadline = deadline.Sub(now), true
	}
	if a.Err == nil && len(a.RetryAfter) > 0 {
		d.RetryAfter, d.HasRetryAfter = ParseRetryAfter(a.RetryAfter, a.Date, now)
	}
	c.last = c.decide(ctx, a, d, now, deadline, hasDeadline)
	return c.last
}

// decide judges one attempt: a success settles the quota; otherwise the
// outcome must be one the class may send again (mayRetry), the wait must
// fit the budget and the deadline (canWait), and the quota must have the
// tokens.
func (c *Call) decide(ctx context.Context, a Attempt, d Decision, now, deadline time.Time, hasDeadline bool) Decision {
	if a.HandlerErr != nil {
		return stop(d, HookFailed)
	}
	if a.Err == nil && (a.Accepted || a.Status >= 200 && a.Status < 300) {
		c.settle()
		return d
	}
	if reason, ok := c.mayRetry(ctx, a, d); !ok {
		return stop(d, reason)
	}
	d.Wait = c.wait(d)
	if reason, ok := c.canWait(d, now, deadline, hasDeadline); !ok {
		return stop(d, reason)
	}
	if q := c.Policy.Quota; q != nil {
		n, ok := q.take(a)
		if !ok {
			return stop(d, QuotaExhausted)
		}
		c.taken = n
	}
	c.retries++
	c.spent += d.Wait
	d.Retry = true
	return d
}

// settle gives the quota back, once, what a call that succeeded owes it:
// its last retry's tokens, or the success credit when it needed none.
func (c *Call) settle() {
	q := c.Policy.Quota
	if q == nil || c.settled {
		return
	}
	c.settled = true // once: a success may be judged again
	if c.taken > 0 {
		q.refund(c.taken)
	} else if c.retries == 0 {
		q.refund(SuccessCredit)
	}
}

// mayRetry reports whether a failed attempt may be sent again at all, and
// if not, why: ctx is alive, the class allows the outcome, its Retry-After
// is not past the maximum, and retries are left.
func (c *Call) mayRetry(ctx context.Context, a Attempt, d Decision) (StopReason, bool) {
	p := &c.Policy
	if ctx.Err() != nil {
		return ContextDone, false
	}
	if reason, ok := c.retryable(a, d); !ok {
		return reason, false
	}
	if d.HasRetryAfter && d.RetryAfter > p.maxRetryAfter() {
		return RetryAfterExceedsMax, false
	}
	if c.retries >= p.Retries() {
		return AttemptsExhausted, false
	}
	return "", true
}

// wait returns the wait before the next attempt: the backoff, never
// shorter than the Retry-After.
func (c *Call) wait(d Decision) time.Duration {
	wait := c.Policy.Backoff(c.retries)
	if d.HasRetryAfter {
		wait = max(wait, d.RetryAfter)
	}
	return wait
}

// canWait reports whether d.Wait fits the call's delay budget and the
// deadline, and if not, why.
func (c *Call) canWait(d Decision, now, deadline time.Time, hasDeadline bool) (StopReason, bool) {
	if budget := c.Policy.MaxTotalDelay; budget > 0 && d.Wait > budget-c.spent {
		return BudgetExhausted, false
	}
	if left := deadline.Sub(now); hasDeadline && d.Wait > left {
		if d.HasRetryAfter && d.RetryAfter > left {
			return RetryAfterExceedsDeadline, false
		}
		return BackoffExceedsDeadline, false
	}
	return "", true
}

// retryable reports whether the class may send the outcome again, and if
// not, why.
func (c *Call) retryable(a Attempt, d Decision) (StopReason, bool) {
	class := c.Policy.Class
	if a.Err == nil && a.Status == 429 && !d.HasRetryAfter {
		return RateLimitedWithoutRetryAfter, false // in every class
	}
	if class == Never {
		return NotRetryable, false
	}
	if a.Err != nil {
		switch {
		case class == Billed && a.Failure.NotSent:
			return NotRetryable, false
		case class == Billed:
			return MayHaveBeenProcessed, false
		case a.Failure.TLS, a.Failure.Malformed:
			return NotRetryable, false
		}
		return "", true
	}
	switch a.Status {
	case 429:
		return "", true
	case 500, 502, 503, 504:
		if class == Billed {
			return MayHaveBeenProcessed, false
		}
		return "", true
	}
	return NotRetryable, false
}

func stop(d Decision, r StopReason) Decision {
	d.Retry, d.Reason = false, r
	return d
}
