// One call of the client, its methods in the order they run: do builds
// the call and its request and hands them to the client's one
// retryablehttp.Client (newRetryClient). Its Do sends each attempt through
// sendStep (ready: the retry wait, then pacing; startRequest: the
// observer; then the transport), and asks checkRetry, which records the
// attempt, decides, reports and answers what comes next. do turns what Do
// returned into the call's result (result). The call counts its attempts
// in one place, record: the error's Attempts and the observer's read that
// count. See docs/retries.md, "The call path".

package synthient

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/synthient-go/synthient/internal/flight"
	"github.com/synthient-go/synthient/internal/observe"
	"github.com/synthient-go/synthient/internal/pace"
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
	accept   []string    // Accept header value, shared: never modified
	redirect bool        // a 3xx is the result, judged by the caller (download API leg)
	raw      bool        // a download: ask for the identity encoding, so that nothing decodes the body
	bucket   bucket      // the rate limit it counts against; noBucket is never paced
	credits  int64       // what one attempt costs, reserved from the client's budget; 0 when free or without a budget
}

// accepts reports whether a response of status is the call's result: a
// 2xx, or a 3xx when the caller follows redirects itself.
func (op *operation) accepts(status int) bool {
	return status >= 200 && status < 300 || op.redirect && status >= 300 && status < 400
}

// call is one leg of a client call on its way through go-retryablehttp:
// all that sendStep and checkRetry know of it. It is the context of the
// leg's request, so that both find it from the request alone (callOf);
// its Value answers callKey and otherwise asks the caller's context. Its
// attempts are sent one after another, so it needs no lock.
type call struct {
	context.Context // the caller's, with the connection trace when traced

	c      *Client
	op     operation // a copy: the caller's need not outlive the call on the heap
	req    retryablehttp.Request
	policy retry.Call    // the policy's state; policy.Last() is the latest decision
	obs    *observedCall // the call as the observer sees it; nil without one

	// attempts counts the attempts of the call, its earlier legs'
	// included (op.prior): the one count, which record keeps, and the
	// error's Attempts and the observer's read.
	attempts int
	reached  bool    // some attempt may have reached the server
	last     outcome // the latest attempt that failed; none at first
	// planner gives the context the waits are planned with when the call
	// sends the request of a flight (see internal/flight); nil otherwise.
	planner flight.Planner

	// wait is the retry wait the latest decision chose, which sendStep
	// waits out before the next attempt.
	wait time.Duration
	// unsent is why sendStep did not send the attempt; none when it did.
	unsent unsent
	// paced records that the attempt went through pacing and is in flight
	// in its bucket's model, until learn takes its outcome in; ticket is
	// what the model noted of it.
	paced  bool
	ticket pace.Ticket
	// traced records that the connection trace is installed, which sets
	// gotConn when the attempt gets a connection (see newCall).
	traced  bool
	gotConn bool
	trace   httptrace.ClientTrace
	// reqCtx is the context the observer returned for the attempt in
	// flight (startRequest), until its end was reported.
	reqCtx context.Context
	// reservation is what the client's credit budget took for the attempt
	// about to be sent, or in flight; nil for none (see credits.go). A
	// pointer, so that a call without a budget carries 8 bytes for it.
	reservation *CreditReservation
}

// unsent is why sendStep did not send an attempt: ctx ended during the
// retry wait (ctxErr set, held false), or pacing held it (held), for wait
// (shared: for the team) past ctx's deadline or until ctx ended (ctxErr),
// or the credit budget did not reserve its cost (budgetErr).
type unsent struct {
	held      bool
	ctxErr    error
	wait      time.Duration
	shared    bool
	budgetErr error
}

func (u *unsent) set() bool { return u.held || u.ctxErr != nil || u.budgetErr != nil }

// callKey is the context key of a request's *call.
type callKey struct{}

// Value returns cl for callKey, else the value of the caller's context.
func (cl *call) Value(key any) any {
	if key == (callKey{}) {
		return cl
	}
	return cl.Context.Value(key)
}

// callOf returns the call whose request has context ctx.
func callOf(ctx context.Context) *call { return ctx.Value(callKey{}).(*call) }

// errUnsent is what sendStep fails an attempt with when it does not send
// it: only to end the RoundTrip. checkRetry reads why from the call.
var errUnsent = errors.New("synthient: attempt not sent")

