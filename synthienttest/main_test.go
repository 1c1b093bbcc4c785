package synthienttest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testIP is an address with intelligence.
var testIP = netip.MustParseAddr("81.2.69.142")

// testNow is the fixed time most tests run at: 14:20 UTC, so the current
// day has 14 completed hours.
var testNow = time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)

// newServer starts a fake on a manual clock at testNow, closed when the
// test ends.
func newServer(t testing.TB, opts ...synthienttest.Option) (*synthienttest.Server, *synthienttest.ManualClock) {
	t.Helper()
	clk := synthienttest.NewManualClock(testNow)
	srv := synthienttest.NewServer(append([]synthienttest.Option{synthienttest.WithClock(clk.Now)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv, clk
}

// hang bounds a wait of the tests on real time: minutes, which only a
// hang outlasts, whatever the load of the machine.
const hang = 2 * time.Minute

// fastBackoff keeps the retries of a test short.
var fastBackoff = synthient.WithBackoff(time.Millisecond, 2*time.Millisecond)

// newClient returns srv's client with tiny backoffs, closed when the test
// ends.
func newClient(t testing.TB, srv *synthienttest.Server, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	c, err := srv.NewClient(append([]synthient.Option{fastBackoff}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// newClientKey is newClient with another key than srv.APIKey.
func newClientKey(t testing.TB, srv *synthienttest.Server, key string, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	c, err := synthient.NewClient(key, append([]synthient.Option{synthient.WithBaseURL(srv.URL), fastBackoff}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// rawClient is a plain net/http client that follows no redirects; its
// connections are closed when the test ends.
func rawClient(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// response is a fully read answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request with key in X-Api-Key ("" for none) and reads the
// answer. A *tolerantClient keeps what arrived before a read error; any
// other client fails the test on one.
func do(t testing.TB, hc httpDoer, method, url, key string, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	require.NoError(t, err, "%s %s", method, url)
	defer func() { _ = resp.Body.Close() }() // read to its end below
	b, err := io.ReadAll(resp.Body)
	if _, tolerant := hc.(*tolerantClient); !tolerant {
		require.NoError(t, err, "%s %s: reading the body", method, url)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// httpDoer sends requests: *http.Client or *tolerantClient.
type httpDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// tolerantClient is a raw client whose reads keep what arrived before an
// error.
type tolerantClient struct{ *http.Client }

// problemBody is an RFC 9457 body as the fake writes it.
type problemBody struct {
	Type     string              `json:"type"`
	Title    string              `json:"title"`
	Status   int                 `json:"status"`
	Detail   string              `json:"detail"`
	Instance string              `json:"instance"`
	Errors   map[string][]string `json:"errors"`
}

// problemOf requires r to be a problem+json answer with status and
// returns its body.
func problemOf(t testing.TB, r response, status int) problemBody {
	t.Helper()
	require.Equal(t, status, r.Status, "status (body %s)", r.Body)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	var p problemBody
	require.NoError(t, json.Unmarshal(r.Body, &p), "problem body %s", r.Body)
	require.Equal(t, status, p.Status, "status in the body")
	require.NotEmpty(t, p.Title, "title")
	require.NotEmpty(t, p.Type, "type")
	return p
}

// errAs returns the error of type E in err's tree, failing the test when
// there is none.
func errAs[E error](t testing.TB, err error) E {
	t.Helper()
	var target E
	require.ErrorAs(t, err, &target)
	return target
}

// take returns the first n values of a stream, or fewer and the error that
// ended it.
func take[T any](seq iter.Seq2[T, error], n int) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
		if len(out) == n {
			break
		}
	}
	return out, nil
}

// openRaw opens a stream of feed segment seg with net/http and returns a
// line reader; the body is closed when the test ends.
func openRaw(t testing.TB, hc *http.Client, srv *synthienttest.Server, seg string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/feeds/"+seg+"/stream", nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", srv.APIKey)
	resp, err := hc.Do(req)
	require.NoError(t, err, "opening the stream")
	t.Cleanup(func() { _ = resp.Body.Close() }) // a stream, cut off: its error says nothing
	return resp, bufio.NewReader(resp.Body)
}
