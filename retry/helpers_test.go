package retry_test

// The package's test helpers: the deterministic policies and their clock,
// the attempts and the expected outcomes of a decision, and the loopback
// servers and clients of the tests that send real requests. A helper used
// by one test file stays in that file; what two files need lives here.
// TestMain (goleak) is in main_test.go.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
)

// maxDuration is the largest Duration, where waits and Retry-After values
// saturate.
const maxDuration = time.Duration(math.MaxInt64)

// testNow is the reference instant of the injected clocks. It lies a day
// ahead of the real clock so that a context deadline built from it never
// expires (in real time) while a test runs: deadline checks then depend on
// the injected clock only.
func testNow() time.Time { return time.Now().Add(24 * time.Hour).Round(0) }

// detPolicy returns retry.New(c) with a fixed clock and a jitter source
// that always draws u, so every wait is known in advance.
func detPolicy(c retry.Class, u float64) (retry.Policy, time.Time) {
	now := testNow()
	p := retry.New(c)
	p.Rand = func() float64 { return u }
	p.Now = func() time.Time { return now }
	return p, now
}

// deadlineCtx returns a context whose deadline lies d after the injected
// clock's now.
func deadlineCtx(t testing.TB, now time.Time, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(d))
	t.Cleanup(cancel)
	return ctx
}

// status is an attempt that got a response with code and these
// Retry-After field values.
func status(code int, retryAfter ...string) retry.Attempt {
	return retry.Attempt{Status: code, RetryAfter: retryAfter}
}

// netFailure is an attempt that got no response, classified as f.
func netFailure(f retry.Failure) retry.Attempt {
	return retry.Attempt{Err: errors.New("connection failed"), Failure: f}
}

// outcome is what a decision must say: retry or not, and why it stops.
type outcome struct {
	Retry  bool
	Reason retry.StopReason
}

var (
	retryIt = outcome{Retry: true}
	success = outcome{}
)

func stopWith(r retry.StopReason) outcome { return outcome{Reason: r} }

// requireOutcome checks that d retries, succeeds or stops as want says (a
// retry or a success carries no stop reason).
func requireOutcome(t testing.TB, d retry.Decision, want outcome) {
	t.Helper()
	require.Equal(t, want, outcome{d.Retry, d.Reason}, "decision %+v", d)
}

// countingServer starts a loopback HTTP server, closed when the test ends,
// whose handler h gets the 1-based number of each arrival (a nil h answers
// an empty 200); the counter holds the arrivals.
func countingServer(t testing.TB, h func(n int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return countingServerTLS(t, nil, h)
}

// countingServerTLS is countingServer over TLS with cfg and httptest's
// certificate (plain HTTP when cfg is nil). Neither logs: the handshakes
// the tests break are no news.
func countingServerTLS(t testing.TB, cfg *tls.Config, h func(n int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var arrivals atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := arrivals.Add(1)
		if h != nil {
			h(n, w, r)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if cfg != nil {
		srv.TLS = cfg
		srv.StartTLS()
	} else {
		srv.Start()
	}
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
