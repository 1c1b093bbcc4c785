package synthient_test

// Tests of client.go: NewClient and its options, one client shared by many
// goroutines, Close, and how a client prints. Last, the soak: the whole
// client under load against the fake API, with faults.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// newClientNoPanic calls NewClient; a panic fails the test.
func newClientNoPanic(t *testing.T, key string, opts ...synthient.Option) (c *synthient.Client, err error) {
	t.Helper()
	require.NotPanics(t, func() { c, err = synthient.NewClient(key, opts...) }, "NewClient")
	return c, err
}

func TestNewClientRejectsInvalidKeysAndOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		key  string
		opts []synthient.Option
	}{
		{"empty_key", "", nil},
		{"key_with_leading_space", " " + testKey, nil},
		{"key_with_trailing_space", testKey + " ", nil},
		{"key_with_inner_space", "test-key 6f1d2c3b-secret", nil},
		{"key_with_tab", testKey + "\t", nil},
		{"key_with_newline", testKey + "\n", nil},
		{"key_with_crlf_injection", testKey + "\r\nX-Evil: 1", nil},
		{"key_with_nul", testKey + "\x00", nil},
		{"key_with_del", testKey + "\x7f", nil},
		{"key_not_ascii", testKey + "é", nil},
		{"base_url_empty", testKey, []synthient.Option{synthient.WithBaseURL("")}},
		{"base_url_ftp", testKey, []synthient.Option{synthient.WithBaseURL("ftp://x")}},
		{"base_url_relative", testKey, []synthient.Option{synthient.WithBaseURL("/relative")}},
		{"base_url_no_scheme", testKey, []synthient.Option{synthient.WithBaseURL("api.synthient.com/api/v4")}},
		{"base_url_no_host", testKey, []synthient.Option{synthient.WithBaseURL("http://")}},
		{"base_url_port_only", testKey, []synthient.Option{synthient.WithBaseURL("http://:8080/api/v4")}},
		{"base_url_user_info", testKey, []synthient.Option{synthient.WithBaseURL("http://user:pw@host/api/v4")}},
		{"base_url_query", testKey, []synthient.Option{synthient.WithBaseURL("https://host/api/v4?x=1")}},
		{"base_url_empty_query", testKey, []synthient.Option{synthient.WithBaseURL("https://host/api/v4?")}},
		{"base_url_fragment", testKey, []synthient.Option{synthient.WithBaseURL("https://host/api/v4#frag")}},
		{"base_url_does_not_parse", testKey, []synthient.Option{synthient.WithBaseURL("http://host:port/api")}},
		{"timeout_0", testKey, []synthient.Option{synthient.WithTimeout(0)}},
		{"timeout_negative", testKey, []synthient.Option{synthient.WithTimeout(-time.Second)}},
		{"open_timeout_0", testKey, []synthient.Option{synthient.WithOpenTimeout(0)}},
		{"open_timeout_negative", testKey, []synthient.Option{synthient.WithOpenTimeout(-1)}},
		{"max_retry_after_0", testKey, []synthient.Option{synthient.WithMaxRetryAfter(0)}},
		{"max_retry_after_negative", testKey, []synthient.Option{synthient.WithMaxRetryAfter(-time.Minute)}},
		{"retry_budget_0", testKey, []synthient.Option{synthient.WithRetryBudget(0)}},
		{"retry_budget_negative", testKey, []synthient.Option{synthient.WithRetryBudget(-time.Second)}},
		{"backoff_base_0", testKey, []synthient.Option{synthient.WithBackoff(0, time.Second)}},
		{"backoff_base_negative", testKey, []synthient.Option{synthient.WithBackoff(-time.Second, time.Second)}},
		{"backoff_max_below_base", testKey, []synthient.Option{synthient.WithBackoff(2*time.Second, time.Second)}},
		{"max_retries_negative", testKey, []synthient.Option{synthient.WithMaxRetries(-1)}},
		{"transport_nil", testKey, []synthient.Option{synthient.WithTransport(nil)}},
		{"random_nil", testKey, []synthient.Option{synthient.WithRandom(nil)}},
		{"tls_config_nil", testKey, []synthient.Option{synthient.WithTLSConfig(nil)}},
		{"user_agent_newline", testKey, []synthient.Option{synthient.WithUserAgent("\n")}},
		{"user_agent_trailing_newline", testKey, []synthient.Option{synthient.WithUserAgent("my-app/1.0\n")}},
		{"user_agent_inner_newline", testKey, []synthient.Option{synthient.WithUserAgent("my-app\n1.0")}},
		{"user_agent_header_injection", testKey, []synthient.Option{synthient.WithUserAgent("my-app\r\nX-Evil: 1")}},
		{"user_agent_nul", testKey, []synthient.Option{synthient.WithUserAgent("my-app\x00")}},
		{"user_agent_not_ascii", testKey, []synthient.Option{synthient.WithUserAgent("mein-prüfer/1.0")}},
		{"one_bad_option_among_good_ones", testKey, []synthient.Option{
			synthient.WithBaseURL("https://api.test/api/v4"), synthient.WithTimeout(time.Second),
			synthient.WithOpenTimeout(0), synthient.WithMaxRetries(3)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := newClientNoPanic(t, tc.key, tc.opts...)
			if !assert.Nil(t, c, "NewClient returned a client") {
				c.Close()
			}
			require.ErrorIs(t, err, synthient.ErrInvalidArgument)
			// Not the key, nor its distinctive middle (the key with an
			// inner space is not testKey).
			assertNoSecret(t, err, nil, "6f1d2c3b")
		})
	}
}

