// How one call goes through go-retryablehttp.
//
// A method builds an operation and calls getJSON, or do itself for a stream
// or a download. do refuses a closed client or an ended ctx, takes an
// attemptLoop from the client's pool, builds the request (newRequest),
// readies the loop for op (start) and calls go-retryablehttp's Do, which
// calls back, for each attempt:
//
//  1. HTTPClient.Do sends the attempt. When the client paces or has an
//     observer, the loop's own http.Client first takes it through
//     loopTransport: pace (pace.go) waits until the model of op's
//     rate-limit bucket lets it go, and fails it with a *holdError,
//     unsent, when that would pass ctx's deadline or ctx ends meanwhile;
//     then startRequest (observer.go) shows it to the observer. The
//     attempt then goes through retryhttp.NoReplay, then locationAside, then
//     the transport (see newHTTPClient).
//  2. CheckRetry, which is checkRetry, judges it. A *holdError stops the
//     call at once (holdStop), the attempt not counted. Otherwise record
//     counts the attempt, runs the response hook and keeps the attempt's
//     typed error in l.last; decide asks the policy (l.call.Decide, which
//     keeps the decision as l.call.Last); learn gives the bucket's model
//     the answer's RateLimit headers (and a 429's Retry-After), or tells it
//     the attempt got none; the decision is logged, and given to the
//     observer with the attempt's end (endRequest). checkRetry answers Do
//     with the call's next state:
//       - done (false, nil): the response is accepted, and Do returns it;
//       - stop (false, err), err being the hook's error or the call's
//         error from stop: Do calls ErrorHandler, which is
//         retryablehttp.PassthroughErrorHandler, and returns err as it is
//         (go-retryablehttp's own error would quote the URL);
//       - retry (true, nil): Do calls Backoff (retryhttp.Backoff of l.call),
//         which gives the wait the policy chose, waits, and goes back to 1.
//
// Do never gives up by itself: RetryMax is above every policy's retries.
// When ctx ends during a wait, Do returns ctx.Err() at once and calls
// nothing back, so the last decision is still a retry. Then, and after a
// stop, Do calls the http.Client's CloseIdleConnections, which NoReplay
// hides from the shared pool.
//
// When Do returns, result turns what it returned into the call's outcome:
// the accepted response; checkRetry's error (a stop, or holdStop's); or,
// when the last decision is a retry and ctx has ended, the stop checkRetry
// never got to make, which cancelled logs and builds as checkRetry builds
// the others. do then resets the loop, which releases an attempt still in
// flight in its bucket's model, and puts it back in the pool.

package synthient

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/retry/retryhttp"
)

// operation describes one API call.
type operation struct {
	name     string      // the method, for errors: "LookupIP"
	prior    int         // attempts of the call's earlier legs, which reached the server (a download's meta)
	method   string      // HTTP method
	route    string      // route template, for logs: "/lookup/ip/{ip}"
	path     string      // escaped path below the base URL
	query    url.Values  // nil for none
	body     []byte      // JSON request body, nil for none
	class    retry.Class // retry class
	noKey    bool        // send no API key (/health)
	accept   string      // Accept header
	redirect bool        // a 3xx is the result, judged by the caller (download API leg)
	raw      bool        // a download: ask for the identity encoding, so that nothing decodes the body
	bucket   bucket      // the rate limit it counts against; noBucket is never paced
}

// accepts reports whether a response of status is the call's result: a
// 2xx, or a 3xx when the caller follows redirects itself.
func (op *operation) accepts(status int) bool {
	return status >= 200 && status < 300 || op.redirect && status >= 300 && status < 400
}

