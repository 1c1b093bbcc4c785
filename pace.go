// Rate-limit pacing: the client's model of the API's rate limits.
//
// The API counts each team's requests in token buckets (api-v4.md §5) and
// says in every answer where the bucket stands: RateLimit-Limit is the
// burst, RateLimit-Remaining the whole tokens left, RateLimit-Reset the
// seconds until the bucket is full again. The client keeps, per bucket, a
// rate.Limiter that models the server's: it learns the burst and the rate
// from those headers, spends a token for each attempt it lets go, and
// holds an attempt while the model says the bucket is empty, rather than
// send it into a 429. See docs/retries.md, "Rate-limit pacing".

package synthient

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/synthient-go/synthient/retry"
)

// bucket names the rate limit an operation counts against (api-v4.md §5).
// The zero value, noBucket, is never paced.
type bucket uint8

const (
	noBucket       bucket = iota // /health and the storage host: no rate limit
	lookupBucket                 // LookupIP and LookupIPs, which the API counts as one
	domainBucket                 // LookupDomain
	accountBucket                // Account
	streamBucket                 // opening a stream
	exportBucket                 // export listings and meta
	downloadBucket               // the API leg of a download
	bucketCount
)

var bucketNames = [bucketCount]string{"", "lookup", "domain", "account", "stream", "export", "download"}

// String returns the bucket's name for logs, such as "lookup".
func (b bucket) String() string { return bucketNames[b] }

// probeWait bounds how long an attempt waits for news of a bucket whose
// state is not known yet: the answer of an attempt in flight (a probe).
// After it the attempt goes anyway, as a probe of its own.
const probeWait = time.Second

// pacer holds the client's model of each rate-limit bucket. Its methods
// are safe for concurrent use. A nil *pacer paces nothing (WithoutPacing).
type pacer struct {
	now func() time.Time // the clock of the model; time.Now by default
	// maxHold is the longest turn an attempt waits for, the client's
	// MaxRetryAfter: the model is only a model, and a longer wait (from
	// headers that say a bucket refills a token an hour, say) is not taken
	// on its word: the attempt goes, and the server answers.
	maxHold time.Duration
	buckets [bucketCount]paceBucket
}

// newPacer returns a pacer that knows nothing yet, on clock now, that
// holds an attempt at most maxHold.
func newPacer(now func() time.Time, maxHold time.Duration) *pacer {
	return &pacer{now: now, maxHold: maxHold}
}

// paceBucket is the model of one bucket of the server's.
type paceBucket struct {
	mu sync.Mutex
	// lim models the server's bucket; nil until an answer carried the
	// RateLimit headers.
	lim *rate.Limiter
	// limit is the burst the server last said (RateLimit-Limit); rate the
	// refill rate, the largest deficit per second until full, (Limit -
	// Remaining) / Reset, of the answers since. The estimate is trusted
	// once an answer said the bucket was spent (Remaining 0, drained):
	// then the deficit is the whole burst, and the estimate exact up to
	// Reset's rounding. From a partly spent bucket it is too low, and
	// pacing by it would keep the bucket from ever being spent.
	limit   int
	rate    rate.Limit
	drained bool
	// unpaced records that the last answer had no RateLimit headers: a
	// server that sends none is never slowed.
	unpaced bool
	// holdUntil is when a 429 of a bucket with no trusted rate lets the
	// next attempt go.
	holdUntil time.Time
	// inflight counts the attempts let go and not yet answered or failed.
	inflight int
	// ended counts the attempts answered or failed so far: those that
	// ended during an attempt's flight are those the server may have
	// counted after it, and its answer's Remaining not (see observe).
	ended uint64
	// news is closed, and cleared, when the model changes; nil while no
	// attempt waits for it.
	news chan struct{}
}

// trusted reports whether the model's rate is known well enough to
// reserve tokens ahead. b.mu is held.
func (b *paceBucket) trusted() bool {
	return b.lim != nil && b.rate > 0 && b.drained
}

// notify wakes the attempts waiting for news. b.mu is held.
func (b *paceBucket) notify() {
	if b.news != nil {
		close(b.news)
		b.news = nil
	}
}

// step is what the model tells an attempt to do: go now (the zero
// value), wait and ask again (hold), wait a reservation out and go
// (res), or wait for the model's next news (news), at most until the
// probe wait ends.
type step struct {
	wait time.Duration
	res  *rate.Reservation
	news <-chan struct{}
	// sent reports that the attempt counts as in flight: it goes now or
	// after res, and is to be released (answer, release or cancel).
	sent bool
	// ended is the bucket's count of ended attempts when it was sent.
	ended uint64
	// late reports that the turn the attempt would get, after wait, is
	// past its deadline: nothing was reserved, and it does not go.
	late bool
}

