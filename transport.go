package synthient

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/synthient-go/synthient/internal/problem"
	"github.com/synthient-go/synthient/retry"
)

// newTransport returns the client's own HTTP/1.1 transport: each connect
// bounded by open, each read and write by timeout, no proxy (the library
// reads no environment).
//
// HTTP/1.1 keeps the timeouts exact (a connection carries one request at a
// time) and the replay rules simple.
func newTransport(timeout, open time.Duration, cfg *tls.Config) *http.Transport {
	d := &dialer{timeout: timeout, open: open, tls: cfg}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	return &http.Transport{
		DialContext:         d.dial,
		DialTLSContext:      d.dialTLS,
		Protocols:           &protocols,
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 64,
		// Large reads for downloads and streams: fewer system calls.
		ReadBufferSize: 64 << 10,
		// An idle connection's pending read would time out after timeout;
		// the pool lets go of it first, so a request never picks up a
		// connection that is about to fail.
		IdleConnTimeout: min(90*time.Second, timeout*3/4),
	}
}

type dialer struct {
	timeout, open time.Duration
	tls           *tls.Config
}

func (d *dialer) netDialer() *net.Dialer {
	return &net.Dialer{Timeout: d.open, KeepAlive: 30 * time.Second}
}

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.netDialer().DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: conn, timeout: d.timeout, armed: true}, nil
}

// dialTLS dials and completes the TLS handshake within one open timeout.
// Every failure is reported as a dial error: the request never left.
func (d *dialer) dialTLS(parent context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(parent, d.open)
	defer cancel()
	raw, err := d.netDialer().DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cfg := d.tls.Clone()
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	conn := &deadlineConn{Conn: raw, timeout: d.timeout}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
			// The open timeout, not the caller's deadline: report it as
			// net.Dialer reports its own timeout.
			err = os.ErrDeadlineExceeded
		}
		return nil, &net.OpError{Op: "dial", Net: network, Addr: raw.RemoteAddr(), Err: err}
	}
	conn.armed = true
	return tc, nil
}

// deadlineConn bounds each Read and each Write by timeout. A Write also
// restarts the read deadline: the wait for the answer starts when the
// request was written, even if a read was already pending. Until armed
// (during a TLS handshake, bounded by the open timeout) it sets none.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
	armed   bool
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	if c.armed {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	}
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	if !c.armed {
		return c.Conn.Write(b)
	}
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	n, err := c.Conn.Write(b)
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	return n, err
}

// poolGuard forwards RoundTrip and nothing else, so that go-retryablehttp's
// CloseIdleConnections, called whenever it gives up, cannot reach the
// shared pool.
//
// It also moves the Location of every 3xx aside (see movedLocation):
// http.Client parses a Location before it asks CheckRedirect, and one that
// does not parse fails the request with the URL, presigned query and all,
// in the error's text; without a Location it returns the 3xx as it is.
type poolGuard struct{ rt http.RoundTripper }

func (g poolGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := g.rt.RoundTrip(r)
	if resp != nil && resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header != nil {
		if v, ok := resp.Header["Location"]; ok {
			delete(resp.Header, "Location")
			resp.Header[movedLocation] = v
		}
	}
	return resp, err
}

// movedLocation is the header key poolGuard keeps a 3xx's Location under.
// No server can send it: net/http refuses a header name with parentheses.
const movedLocation = "Location (moved aside)"

// location returns the Location of a response, moved aside by poolGuard
// or not.
func location(h http.Header) string {
	if v := h[movedLocation]; len(v) > 0 {
		return v[0]
	}
	return h.Get("Location")
}

// headerCopy returns a copy of a response's header as the server sent it,
// the Location back in place.
func headerCopy(h http.Header) http.Header {
	c := h.Clone()
	if v, ok := c[movedLocation]; ok {
		delete(c, movedLocation)
		c["Location"] = v
	}
	return c
}

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
}

func (op *operation) accepts(status int) bool {
	return status >= 200 && status < 300 || op.redirect && status >= 300 && status < 400
}

// attemptLoop is the state of one call on go-retryablehttp: its retry
// decisions, its last error and the final one. Loops are pooled by the
// client; rc's hooks are bound to the loop once.
type attemptLoop struct {
	c        *Client
	rc       retryablehttp.Client
	op       *operation
	call     retry.Call
	attempts int
	// reached records that an attempt of the call may have reached the
	// server: it got a response, or failed after the request may have been
	// written. It makes NotSent describe the call, not its last attempt.
	reached bool
	// gotConn records that the current attempt got a connection (trace,
	// installed on the client's own transport only, whose GotConn runs on
	// the calling goroutine): an attempt without one sent nothing, also
	// when ctx cut it short while dialing.
	gotConn bool
	trace   httptrace.ClientTrace
	last    error // the last attempt's *APIError, *ConnectionError or *TimeoutError
	final   error // the error the call returns, once decided
}

