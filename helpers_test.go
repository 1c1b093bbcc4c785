package synthient_test

// The package's one harness: the servers the tests run against, clients
// of them, and the checks the tests share. A helper one test file uses
// stays in that file.
//
// Pick the server by what the test must control:
//
//   - setup: the fake API (synthienttest), the default. Realistic answers
//     on a real loopback connection, faults injected by route
//     (Server.Inject): end-to-end behaviour across operations.
//   - newMockAPI (newOpMock for one operation of the table below): an
//     httpmock transport, no network, answers scripted to the byte by
//     responders (answer, answerJSON, problem, httpmock's error
//     responders). It records each request with its arrival time, which
//     inside a synctest bubble is fake: the retry rules, the typed errors,
//     the log, what a call sends, pacing (rateLimited) in fake time.
//   - newAPIServer: a loopback server whose handler answers each request
//     (with its arrival number), and may take its connection over
//     (takeOver) to write what net/http would not: a malformed head, a
//     body cut short, a reset, no answer at all. For what only a real
//     connection shows: the client's own transport (timeouts, TLS,
//     keep-alive, connection tracing), a download's storage host, streams.
//     nettest.NewSilent is a listener that never speaks (a TLS handshake
//     never answered), nettest.DeadAddr an address nothing listens on.
//
// The benchmarks (bench_test.go) use plain httptest servers, to keep the
// harness's own work out of what they measure.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"iter"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// ---- Clients ----

// testKey is the API key the tests use; no error or log line may hold it.
const testKey = "test-key-6f1d2c3b-secret"

// presignSecret is the signature of the presigned storage URLs the tests
// build: it must never appear in an error or a log line.
const presignSecret = "SECRETSIG0d1e2f3a4b5c6d7e8f"

// presignQuery is the query of a presigned storage URL (R2 / S3 style).
const presignQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20260610%2Fauto%2Fs3%2Faws4_request" +
	"&X-Amz-Date=20260610T140000Z&X-Amz-Expires=86400&X-Amz-Security-Token=" + presignToken +
	"&X-Amz-SignedHeaders=host&X-Amz-Signature=" + presignSecret

// presignToken is the session token of a presigned URL (STS), escaped: its
// pieces between escapes are short, so only its whole forms can be
// recognised.
const presignToken = "IQo%2Fb3%2BJ%2Fzx%2FFw%3D%3D" //nolint:gosec // a made-up token the tests look for in what is printed, no credential

// presignObject is the object path on the storage host.
const presignObject = "/bucket/proxies/2026/06/10/14_proxies.parquet"

// presigned returns the presigned URL of presignObject on origin.
func presigned(origin string) string { return origin + presignObject + "?" + presignQuery }

// secrets are what no error rendering and no log line may hold: the API
// key, and the parts of a presigned query.
var secrets = []string{testKey, presignSecret, "X-Amz-", "AKIAEXAMPLE"}

// fastBackoff keeps retries in tests from sleeping through a real backoff.
var fastBackoff = synthient.WithBackoff(time.Millisecond, 2*time.Millisecond)

// newClient returns a client for the API at baseURL (including /api/v4)
// with tiny backoffs, closed when the test ends; opts come after those
// and win.
func newClient(t testing.TB, baseURL string, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	all := append([]synthient.Option{synthient.WithBaseURL(baseURL), fastBackoff}, opts...)
	c, err := synthient.NewClient(testKey, all...)
	require.NoError(t, err, "NewClient")
	t.Cleanup(func() { c.Close() })
	return c
}

// loggedClient is newClient with a Debug logger, whose output is checked
// for secrets when the test ends.
func loggedClient(t testing.TB, baseURL string, opts ...synthient.Option) (*synthient.Client, *logBuffer) {
	t.Helper()
	lg, logs := newLogger()
	c := newClient(t, baseURL, append([]synthient.Option{synthient.WithLogger(lg)}, opts...)...)
	t.Cleanup(func() { assertNoSecret(t, nil, logs) })
	return c, logs
}