// take decides, at now, what an attempt of the bucket does. patient
// reports that the attempt may still wait for a probe's answer; deadline,
// when not zero, is the attempt's: a turn after it is not reserved (a
// reservation given back from the middle of the queue would leave its
// turn unused).
func (b *paceBucket) take(now time.Time, patient bool, deadline time.Time, maxHold time.Duration) step {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.holdUntil) {
		return step{wait: b.holdUntil.Sub(now)}
	}
	switch {
	case b.unpaced:
		return b.send(step{})
	case b.lim != nil && b.lim.AllowN(now, 1):
		return b.send(step{}) // a token is left: no wait
	case b.trusted():
		return b.reserve(now, deadline, maxHold)
	case b.inflight < b.probes() || !patient:
		return b.send(step{}) // a probe
	}
	if b.news == nil {
		b.news = make(chan struct{})
	}
	return step{news: b.news}
}

// reserve reserves the attempt's turn, the next token of the model, unless
// it comes after deadline; one more than maxHold away is not waited for:
// the attempt goes at once. b.mu is held.
func (b *paceBucket) reserve(now, deadline time.Time, maxHold time.Duration) step {
	// In seconds first: a rate of a token an age would overflow a
	// Duration.
	secs := (1.5 - b.lim.TokensAt(now)) / float64(b.rate) // the lack of a token, and the margin
	if !(secs <= maxHold.Seconds()) {
		return b.send(step{})
	}
	wait := time.Duration(secs * float64(time.Second))
	if !deadline.IsZero() && now.Add(wait).After(deadline) {
		return step{wait: wait, late: true}
	}
	r := b.lim.ReserveN(now, 1)
	return b.send(step{wait: r.DelayFrom(now) + b.margin(), res: r})
}

// margin is what a reserved attempt waits past its turn: half the time
// the server takes to refill a token. Every reserved attempt waits it, so
// the attempts reach the server as often as without it, but each finds
// half a token more there than the model counts: a cushion for
// the jitter of timers and networks, which would otherwise turn an
// attempt that arrives early into a 429. b.mu is held.
func (b *paceBucket) margin() time.Duration {
	return time.Duration(float64(time.Second) / float64(b.rate) / 2)
}

// probes returns how many attempts may be in flight while the model has
// no token to give: maxProbes before anything is known of the bucket, so
// that a caller's first few concurrent calls (the CLI's 4 batches) are not
// made to wait a round trip, and one once the model holds the bucket
// spent. b.mu is held.
func (b *paceBucket) probes() int {
	if b.lim == nil {
		return maxProbes
	}
	return 1
}

// maxProbes is the most attempts that go while nothing is known of a
// bucket: fewer than any burst of the API's (api-v4.md §5, 10 at least).
const maxProbes = 4

// send counts the attempt of s in flight. b.mu is held.
func (b *paceBucket) send(s step) step {
	b.inflight++
	s.sent, s.ended = true, b.ended
	return s
}

// cancel gives back the reservation of an attempt that will not go.
func (b *paceBucket) cancel(s step, now time.Time) {
	b.mu.Lock()
	if s.res != nil {
		s.res.CancelAt(now)
	}
	b.inflight--
	b.notify()
	b.mu.Unlock()
}

// release ends the flight of an attempt that got no answer, or never
// went: the next attempt may probe.
func (b *paceBucket) release() {
	b.mu.Lock()
	b.inflight--
	b.ended++
	b.notify()
	b.mu.Unlock()
}

// answer learns from the answer of an attempt in flight, sent when the
// bucket had ended ended attempts, with header h at now. throttled
// reports a 429 with a usable Retry-After of retryAfter.
func (b *paceBucket) answer(now time.Time, h http.Header, ended uint64, throttled bool, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight--
	limit, remaining, reset, ok := rateLimitOf(h)
	if ok {
		// Answers can come in another order than the server counted
		// the requests: the attempts that ended meanwhile may have taken
		// tokens after this one, which remaining does not show.
		b.observe(now, limit, remaining, reset, int(min(b.ended-ended, uint64(limit))))
	}
	b.ended++
	// Headers the model cannot use (one missing, a limit of 0, not a
	// number) say no more than none: such a server is never slowed.
	b.unpaced = !ok
	if throttled {
		b.throttle(now, retryAfter)
	}
	b.notify()
}

