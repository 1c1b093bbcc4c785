package synthient_test

// The package's test helpers: clients (of a base URL, with a checked log,
// of the fake API), contexts, the operations and calls the tests make, the
// feeds' URL segments, log capture, the one secret scanner, the
// typed-error checks, the sequence drain and the byte comparison. The test servers and their responders are in
// servers_test.go. A helper used by one test file stays in that file; what
// two files need lives here.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

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

// deadAddr returns a loopback host:port nothing listens on.
func deadAddr(t testing.TB) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
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

// testAddr6 returns the i-th of 2^16 distinct IPv6 addresses of the
// documentation range 2001:db8::/32.
func testAddr6(i int) netip.Addr {
	return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(i >> 8), 15: byte(i)}) //nolint:gosec // i's low two bytes, cut on purpose
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

// bulkRun is the outcome of one range over LookupIPsAll.
type bulkRun struct {
	results []synthient.BulkResult
	errs    []error // by result
}

// runBulk ranges over LookupIPsAll of addrs to the end.
func runBulk(ctx context.Context, c *synthient.Client, addrs iter.Seq[netip.Addr], p *synthient.BulkParams) bulkRun {
	var run bulkRun
	for r, err := range c.LookupIPsAll(ctx, addrs, p) {
		run.results = append(run.results, r)
		run.errs = append(run.errs, err)
	}
	return run
}

// outcomes counts the results by outcome.
func (run bulkRun) outcomes() map[synthient.BulkOutcome]int {
	n := map[synthient.BulkOutcome]int{}
	for _, r := range run.results {
		n[r.Outcome]++
	}
	return n
}

// credits sums the Credits of the results with outcome o.
func (run bulkRun) credits(o synthient.BulkOutcome) int {
	n := 0
	for _, r := range run.results {
		if r.Outcome == o {
			n += r.Credits
		}
	}
	return n
}

// requireInOrder checks that the results are the n addresses read, in
// order, each with an error exactly when it was not looked up.
func (run bulkRun) requireInOrder(t testing.TB, n int) {
	t.Helper()
	require.Len(t, run.results, n, "one result per address read")
	for i, r := range run.results {
		require.EqualValues(t, i, r.Index, "result %d out of order", i)
		if r.Outcome == synthient.LookedUp {
			require.NoError(t, run.errs[i], "result %d", i)
		} else {
			require.Error(t, run.errs[i], "result %d (%s)", i, r.Outcome)
		}
	}
}
