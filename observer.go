package synthient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/synthient-go/synthient/internal/observe"
	"github.com/synthient-go/synthient/retry"
)

// Observer watches the calls of a Client as they happen: each call's start
// and end, each HTTP request it sends with the retry decision taken on its
// outcome, and the holds of rate-limit pacing. Set one with WithObserver.
// Module github.com/synthient-go/synthient/otel implements it with
// OpenTelemetry traces and metrics; the synthient command's --trace prints
// it.
//
// A call is one call of a Client method: LookupIP, DownloadExportFile (its
// meta, its API leg and its storage leg), one loop over AllExports or over
// a stream (from the loop's start to its end). LookupIPsAll is observed as
// the LookupIPs calls it makes and, with a cache (WithCache), as a call
// named LookupIPsAll for each group of addresses it looks for in the cache,
// which sends nothing. A call's events come on the goroutine that makes
// it, never at once, in this order:
//
//	StartCall
//	  for each attempt: [Hold...] StartRequest EndRequest   (each leg, each page)
//	  [Hold with a stop reason: the call stops unsent]
//	EndCall
//
// Every StartCall is followed by exactly one EndCall, also for a call that
// fails before anything is sent (an invalid argument, a closed client); and
// every StartRequest by exactly one EndRequest.
//
// A lookup answered from the client's cache (WithCache), or one that
// shared the request of an identical call in flight, sends no request: its
// EndCall says so (CacheHits, Coalesced, CreditsSaved). The shared request
// is reported in the call that sent it. When that call's caller leaves
// first (its context ended) while others still wait for the answer, the
// method returns at once, and the call's EndCall comes once the request is
// done, on the goroutine that carried it: the one event that does not come
// on the goroutine of the call.
//
// Calls run at once on many goroutines, so an Observer must be safe for
// concurrent use. It keeps what it knows of a call, or of a request, in the
// context it returns: StartCall's is the call's context from then on (its
// requests are sent with contexts derived from it, and Hold and EndCall get
// it), and StartRequest's is the request's (the request is sent with it,
// and EndRequest gets it). Either should be derived from the context the
// method was given, or be that context. Whatever it returns, the call
// keeps the given context's deadline and cancellation, and finds a value
// in the returned context first, then in the given one; a nil context is
// taken as the one given.
//
// The methods run inline, between the steps of a call, so they should
// return quickly and must not call the Client. They are given no API key,
// no request body and no query of a presigned storage URL; a request id is
// server text.
type Observer interface {
	// StartCall is called when a call begins, before anything is checked
	// or sent.
	StartCall(ctx context.Context, call CallStart) context.Context
	// StartRequest is called for each HTTP request of the call, just before
	// it is sent (after any pacing hold).
	StartRequest(ctx context.Context, req RequestStart) context.Context
	// EndRequest is called when the request's response headers arrived or
	// it failed, with the decision taken on it.
	EndRequest(ctx context.Context, end RequestEnd)
	// Hold is called when rate-limit pacing holds the call's next attempt,
	// and when such a hold stops the call.
	Hold(ctx context.Context, hold PacingHold)
	// EndCall is called when the call returns, or its loop ends.
	EndCall(ctx context.Context, end CallEnd)
}

// WithObserver reports the client's calls to o (see Observer). nil, the
// default, observes nothing; a client without an observer does no work and
// allocates nothing for it.
func WithObserver(o Observer) Option {
	return func(s *settings) error {
		s.observer = o
		return nil
	}
}

// CallStart describes a call as it begins.
type CallStart struct {
	// Operation is the Client method, such as "LookupIP" or
	// "StreamProxies".
	Operation string
	// Class is the retry class of the call's requests to the API. A
	// download's is retry.Standard, that of its API leg; its storage leg is
	// never retried.
	Class retry.Class
}

