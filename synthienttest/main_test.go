package synthienttest_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

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

// newClient returns an SDK client for srv with tiny backoffs, closed when
// the test ends.
func newClient(t testing.TB, srv *synthienttest.Server, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	return newClientKey(t, srv, srv.APIKey, opts...)
}

func newClientKey(t testing.TB, srv *synthienttest.Server, key string, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	all := append([]synthient.Option{
		synthient.WithBaseURL(srv.URL),
		synthient.WithBackoff(time.Millisecond, 2*time.Millisecond),
	}, opts...)
	c, err := synthient.NewClient(key, all...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
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
// answer.
func do(t testing.TB, hc httpDoer, method, url, key string, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if _, tolerant := hc.(*tolerantClient); err != nil && !tolerant {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// problemBody is an RFC 9457 body as the fake writes it.
type problemBody struct {
	Type     string              `json:"type"`
	Title    string              `json:"title"`
	Status   int                 `json:"status"`
	Detail   string              `json:"detail"`
	Instance string              `json:"instance"`
	Errors   map[string][]string `json:"errors"`
}

// problemOf checks that r is a problem+json answer with status and
// returns its body.
func problemOf(t testing.TB, r response, status int) problemBody {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d (body %s)", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", ct)
	}
	var p problemBody
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.Body, err)
	}
	if p.Status != status || p.Title == "" || p.Type == "" {
		t.Fatalf("problem body %+v lacks status, title or type", p)
	}
	return p
}

// eventually polls cond for up to 3 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// eq reports got != want as an error.
func eq[T comparable](t testing.TB, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// check reports a false cond as an error.
func check(t testing.TB, cond bool, format string, args ...any) {
	t.Helper()
	if !cond {
		t.Errorf(format, args...)
	}
}

// must stops the test on an error.
func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// asAPIError returns err's *APIError, failing the test if it has none.
func asAPIError(t testing.TB, err error) *synthient.APIError {
	t.Helper()
	var apiErr *synthient.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T) is not an *APIError", err, err)
	}
	return apiErr
}

// httpDoer sends requests: *http.Client or *tolerantClient.
type httpDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// tolerantClient is a raw client whose reads keep what arrived before an
// error.
type tolerantClient struct{ *http.Client }