// setup starts the fake API and returns a client of it (its URL and its
// key, with tiny backoffs) and the server, both closed when the test
// ends, as go-github's setup does; opts come last and win. A test that
// sets the server up (synthienttest options) uses fakeServer and
// fakeClient.
func setup(t testing.TB, opts ...synthient.Option) (*synthient.Client, *synthienttest.Server) {
	t.Helper()
	srv := fakeServer(t)
	return fakeClient(t, srv, opts...), srv
}

// fakeServer starts the fake API with opts, closed when the test ends.
func fakeServer(t testing.TB, opts ...synthienttest.Option) *synthienttest.Server {
	t.Helper()
	srv := synthienttest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv
}

// fakeClient returns a client of the fake API srv (its URL and its key,
// not testKey) with tiny backoffs, closed when the test ends; opts come
// last and win.
func fakeClient(t testing.TB, srv *synthienttest.Server, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	c, err := srv.NewClient(append([]synthient.Option{fastBackoff}, opts...)...)
	require.NoError(t, err, "NewClient")
	t.Cleanup(func() { c.Close() })
	return c
}

// statusFault is a fault of the fake API: an answer with status.
func statusFault(status int) synthienttest.Fault {
	return synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: status}
}

// callCtx is the context of a call under test: a watchdog of 2 minutes, so
// that a rule that is not implemented (a timeout that never fires) fails
// the test instead of hanging it. Only a hang outlasts it, whatever the
// machine's load.
func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func ptr[T any](v T) *T { return &v }

// ---- The operations and calls ----

// callFunc is one call of a client, its result dropped.
type callFunc func(context.Context, *synthient.Client) error

// opCase is one operation of the billed or standard class, for the
// scripted mock (newOpMock).
type opCase struct {
	name    string
	billed  bool
	method  string
	path    string // the path the request must have
	success string // a 200 body that decodes
	call    callFunc
}

// testIP is the address the operations look up.
var testIP = netip.MustParseAddr("1.2.3.4")

// operations returns every operation of the billed and standard classes.
func operations() []opCase {
	return []opCase{
		{
			name: "LookupIP", billed: true, method: http.MethodGet, path: "/api/v4/lookup/ip/1.2.3.4",
			success: `{"ip":"1.2.3.4"}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupIP(ctx, testIP)
				return err
			},
		},
		{
			name: "LookupIPs", billed: true, method: http.MethodPost, path: "/api/v4/lookup/ips",
			success: `{"results":[{"ip":"1.2.3.4"}]}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupIPs(ctx, []netip.Addr{testIP})
				return err
			},
		},
		{
			name: "LookupDomain", billed: true, method: http.MethodGet, path: "/api/v4/lookup/domain/example.org",
			success: `{"domain":"example.org","status":"active"}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.LookupDomain(ctx, "example.org", nil)
				return err
			},
		},
		{
			name: "Health", billed: true, method: http.MethodGet, path: "/api/v4/health",
			success: `{"status":"ok"}`,
			call: func(ctx context.Context, c *synthient.Client) error {
				_, err := c.Health(ctx)
				return err
			},
		},
		{
			name: "Account", billed: false, method: http.MethodGet, path: "/api/v4/account/me",
			success: `{"first_name":"Grace","email":"grace@example.com","scopes":["BASIC"]}`,
			call:    callAccount,
		},
	}
}

// opNamed returns the operation of operations called name.
func opNamed(name string) opCase {
	for _, op := range operations() {
		if op.name == name {
			return op
		}
	}
	panic("no operation " + name)
}

// sampleIP is the address callLookupIP looks up.
var sampleIP = netip.MustParseAddr("203.0.113.7")

// sampleAccountJSON is an /account/me body.
const sampleAccountJSON = `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","organization":{"id":"org_1","name":"Example","relation":"OWNER"},"scopes":["BASIC"],"lookup_quota":{"credits":1000,"resets_in":3600}}`

func callLookupIP(ctx context.Context, c *synthient.Client) error {
	_, err := c.LookupIP(ctx, sampleIP)
	return err
}

// callLookupIPAt looks up the address 203.0.113.n: calls for different
// addresses send a request each, where identical ones in flight share one.
func callLookupIPAt(ctx context.Context, c *synthient.Client, n int) error {
	_, err := c.LookupIP(ctx, netip.AddrFrom4([4]byte{203, 0, 113, byte(n)})) //nolint:gosec // the address 203.0.113.n: n is below 256
	return err
}

func callAccount(ctx context.Context, c *synthient.Client) error {
	_, err := c.Account(ctx)
	return err
}

// feedSegments maps every feed to its URL path segment.
var feedSegments = []struct {
	feed synthient.Feed
	seg  string
}{
	{synthient.FeedProxies, "proxies"},
	{synthient.FeedAnonymizers, "anonymizers"},
	{synthient.FeedTorrents, "torrents"},
	{synthient.FeedHoneypotHTTP, "helio/http"},
	{synthient.FeedHoneypotHTTPS, "helio/https"},
	{synthient.FeedHoneypotDNS, "helio/dns"},
	{synthient.FeedHoneypotADB, "helio/adb"},
	{synthient.FeedJA4T, "ja4t"},
}

// ---- Logs ----

// logBuffer is a concurrency-safe buffer for a JSON slog handler.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newLogger returns a Debug-level JSON logger writing to a new buffer.
func newLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// attemptEvents counts the attempt events of a log.
func attemptEvents(logs *logBuffer) int {
	return strings.Count(logs.String(), `"msg":"synthient: attempt"`)
}

// ---- Errors ----

// errTree returns err and every error below it, through Unwrap() error and
// Unwrap() []error.
func errTree(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) { //nolint:errorlint // one level of the tree: err's own Unwrap, not one below it
	case interface{ Unwrap() error }:
		out = append(out, errTree(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, errTree(e)...)
		}
	}
	return out
}

// renderings returns every way an error is commonly printed, for err, each
// error in its tree, and the base *Error errors.As builds for it.
func renderings(err error) []string {
	var out []string
	for _, e := range errTree(err) {
		out = append(out, e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e), fmt.Sprintf("%s", e))
	}
	var base *synthient.Error
	if errors.As(err, &base) {
		out = append(out, base.Error(), fmt.Sprintf("%+v", base), fmt.Sprintf("%#v", base))
	}
	return out
}