func newAttemptLoop(c *Client) *attemptLoop {
	l := &attemptLoop{c: c}
	l.trace.GotConn = func(httptrace.GotConnInfo) { l.gotConn = true }
	l.rc = retryablehttp.Client{
		HTTPClient: c.hc,
		// The policy decides; this only keeps go-retryablehttp from
		// stopping first.
		RetryMax:     retry.MaxRetriesCap + 1,
		CheckRetry:   l.checkRetry,
		Backoff:      l.call.Backoff,
		ErrorHandler: l.giveUp,
	}
	return l
}

// do sends op with its retry class and returns the accepted response
// (2xx, or the 307 of a download) with its body open, or the call's error.
// m describes the call for errors found after it, such as a body that does
// not decode.
func (c *Client) do(ctx context.Context, op *operation) (resp *http.Response, m meta, err error) {
	m.op = op.name
	if c.closed.Load() {
		return nil, m, &Error{Op: op.name, Err: ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return nil, m, &Error{Op: op.name, StopReason: retry.ContextDone, Err: err}
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
	resp, err = l.rc.Do(req)
	m.attempts = l.attempts
	if l.final == nil && err != nil {
		if ctx.Err() != nil {
			// go-retryablehttp returns the bare context error when ctx
			// ends during a wait.
			l.cancelled(ctx)
			l.final = l.stop(ctx, retry.ContextDone)
		} else {
			l.final = &Error{Op: op.name, Attempts: l.attempts, Err: err}
		}
	}
	if l.final != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, m, l.final
	}
	return resp, m, nil
}

func (c *Client) newRequest(ctx context.Context, op *operation) (*retryablehttp.Request, error) {
	u := c.base + op.path
	if len(op.query) > 0 {
		u += "?" + op.query.Encode()
	}
	hreq, err := http.NewRequestWithContext(ctx, op.method, u, nil)
	if err != nil {
		return nil, &Error{Op: op.name, Message: "building the request", Err: errors.Unwrap(err)}
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
	req := &retryablehttp.Request{Request: hreq}
	if op.body != nil {
		hreq.Header["Content-Type"] = []string{"application/json"}
		if err := req.SetBody(op.body); err != nil {
			return nil, &Error{Op: op.name, Message: "building the request", Err: err}
		}
	} else {
		retry.SetNoReplayBody(hreq)
	}
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
	return httptrace.WithClientTrace(ctx, &l.trace)
}

// mayHaveReached reports whether an attempt that failed with f may have
// reached the server.
func (l *attemptLoop) mayHaveReached(f retry.Failure) bool {
	return !f.NotSent && (l.gotConn || l.c.owned == nil)
}

func (l *attemptLoop) start(op *operation, p retry.Policy) {
	p.Class = op.class
	l.op = op
	// An earlier leg of the call was answered: the call has reached the
	// server, and its attempts count.
	l.attempts, l.reached = op.prior, op.prior > 0
	l.call.Reset(p)
}

func (l *attemptLoop) reset() {
	l.op, l.attempts, l.reached, l.gotConn, l.last, l.final = nil, 0, false, false, nil, nil
	l.call.Reset(retry.Policy{})
}

// checkRetry is the go-retryablehttp CheckRetry of a call: it turns the
// attempt's outcome into a typed error, runs the response hook, asks the
// policy, logs the decision and, on a stop, records the call's error. It
// never returns an error itself, so that go-retryablehttp hands back the
// response as it is.
func (l *attemptLoop) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	l.attempts++
	defer func() { l.gotConn = false }() // the next attempt starts afresh
	var a retry.Attempt
	if err != nil {
		f, cause := transportCause(err)
		a = retry.Attempt{Err: cause, Failure: f}
		l.reached = l.reached || l.mayHaveReached(f)
		if ctx.Err() == nil {
			l.last = l.connectionError(cause, a.Failure)
		}
	} else {
		l.reached = true
		if hook := l.c.hook; hook != nil {
			if herr := hook(newResponseInfo(resp)); herr != nil {
				discard(resp)
				l.final = herr
				a := retry.Attempt{Status: resp.StatusCode, HandlerErr: herr}
				l.log(ctx, l.call.Decide(ctx, a), a, resp.Header.Get("X-Request-Id"))
				return false, nil
			}
		}
		a = retry.Attempt{
			Status:     resp.StatusCode,
			RetryAfter: resp.Header["Retry-After"],
			Date:       resp.Header.Get("Date"),
			Accepted:   l.op.accepts(resp.StatusCode),
		}
		if !a.Accepted {
			l.last = readAPIError(resp)
		}
	}
	d := l.call.Decide(ctx, a)
	if ae, ok := l.last.(*APIError); ok && resp != nil && !a.Accepted && d.HasRetryAfter {
		ra := d.RetryAfter
		ae.RetryAfter = &ra
	}
	var id string
	if resp != nil {
		id = resp.Header.Get("X-Request-Id")
	}
	l.log(ctx, d, a, id)
	switch {
	case d.Retry:
		return true, nil
	case d.Reason != "":
		l.final = l.stop(ctx, d.Reason)
	}
	return false, nil
}

// giveUp is the go-retryablehttp ErrorHandler: it returns the call's error
// instead of go-retryablehttp's own, which drops the response.
func (l *attemptLoop) giveUp(resp *http.Response, err error, _ int) (*http.Response, error) {
	if resp != nil {
		resp.Body.Close()
	}
	if l.final != nil {
		return nil, l.final
	}
	return nil, err
}

// cancelled logs the end of a call whose context ended during a wait,
// with the outcome of the attempt it was waiting to repeat.
func (l *attemptLoop) cancelled(ctx context.Context) {
	d := l.call.Last()
	d.Retry, d.Wait, d.Reason = false, 0, retry.ContextDone
	var a retry.Attempt
	var id string
	switch e := l.last.(type) {
	case *APIError:
		a.Status, id = e.Status, e.RequestID
	case *ConnectionError:
		a.Err, a.Failure = e.Err, retry.ClassifyError(e.Err)
	case *TimeoutError:
		a.Err, a.Failure = e.Err, retry.ClassifyError(e.Err)
	}
	l.log(ctx, d, a, id)
}

// stop returns the call's error for a stop with reason: the last attempt's
// typed error, or for a context that ended, an *Error that wraps both the
// context's error and the last attempt's. Either way the last attempt's
// NotSent is settled for the whole call.
func (l *attemptLoop) stop(ctx context.Context, reason retry.StopReason) error {
	m := meta{op: l.op.name, attempts: l.attempts, reason: reason}
	if ce := asConnectionError(l.last); ce != nil {
		// An attempt cut short by ctx may have reached the server after
		// the last error was recorded.
		ce.NotSent = ce.NotSent && !l.reached
	}
	// The last attempt's error describes the call too, also when it is
	// wrapped below a context's: errors.As from it reaches the same *Error.
	switch e := l.last.(type) {
	case *APIError:
		e.meta = m
	case *ConnectionError:
		e.meta = m
	case *TimeoutError:
		e.meta = m
	}
	if reason == retry.ContextDone || l.last == nil {
		return &Error{Op: m.op, Attempts: m.attempts, StopReason: reason, Err: ctx.Err(), last: l.last}
	}
	return l.last
}

// asConnectionError returns the *ConnectionError of err, itself or the
// one a *TimeoutError embeds; nil for any other error.
func asConnectionError(err error) *ConnectionError {
	switch e := err.(type) {
	case *ConnectionError:
		return e
	case *TimeoutError:
		return &e.ConnectionError
	}
	return nil
}

// connectionError returns the typed error of an attempt that failed with
// cause. Its NotSent describes the call: it is true only when neither this
// attempt nor an earlier one can have reached the server.
func (l *attemptLoop) connectionError(cause error, f retry.Failure) error {
	ce := ConnectionError{NotSent: f.NotSent && !l.reached, Err: cause, attemptNotSent: f.NotSent}
	if f.Timeout {
		return &TimeoutError{ce}
	}
	return &ce
}

// readAPIError reads at most 64 KiB of an error response's body, closes
// it, and parses it into an *APIError.
func readAPIError(resp *http.Response) *APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, problem.MaxBody))
	resp.Body.Close()
	resp.Body = http.NoBody
	return newAPIError(resp.StatusCode, resp.Header, body)
}

func newAPIError(status int, h http.Header, body []byte) *APIError {
	d := problem.Parse(h.Get("Content-Type"), body)
	e := &APIError{
		Status:    status,
		Type:      d.Type,
		Title:     d.Title,
		Detail:    d.Detail,
		Errors:    d.Errors,
		RequestID: h.Get("X-Request-Id"),
	}
	if e.RequestID == "" {
		e.RequestID = d.Instance
	}
	return e
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
	lg.LogAttrs(ctx, level, "synthient: attempt", attrs...)
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
