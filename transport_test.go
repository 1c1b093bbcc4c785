package synthient_test

// Tests of the connection (transport.go): its timeouts and TLS, on real
// loopback servers: apiServer, and rawServer where the test needs to own
// the connection. The call loop around it is tested in call_test.go.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/nettest"
	"github.com/synthient-go/synthient/retry"
)

// TestLoopbackUntrustedCertificate: a certificate the client does not
// trust: the request provably never left, and a TLS failure is not
// retried, even in the standard class. With the server's root in
// WithTLSConfig the call succeeds, over HTTP/1.1 even though the server
// offers HTTP/2.
func TestLoopbackUntrustedCertificate(t *testing.T) {
	t.Parallel()
	ctx := callCtx(t)
	var proto atomic.Value
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		writeJSON(w, http.StatusOK, sampleAccountJSON)
	}, withHTTP2())

	c, logs := loggedClient(t, srv.Base)
	err := callAccount(ctx, c)
	_ = requireConnErr(t, err, true, false)
	_ = requireStop(t, err, 1, retry.NotRetryable)
	assert.Equal(t, 1, srv.NewConns(), "TLS connections opened: a certificate failure is not retried")
	assert.Zero(t, srv.Arrivals(), "requests the handler saw")
	assert.Equal(t, 1, attemptEvents(logs), "attempt events logged")
	assert.Contains(t, logs.String(), `"error":"tls"`, "the attempt event does not name a TLS failure")

	trusted, _ := loggedClient(t, srv.Base, trustServer(srv))
	acct, err := trusted.Account(ctx)
	require.NoError(t, err, "Account with the server's root CA")
	assert.Equal(t, "ada@example.com", acct.Email, "Account.Email")
	assert.Equal(t, 1, srv.Arrivals(), "requests the handler saw")
	// The server offers h2; the client speaks HTTP/1.1, on which its
	// timeouts and replay rules are built.
	assert.Equal(t, "HTTP/1.1", proto.Load(), "the protocol of the request")
}

// TestLoopbackSlowHeaders: headers that come later than Timeout after the
// request was written: a *TimeoutError, sent (NotSent false), billed once,
// standard retried.
func TestLoopbackSlowHeaders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		call     callFunc
		attempts int
		reason   retry.StopReason
	}{
		{"LookupIP", callLookupIP, 1, retry.MayHaveBeenProcessed},
		{"Account", callAccount, 3, retry.AttemptsExhausted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done() // never answers in time
			})
			c, _ := loggedClient(t, srv.Base, synthient.WithTimeout(150*time.Millisecond))
			err := tc.call(callCtx(t), c)
			srv.Finish()
			_ = requireConnErr(t, err, false, true)
			_ = requireStop(t, err, tc.attempts, tc.reason)
			assert.Equal(t, tc.attempts, srv.Arrivals(), "arrivals")
		})
	}
}

// TestLoopbackBodyTimeout: Timeout bounds each read, not the call: a body
// that trickles in for twice the timeout arrives whole; a body that stalls
// for longer than the timeout fails with a *TimeoutError that is never
// retried.
//
//nolint:paralleltest // it measures real time: the trickle's margins are tens of milliseconds
func TestLoopbackBodyTimeout(t *testing.T) {
	ctx := callCtx(t)

	t.Run("Trickle", func(t *testing.T) {
		const pieces = 15 // ~600 ms at one piece every 40 ms
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			body := sampleAccountJSON
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			tick := time.NewTicker(40 * time.Millisecond)
			defer tick.Stop()
			size := (len(body) + pieces - 1) / pieces
			for len(body) > 0 {
				select {
				case <-tick.C:
				case <-r.Context().Done():
					return
				}
				n := min(size, len(body))
				if _, err := io.WriteString(w, body[:n]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				body = body[n:]
			}
		})
		c, _ := loggedClient(t, srv.Base, synthient.WithTimeout(300*time.Millisecond))
		acct, err := c.Account(ctx)
		assertNoSecret(t, err, nil)
		require.NoError(t, err, "Account over a trickling body")
		assert.Equal(t, "ada@example.com", acct.Email, "Account.Email")
		assert.Equal(t, 1, srv.Arrivals(), "arrivals")
	})

	t.Run("Stall", func(t *testing.T) {
		srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(sampleAccountJSON)))
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, sampleAccountJSON[:10])
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the rest never comes
		})
		c, _ := loggedClient(t, srv.Base, synthient.WithTimeout(150*time.Millisecond))
		err := callAccount(ctx, c)
		srv.Finish()
		_ = requireConnErr(t, err, false, true)
		_ = requireStop(t, err, 1, retry.NotRetryable)
		assert.Equal(t, 1, srv.Arrivals(), "arrivals: a failure while reading a 2xx body is never retried")
	})
}

// TestLoopbackOpenTimeout: OpenTimeout bounds the TLS handshake: a peer
// that accepts TCP and never answers the ClientHello.
func TestLoopbackOpenTimeout(t *testing.T) {
	t.Parallel()
	srv := nettest.NewSilent(t, nil) // holds the connection, says nothing
	c, _ := loggedClient(t, "https://"+srv.Addr+"/api/v4", synthient.WithOpenTimeout(150*time.Millisecond))
	err := callLookupIP(callCtx(t), c)
	_ = requireConnErr(t, err, true, true)
	_ = requireStop(t, err, 1, retry.NotRetryable)
	require.Eventually(t, func() bool { return srv.Accepted() >= 1 }, time.Minute, 2*time.Millisecond, "the accept")
	srv.Close()
	assert.Equal(t, 1, srv.Accepted(), "connections opened")
}

// TestLoopbackOpenTimeoutIsNotTheCallersDeadline: an OpenTimeout is the
// client's own timeout, not the caller's context: the error must not match
// context.DeadlineExceeded while the caller's ctx is alive (callers test
// errors.Is(err, context.DeadlineExceeded) to learn that their own
// deadline passed), and the attempt event names a timeout, not a context
// end.
func TestLoopbackOpenTimeoutIsNotTheCallersDeadline(t *testing.T) {
	t.Parallel()
	srv := nettest.NewSilent(t, nil) // holds the connection, says nothing
	c, logs := loggedClient(t, "https://"+srv.Addr+"/api/v4", synthient.WithOpenTimeout(150*time.Millisecond))
	ctx := callCtx(t)
	err := callLookupIP(ctx, c)
	_ = requireConnErr(t, err, true, true)
	require.NoError(t, ctx.Err(), "the caller's ctx ended")
	require.NotErrorIs(t, err, context.DeadlineExceeded, "an OpenTimeout while the caller's ctx is alive")
	assert.Contains(t, logs.String(), `"error":"timeout"`, "the attempt event does not name a timeout")
}