// observe takes in one answer's RateLimit headers: the burst, the rate
// when this observation's deficit per second is the largest yet, whether
// the bucket was spent, and the tokens, brought down to remaining when the
// model holds more. Once the rate is trusted, never up: the model refills
// itself. Before, its rate is too low to refill it, and the attempts let
// go would empty it while the server's bucket stays full: remaining, less
// the attempts in flight and those that ended meanwhile (stale, the
// attempts that may have been counted after this one), raises it too.
// b.mu is held.
func (b *paceBucket) observe(now time.Time, limit, remaining int, reset time.Duration, stale int) {
	remaining = min(remaining, limit)
	target := remaining // the model's tokens at most
	switch {
	case b.lim == nil:
		b.lim, b.limit = rate.NewLimiter(0, limit), limit
		// The other probes in flight took no token of the model's, but
		// will take the server's.
		target = max(remaining-b.inflight, 0)
	case limit != b.limit:
		// A new limit: what was learnt of the old one no longer holds.
		b.lim.SetBurstAt(now, limit)
		b.limit, b.rate, b.drained = limit, 0, false
	}
	if d := limit - remaining; d > 0 && reset > 0 {
		if r := rate.Limit(float64(d) / reset.Seconds()); r > b.rate {
			b.rate = r
			b.lim.SetLimitAt(now, r)
		}
		b.drained = b.drained || remaining == 0
	}
	tokens := int(b.lim.TokensAt(now))
	switch {
	case tokens > target:
		b.lim.AllowN(now, tokens-target)
	case !b.trusted() && tokens < remaining-b.inflight-stale:
		// A negative n gives tokens back (rate.Limiter has no setter).
		b.lim.AllowN(now, tokens-(remaining-b.inflight-stale))
	}
}

// throttle takes in a 429 with a usable Retry-After: the model holds no
// token, and a trusted one gives up one more, to the server: the 429 says
// the attempts reach it before its tokens are back, and one token's time
// more between them lets it get ahead of them again. Without a trusted
// rate the bucket is held for retryAfter. b.mu is held.
func (b *paceBucket) throttle(now time.Time, retryAfter time.Duration) {
	if b.lim != nil {
		if n := int(b.lim.TokensAt(now)); n > 0 {
			b.lim.AllowN(now, n)
		}
	}
	if b.trusted() {
		b.lim.ReserveN(now, 1) // never acted on: a turn left to the server
		return
	}
	if until := now.Add(retryAfter); until.After(b.holdUntil) {
		b.holdUntil = until
	}
}

// rateLimitOf reads the RateLimit headers of h; ok reports that all three
// are present and usable (a positive limit). It allocates nothing.
func rateLimitOf(h http.Header) (limit, remaining int, reset time.Duration, ok bool) {
	limit, okL := headerInt(h, "Ratelimit-Limit")
	remaining, okR := headerInt(h, "Ratelimit-Remaining")
	seconds, okS := headerInt(h, "Ratelimit-Reset")
	if !okL || !okR || !okS || limit <= 0 {
		return 0, 0, 0, false
	}
	return limit, remaining, resetDuration(seconds), true
}

// holdError is the error of the pacing step for an attempt it did not
// send: the hold would pass ctx's deadline (ctxErr nil), or ctx ended
// during it. checkRetry takes it out of the *url.Error around it.
type holdError struct {
	ctxErr error
	wait   time.Duration
}

func (e *holdError) Error() string {
	if e.ctxErr != nil {
		return "rate-limit hold: " + e.ctxErr.Error()
	}
	return ErrRateLimitHold.Error()
}

// asHoldError returns the *holdError of err, nil if it has none.
func asHoldError(err error) *holdError {
	if err == nil {
		return nil // without a heap variable for errors.As
	}
	var h *holdError
	if errors.As(err, &h) {
		return h
	}
	return nil
}

