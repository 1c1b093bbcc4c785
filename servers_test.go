package synthient_test

// The package's test servers. Pick by what the test needs to control:
//
//   - apiServer: a real net/http server on loopback (http, https, or https
//     offering HTTP/2) whose handler gets each request's arrival number; it
//     records the requests (unless withoutLog) and counts arrivals and new
//     connections. For what needs a real connection, a pool or a second
//     host (downloads and their storage host, streams, timeouts, TLS).
//   - rawServer: a loopback TCP server that speaks HTTP/1.1 by hand, for
//     what net/http's server cannot do: close a connection after reading a
//     request, reset it mid-body, send a malformed head or a chunked body
//     cut short, hold a TLS handshake.
//   - mockAPI: an httpmock transport, no network at all. newOpMock serves
//     one operation of the table in helpers_test.go with a script of
//     responders (answer, answerJSON, problem, httpmock's error responders);
//     newMockAPI(t, r) answers every request through one responder. It
//     records each request with its arrival time, which inside a synctest
//     bubble is fake: the pick for the retry rules, the typed errors, the
//     log, and what a call sends (path, query, headers, body).
//     rateLimited puts a mocked route behind a token bucket, as the fake
//     API's, for rate-limit pacing in fake time.
//   - synthienttest.Server: the fake API (fakeClient in helpers_test.go),
//     for end-to-end behaviour across operations with injected faults.
//
// The benchmarks (bench_test.go) use plain httptest servers, to keep the
// harness's own work out of what they measure.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// ---- apiServer ----

// request is what an apiServer recorded of one request.
type request struct {
	Method   string
	Path     string // r.URL.Path, unescaped
	RawQuery string
	Query    url.Values
	Header   http.Header
}

// apiServer is a loopback httptest server that records every request
// (unless withoutLog) and answers through its handler, which gets the
// request's 1-based arrival number. A handler that waits must watch
// r.Context(): it ends when the client goes away or the test ends.
type apiServer struct {
	*httptest.Server
	// Base is the API base URL: URL + "/api/v4".
	Base string

	handler   func(n int, w http.ResponseWriter, r *http.Request)
	noLog     bool
	quit      chan struct{} // closed when the test ends
	once      sync.Once
	mu        sync.Mutex
	reqs      []request
	arrivals  atomic.Int64
	newConns  atomic.Int64
	openConns atomic.Int64
	connMoved chan struct{} // a value when a connection opened or closed, if none was waiting
}

// serverOption configures an apiServer or a rawServer.
type serverOption func(*serverConfig)

type serverConfig struct{ tls, http2, noLog bool }

// options applies opts.
func options(opts []serverOption) serverConfig {
	var cfg serverConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg
}

// withTLS serves https with httptest's certificate (the client needs
// synthient.WithTLSConfig with the server's root).
func withTLS() serverOption { return func(c *serverConfig) { c.tls = true } }

// withHTTP2 serves https and offers HTTP/2 too.
func withHTTP2() serverOption { return func(c *serverConfig) { c.tls, c.http2 = true, true } }

// withoutLog keeps no request (Requests is empty), for a test that
// measures the heap or a fuzz target that serves many inputs; the counts
// go on. For an apiServer and a rawServer.
func withoutLog() serverOption { return func(c *serverConfig) { c.noLog = true } }

// newAPIServer starts an apiServer whose handler is h (nil answers 200
// with no body). It is closed when the test ends, after which its counters
// are final.
func newAPIServer(t testing.TB, h func(n int, w http.ResponseWriter, r *http.Request), opts ...serverOption) *apiServer {
	t.Helper()
	cfg := options(opts)
	s := &apiServer{handler: h, noLog: cfg.noLog, quit: make(chan struct{}), connMoved: make(chan struct{}, 1)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.newConns.Add(1)
			s.openConns.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.openConns.Add(-1)
		default:
			return
		}
		select {
		case s.connMoved <- struct{}{}:
		default:
		}
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS handshake errors are expected
	s.EnableHTTP2 = cfg.http2
	if cfg.tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	s.Base = s.URL + "/api/v4"
	t.Cleanup(s.Finish)
	return s
}