// TestNewClientAcceptsValidOptions is the counterpart of the rejections
// above: the valid neighbours of each rejected value are accepted.
func TestNewClientAcceptsValidOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts []synthient.Option
	}{
		{"defaults", nil},
		{"nil_option_is_skipped", []synthient.Option{nil}},
		{"https_base_url", []synthient.Option{synthient.WithBaseURL("https://api.synthient.com/api/v4")}},
		{"http_base_url_with_port", []synthient.Option{synthient.WithBaseURL("http://127.0.0.1:8080/api/v4")}},
		{"base_url_trailing_slash", []synthient.Option{synthient.WithBaseURL("http://[::1]:8080/api/v4/")}},
		{"timeouts", []synthient.Option{synthient.WithTimeout(time.Nanosecond), synthient.WithOpenTimeout(time.Nanosecond)}},
		{"max_retry_after", []synthient.Option{synthient.WithMaxRetryAfter(time.Nanosecond)}},
		{"retry_budget", []synthient.Option{synthient.WithRetryBudget(time.Nanosecond)}},
		{"backoff_base_equals_max", []synthient.Option{synthient.WithBackoff(time.Second, time.Second)}},
		{"max_retries", []synthient.Option{synthient.WithMaxRetries(0), synthient.WithMaxRetries(16)}},
		{"transport", []synthient.Option{synthient.WithTransport(http.DefaultTransport)}},
		{"random", []synthient.Option{synthient.WithRandom(func() float64 { return 0.5 })}},
		{"user_agent", []synthient.Option{synthient.WithUserAgent("my-app/1.0 (+https://example.com)")}},
		{"nil_logger_and_hook", []synthient.Option{synthient.WithLogger(nil), synthient.WithResponseHook(nil)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := newClientNoPanic(t, testKey, tc.opts...)
			require.NoError(t, err)
			require.NotNil(t, c, "the client")
			c.Close()
		})
	}
}

func TestNegativeMaxRetriesIsInvalid(t *testing.T) {
	t.Parallel()
	for _, n := range []int{-1, -100, math.MinInt} {
		c, err := synthient.NewClient(testKey, synthient.WithMaxRetries(n))
		require.ErrorIs(t, err, synthient.ErrInvalidArgument, "WithMaxRetries(%d)", n)
		assert.Nil(t, c, "WithMaxRetries(%d): a client was returned with the error", n)
	}
	for _, n := range []int{0, 1, 16, 1000} {
		c, err := synthient.NewClient(testKey, synthient.WithMaxRetries(n))
		if assert.NoError(t, err, "WithMaxRetries(%d)", n) {
			c.Close()
		}
	}
}