// RequestStart describes an HTTP request of a call as it is sent.
type RequestStart struct {
	// Method is the HTTP method.
	Method string
	// URL is the request's URL. For the storage host it has no query: the
	// query of a presigned URL is its signature.
	URL string
	// Route is the API's route template, such as "/lookup/ip/{ip}"; empty
	// for the storage host.
	Route string
	// Attempt numbers the request within its leg of the call, from 1: a
	// request with Attempt 2 is the first one sent again.
	Attempt int
	// Storage reports a request to the export storage host, the second leg
	// of a download.
	Storage bool
	// Header is where the observer may put trace-context headers, such as
	// W3C traceparent: each key that the request does not carry already is
	// added to this attempt. For the storage host, which is sent nothing of
	// the caller's, it is an empty header that is dropped. (A transport of
	// the caller's, given with WithTransport, still sees the call's context
	// on the storage request: one that injects trace context itself, as
	// otelhttp's does, sends it to storage.)
	Header http.Header
}

// RequestEnd describes how a request ended, and what the client decided on
// its outcome.
type RequestEnd struct {
	// Status is the response's status code; 0 when no response arrived.
	Status int
	// ErrorKind names the failure of a request that got no response, as the
	// log does: "dns", "dial", "tls", "timeout", "malformed", "context" or
	// "connection". It is empty when a response arrived.
	ErrorKind string
	// RequestID is the response's X-Request-Id header, empty when there is
	// none.
	RequestID string
	// ProtocolVersion is the HTTP version of the response, as the
	// OpenTelemetry attribute network.protocol.version gives it: "1.1",
	// "1.0", "2" or "3". It is empty when no response arrived, or the
	// response says no version (a mocked transport's may not).
	ProtocolVersion string
	// Decision is the retry decision on the request: Retry with its Wait
	// (and RetryAfter when the server asked for one), or a stop with its
	// Reason, or neither for the call's result. A storage request's class
	// is retry.Never.
	Decision retry.Decision
}

// PacingHold describes a hold of rate-limit pacing: the model of the API's
// rate limit held the call's next attempt before sending it. A wait of up
// to a second for the answer of an attempt in flight, while the model knows
// nothing yet of the rate limit, is not a hold (nor logged as one).
type PacingHold struct {
	// Bucket names the rate limit, such as "lookup" or "account".
	Bucket string
	// Attempt numbers the attempt held within its leg of the call, from 1.
	Attempt int
	// Wait is the hold: what the attempt waits, or would have waited.
	Wait time.Duration
	// Stop is why the call stops instead: retry.PacingExceedsDeadline or
	// retry.TeamShareExceedsDeadline (the hold would pass the deadline;
	// nothing is sent) or retry.ContextDone (the context ended during the
	// hold, reported before). It is empty for a hold that is waited out.
	Stop retry.StopReason
	// Shared reports a hold for the team: other clients draw on the same
	// rate limit (the team's other keys, processes or hosts), and this
	// client's share of its rate is less than the whole, so the hold is
	// longer than the limit alone asks. A hold that is not shared waits
	// for the limit's own tokens, as after a 429.
	Shared bool
}

// CallEnd describes how a call ended.
type CallEnd struct {
	// Err is the call's error; nil when it succeeded. For a loop over a
	// sequence it is the error the sequence ended with: nil when it ended
	// cleanly or the loop broke out. A call through which a panic passed
	// (the caller's loop body, a download's writer) ends with an error
	// that says so; the panic goes on.
	Err error
	// Attempts is the number of HTTP requests the call sent, over all its
	// legs and pages, counting those that never left the client.
	Attempts int
	// StopReason is why the client stopped: that of the *Error that Err
	// reaches, else the last decision's; empty on success.
	StopReason retry.StopReason
	// RequestID is the X-Request-Id of the last response the call got.
	RequestID string
	// Bytes is the number of bytes a download wrote; 0 for other calls.
	Bytes int64
	// CacheHits is the number of answers the call took from the client's
	// cache (see WithCache), without a request: 1 for a LookupIP or
	// LookupDomain answered from it, the addresses of a LookupIPs found
	// there, or those of a group of LookupIPsAll addresses.
	CacheHits int
	// Coalesced reports that the call shared the request of an identical
	// call in flight, and sent none of its own (Attempts is 0).
	Coalesced bool
	// CreditsSaved is what the cache hits and the sharing spared the
	// call: what its own requests for those answers would have cost.
	CreditsSaved int
	// CacheErr is the first failure of the client's cache during the call:
	// an error of its Get or Set, or a value that does not decode. The
	// call went on without the cache; nil when there was none.
	CacheErr error
	// CreditsReserved is what the call's requests reserved from the
	// client's credit budget (see WithCreditBudget) before they were sent;
	// CreditsRefunded what of it was given back, the API having charged
	// nothing; CreditsSpent the rest, CreditsReserved - CreditsRefunded:
	// what the API charged or may have. CreditsRefused is the cost of a
	// request the budget refused, which was not sent. All are 0 without a
	// budget, and for a call answered from the cache or that shared
	// another's request.
	CreditsReserved, CreditsSpent, CreditsRefunded, CreditsRefused int64
}