// Finish ends every waiting handler and closes the server; it waits for
// the handlers to return. It is safe to call more than once.
func (s *apiServer) Finish() {
	s.once.Do(func() {
		close(s.quit)
		s.Close()
	})
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	if !s.noLog {
		s.mu.Lock()
		s.reqs = append(s.reqs, request{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Query: r.URL.Query(), Header: r.Header.Clone(),
		})
		s.mu.Unlock()
	}
	n := int(s.arrivals.Add(1))
	// The request's context also ends when the test ends, so that a
	// handler waiting on it never keeps Close waiting.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	if s.handler != nil {
		s.handler(n, w, r.WithContext(ctx))
	}
}

// Arrivals returns the number of requests received so far.
func (s *apiServer) Arrivals() int { return int(s.arrivals.Load()) }

// NewConns returns the number of connections opened to the server so far.
func (s *apiServer) NewConns() int { return int(s.newConns.Load()) }

// OpenConns returns the number of connections to the server open now, as
// the server sees them: a connection the client closed counts until the
// server has read its end.
func (s *apiServer) OpenConns() int { return int(s.openConns.Load()) }

// RequireNoConnOpen waits until the server sees no connection open, and
// fails the test if one still is after a minute: far longer than the
// server takes to read a loopback connection's end under any load, and
// shorter than the idle timeout that closes a connection a client forgot
// (90 s for a client whose timeout is 2 minutes or more: give the test's
// client one).
func (s *apiServer) RequireNoConnOpen(t *testing.T) {
	t.Helper()
	grace := time.NewTimer(time.Minute)
	defer grace.Stop()
	for s.OpenConns() > 0 {
		select {
		case <-s.connMoved:
		case <-grace.C:
			t.Fatalf("%d connections still open", s.OpenConns())
		}
	}
}

// Requests returns a copy of the recorded requests, in arrival order.
func (s *apiServer) Requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.reqs...)
}

// Paths returns the path of every recorded request, in arrival order.
func (s *apiServer) Paths() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Path)
	}
	return out
}

// trustServer trusts the certificate of httptest's TLS servers (all of
// them share it).
func trustServer(s *apiServer) synthient.Option {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return synthient.WithTLSConfig(&tls.Config{RootCAs: pool})
}

// writeJSON answers status with a JSON body and its Content-Length.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body) //nolint:gosec // a fake server's answer, to the client under test, not to a browser
}