// newRetryClient returns the client's one retryablehttp.Client, which
// sends the attempts of every call over hc:
//   - each attempt goes through sendStep before hc's transport;
//   - CheckRetry is checkRetry, which finds the call in the request's
//     context; RetryMax is the client's maximum retries, which checkRetry
//     never lets Do reach: the policy stops each class at it or earlier;
//   - Backoff returns 0: sendStep waits out the retry wait, because
//     go-retryablehttp gives Backoff no request when an attempt got no
//     response, so the wait of a call is not known there; a cancellation
//     during it then comes back through checkRetry as every other stop;
//   - ErrorHandler is retryablehttp.PassthroughErrorHandler: Do returns
//     checkRetry's error as it is, where its own would quote the URL;
//   - Do calls the http.Client's CloseIdleConnections when it gives up on
//     a call; sendStep has none, so the pool, every call's, stays (Close
//     closes its idle connections);
//   - no Logger: go-retryablehttp's would print URLs.
func newRetryClient(hc *http.Client, maxRetries int) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   &http.Client{Transport: sendStep{next: hc.Transport}, CheckRedirect: hc.CheckRedirect},
		RetryMax:     maxRetries,
		CheckRetry:   checkRetry,
		Backoff:      noBackoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
}

// noBackoff is the retryablehttp.Backoff of newRetryClient.
func noBackoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration { return 0 }

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
	cl := c.newCall(ctx, op)
	if err := c.newRequest(cl); err != nil { //nolint:contextcheck // cl is a context derived from ctx
		return nil, m, err
	}
	defer cl.learn(nil, false, 0) // an attempt a panic left in flight in the model
	resp, err = c.rc.Do(&cl.req)
	m.attempts = cl.attempts
	resp, err = cl.result(ctx, resp, err)
	if err != nil {
		c.closeIdleIfClosed() // the last attempt's answer was closed
	}
	return resp, m, err
}

// newCall returns the call of op on ctx. When the client owns its
// transport and ctx can end, the call traces its attempts' connections:
// an attempt that got none sent nothing, also when ctx cut it short while
// it waited for one. Without an end, every failure before a connection is
// a dial failure, which says so itself; another transport's connections
// cannot be traced reliably, so there every failure that is not NotSent
// may have reached the server.
func (c *Client) newCall(ctx context.Context, op *operation) *call {
	p := c.policy
	p.Class = op.class
	cl := &call{Context: ctx, c: c, op: *op, policy: retry.Call{Policy: p}, obs: c.observed(ctx), planner: flight.PlannerOf(ctx)}
	// An earlier leg of the call was answered: the call has reached the
	// server, and its attempts count.
	cl.attempts, cl.reached = op.prior, op.prior > 0
	if c.owned != nil && ctx.Done() != nil {
		cl.traced = true
		cl.trace.GotConn = func(httptrace.GotConnInfo) { cl.gotConn = true }
		// A caller's own hooks are merged into cl.trace, the call's own.
		cl.Context = httptrace.WithClientTrace(ctx, &cl.trace)
	}
	return cl
}

// newRequest builds the request of cl's operation below the client's base
// URL, in cl.req, with cl as its context. The header values are shared
// slices, as the Accept of op: net/http never modifies a request's
// header, nor may a RoundTripper.
func (c *Client) newRequest(cl *call) error {
	op := &cl.op
	u := c.base + op.path
	if len(op.query) > 0 {
		u += "?" + op.query.Encode()
	}
	hreq, err := http.NewRequestWithContext(cl, op.method, u, nil)
	if err != nil {
		return opError(meta{op: op.name}, "building the request", errors.Unwrap(err))
	}
	hreq.Header["User-Agent"] = c.userAgent
	if op.accept != nil {
		hreq.Header["Accept"] = op.accept
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
	cl.req.Request = hreq
	if op.body == nil {
		retryhttp.SetNoReplayBody(hreq)
		return nil
	}
	hreq.Header["Content-Type"] = mediaJSON
	if err := cl.req.SetBody(op.body); err != nil {
		return opError(meta{op: op.name}, "building the request", err)
	}
	hreq.GetBody = nil
	return nil
}

// Header values of requests, shared by all (see newRequest).
var (
	mediaJSON   = []string{"application/json"}
	mediaNDJSON = []string{"application/x-ndjson"}
	mediaOctets = []string{"application/octet-stream"}
)

// sendStep is the outer RoundTripper of the retry client's http.Client.
// It takes each attempt of a call through the retry wait and pacing
// (ready), shows it to the observer (startRequest) and sends it through
// next. An attempt it does not send it fails with errUnsent, the reason
// recorded on the call.
type sendStep struct{ next http.RoundTripper }

func (s sendStep) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	cl := callOf(ctx)
	if !cl.ready(ctx) {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, errUnsent
	}
	return s.next.RoundTrip(cl.startRequest(r))
}