// attemptLoop carries one call through go-retryablehttp (see the comment
// at the top of this file). Loops are pooled by the client.
type attemptLoop struct {
	// Set once, by newAttemptLoop: rc's callbacks are bound to the loop.
	c     *Client
	rc    retryablehttp.Client
	trace httptrace.ClientTrace

	// Set by start for one call; cleared, with the rest, by reset.
	op   *operation
	call retry.Call // the policy's state; its Last decision is the call's state

	// paced records that the current attempt went through pace and is in
	// flight in its bucket's model, until learn takes its outcome in;
	// ticket is what the model noted of it when it went.
	paced  bool
	ticket ticket
	// held records that the pacing step stopped the call (holdStop).
	held bool

	// Updated by record after each attempt.
	attempts int
	// reached records that an attempt of the call may have reached the
	// server: it got a response, or failed after the request may have been
	// written. It makes NotSent describe the call, not its last attempt.
	reached bool
	// last is the typed error (*APIError, *ConnectionError or
	// *TimeoutError) of the latest attempt that failed; an attempt cut
	// short by ctx leaves it as it was. stop makes it describe the call.
	last error

	// gotConn records that the current attempt got a connection. The trace
	// sets it (installed on the client's own transport only, whose GotConn
	// runs on the calling goroutine); record clears it. An attempt without
	// one sent nothing, also when ctx cut it short while dialing. The
	// pooled trace is never changed after newAttemptLoop: a caller's own
	// trace is merged into a fresh one (traced).
	gotConn bool

	// observed is the call as the client's observer sees it, nil without
	// an observer; requestCtx is the context of the attempt it was shown
	// last (startRequest), until its end was reported.
	observed   *observedCall
	requestCtx context.Context
}

// newAttemptLoop returns a loop for the calls of c, the pool's New.
func newAttemptLoop(c *Client) *attemptLoop {
	l := &attemptLoop{c: c}
	l.trace.GotConn = func(httptrace.GotConnInfo) { l.gotConn = true }
	hc := c.hc
	if c.pacer != nil || c.observer != nil {
		// Each attempt waits in pace and is shown to the observer first;
		// the layer is the loop's own.
		hc = &http.Client{Transport: &loopTransport{l: l, next: c.hc.Transport}, CheckRedirect: c.hc.CheckRedirect}
	}
	l.rc = retryablehttp.Client{
		HTTPClient: hc,
		// The policy decides; this only keeps go-retryablehttp from
		// stopping first.
		RetryMax:     retry.MaxRetriesCap + 1,
		CheckRetry:   l.checkRetry,
		Backoff:      retryhttp.Backoff(&l.call),
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	return l
}

// loopTransport is the outer layer of a loop's HTTP client when the
// client paces or has an observer: each attempt of the loop's call waits
// in pace, then is shown to the observer (startRequest), before it goes.
type loopTransport struct {
	l    *attemptLoop
	next http.RoundTripper
}

func (t *loopTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.l.pace(r.Context()); err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(t.l.startRequest(r))
}

// do sends op with its retry class and returns the accepted response
// (2xx, or the 307 of a download) with its body open, or the call's error.
// m describes the call for errors found after it, such as a body that does
// not decode. A caller done with the response closes its body, then calls
// c.closeIdleIfClosed (see Close).
func (c *Client) do(ctx context.Context, op *operation) (resp *http.Response, m meta, err error) {
	m.op, m.attempts = op.name, op.prior // earlier legs of the call count
	if c.closed.Load() {
		return nil, m, opError(m, "", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		m.reason = retry.ContextDone
		return nil, m, stopError(m, err, nil)
	}
	l := c.loops.Get().(*attemptLoop)
	defer func() {
		l.reset()
		c.loops.Put(l)
	}()
	req, err := c.newRequest(l.traced(ctx), op)
	if err != nil {
		return nil, m, err
	}
	l.start(op, c.policy)
	l.observed = c.observed(ctx)
	resp, err = l.rc.Do(req)
	m.attempts = l.attempts
	resp, err = l.result(ctx, resp, err)
	if err != nil {
		c.closeIdleIfClosed() // the last attempt's answer was closed
	}
	return resp, m, err
}

// newRequest builds op's request below the client's base URL.
func (c *Client) newRequest(ctx context.Context, op *operation) (*retryablehttp.Request, error) {
	u := c.base + op.path
	if len(op.query) > 0 {
		u += "?" + op.query.Encode()
	}
	hreq, err := http.NewRequestWithContext(ctx, op.method, u, nil)
	if err != nil {
		return nil, opError(meta{op: op.name}, "building the request", errors.Unwrap(err))
	}
	hreq.Header["User-Agent"] = []string{c.userAgent}
	if op.accept != "" {
		hreq.Header["Accept"] = []string{op.accept}
	}
	if op.raw {
		hreq.Header["Accept-Encoding"] = identity
	}
	if !op.noKey {
		hreq.Header["X-Api-Key"] = c.apiKey()
	}
	// The request goes out in a form net/http never sends again on its
	// own, as retryhttp.NoReplay would otherwise make it on a copy at each
	// attempt: without a body, SetNoReplayBody's; with one, no GetBody
	// (go-retryablehttp rewinds op.body itself).
	req := &retryablehttp.Request{Request: hreq}
	if op.body == nil {
		retryhttp.SetNoReplayBody(hreq)
		return req, nil
	}
	hreq.Header["Content-Type"] = []string{"application/json"}
	if err := req.SetBody(op.body); err != nil {
		return nil, opError(meta{op: op.name}, "building the request", err)
	}
	hreq.GetBody = nil
	return req, nil
}

// traced returns ctx with the loop's connection trace, when the client
// owns its transport: another transport's connections cannot be traced
// reliably, so there every failure that is not NotSent may have reached
// the server.
func (l *attemptLoop) traced(ctx context.Context) context.Context {
	if l.c.owned == nil {
		return ctx
	}
	if httptrace.ContextClientTrace(ctx) != nil {
		// WithClientTrace merges the caller's hooks into the trace it is
		// given, in place: a fresh one, never the pooled one, which other
		// calls would then run.
		return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: l.trace.GotConn})
	}
	return httptrace.WithClientTrace(ctx, &l.trace)
}