// writeProblem answers status with an RFC 9457 problem body; kv are extra
// header pairs.
func writeProblem(w http.ResponseWriter, status int, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		w.Header().Set(kv[i], kv[i+1])
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"type":"https://docs.synthient.com/errors/x","title":%q,"status":%d,"detail":"detail of %d"}`,
		http.StatusText(status), status, status)
}

// serveNDJSON returns a handler that answers with body as a whole NDJSON
// stream and closes it cleanly.
func serveNDJSON(body string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(body))
	}
}

// ---- rawServer ----

// rawServer is a loopback TCP server that speaks HTTP/1.1 by hand. Each
// accepted connection runs serve in its own goroutine; the connection is
// closed when serve returns. It keeps every request it reads (unless
// withoutLog). Close (also run when the test ends) closes the
// listener and every connection and waits for the goroutines, so that the
// counters are final once it returns.
type rawServer struct {
	// URL is the API base URL, http://127.0.0.1:port/api/v4.
	URL string
	// Origin is http://127.0.0.1:port, for a storage host.
	Origin string
	// Addr is the listener's address, host:port.
	Addr string

	ln    net.Listener
	serve func(*rawConn)
	noLog bool
	done  chan struct{} // closed by Close

	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
	accepted atomic.Int64 // connections accepted
	arrivals atomic.Int64 // requests read, over every connection

	arrMu   sync.Mutex
	arrConn []int64         // connection number (1-based) of each arrival
	reqs    []*http.Request // every request read
}

// rawConn is one accepted connection of a rawServer.
type rawConn struct {
	net.Conn
	// N is the connection's number, 1-based, in accept order.
	N   int64
	br  *bufio.Reader
	srv *rawServer
}

// newRawServer starts a rawServer whose connections are handled by serve.
// Of the options, only withoutLog applies: a rawServer speaks plain
// HTTP/1.1.
func newRawServer(t testing.TB, serve func(*rawConn), opts ...serverOption) *rawServer {
	t.Helper()
	return newRawServerAt(t, "127.0.0.1:0", serve, opts...)
}

// newRawServerAt is newRawServer listening on addr, such as a port that
// refused an earlier connection.
func newRawServerAt(t testing.TB, addr string, serve func(*rawConn), opts ...serverOption) *rawServer {
	t.Helper()
	cfg := options(opts)
	require.False(t, cfg.tls, "a rawServer speaks plain HTTP/1.1: withTLS and withHTTP2 do not apply")
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", addr)
	require.NoError(t, err, "listen")
	s := &rawServer{
		URL:    "http://" + ln.Addr().String() + "/api/v4",
		Origin: "http://" + ln.Addr().String(),
		Addr:   ln.Addr().String(),
		ln:     ln,
		serve:  serve,
		noLog:  cfg.noLog,
		done:   make(chan struct{}),
		conns:  make(map[net.Conn]struct{}),
	}
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.Close)
	return s
}

func (s *rawServer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		rc := &rawConn{Conn: c, N: s.accepted.Add(1), br: bufio.NewReader(c), srv: s}
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				_ = c.Close()
			}()
			s.serve(rc)
		}()
	}
}

// Close stops the server: it closes the listener and every open
// connection, and waits until every goroutine of the server has returned.
// It is safe to call more than once.
func (s *rawServer) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
		_ = s.ln.Close()
		for c := range s.conns {
			_ = c.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// StopListening closes the listener alone: later connections are refused,
// open ones go on.
func (s *rawServer) StopListening() { _ = s.ln.Close() }

// Done is closed when the server is closing; a handler that holds its
// connection waits on it.
func (s *rawServer) Done() <-chan struct{} { return s.done }

// Accepted returns the number of connections accepted so far.
func (s *rawServer) Accepted() int { return int(s.accepted.Load()) }

// Arrivals returns the number of requests read so far, over every
// connection.
func (s *rawServer) Arrivals() int { return int(s.arrivals.Load()) }

// ArrivalConns returns the connection number of each arrival, in order.
func (s *rawServer) ArrivalConns() []int64 {
	s.arrMu.Lock()
	defer s.arrMu.Unlock()
	return append([]int64(nil), s.arrConn...)
}

// Requests returns the requests read so far, in arrival order.
func (s *rawServer) Requests() []*http.Request {
	s.arrMu.Lock()
	defer s.arrMu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// ReadRequest reads one whole request (head and body) from the connection
// and counts it as an arrival. n is the arrival's number over the whole
// server, 1-based. An error means the peer closed the connection or sent
// something that is not HTTP/1.1.
func (c *rawConn) ReadRequest() (req *http.Request, body []byte, n int, err error) {
	req, err = http.ReadRequest(c.br)
	if err != nil {
		return nil, nil, 0, err
	}
	body, err = io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, nil, 0, err
	}
	c.srv.arrMu.Lock()
	n = int(c.srv.arrivals.Add(1))
	c.srv.arrConn = append(c.srv.arrConn, c.N)
	if !c.srv.noLog {
		c.srv.reqs = append(c.srv.reqs, req)
	}
	c.srv.arrMu.Unlock()
	return req, body, n, nil
}

// WriteResponse writes a complete HTTP/1.1 response with a Content-Length,
// leaving the connection open (keep-alive).
func (c *rawConn) WriteResponse(status int, contentType, body string) error {
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %s\r\n\r\n",
		status, http.StatusText(status), contentType, strconv.Itoa(len(body)))
	_, err := io.WriteString(c.Conn, head+body)
	return err
}

// Reset closes the connection with an RST instead of a FIN.
func (c *rawConn) Reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Conn.Close()
}

// Wait blocks until ch is closed or the server closes; it reports whether
// ch was closed.
func (c *rawConn) Wait(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-c.srv.done:
		return false
	}
}

// chunked frames each part as one chunk of a chunked body, as a rawServer
// writes it; an empty part is the last chunk, which ends the body.
func chunked(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = fmt.Appendf(b, "%x\r\n%s\r\n", len(p), p)
	}
	return b
}

// ---- mockAPI ----

// mockOrigin is the origin of the API a mockAPI serves, mockBase its base
// URL. Nothing is ever dialled.
const (
	mockOrigin = "https://api.test"
	mockBase   = mockOrigin + "/api/v4"
)

// mockRequest is what a mockAPI recorded of one request.
type mockRequest struct {
	At     time.Time // when it arrived: fake time inside a synctest bubble
	Method string
	URL    url.URL
	Header http.Header
	Body   string
}

// mockAPI is an httpmock transport that records every request it answers,
// with its arrival time, which httpmock does not keep (the waits between
// attempts are the gaps between arrivals). Route serves a route with a
// script of responders; the responder of newMockAPI answers the rest.
type mockAPI struct {
	*httpmock.MockTransport

	mu   sync.Mutex
	reqs []mockRequest
}

// newMockAPI returns a mockAPI that answers every request no route
// matches through rest; with rest nil such a request fails the test.
func newMockAPI(t testing.TB, rest httpmock.Responder) *mockAPI {
	m := &mockAPI{MockTransport: httpmock.NewMockTransport()}
	if rest == nil {
		m.RegisterNoResponder(httpmock.NewNotFoundResponder(t.Error))
	} else {
		m.RegisterNoResponder(m.record(rest))
	}
	return m
}

// Route answers method and path (on mockOrigin) with script: each
// responder once and in turn, the last one for every later request
// (httpmock's Responder.Then).
func (m *mockAPI) Route(method, path string, script ...httpmock.Responder) *mockAPI {
	inTurn := script[0]
	for _, r := range script[1:] {
		inTurn = inTurn.Then(r)
	}
	m.RegisterResponder(method, mockOrigin+path, m.record(inTurn))
	return m
}

// RoutePrefix is Route for every path that starts with prefix.
func (m *mockAPI) RoutePrefix(method, prefix string, script ...httpmock.Responder) *mockAPI {
	inTurn := script[0]
	for _, r := range script[1:] {
		inTurn = inTurn.Then(r)
	}
	m.RegisterRegexpResponder(method, regexp.MustCompile("^"+regexp.QuoteMeta(mockOrigin+prefix)), m.record(inTurn))
	return m
}

// record is next, recording each request first. The body is read and put
// back, for a responder that reads it too.
func (m *mockAPI) record(next httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			_ = req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		m.mu.Lock()
		m.reqs = append(m.reqs, mockRequest{
			At: time.Now(), Method: req.Method, URL: *req.URL, Header: req.Header.Clone(), Body: string(body),
		})
		m.mu.Unlock()
		return next(req)
	}
}

// Client returns a client of mockBase on the mock (see newClient); opts
// come last and win.
func (m *mockAPI) Client(t testing.TB, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	return newClient(t, mockBase, append([]synthient.Option{synthient.WithTransport(m.MockTransport)}, opts...)...)
}

// Requests returns the recorded requests, in arrival order.
func (m *mockAPI) Requests() []mockRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

// Take returns the requests recorded since the last Take and forgets
// them, for a fuzz target that makes one call per input.
func (m *mockAPI) Take() []mockRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	reqs := m.reqs
	m.reqs = nil
	return reqs
}

// RequireOne checks that exactly one request was recorded, with the
// method and the (decoded) path given, and returns it.
func (m *mockAPI) RequireOne(t testing.TB, method, path string) mockRequest {
	t.Helper()
	reqs := m.Requests()
	require.Len(t, reqs, 1, "requests sent")
	assert.Equal(t, method, reqs[0].Method, "method")
	assert.Equal(t, path, reqs[0].URL.Path, "path")
	return reqs[0]
}

// Gaps returns the time between consecutive requests.
func (m *mockAPI) Gaps() []time.Duration {
	reqs := m.Requests()
	var out []time.Duration
	for i := 1; i < len(reqs); i++ {
		out = append(out, reqs[i].At.Sub(reqs[i-1].At))
	}
	return out
}

// opSucceeds, in the script of newOpMock, stands for the operation's 200
// with its success body.
var opSucceeds httpmock.Responder

// newOpMock returns a mockAPI that serves the route of op with script (by
// default, the operation's success); any other request fails the test.
func newOpMock(t testing.TB, op opCase, script ...httpmock.Responder) *mockAPI {
	if len(script) == 0 {
		script = []httpmock.Responder{opSucceeds}
	}
	script = slices.Clone(script)
	for i, r := range script {
		if r == nil {
			script[i] = answerJSON(http.StatusOK, op.success)
		}
	}
	return newMockAPI(t, nil).Route(op.method, op.path, script...)
}

// answer is an answer with a status, a body, its Content-Length and header
// pairs (a key may repeat to give it several values).
func answer(status int, body string, kv ...string) httpmock.Responder {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return httpmock.NewStringResponder(status, body).HeaderAdd(h).SetContentLength()
}

// answerJSON is an application/json answer.
func answerJSON(status int, body string) httpmock.Responder {
	return answer(status, body, "Content-Type", "application/json")
}

// problem is an error status with a problem+json body and header pairs.
func problem(status int, kv ...string) httpmock.Responder {
	body := fmt.Sprintf(`{"type":"https://docs.synthient.com/errors/test","title":%q,"status":%d}`,
		http.StatusText(status), status)
	return answer(status, body, append([]string{"Content-Type", "application/problem+json"}, kv...)...)
}

// dialRefused is the error of a dial to a port nothing listens on, for
// httpmock.NewErrorResponder.
func dialRefused() error { return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED} }

// timeoutError is a transport error that says a wait ran out, for
// httpmock.NewErrorResponder.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// rateLimitKV returns the header pairs of an answer that says a rate
// limit's state (for answer and problem): the burst, the whole tokens left
// and the seconds until the bucket is full.
func rateLimitKV(limit, remaining, reset int) []string {
	return []string{"RateLimit-Limit", strconv.Itoa(limit), "RateLimit-Remaining", strconv.Itoa(remaining),
		"RateLimit-Reset", strconv.Itoa(reset)}
}

// rateLimited is a mockAPI responder behind a token bucket, as the fake
// API's (synthienttest/ratelimit.go): perSecond tokens a second up to
// burst, full at the first request. Each answer says the bucket's state;
// an empty bucket answers 429 with Retry-After, the whole seconds (at
// least 1) until a token is back. Its clock is time.Now: fake inside a
// synctest bubble. It is safe for concurrent use.
type rateLimited struct {
	perSecond float64
	burst     int
	body      string // the 200's JSON body

	mu        sync.Mutex
	tokens    float64
	last      time.Time
	started   bool
	throttled int
}

// newRateLimited returns a responder of a bucket of perSecond and burst
// that answers 200 with body.
func newRateLimited(perSecond float64, burst int, body string) *rateLimited {
	return &rateLimited{perSecond: perSecond, burst: burst, body: body}
}

// Respond is the httpmock.Responder.
func (b *rateLimited) Respond(req *http.Request) (*http.Response, error) {
	ok, remaining, reset, retryAfter := b.take(time.Now())
	kv := rateLimitKV(b.burst, remaining, reset)
	if !ok {
		return problem(http.StatusTooManyRequests, append(kv, "Retry-After", strconv.Itoa(retryAfter))...)(req)
	}
	return answer(http.StatusOK, b.body, append(kv, "Content-Type", "application/json")...)(req)
}

// take spends a token at now, as the fake's bucket does.
func (b *rateLimited) take(now time.Time) (ok bool, remaining, reset, retryAfter int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started {
		b.tokens, b.last, b.started = float64(b.burst), now, true
	}
	b.tokens = math.Min(float64(b.burst), b.tokens+now.Sub(b.last).Seconds()*b.perSecond)
	b.last = now
	if ok = b.tokens >= 1; ok {
		b.tokens--
	} else {
		b.throttled++
		retryAfter = max(1, int(math.Ceil((1-b.tokens)/b.perSecond)))
	}
	return ok, int(math.Floor(b.tokens)), int(math.Ceil((float64(b.burst) - b.tokens) / b.perSecond)), retryAfter
}

// Throttled returns the 429s answered so far.
func (b *rateLimited) Throttled() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.throttled
}