// observedCall is a call as the client's observer sees it: it carries the
// call's context and gathers what EndCall reports. It travels in the
// call's context (observedKey). Its methods do nothing on a nil *observedCall,
// the call of a client without an observer.
type observedCall struct {
	obs Observer
	op  string          // the operation, for its errors
	ctx context.Context // the call's, as StartCall returned it
	// attempts is the call's count of attempts (see call.attempts) when its
	// latest request ended: CallEnd's Attempts reads it, counting nothing
	// itself.
	attempts  int
	requestID string
	reason    retry.StopReason
	bytes     int64
	cache     CallEnd // CacheHits, Coalesced, CreditsSaved and CacheErr
	credits   CallEnd // CreditsReserved, CreditsRefunded and CreditsRefused
	handed    bool    // the call's end is another goroutine's to report (HandOff)
}

// observedKey is the context key of a call's *observedCall.
type observedKey struct{}

// startCall begins a call of operation name, of class, for the client's
// observer. It returns the call's context and the call to end; without an
// observer, ctx and nil.
func (c *Client) startCall(ctx context.Context, name string, class retry.Class) (context.Context, *observedCall) {
	if c.observer == nil {
		return ctx, nil
	}
	oc := &observedCall{obs: c.observer, op: name}
	ctx = observe.Context(ctx, c.observer.StartCall(ctx, CallStart{Operation: name, Class: class}))
	oc.ctx = context.WithValue(ctx, observedKey{}, oc)
	return oc.ctx, oc
}

// observed returns the call that ctx carries; nil when the client has no
// observer.
func (c *Client) observed(ctx context.Context) *observedCall {
	if c.observer == nil {
		return nil
	}
	oc, _ := ctx.Value(observedKey{}).(*observedCall)
	return oc
}

// errPanicked is the error of a call that ended in a panic: the caller's
// loop body, a download's writer or progress callback panicked.
var errPanicked = errors.New("synthient: the call ended in a panic")

// end reports the end of the call with the error *errp, which a deferred
// call reads when the method returns. It is itself the deferred call, so
// that a panic through the call (the caller's loop body, a download's
// writer) is seen, reported as errPanicked, and goes on.
func (oc *observedCall) end(errp *error) {
	if oc == nil || oc.handed {
		return
	}
	if r := recover(); r != nil {
		oc.report(errPanicked)
		panic(r)
	}
	oc.report(*errp)
}

// report shows the observer the end of the call, with err.
func (oc *observedCall) report(err error) {
	e := CallEnd{Err: err, Attempts: oc.attempts, RequestID: oc.requestID, Bytes: oc.bytes,
		CacheHits: oc.cache.CacheHits, Coalesced: oc.cache.Coalesced, CreditsSaved: oc.cache.CreditsSaved, CacheErr: oc.cache.CacheErr,
		CreditsReserved: oc.credits.CreditsReserved, CreditsRefunded: oc.credits.CreditsRefunded,
		CreditsSpent: oc.credits.CreditsReserved - oc.credits.CreditsRefunded, CreditsRefused: oc.credits.CreditsRefused}
	if e.Err != nil {
		e.StopReason = oc.reason
		var base *Error
		if errors.As(e.Err, &base) {
			e.StopReason = base.StopReason
		}
	}
	oc.obs.EndCall(oc.ctx, e)
}

// cacheHit counts hits answers taken from the cache, which saved credits.
func (oc *observedCall) cacheHit(hits, credits int) {
	if oc != nil {
		oc.cache.CacheHits += hits
		oc.cache.CreditsSaved += credits
	}
}