// start readies the loop for op, with the client's policy p.
func (l *attemptLoop) start(op *operation, p retry.Policy) {
	p.Class = op.class
	l.op = op
	// An earlier leg of the call was answered: the call has reached the
	// server, and its attempts count.
	l.attempts, l.reached = op.prior, op.prior > 0
	l.call.Reset(p)
}

// reset clears the loop for the pool.
func (l *attemptLoop) reset() {
	l.learn(nil, false, 0) // an attempt still in flight in the model
	l.op, l.attempts, l.reached, l.gotConn, l.last, l.held = nil, 0, false, false, nil, false
	l.observed, l.requestCtx = nil, nil
	l.call.Reset(retry.Policy{})
}

// checkRetry is go-retryablehttp's CheckRetry: it judges the attempt that
// just ended and tells Do what comes next (step 2 at the top of this
// file). It returns an error only to stop the call with it.
func (l *attemptLoop) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if h := asHoldError(err); h != nil {
		return false, l.holdStop(ctx, h) // nothing was sent
	}
	a, requestID := l.record(ctx, resp, err)
	d := l.decide(ctx, a)
	l.learn(resp, throttled(resp, d), d.RetryAfter)
	l.log(ctx, d, a, requestID)
	l.endRequest(d, a, resp, requestID)
	switch {
	case d.Retry:
		return true, nil
	case a.HandlerErr != nil:
		return false, a.HandlerErr // the hook's error, as it is
	case d.Reason != "":
		return false, l.stop(ctx, d.Reason)
	}
	return false, nil
}

// throttled reports whether resp is a 429 whose Retry-After the client
// waits out: one past MaxRetryAfter does not hold the bucket either.
func throttled(resp *http.Response, d retry.Decision) bool {
	return resp != nil && resp.StatusCode == http.StatusTooManyRequests &&
		d.HasRetryAfter && d.Reason != retry.RetryAfterExceedsMax
}