// pace holds the loop's next attempt until the model of its bucket lets
// it go. It returns a *holdError, and leaves nothing in flight, when the
// hold would pass ctx's deadline or ctx ends during it.
func (l *attemptLoop) pace(ctx context.Context) error {
	p, b := l.c.pacer, l.op.bucket
	if p == nil || b == noBucket {
		return nil
	}
	bk := &p.buckets[b]
	deadline, _ := ctx.Deadline()
	var patience time.Time // end of the wait for a probe's answer
	for {
		now := p.now()
		if patience.IsZero() {
			patience = now.Add(probeWait)
		}
		s := bk.take(now, now.Before(patience), deadline, p.maxHold)
		if s.sent && s.wait <= 0 {
			l.paced, l.ended = true, s.ended
			return nil
		}
		if err := l.hold(ctx, bk, s, now, patience); err != nil {
			return err
		}
		if s.sent {
			l.paced, l.ended = true, s.ended
			return nil // the reservation is due
		}
	}
}

// hold waits what s asks: its wait (a reservation or a held bucket), or
// the bucket's news until patience. A wait that would pass ctx's deadline
// is not begun.
func (l *attemptLoop) hold(ctx context.Context, bk *paceBucket, s step, now, patience time.Time) error {
	wait := s.wait
	if s.news != nil {
		wait = patience.Sub(now)
	} else {
		if deadline, ok := ctx.Deadline(); ok && now.Add(wait).After(deadline) {
			l.undo(bk, s, now)
			return &holdError{wait: wait}
		}
		l.logPacing(ctx, wait, "")
		l.observeHold(wait, "")
	}
	if err := sleep(ctx, wait, s.news); err != nil {
		l.undo(bk, s, l.c.pacer.now())
		return &holdError{ctxErr: err, wait: wait}
	}
	return nil
}

// undo gives back what s took of bk, for an attempt that will not go.
func (l *attemptLoop) undo(bk *paceBucket, s step, now time.Time) {
	if s.sent {
		bk.cancel(s, now)
	}
}

// sleep waits d, or until news is closed; it returns ctx's error if ctx
// ends first.
func sleep(ctx context.Context, d time.Duration, news <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-news:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// learn gives the model of the loop's bucket what the attempt that just
// ended says: its answer's RateLimit headers and, for a 429 that will be
// waited out, its Retry-After; or, for an attempt without an answer, that
// it is no longer in flight.
func (l *attemptLoop) learn(resp *http.Response, throttled bool, retryAfter time.Duration) {
	if !l.paced {
		return
	}
	l.paced = false
	p := l.c.pacer
	bk := &p.buckets[l.op.bucket]
	if resp == nil {
		bk.release()
		return
	}
	bk.answer(p.now(), resp.Header, l.ended, throttled, retryAfter)
}

// holdStop stops the call whose next attempt the pacing step held and did
// not send (h): with retry.PacingExceedsDeadline when the hold would pass
// ctx's deadline, with retry.ContextDone when ctx ended during it. The
// attempt is not counted. For a first attempt the call's error is a
// *ConnectionError with NotSent set; for a retry it wraps the last
// attempt's error, as a stop during a retry's wait does.
func (l *attemptLoop) holdStop(ctx context.Context, h *holdError) error {
	l.held = true
	reason := retry.PacingExceedsDeadline
	if h.ctxErr != nil {
		reason = retry.ContextDone
	}
	l.logPacing(ctx, h.wait, reason)
	l.observeHold(h.wait, reason)
	first := l.last == nil
	if first {
		l.last = heldError(h.ctxErr)
	}
	if reason == retry.ContextDone || first {
		return l.stop(ctx, reason)
	}
	m := meta{op: l.op.name, attempts: l.attempts, reason: reason}
	describeCall(l.last, m, l.reached)
	return stopError(m, ErrRateLimitHold, l.last)
}

// logPacing writes a hold of the loop's next attempt to the client's
// logger: at Debug a wait of wait, at Info a stop for reason.
func (l *attemptLoop) logPacing(ctx context.Context, wait time.Duration, reason retry.StopReason) {
	lg := l.c.logger
	level, decision := slog.LevelDebug, "hold"
	if reason != "" {
		level, decision = slog.LevelInfo, "stop"
	}
	if lg == nil || !lg.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", l.op.method),
		slog.String("route", l.op.route),
		slog.String("bucket", l.op.bucket.String()),
		slog.Int("attempt", l.attempts+1),
		slog.Duration("wait", wait),
	}
	if deadline, ok := ctx.Deadline(); ok {
		attrs = append(attrs, slog.Duration("time_left", time.Until(deadline)))
	}
	attrs = append(attrs, slog.String("decision", decision))
	if reason != "" {
		attrs = append(attrs, slog.String("reason", string(reason)))
	}
	lg.LogAttrs(ctx, level, "synthient: pacing", attrs...)
}