// coalesced records that the call shared another's request, which saved
// credits.
func (oc *observedCall) coalesced(credits int) {
	if oc != nil {
		oc.cache.Coalesced = true
		oc.cache.CreditsSaved += credits
	}
}

// countCredits counts credits the call reserved from the client's budget,
// refunded, and was refused.
func (oc *observedCall) countCredits(reserved, refunded, refused int64) {
	if oc != nil {
		oc.credits.CreditsReserved += reserved
		oc.credits.CreditsRefunded += refunded
		oc.credits.CreditsRefused += refused
	}
}

// cacheFailed records a failure of the cache, the first one kept.
func (oc *observedCall) cacheFailed(err error) {
	if oc != nil && err != nil && oc.cache.CacheErr == nil {
		oc.cache.CacheErr = err
	}
}

// HandOff makes the end of a call that led a shared request (see
// internal/flight) another goroutine's to report: the call's caller left,
// its context having ended with cause, and the request goes on. The
// deferred end does nothing; the function returned reports the end, with
// leftError, once the request is done.
func (oc *observedCall) HandOff(cause error) func() {
	oc.handed = true
	err := leftError(oc.op, cause)
	return func() { oc.report(err) }
}

// endRequest reports the end of the request started with ctx, after
// which the call has made attempts.
func (oc *observedCall) endRequest(ctx context.Context, e RequestEnd, attempts int) {
	oc.attempts = attempts
	if e.RequestID != "" {
		oc.requestID = e.RequestID
	}
	oc.reason = e.Decision.Reason
	oc.obs.EndRequest(ctx, e)
}

// addBytes counts n bytes written by a download.
func (oc *observedCall) addBytes(n int64) {
	if oc != nil {
		oc.bytes += n
	}
}

// startStorage shows the storage request req, to loc, to the observer of
// the call, and returns req as it is to be sent, with the context that
// endStorage takes. The observer is given loc without its query, and a
// header that is not sent.
func (oc *observedCall) startStorage(req *http.Request, loc *url.URL) (*http.Request, context.Context) {
	if oc == nil {
		return req, nil
	}
	bare := url.URL{Scheme: loc.Scheme, Host: loc.Host, Path: loc.Path, RawPath: loc.RawPath}
	s := RequestStart{Method: req.Method, URL: bare.String(), Attempt: 1, Storage: true, Header: http.Header{}}
	ctx := observe.Context(req.Context(), oc.obs.StartRequest(req.Context(), s))
	return req.WithContext(ctx), ctx
}

// endStorage reports how the storage request started with ctx ended,
// after which the call has made attempts: its response, or the failure f
// of cause. It is never sent again: any outcome but a 2xx stops the call,
// for ctx's end if it ended.
func (oc *observedCall) endStorage(ctx context.Context, attempts int, resp *http.Response, f retry.Failure, cause error) {
	if oc == nil {
		return
	}
	e := RequestEnd{Decision: retry.Decision{Class: retry.Never, Attempt: 1, MaxAttempts: 1}}
	switch {
	case resp != nil:
		e.Status, e.RequestID = resp.StatusCode, resp.Header.Get("X-Request-Id")
		e.ProtocolVersion = protocolVersion(resp)
		if resp.StatusCode < 200 || resp.StatusCode >= 300 {
			e.Decision.Reason = retry.NotRetryable
		}
	case ctx.Err() != nil:
		e.ErrorKind, e.Decision.Reason = errorKind(cause, f), retry.ContextDone
	default:
		e.ErrorKind, e.Decision.Reason = errorKind(cause, f), retry.NotRetryable
	}
	oc.endRequest(ctx, e, attempts)
}

// protocolVersion returns the HTTP version of resp as RequestEnd gives it;
// "" for a nil resp or one without a version.
func protocolVersion(resp *http.Response) string {
	switch {
	case resp == nil || resp.ProtoMajor <= 0:
		return ""
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 1:
		return "1.1"
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 0:
		return "1.0"
	case resp.ProtoMinor == 0:
		return strconv.Itoa(resp.ProtoMajor) // "2", "3"
	}
	return strconv.Itoa(resp.ProtoMajor) + "." + strconv.Itoa(resp.ProtoMinor)
}