// TestUserAgentAndBaseURLReachTheRequest: a base URL with a trailing slash
// still reaches the operation's URL (the mock answers that URL alone), and
// the User-Agent carries the application's product after the SDK's.
func TestUserAgentAndBaseURLReachTheRequest(t *testing.T) {
	t.Parallel()
	m := newOpMock(t, opNamed("Account"))
	c := newClient(t, mockBase+"/", synthient.WithTransport(m.MockTransport), synthient.WithUserAgent("my-app/1.0"))
	_, err := c.Account(context.Background())
	require.NoError(t, err, "Account")
	require.Equal(t, 1, m.GetTotalCallCount(), "requests to GET https://api.test/api/v4/account/me")
	reqs := m.Requests()
	require.Len(t, reqs, 1, "requests")
	assert.Equal(t, "synthient-go/"+synthient.Version+" my-app/1.0", reqs[0].Header.Get("User-Agent"), "User-Agent")
}

// TestConcurrentCalls shares one client among 50 goroutines (run with
// -race) against a loopback server.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != testKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/v4/lookup/ip/"):
			writeJSON(w, http.StatusOK, fmt.Sprintf(`{"ip":%q}`, strings.TrimPrefix(r.URL.Path, "/api/v4/lookup/ip/")))
		case r.URL.Path == "/api/v4/account/me":
			writeJSON(w, http.StatusOK, sampleAccountJSON)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	c := newClient(t, srv.Base)

	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for j := range 4 {
				if (i+j)%2 == 0 {
					ip := netip.AddrFrom4([4]byte{10, 0, byte(i), byte(j)}) //nolint:gosec // i < 50, j < 4
					r, err := c.LookupIP(context.Background(), ip)
					if !assert.NoError(t, err, "LookupIP(%v)", ip) || !assert.Equal(t, ip, r.IP, "LookupIP(%v): the answer's address", ip) { //nolint:testifylint // in a goroutine: it returns instead of require's FailNow
						return
					}
				} else {
					a, err := c.Account(context.Background())
					if !assert.NoError(t, err, "Account") || !assert.Equal(t, "ada@example.com", a.Email, "Account: email") { //nolint:testifylint // in a goroutine: it returns instead of require's FailNow
						return
					}
				}
			}
		})
	}
	wg.Wait()
	srv.Finish()
	assert.Equal(t, 4*n, srv.Arrivals(), "requests the server saw")
}

// TestErrClosed checks that after Close every method fails with an error
// matching ErrClosed and sends nothing.
func TestErrClosed(t *testing.T) {
	t.Parallel()
	m := newOpMock(t, opNamed("Account"))
	c := m.Client(t)
	require.NoError(t, c.Close(), "Close")
	assert.NoError(t, c.Close(), "second Close")
	for _, op := range operations() {
		err := op.call(context.Background(), c)
		require.ErrorIs(t, err, synthient.ErrClosed, "%s after Close", op.name)
		require.NotErrorIs(t, err, synthient.ErrInvalidArgument, "%s after Close", op.name)
	}
	assert.Zero(t, m.GetTotalCallCount(), "requests sent after Close")
}