// assertNoSecret checks that no rendering of err, and not the log (when
// logs is not nil), holds a secret or one of extra.
func assertNoSecret(t testing.TB, err error, logs *logBuffer, extra ...string) {
	t.Helper()
	texts := renderings(err)
	if logs != nil {
		texts = append(texts, logs.String())
	}
	for _, s := range texts {
		for _, secret := range append(secrets, extra...) {
			assert.NotContains(t, s, secret, "a rendering leaks a secret")
		}
	}
}

// requireStop checks the base *Error of err: the attempts the call made
// and the reason it stopped.
func requireStop(t testing.TB, err error, attempts int, reason retry.StopReason) *synthient.Error {
	t.Helper()
	var base *synthient.Error
	require.ErrorAs(t, err, &base)
	assert.Equal(t, attempts, base.Attempts, "Attempts of %v", err)
	assert.Equal(t, reason, base.StopReason, "StopReason of %v", err)
	return base
}

// requireConnErr checks that err is a *ConnectionError (a *TimeoutError
// when timeout is set, a plain one otherwise) with the given NotSent, that
// it holds no secret or URL, and that it does not also match *APIError.
func requireConnErr(t testing.TB, err error, notSent, timeout bool) *synthient.ConnectionError {
	t.Helper()
	require.Error(t, err)
	assertNoSecret(t, err, nil)
	var ce *synthient.ConnectionError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, notSent, ce.NotSent, "ConnectionError.NotSent of %v", err)
	assert.NotContains(t, err.Error(), "://", "the error holds a URL")
	assert.NotContains(t, err.Error(), "/api/v4", "the error holds a URL")
	var te *synthient.TimeoutError
	if assert.Equal(t, timeout, errors.As(err, &te), "is %v a *TimeoutError", err) && timeout {
		assert.True(t, te.Timeout())
	}
	var ae *synthient.APIError
	assert.NotErrorAs(t, err, &ae, "a network failure also matches *APIError")
	return ce
}