// record takes in the attempt that just ended, with its response or its
// error: it counts the attempt, notes whether it may have reached the
// server and keeps its typed error in l.last. It returns the attempt as
// the policy judges it, and its request ID for the log.
func (l *attemptLoop) record(ctx context.Context, resp *http.Response, err error) (a retry.Attempt, requestID string) {
	l.attempts++
	if err != nil {
		a = l.failed(ctx, err)
	} else {
		a, requestID = l.answered(resp), resp.Header.Get("X-Request-Id")
	}
	l.gotConn = false // the next attempt starts afresh
	return a, requestID
}

// failed records an attempt that got no response.
func (l *attemptLoop) failed(ctx context.Context, err error) retry.Attempt {
	f, cause := transportCause(err)
	reached := l.mayHaveReached(f)
	l.reached = l.reached || reached
	switch {
	case ctx.Err() == nil:
		l.last = attemptError(cause, f)
	case l.last == nil:
		// ctx, not the server, cut the call's first failure short. The
		// call's error wraps the context's around it all the same, so
		// that it says whether the attempt can have reached the server.
		cut := retry.Failure{NotSent: !reached}
		l.last = attemptError(cause, cut)
	}
	// Otherwise the call's error wraps the context's around the previous
	// attempt's.
	return retry.Attempt{Err: cause, Failure: f}
}

// mayHaveReached reports whether an attempt that failed with f may have
// reached the server.
func (l *attemptLoop) mayHaveReached(f retry.Failure) bool {
	return !f.NotSent && (l.gotConn || l.c.owned == nil)
}

// answered records an attempt that got a response: it runs the response
// hook, and reads a response the call does not accept into an *APIError.
func (l *attemptLoop) answered(resp *http.Response) retry.Attempt {
	l.reached = true
	if hook := l.c.hook; hook != nil {
		if herr := hook(newResponseInfo(resp)); herr != nil {
			discard(resp)
			return retry.Attempt{Status: resp.StatusCode, HandlerErr: herr}
		}
	}
	a := retry.Attempt{
		Status:     resp.StatusCode,
		RetryAfter: resp.Header["Retry-After"],
		Date:       resp.Header.Get("Date"),
		Accepted:   l.op.accepts(resp.StatusCode),
	}
	if !a.Accepted {
		l.last = apiErrorFrom(resp)
	}
	return a
}

// decide asks the policy about a. The Retry-After the policy read goes on
// the attempt's *APIError: a Retry-After comes with a response only, and
// l.last holds its *APIError when the call does not accept it.
func (l *attemptLoop) decide(ctx context.Context, a retry.Attempt) retry.Decision {
	d := l.call.Decide(ctx, a)
	if ae, ok := l.last.(*APIError); ok && !a.Accepted && d.HasRetryAfter {
		ra := d.RetryAfter
		ae.RetryAfter = &ra
	}
	return d
}

// stop returns the call's error for a stop with reason: the last attempt's
// typed error, or for a context that ended, an *Error that wraps both the
// context's error and the last attempt's. Either way the last attempt's
// error now describes the call (describeCall): errors.As from it reaches
// the same *Error, also when it is wrapped below a context's.
func (l *attemptLoop) stop(ctx context.Context, reason retry.StopReason) error {
	m := meta{op: l.op.name, attempts: l.attempts, reason: reason}
	describeCall(l.last, m, l.reached)
	if reason == retry.ContextDone || l.last == nil {
		return stopError(m, ctx.Err(), l.last)
	}
	return l.last
}