// TestCloseWithCallsInProgress: calls in progress at Close run to their
// end, each lookup answered after Close returns its result, and once they
// have ended no connection of the client is open. The Account call is
// answered 503 after Close, so that its retry asks the pool for a
// connection after Close (as a request held by pacing or waiting for a
// connection does); net/http then keeps the connections that turn idle
// later, unless the client closes them.
func TestCloseWithCallsInProgress(t *testing.T) {
	t.Parallel()
	const lookups = 4
	release := make(chan struct{})
	arrived := make(chan struct{}, lookups+2)
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if r.URL.Path == "/api/v4/account/me" && n > lookups+1 {
			writeJSON(w, http.StatusOK, sampleAccountJSON) // the retry, after Close
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		if r.URL.Path == "/api/v4/account/me" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"ip":%q}`, strings.TrimPrefix(r.URL.Path, "/api/v4/lookup/ip/")))
	})
	// Without pacing every call's first request goes out at once; a
	// connection Close forgot would idle 90 s (RequireNoConnOpen).
	c := newClient(t, srv.Base, synthient.WithoutPacing(), synthient.WithTimeout(time.Hour))

	var wg sync.WaitGroup
	results := make([]*synthient.IPLookup, lookups)
	errs := make([]error, lookups+1)
	for i := range lookups {
		wg.Go(func() {
			results[i], errs[i] = c.LookupIP(context.Background(), netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})) //nolint:gosec // i < lookups (4)
		})
	}
	var account *synthient.Account
	wg.Go(func() { account, errs[lookups] = c.Account(context.Background()) })
	for range lookups + 1 {
		<-arrived // every call is in progress
	}
	require.NoError(t, c.Close())
	close(release)
	wg.Wait()

	for i := range lookups {
		if assert.NoError(t, errs[i], "lookup %d, answered after Close", i) {
			assert.Equal(t, netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), results[i].IP, "lookup %d's result", i)
		}
	}
	if assert.NoError(t, errs[lookups], "Account, retried after Close") {
		assert.Equal(t, "ada@example.com", account.Email)
	}
	assert.Equal(t, lookups+2, srv.Arrivals(), "requests")
	srv.RequireNoConnOpen(t)
	_, err := c.LookupIP(context.Background(), netip.MustParseAddr("192.0.2.99"))
	assert.ErrorIs(t, err, synthient.ErrClosed, "a call after Close")
}

// No fmt verb and no slog handler prints the client's API key: a client
// ends up in a log line or a panic message more often than one thinks.
func TestClientFormattingHidesTheKey(t *testing.T) {
	t.Parallel()
	const base = "https://api.example.test/api/v4"
	c := newClient(t, base)
	var nilClient *synthient.Client
	holder := struct{ C *synthient.Client }{c}
	// fmt cannot call Format on an unexported field, and prints a value of
	// a bad verb (%s of a pointer inside a struct) field by field.
	hidden := struct{ c *synthient.Client }{c}

	printed := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10.3v"} {
		printed[verb] = fmt.Sprintf(verb, c)
		printed[verb+" of nil"] = fmt.Sprintf(verb, nilClient)
		printed[verb+" of a struct holding it"] = fmt.Sprintf(verb, holder)
		printed[verb+" of an unexported field"] = fmt.Sprintf(verb, hidden)
	}
	for _, verb := range []string{"%t", "%e", "%U", "%d"} {
		printed[verb+" of an unexported field"] = fmt.Sprintf(verb, hidden)
	}
	printed["reflection"] = fmt.Sprintf("%v %+v", reflect.ValueOf(c).Elem(), reflect.ValueOf(hidden))
	printed["fmt.Sprint"] = fmt.Sprint(c)
	printed["fmt.Sprintln"] = fmt.Sprintln(c)
	for name, h := range map[string]func(io.Writer) slog.Handler{
		"slog text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
		"slog json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
	} {
		var buf bytes.Buffer
		slog.New(h(&buf)).Info("calling", "client", c, slog.Any("client_any", c))
		printed[name] = buf.String()
	}

	for name, out := range printed {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.NotContains(t, out, testKey, "%s prints the API key", name)
		})
	}
	for _, name := range []string{"%v", "%+v", "%#v", "%s", "slog text", "slog json"} {
		assert.Contains(t, printed[name], base, "%s: want it to name the base URL", name)
	}
}

// ---- The soak ----

// The soak: many mixed calls from many goroutines against one fake, with
// about one call in ten meeting an injected fault of some kind. It checks
// what must hold however the calls interleave: no goroutine or file
// descriptor is left behind, every failure is a typed error, and no call
// sent more requests than its retry class allows.

// soakOp is one kind of call of the soak's mix.
type soakOp struct {
	name   string
	weight int    // calls of this kind out of 10
	route  string // the API route the call sends to
	billed bool
	// call makes call i; it returns the call's unique escaped path (of a
	// LookupIP or LookupDomain), or "". feed is drawn for every call.
	call func(c *synthient.Client, rng *rand.Rand, i int, feed synthient.Feed) (path string, err error)
}

// soakExportIDs are the exports the soak asks for.
var soakExportIDs = []string{"latest", "2026-06-09", "2026-06-08", "2026-06-10/00", "2026-06-10/07", "2026-06-10/13"}

// soakMix is the mix of calls.
var soakMix = []soakOp{
	{"LookupIP", 2, synthienttest.RouteLookupIP, true, func(c *synthient.Client, _ *rand.Rand, i int, _ synthient.Feed) (string, error) {
		ip := netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)})
		_, err := c.LookupIP(context.Background(), ip)
		return "/api/v4/lookup/ip/" + ip.String(), err
	}},
	{"LookupIPs", 1, synthienttest.RouteLookupIPs, true, func(c *synthient.Client, rng *rand.Rand, i int, _ synthient.Feed) (string, error) {
		ips := make([]netip.Addr, 1+rng.IntN(5))
		for k := range ips {
			ips[k] = netip.AddrFrom4([4]byte{100, 64 + byte(k), byte(i >> 8), byte(i)})
		}
		_, err := c.LookupIPs(context.Background(), ips)
		return "", err
	}},
	{"LookupDomain", 2, synthienttest.RouteLookupDomain, true, func(c *synthient.Client, _ *rand.Rand, i int, _ synthient.Feed) (string, error) {
		name := fmt.Sprintf("soak-%d.example.net", i)
		_, err := c.LookupDomain(context.Background(), name, &synthient.DomainLookupParams{Limit: 3})
		return "/api/v4/lookup/domain/" + name, err
	}},
	{"Account", 1, synthienttest.RouteAccount, false, func(c *synthient.Client, _ *rand.Rand, _ int, _ synthient.Feed) (string, error) {
		_, err := c.Account(context.Background())
		return "", err
	}},
	{"ExportMeta", 1, synthienttest.RouteExportMeta, false, func(c *synthient.Client, rng *rand.Rand, _ int, feed synthient.Feed) (string, error) {
		_, err := c.ExportMeta(context.Background(), feed, soakExportIDs[rng.IntN(len(soakExportIDs))])
		return "", err
	}},
	{"ListExports", 1, synthienttest.RouteExports, false, func(c *synthient.Client, _ *rand.Rand, _ int, feed synthient.Feed) (string, error) {
		_, err := c.ListExports(context.Background(), feed, &synthient.ListExportsParams{Limit: 5})
		return "", err
	}},
	{"DownloadExport", 1, synthienttest.RouteDownload, false, func(c *synthient.Client, rng *rand.Rand, _ int, feed synthient.Feed) (string, error) {
		_, err := c.DownloadExport(context.Background(), feed, soakExportIDs[rng.IntN(len(soakExportIDs))], io.Discard)
		return "", err
	}},
	{"Stream", 1, synthienttest.RouteStream, false, func(c *synthient.Client, rng *rand.Rand, _ int, feed synthient.Feed) (string, error) {
		want, n := 1+rng.IntN(3), 0
		for _, err := range c.StreamRaw(context.Background(), feed) {
			if err != nil {
				return "", err
			}
			if n++; n >= want {
				break
			}
		}
		return "", nil
	}},
}

// soakFaults are the faults a call may meet: every status the rules name,
// and every way a connection can fail. Slow headers outlast the client's
// 200 ms timeout; a slow body stays within it.
var soakFaults = []synthienttest.Fault{
	{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "0"},
	{Kind: synthienttest.FaultStatus, Status: 429},
	{Kind: synthienttest.FaultStatus, Status: 500},
	{Kind: synthienttest.FaultStatus, Status: 502},
	{Kind: synthienttest.FaultStatus, Status: 503},
	{Kind: synthienttest.FaultStatus, Status: 504},
	{Kind: synthienttest.FaultStatus, Status: 404},
	{Kind: synthienttest.FaultCloseAfterRequest},
	{Kind: synthienttest.FaultResetMidBody},
	{Kind: synthienttest.FaultSlowHeaders, Delay: 400 * time.Millisecond},
	{Kind: synthienttest.FaultSlowBody, Size: 512, Delay: 2 * time.Millisecond},
	{Kind: synthienttest.FaultTruncatedBody},
}

// soakOversizedLine is the fault of a stream line over the limit.
var soakOversizedLine = synthienttest.Fault{Kind: synthienttest.FaultOversizedLine, Size: synthient.MaxLineSize + 64}

// soakAnswer is an answer as the response hook saw it.
type soakAnswer struct {
	status     int
	retryAfter bool
}

// soakResult is what one call did.
type soakResult struct {
	op   int    // the index of its kind in soakMix
	path string // the unique escaped path of a LookupIP or LookupDomain call
	err  error
}

// openFiles counts this process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(ents)
}

// settle waits (up to a minute, polling) until f() <= want, and returns
// f(). Not require.Eventually: it runs each poll in a goroutine of its
// own, which a count of goroutines would see.
func settle(f func() int, want int) int {
	deadline := time.Now().Add(time.Minute)
	for n := f(); ; n = f() {
		if n <= want || time.Now().After(deadline) {
			return n
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

// whyNotTyped reports why err is not a typed error of the SDK, or "".
func whyNotTyped(err error) string {
	var base *synthient.Error
	if !errors.As(err, &base) {
		return "errors.As(err, new(*synthient.Error)) fails"
	}
	switch e := err.(type) { //nolint:errorlint // the SDK returns its typed errors unwrapped: err itself must be one
	case *synthient.APIError, *synthient.ConnectionError, *synthient.TimeoutError, *synthient.DecodeError:
		return ""
	case *synthient.Error:
		if e.StopReason == "" {
			return "a bare *synthient.Error without a stop reason"
		}
		return ""
	}
	return fmt.Sprintf("a %T", err)
}

// The soak's size.
const (
	soakCalls      = 10_000
	soakWorkers    = 64
	soakMaxRetries = 2
	soakSeed       = 20260610
	// soakMaxOversized bounds the 16 MiB stream lines, which cost the most.
	soakMaxOversized = 4
)

// TestSoak runs the load once, then checks it: nothing left behind, then
// the calls of each kind in the mix, then the storage leg. It counts
// goroutines and open files, so it runs alone.
//
//nolint:paralleltest // it counts the process's goroutines and open files: a parallel test would add its own
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: skipped with -short")
	}
	clk := synthienttest.NewManualClock(time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC))
	srv := synthienttest.NewServer(
		synthienttest.WithClock(clk.Now),
		synthienttest.WithoutRateLimits(),
		synthienttest.WithCredits(1<<40),
		synthienttest.WithStreamLimit(10*soakWorkers),
		synthienttest.WithEventInterval(2*time.Millisecond),
		synthienttest.WithExportSize(4096),
	)
	defer srv.Close()

	goroutines0, fds0 := runtime.NumGoroutine(), openFiles(t)
	run := runSoak(t, srv)
	goroutines := settle(runtime.NumGoroutine, goroutines0)
	fds := settle(func() int { return openFiles(t) }, fds0+2)
	t.Run("nothing_left_behind", func(t *testing.T) {
		assert.LessOrEqual(t, goroutines, goroutines0, "goroutines after the soak")
		assert.LessOrEqual(t, fds, fds0+2, "open files after the soak (%d before)", fds0)
	})

	log := newSoakLog(srv.Requests(), run)
	failures := map[string]int{}
	downloads := 0
	for k, op := range soakMix {
		t.Run(op.name, func(t *testing.T) {
			n := checkSoakCalls(t, k, run, log, failures)
			if op.route == synthienttest.RouteDownload {
				downloads = n
			}
		})
	}
	// The storage leg is never retried: one request per redirect at most.
	t.Run("storage", func(t *testing.T) {
		got, want := int64(log.arrivals[synthienttest.RouteStorage]), run.redirects.Load()
		assert.LessOrEqual(t, got, want, "storage arrivals, against the download redirects")
		assert.LessOrEqual(t, want, int64(downloads), "download redirects, against the downloads")
	})

	var lines []string
	for k, v := range failures {
		lines = append(lines, fmt.Sprintf("%6d  %s", v, k))
	}
	sort.Strings(lines)
	t.Logf("%d calls from %d goroutines in %v, %d faults injected, %d requests; goroutines %d -> %d, open files %d -> %d; failures:\n%s",
		soakCalls, soakWorkers, run.elapsed.Round(time.Millisecond), run.faulted.Load(), len(log.requests),
		goroutines0, goroutines, fds0, fds, strings.Join(lines, "\n"))
}

// soakRun is what the load did: each call's result, and what the response
// hook saw.
type soakRun struct {
	results   []soakResult
	seen      sync.Map // request id -> soakAnswer
	redirects atomic.Int64
	faulted   atomic.Int64
	elapsed   time.Duration
}

// runSoak makes soakCalls calls of the mix from soakWorkers goroutines on
// one client, injecting a fault before about one call in ten, and closes
// the client.
func runSoak(t *testing.T, srv *synthienttest.Server) *soakRun {
	run := &soakRun{results: make([]soakResult, soakCalls)}
	// The hook learns the status of every answer that reached the client,
	// and whether a 429 carried a Retry-After (by request id), and counts
	// the download redirects.
	hook := func(ri *synthient.ResponseInfo) error {
		run.seen.Store(ri.RequestID, soakAnswer{status: ri.Status, retryAfter: ri.Header.Get("Retry-After") != ""})
		if ri.Status == http.StatusTemporaryRedirect {
			run.redirects.Add(1)
		}
		return nil
	}
	// The default retry quota stays on: with nine calls in ten succeeding
	// it rarely runs dry, and when it does the call stops with
	// quota_exhausted, which the checks accept.
	c := fakeClient(t, srv,
		synthient.WithMaxRetries(soakMaxRetries),
		synthient.WithTimeout(200*time.Millisecond),
		synthient.WithResponseHook(hook),
	)
	var next, oversized atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range soakWorkers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < soakCalls; i = int(next.Add(1) - 1) {
				rng := rand.New(rand.NewPCG(soakSeed, uint64(i))) //nolint:gosec // a seeded draw, the same each run: nothing to guess
				k := soakDraw(rng)
				op := soakMix[k]
				if rng.IntN(10) == 0 {
					route := op.route
					f := soakFaults[rng.IntN(len(soakFaults))]
					switch {
					case route == synthienttest.RouteDownload && rng.IntN(2) == 0:
						route = synthienttest.RouteStorage
					case route == synthienttest.RouteStream && rng.IntN(8) == 0 && oversized.Add(1) <= soakMaxOversized:
						f = soakOversizedLine
					}
					srv.Inject(route, 1, f)
					run.faulted.Add(1)
				}
				feed := synthient.Feeds[rng.IntN(len(synthient.Feeds))]
				path, err := op.call(c, rng, i, feed)
				run.results[i] = soakResult{op: k, path: path, err: err}
			}
		})
	}
	wg.Wait()
	run.elapsed = time.Since(start)
	c.Close()
	return run
}

// soakDraw draws the kind of a call from the weights of soakMix.
func soakDraw(rng *rand.Rand) int {
	k := 0
	for w := rng.IntN(10); ; k++ {
		if w -= soakMix[k].weight; w < 0 {
			return k
		}
	}
}

// soakLog is the fake's request log, by path and by route. An arrival
// justifies a retry of a standard call when its answer never reached the
// client (no answer, or none before the timeout) or was a 500, 502, 503,
// 504 or a 429 with Retry-After; of a billed call only in the last case.
type soakLog struct {
	requests        []synthienttest.Request
	byPath          map[string][]synthienttest.Request
	arrivals        map[string]int // by route
	justified       map[string]int // by route, for the standard class
	justifiedBilled map[string]int // by route, for the billed class
	seen            *sync.Map      // request id -> soakAnswer
}

func newSoakLog(reqs []synthienttest.Request, run *soakRun) *soakLog {
	l := &soakLog{
		requests: reqs, byPath: map[string][]synthienttest.Request{}, arrivals: map[string]int{},
		justified: map[string]int{}, justifiedBilled: map[string]int{}, seen: &run.seen,
	}
	for _, r := range reqs {
		l.arrivals[r.Route]++
		l.byPath[r.Path] = append(l.byPath[r.Path], r)
		v, ok := run.seen.Load(r.RequestID)
		s, _ := v.(soakAnswer)
		switch {
		case !ok:
			l.justified[r.Route]++
		case s.status == http.StatusTooManyRequests && s.retryAfter:
			l.justified[r.Route]++
			l.justifiedBilled[r.Route]++
		case s.status == 500, s.status == 502, s.status == 503, s.status == 504:
			l.justified[r.Route]++
		}
	}
	return l
}

// retriedAfter429 reports whether an arrival's answer reached the client
// as a 429 with Retry-After.
func (l *soakLog) retriedAfter429(r synthienttest.Request) bool {
	v, _ := l.seen.Load(r.RequestID)
	s, ok := v.(soakAnswer)
	return ok && s.status == http.StatusTooManyRequests && s.retryAfter
}

// checkSoakCalls checks the calls of kind k of the mix: every failure a
// typed error within its attempts, every unique path sent again only
// after a 429 with Retry-After, and the route's arrivals no more than its
// class allows. It counts the failures by type and reason in failures and
// returns the number of calls of the kind.
func checkSoakCalls(t *testing.T, k int, run *soakRun, log *soakLog, failures map[string]int) int {
	op := soakMix[k]
	bad := 0
	report := func(format string, args ...any) {
		t.Helper()
		if bad++; bad <= 20 {
			t.Errorf(format, args...)
		}
	}
	n, succeeded := 0, 0
	for i, res := range run.results {
		if res.op != k {
			continue
		}
		n++
		var base *synthient.Error
		if res.err == nil {
			succeeded++
		} else {
			if why := whyNotTyped(res.err); why != "" {
				report("call %d: error %v is %s", i, res.err, why)
				continue
			}
			errors.As(res.err, &base)
			key := fmt.Sprintf("%T", res.err)
			if base.StopReason != "" {
				key += " " + string(base.StopReason)
			}
			failures[op.name+": "+key]++
			limit := 1 + soakMaxRetries
			if op.route == synthienttest.RouteDownload {
				limit++ // the storage request counts as an attempt
			}
			if base.Attempts < 1 || base.Attempts > limit {
				report("call %d: %d attempts, want 1 to %d: %v", i, base.Attempts, limit, res.err)
			}
		}
		if res.path != "" {
			checkSoakPath(report, i, res, base, log)
		}
	}
	require.NotZero(t, n, "calls of this kind in the mix")

	// Every call, unique path or not: each arrival beyond the first of a
	// call answers an outcome its class retries.
	allowed := n + log.justified[op.route]
	if op.billed {
		allowed = n + log.justifiedBilled[op.route]
	}
	allowed = min(allowed, n*(1+soakMaxRetries))
	got := log.arrivals[op.route]
	assert.GreaterOrEqual(t, got, succeeded, "arrivals for %d calls: at least one per success", n)
	assert.LessOrEqual(t, got, allowed, "arrivals for %d calls (%d succeeded): at most one per call and per retry its class allows", n, succeeded)
	return n
}

// checkSoakPath checks the arrivals of call i, a billed call with a unique
// path: every arrival after the first follows a 429 that carried a
// Retry-After. base is the call's error, nil for a success.
func checkSoakPath(report func(string, ...any), i int, res soakResult, base *synthient.Error, log *soakLog) {
	got := log.byPath[res.path]
	switch {
	case len(got) == 0 && res.err == nil:
		report("call %d (%s): succeeded but never arrived", i, res.path)
	case len(got) > 1+soakMaxRetries:
		report("call %d (%s): arrived %d times, more than 1+MaxRetries", i, res.path, len(got))
	case base != nil && len(got) > base.Attempts:
		report("call %d (%s): arrived %d times but the error counts %d attempts", i, res.path, len(got), base.Attempts)
	}
	for a := 1; a < len(got); a++ {
		if prev := got[a-1]; !log.retriedAfter429(prev) {
			report("call %d (%s): sent again (arrival %d of %d) after status %d (faulted %v), not a 429 with Retry-After",
				i, res.path, a+1, len(got), prev.Status, prev.Faulted)
		}
	}
}