// requireAPIErr checks that err reaches an *APIError with status, that
// holds no secret.
func requireAPIErr(t testing.TB, err error, status int) *synthient.APIError {
	t.Helper()
	require.Error(t, err)
	assertNoSecret(t, err, nil)
	var ae *synthient.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, status, ae.Status, "APIError.Status of %v", err)
	return ae
}

// requirePlainError checks that err is an *Error with no *APIError or
// *ConnectionError behind it, and returns it.
func requirePlainError(t testing.TB, err error) *synthient.Error {
	t.Helper()
	var base *synthient.Error
	require.ErrorAs(t, err, &base)
	var ae *synthient.APIError
	assert.NotErrorAs(t, err, &ae, "err = %v matches *APIError, want a plain *Error", err)
	var ce *synthient.ConnectionError
	assert.NotErrorAs(t, err, &ce, "err = %v matches *ConnectionError, want a plain *Error", err)
	return base
}

// requireInvalid checks that err matches ErrInvalidArgument: rejected
// before anything was sent.
func requireInvalid(t testing.TB, err error) {
	t.Helper()
	require.ErrorIs(t, err, synthient.ErrInvalidArgument)
}

// acceptedRequest checks the invariant every input must meet, whatever
// the oracle says: a rejection matches ErrInvalidArgument and sent
// nothing; an acceptance sent exactly one GET to the API's host. It
// returns the request, or nil for a rejection.
func acceptedRequest(t *testing.T, what string, err error, reqs []mockRequest) *mockRequest {
	t.Helper()
	if err != nil {
		require.ErrorIs(t, err, synthient.ErrInvalidArgument, "%s: nothing else can fail here", what)
		require.Empty(t, reqs, "%s: rejected (%v) but sent requests", what, err)
		return nil
	}
	require.Len(t, reqs, 1, "%s: accepted, want exactly 1 request sent", what)
	r := reqs[0]
	require.Equal(t, http.MethodGet, r.Method, "%s: method", what)
	require.Equal(t, mockOrigin, r.URL.Scheme+"://"+r.URL.Host, "%s: origin", what)
	return &r
}

// ---- Sequences and bytes ----

// assertSameBytes checks that got holds want; on a failure it prints the
// lengths and the first difference, not the bytes.
func assertSameBytes(t testing.TB, want, got []byte, msgAndArgs ...any) bool {
	t.Helper()
	if bytes.Equal(want, got) {
		return true
	}
	i := 0
	for i < min(len(want), len(got)) && want[i] == got[i] {
		i++
	}
	return assert.Fail(t, fmt.Sprintf("got %d bytes, want %d; first difference at byte %d", len(got), len(want), i), msgAndArgs...)
}

// drain ranges over seq, keeping at most max items (0: no limit), and
// returns the items, the errors, and whether an item came after an error.
func drain[T any](seq iter.Seq2[T, error], max int) (items []T, errs []error, itemAfterErr bool) {
	for v, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		itemAfterErr = itemAfterErr || len(errs) > 0
		items = append(items, v)
		if max > 0 && len(items) >= max {
			break
		}
	}
	return items, errs, itemAfterErr
}

// testAddr returns the i-th of 2^16 distinct IPv4 addresses of the
// benchmarking range 198.18.0.0/15.
func testAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}) //nolint:gosec // i's low two bytes, cut on purpose
}

// testAddrs returns the first n testAddr addresses.
func testAddrs(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = testAddr(i)
	}
	return out
}

// counted returns a sequence of addrs that counts in *pulled the
// addresses it gave.
func counted(addrs []netip.Addr, pulled *int) iter.Seq[netip.Addr] {
	return func(yield func(netip.Addr) bool) {
		for _, ip := range addrs {
			*pulled++
			if !yield(ip) {
				return
			}
		}
	}
}

// ---- The loopback server ----

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
	conns     []int64 // the connection of each arrival
	arrivals  atomic.Int64
	newConns  atomic.Int64
	openConns atomic.Int64
	connMoved chan struct{} // a value when a connection opened or closed, if none was waiting
}

// serverOption configures an apiServer.
type serverOption func(*serverConfig)

type serverConfig struct {
	tls, http2, noLog bool
	ln                net.Listener
}