// ready waits until the call's next attempt may go: the retry wait the
// latest decision chose, the credit budget's reservation of its cost, then
// pacing (with the deadline to plan with). It reports false, with why in
// cl.unsent, when ctx ends meanwhile, the budget refuses the attempt or
// pacing holds it.
func (cl *call) ready(ctx context.Context) bool {
	if w := cl.wait; w > 0 {
		cl.wait = 0
		if err := pace.Sleep(ctx, w); err != nil {
			cl.unsent = unsent{ctxErr: err}
			return false
		}
	}
	return cl.reserve(ctx) && cl.pace(cl.planning(ctx))
}

// pace holds the call's next attempt until the model of its bucket lets
// it go. It reports false, with the hold in cl.unsent and nothing left in
// flight, when the hold would pass ctx's deadline or ctx ends during it.
func (cl *call) pace(ctx context.Context) bool {
	p, b := cl.c.pacer, cl.op.bucket
	if p == nil || b == noBucket {
		return true
	}
	t, h, ok := p.buckets[b].Wait(ctx, p.maxHold, func(h pace.Hold) {
		cl.logPacing(ctx, h.Wait, "", h.Shared)
		cl.observeHold(h.Wait, "", h.Shared)
	})
	if !ok {
		cl.unsent = unsent{held: true, ctxErr: h.Err, wait: h.Wait, shared: h.Shared}
		return false
	}
	cl.paced, cl.ticket = true, t
	return true
}

// planning returns the context whose deadline the call's waits are
// planned with: ctx's own, or for the request of a flight, the latest
// deadline of the calls that share it (see internal/flight).
func (cl *call) planning(ctx context.Context) context.Context {
	if cl.planner == nil {
		return ctx
	}
	return cl.planner.Planning()
}

// startRequest shows the attempt r of the call to the observer, and
// returns r as it is to be sent. Without an observer it returns r.
func (cl *call) startRequest(r *http.Request) *http.Request {
	oc := cl.obs
	if oc == nil {
		return r
	}
	s := RequestStart{
		Method:  r.Method,
		URL:     r.URL.String(),
		Route:   cl.op.route,
		Attempt: cl.attempt(),
		Header:  http.Header{},
	}
	cl.reqCtx = observe.Context(r.Context(), oc.obs.StartRequest(r.Context(), s))
	return observe.Request(cl.reqCtx, r, s.Header) //nolint:contextcheck // observe.Context keeps r.Context()'s deadline and cancellation, taking only values from the observer's
}

// attempt returns the number of the call's next attempt within its leg,
// from 1, as the observer shows it: one more than the leg's attempts so
// far.
func (cl *call) attempt() int { return cl.attempts - cl.op.prior + 1 }

