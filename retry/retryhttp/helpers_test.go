package retryhttp_test

// The package's test helpers: a deterministic policy, the expected
// outcome of a decision, and the loopback servers and clients of the
// tests that send real requests. TestMain (goleak) is in main_test.go.

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
)

// detPolicy returns retry.New(c) with a fixed clock and a jitter source
// that always draws u, so every wait is known in advance. The clock lies
// a day ahead of the real one, so that a context deadline built from it
// never expires while a test runs.
func detPolicy(c retry.Class, u float64) (retry.Policy, time.Time) {
	now := time.Now().Add(24 * time.Hour).Round(0)
	p := retry.New(c)
	p.Rand = func() float64 { return u }
	p.Now = func() time.Time { return now }
	return p, now
}

// outcome is what a decision must say: retry or not, and why it stops.
type outcome struct {
	Retry  bool
	Reason retry.StopReason
}

func stopWith(r retry.StopReason) outcome { return outcome{Reason: r} }

// requireOutcome checks that d retries, succeeds or stops as want says (a
// retry or a success carries no stop reason).
func requireOutcome(t testing.TB, d retry.Decision, want outcome) {
	t.Helper()
	require.Equal(t, want, outcome{d.Retry, d.Reason}, "decision %+v", d)
}

// countingServer starts a loopback HTTP server, closed when the test ends,
// whose handler h gets the 1-based number of each arrival (a nil h answers
// an empty 200); the counter holds the arrivals. It does not log: the
// connections the tests drop are no news.
func countingServer(t testing.TB, h func(n int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var arrivals atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := arrivals.Add(1)
		if h != nil {
			h(n, w, r)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &arrivals
}

// testHTTPClient returns a client over tr (a new http.Transport when tr is
// nil), whose idle connections are closed when the test ends.
func testHTTPClient(t testing.TB, tr *http.Transport) *http.Client {
	t.Helper()
	if tr == nil {
		tr = &http.Transport{}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// deadAddr returns a loopback host:port nothing listens on.
func deadAddr(t testing.TB) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