// options applies opts.
func options(opts []serverOption) serverConfig {
	var cfg serverConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	return cfg
}

// withTLS serves https with httptest's certificate (the client needs
// synthient.WithTLSConfig with the server's root: trustServer).
func withTLS() serverOption { return func(c *serverConfig) { c.tls = true } }

// withHTTP2 serves https and offers HTTP/2 too.
func withHTTP2() serverOption { return func(c *serverConfig) { c.tls, c.http2 = true, true } }

// withoutLog keeps no request (Requests is empty), for a test that
// measures the heap or a fuzz target that serves many inputs; the counts
// go on.
func withoutLog() serverOption { return func(c *serverConfig) { c.noLog = true } }

// atAddr listens on addr, host:port, such as a port that refused an
// earlier connection.
func atAddr(t testing.TB, addr string) serverOption {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", addr)
	require.NoError(t, err, "listen on %s", addr)
	return func(c *serverConfig) { c.ln = ln }
}

// connKey is the context key of a connection's 1-based number.
type connKey struct{}

// takenKey is the context key of a request's *taken.
type takenKey struct{}

// taken holds the connection a handler took over, which serve closes.
type taken struct{ conn net.Conn }

// newAPIServer starts an apiServer whose handler is h (nil answers 200
// with no body). It is closed when the test ends, after which its counters
// are final.
func newAPIServer(t testing.TB, h func(n int, w http.ResponseWriter, r *http.Request), opts ...serverOption) *apiServer {
	t.Helper()
	cfg := options(opts)
	s := &apiServer{handler: h, noLog: cfg.noLog, quit: make(chan struct{}), connMoved: make(chan struct{}, 1)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if cfg.ln != nil {
		_ = s.Listener.Close()
		s.Listener = cfg.ln
	}
	s.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, s.newConns.Add(1))
	}
	s.Config.ConnState = s.connState
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

// connState counts the connections open.
func (s *apiServer) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
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

// Finish ends every waiting handler and closes the server; it waits for
// the handlers to return. It is safe to call more than once.
func (s *apiServer) Finish() {
	s.once.Do(func() {
		close(s.quit)
		s.Close()
	})
}

// StopListening closes the listener alone: later connections are refused,
// open ones go on.
func (s *apiServer) StopListening() { _ = s.Listener.Close() }

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	conn, _ := r.Context().Value(connKey{}).(int64)
	s.mu.Lock()
	if !s.noLog {
		s.reqs = append(s.reqs, request{
			Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Query: r.URL.Query(), Header: r.Header.Clone(),
		})
	}
	s.conns = append(s.conns, conn)
	s.mu.Unlock()
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
	took := &taken{}
	defer func() {
		if took.conn != nil {
			_ = took.conn.Close()
		}
	}()
	if s.handler != nil {
		s.handler(n, w, r.WithContext(context.WithValue(ctx, takenKey{}, took)))
	}
}

// takeOver takes the connection of r over from net/http, for a handler
// that writes to it what net/http would not (a malformed head, a body cut
// short) or ends it without an answer; the server closes it when the
// handler returns. Reset ends it with an RST instead of a FIN.
func takeOver(t testing.TB, w http.ResponseWriter, r *http.Request) *wire {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		panic(http.ErrAbortHandler)
	}
	r.Context().Value(takenKey{}).(*taken).conn = conn
	return &wire{conn}
}

// wire is a connection a handler took over.
type wire struct{ net.Conn }

// Reset ends the connection with an RST instead of a FIN.
func (c *wire) Reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// Arrivals returns the number of requests received so far.
func (s *apiServer) Arrivals() int { return int(s.arrivals.Load()) }

// ArrivalConns returns the 1-based number of the connection of each
// arrival, in order.
func (s *apiServer) ArrivalConns() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.conns)
}

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

// chunked frames each part as one chunk of a chunked body, as a handler that took its
// connection over writes it; an empty part is the last chunk, which ends the body.
func chunked(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = fmt.Appendf(b, "%x\r\n%s\r\n", len(p), p)
	}
	return b
}

// ---- The mocked API ----

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

func (timeoutError) Error() string { return "i/o timeout" }

func (timeoutError) Timeout() bool { return true }

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