// checkRetry is the retry client's CheckRetry: it judges the attempt that
// just ended and answers Do. An attempt sendStep did not send stops the
// call (unsentStop). Otherwise, in this order: record the attempt, decide
// with the policy (planning the wait by cl.planning's deadline), give the pacing model the answer, log the decision,
// report the attempt's end to the observer, and answer: retry (true, nil);
// done (false, nil), Do returning the response; stop (false, err), err
// being the hook's error or the call's (stop).
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	cl := callOf(ctx)
	if cl.unsent.set() {
		cl.refund(ctx) // what the attempt reserved: it was not sent
		return false, cl.unsentStop(cl.planning(ctx))
	}
	a, requestID := cl.record(ctx, resp, err)
	d := cl.policy.Decide(cl.planning(ctx), a)
	if !a.Accepted && d.HasRetryAfter {
		cl.last.retryAfter, cl.last.hasRetryAfter = d.RetryAfter, true
	}
	cl.learn(resp, throttled(resp, d), d.RetryAfter)
	cl.log(ctx, d, a, requestID)
	cl.endRequest(d, a, resp, requestID)
	switch {
	case d.Retry:
		cl.wait = d.Wait
		return true, nil
	case a.HandlerErr != nil:
		return false, a.HandlerErr // the hook's error, as it is
	case d.Reason != "":
		return false, cl.stop(ctx, d.Reason)
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
// server and keeps a failure in cl.last. It returns the attempt as the
// policy judges it, and its request ID for the log.
func (cl *call) record(ctx context.Context, resp *http.Response, err error) (a retry.Attempt, requestID string) {
	cl.attempts++
	if err != nil {
		a = cl.failed(ctx, err)
	} else {
		a, requestID = cl.answered(resp), headerValue(resp.Header, "X-Request-Id")
	}
	cl.settleCredits(ctx, a)
	cl.gotConn = false // the next attempt starts afresh
	return a, requestID
}

// learn gives the model of the call's bucket what the attempt that just
// ended says: its answer's status and RateLimit headers and, for a 429
// that will be waited out, its Retry-After; or, for an attempt without an
// answer, that it is no longer in flight.
func (cl *call) learn(resp *http.Response, throttled bool, retryAfter time.Duration) {
	if !cl.paced {
		return
	}
	cl.paced = false
	bk := &cl.c.pacer.buckets[cl.op.bucket]
	if resp == nil {
		bk.Release(cl.ticket)
		return
	}
	a := pace.Answer{Status: resp.StatusCode, Throttled: throttled, RetryAfter: retryAfter}
	a.Limit, a.Remaining, a.Reset, _ = rateLimitOf(resp.Header)
	bk.Answer(cl.ticket, a)
}

// failed records an attempt that got no response. An attempt that ctx
// cut short leaves cl.last as it was: the call's error wraps the
// context's around the previous attempt's; for the call's first failure
// it records that the attempt can have reached the server or not.
func (cl *call) failed(ctx context.Context, err error) retry.Attempt {
	f, cause := transportCause(err)
	reached := cl.attemptReached(f)
	cl.reached = cl.reached || reached
	switch {
	case ctx.Err() == nil:
		cl.last = attemptOutcome(cause, f)
	case !cl.last.set():
		cl.last = outcome{cause: cause, failure: f, notSent: !reached}
	}
	return retry.Attempt{Err: cause, Failure: f}
}

// attemptReached reports whether the attempt that just failed, as f
// classifies its failure, can have reached the server.
func (cl *call) attemptReached(f retry.Failure) bool {
	return !f.NotSent && (cl.gotConn || !cl.traced)
}

// answered records an attempt that got a response: it runs the response
// hook, and reads a response the call does not accept into cl.last.
func (cl *call) answered(resp *http.Response) retry.Attempt {
	cl.reached = true
	if hook := cl.c.hook; hook != nil {
		if herr := hook(newResponseInfo(resp)); herr != nil {
			discard(resp)
			return retry.Attempt{Status: resp.StatusCode, HandlerErr: herr}
		}
	}
	a := retry.Attempt{
		Status:     resp.StatusCode,
		RetryAfter: resp.Header["Retry-After"],
		Date:       headerValue(resp.Header, "Date"),
		Accepted:   cl.op.accepts(resp.StatusCode),
	}
	if !a.Accepted {
		cl.last = outcome{answer: readAnswer(resp)}
	}
	return a
}

// headerValue returns the first value of h's canonical key, as h.Get does
// without canonicalising key again.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// log writes one attempt decision to the client's logger: Debug for a
// retry or a success, Info for a stop.
func (cl *call) log(ctx context.Context, d retry.Decision, a retry.Attempt, requestID string) {
	lg := cl.c.logger
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
	lg.LogAttrs(ctx, level, "synthient: attempt", cl.attrs(d, a, requestID, decision)...)
}

// logPacing writes a hold of the call's next attempt to the client's
// logger: at Debug a wait of wait, at Info a stop for reason; shared
// reports a hold for the team (step.shared).
func (cl *call) logPacing(ctx context.Context, wait time.Duration, reason retry.StopReason, shared bool) {
	lg := cl.c.logger
	level, decision := slog.LevelDebug, "hold"
	if reason != "" {
		level, decision = slog.LevelInfo, "stop"
	}
	if lg == nil || !lg.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", cl.op.method),
		slog.String("route", cl.op.route),
		slog.String("bucket", cl.op.bucket.String()),
		slog.Int("attempt", cl.attempt()),
		slog.Duration("wait", wait),
		slog.Bool("shared", shared),
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

// attrs returns the attributes of the log event of decision d on a.
func (cl *call) attrs(d retry.Decision, a retry.Attempt, requestID, decision string) []slog.Attr {
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("method", cl.op.method),
		slog.String("route", cl.op.route),
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

// endRequest reports the end of the attempt startRequest showed: its
// outcome a, its response (nil for none), its request id and the decision
// d on it, with the call's count of attempts.
func (cl *call) endRequest(d retry.Decision, a retry.Attempt, resp *http.Response, requestID string) {
	if cl.obs == nil || cl.reqCtx == nil {
		return
	}
	e := RequestEnd{Status: a.Status, RequestID: requestID, ProtocolVersion: protocolVersion(resp), Decision: d}
	if a.Err != nil {
		e.ErrorKind = errorKind(a.Err, a.Failure)
	}
	cl.obs.endRequest(cl.reqCtx, e, cl.attempts)
	cl.reqCtx = nil
}

// unsentStop stops the call whose next attempt sendStep did not send: for
// a pacing hold, holdStop; for the credit budget, budgetStop; for ctx's
// end during the retry wait, cancelled.
// The attempt is not counted.
func (cl *call) unsentStop(ctx context.Context) error {
	switch {
	case cl.unsent.held:
		return cl.holdStop(ctx)
	case cl.unsent.budgetErr != nil:
		return cl.budgetStop(ctx)
	}
	return cl.cancelled(ctx)
}

// holdStop stops the call whose next attempt pacing held and did not
// send (cl.unsent): with retry.PacingExceedsDeadline when the hold would
// pass ctx's deadline (retry.TeamShareExceedsDeadline when the hold is for
// the team), with retry.ContextDone when ctx ended during it. For a first
// attempt the call's error is a *ConnectionError with NotSent set; for a
// retry it wraps the last attempt's error, as a stop during a retry's wait
// does.
func (cl *call) holdStop(ctx context.Context) error {
	h := &cl.unsent
	reason := retry.PacingExceedsDeadline
	switch {
	case h.ctxErr != nil:
		reason = retry.ContextDone
	case h.shared:
		reason = retry.TeamShareExceedsDeadline
	}
	cl.logPacing(ctx, h.wait, reason, h.shared)
	cl.observeHold(h.wait, reason, h.shared)
	first := !cl.last.set()
	if first {
		cl.last = heldOutcome(h.ctxErr)
	}
	if reason == retry.ContextDone || first {
		return cl.stop(ctx, reason)
	}
	m := cl.meta(reason)
	return stopError(m, ErrRateLimitHold, callError(m, &cl.last, cl.reached))
}

// observeHold reports a pacing hold of the call's next attempt: a wait of
// wait, or a stop for reason.
func (cl *call) observeHold(wait time.Duration, reason retry.StopReason, shared bool) {
	oc := cl.obs
	if oc == nil {
		return
	}
	if reason != "" {
		oc.reason = reason
	}
	oc.obs.Hold(oc.ctx, PacingHold{Bucket: cl.op.bucket.String(), Attempt: cl.attempt(), Wait: wait, Stop: reason, Shared: shared})
}

// cancelled stops a call whose context ended during the wait before an
// attempt: it logs the stop with the outcome of the attempt it was waiting
// to repeat, and returns stop's error.
func (cl *call) cancelled(ctx context.Context) error {
	d := cl.policy.Last()
	d.Retry, d.Wait, d.Reason = false, 0, retry.ContextDone
	var a retry.Attempt
	if o := &cl.last; o.answer.status != 0 {
		a.Status = o.answer.status
	} else {
		a.Err, a.Failure = o.cause, o.failure
	}
	cl.log(ctx, d, a, cl.last.answer.requestID)
	return cl.stop(ctx, retry.ContextDone)
}

// result turns what Do returned into the call's outcome: the response
// checkRetry accepted; the error it stopped the call with; or, when Do
// returned ctx's error itself (its own wait, of 0, saw ctx end), the stop
// of cancelled. A response that comes with an error is closed.
func (cl *call) result(ctx context.Context, resp *http.Response, err error) (*http.Response, error) {
	d := cl.policy.Last()
	if err == nil && !d.Retry {
		return resp, nil
	}
	if resp != nil {
		_ = resp.Body.Close()
	}
	switch {
	case d.Reason != "" || cl.unsent.set():
		return nil, err // checkRetry's stop
	case ctx.Err() != nil:
		return nil, cl.cancelled(ctx)
	}
	// go-retryablehttp gave up by itself, which RetryMax never lets it do.
	return nil, opError(meta{op: cl.op.name, attempts: cl.attempts}, "", err)
}

// meta describes the call for its error, stopped for reason.
func (cl *call) meta(reason retry.StopReason) meta {
	return meta{op: cl.op.name, attempts: cl.attempts, reason: reason}
}

// stop returns the call's error for a stop with reason (stoppedError).
func (cl *call) stop(ctx context.Context, reason retry.StopReason) error {
	return stoppedError(cl.meta(reason), ctx.Err(), &cl.last, cl.reached)
}

// discard closes a response whose body is not wanted.
func discard(resp *http.Response) {
	_ = resp.Body.Close()
	resp.Body = http.NoBody
}