// result turns what Do returned into the call's outcome (see the comment
// at the top of this file). A response that comes with an error is
// closed.
func (l *attemptLoop) result(ctx context.Context, resp *http.Response, err error) (*http.Response, error) {
	d := l.call.Last()
	if err == nil && !d.Retry {
		return resp, nil // accepted by checkRetry
	}
	if resp != nil {
		resp.Body.Close()
	}
	switch {
	case d.Reason != "" || l.held:
		return nil, err // checkRetry's stop
	case ctx.Err() != nil:
		return nil, l.cancelled(ctx)
	}
	// go-retryablehttp gave up by itself, which the loop's settings never
	// let it do.
	return nil, opError(meta{op: l.op.name, attempts: l.attempts}, "", err)
}

// cancelled stops a call whose context ended while Do waited to send it
// again: it logs the stop with the outcome of the attempt it was waiting
// to repeat, and returns stop's error.
func (l *attemptLoop) cancelled(ctx context.Context) error {
	d := l.call.Last()
	d.Retry, d.Wait, d.Reason = false, 0, retry.ContextDone
	a, requestID := lastAttempt(l.last)
	l.log(ctx, d, a, requestID)
	return l.stop(ctx, retry.ContextDone)
}

// lastAttempt returns, for the log, the outcome of the attempt whose typed
// error is last.
func lastAttempt(last error) (a retry.Attempt, requestID string) {
	if ae, ok := last.(*APIError); ok {
		return retry.Attempt{Status: ae.Status}, ae.RequestID
	}
	if ce := asConnectionError(last); ce != nil {
		return retry.Attempt{Err: ce.Err, Failure: retry.ClassifyError(ce.Err)}, ""
	}
	return retry.Attempt{}, ""
}

// discard closes a response whose body is not wanted.
func discard(resp *http.Response) {
	resp.Body.Close()
	resp.Body = http.NoBody
}

// log writes one attempt decision to the client's logger: Debug for a
// retry or a success, Info for a stop.
func (l *attemptLoop) log(ctx context.Context, d retry.Decision, a retry.Attempt, requestID string) {
	lg := l.c.logger
	if lg == nil {
		return
	}
	level, decision := slog.LevelDebug, "done"
	switch {
	case d.Retry:
		decision = "retry"
	case d.Reason != "":
		level, decision = slog.LevelInfo, "stop"
	}
	if !lg.Enabled(ctx, level) {
		return
	}
	lg.LogAttrs(ctx, level, "synthient: attempt", l.attrs(d, a, requestID, decision)...)
}

// attrs returns the attributes of the log event of decision d on a.
func (l *attemptLoop) attrs(d retry.Decision, a retry.Attempt, requestID, decision string) []slog.Attr {
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("method", l.op.method),
		slog.String("route", l.op.route),
		slog.String("class", d.Class.String()),
		slog.Int("attempt", d.Attempt),
		slog.Int("max_attempts", d.MaxAttempts),
	)
	switch {
	case a.Err != nil:
		attrs = append(attrs, slog.String("error", errorKind(a.Err, a.Failure)))
	case a.Status != 0:
		attrs = append(attrs, slog.Int("status", a.Status))
	}
	if requestID != "" {
		attrs = append(attrs, slog.String("request_id", requestID))
	}
	if d.HasRetryAfter {
		attrs = append(attrs, slog.Duration("retry_after", d.RetryAfter))
	}
	if d.Retry {
		attrs = append(attrs, slog.Duration("wait", d.Wait))
	}
	if d.HasDeadline {
		attrs = append(attrs, slog.Duration("time_left", d.TimeLeft))
	}
	attrs = append(attrs, slog.String("decision", decision))
	if d.Reason != "" {
		attrs = append(attrs, slog.String("reason", string(d.Reason)))
	}
	return attrs
}

// errorKind names a transport failure for logs, without its text (which
// can hold addresses).
func errorKind(err error, f retry.Failure) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "context"
	case f.Timeout:
		return "timeout"
	case f.TLS:
		return "tls"
	case f.Malformed:
		return "malformed"
	case errors.As(err, &dns):
		return "dns"
	case f.NotSent:
		return "dial"
	}
	return "connection"
}
