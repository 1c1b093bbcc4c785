package synthient_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// Network-level tests of the "Transport" rules of docs/retry-rules.md, on
// real loopback servers: httptest servers, and rawServer (loopback_test.go)
// where the test needs to own the connection.

const (
	lbIPJSON      = `{"ip":"203.0.113.7","network":{"asn":64500,"isp":"Example ISP","type":"DATACENTER","org":null,"domain":null,"abuse_email":null,"abuse_phone":null}}`
	lbAccountJSON = `{"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","organization":{"id":"org_1","name":"Example","relation":"OWNER"},"scopes":["BASIC"],"lookup_quota":{"credits":1000,"resets_in":3600}}`
)

var lbIP = netip.MustParseAddr("203.0.113.7")

// lbClient is newClient with a Debug logger whose output is checked for
// the API key when the test ends.
func lbClient(t *testing.T, baseURL string, opts ...synthient.Option) (*synthient.Client, *logBuffer) {
	t.Helper()
	lg, buf := newLogger()
	c := newClient(t, baseURL, append([]synthient.Option{synthient.WithLogger(lg)}, opts...)...)
	t.Cleanup(func() {
		if strings.Contains(buf.String(), testKey) {
			t.Errorf("the log holds the API key:\n%s", buf)
		}
	})
	return c, buf
}

// lbNoSecret checks that no rendering of err holds the API key.
func lbNoSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, testKey) {
			t.Errorf("an error rendering holds the API key: %s", s)
		}
	}
}

// lbStop checks the base *Error of err: the attempts sent and the reason
// the call stopped.
func lbStop(t *testing.T, err error, attempts int, reason retry.StopReason) {
	t.Helper()
	var e *synthient.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(err, *synthient.Error) is false for %T: %v", err, err)
	}
	if e.Attempts != attempts || e.StopReason != reason {
		t.Errorf("Error: Attempts %d, StopReason %q; want %d, %q (err: %v)", e.Attempts, e.StopReason, attempts, reason, err)
	}
}

// lbConnErr checks that err is a *ConnectionError (or a *TimeoutError,
// when timeout is set) with the given NotSent, and returns it.
func lbConnErr(t *testing.T, err error, notSent, timeout bool) *synthient.ConnectionError {
	t.Helper()
	lbNoSecret(t, err)
	if err == nil {
		t.Fatal("got no error")
	}
	var ce *synthient.ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("errors.As(err, *ConnectionError) is false for %T: %v", err, err)
	}
	if ce.NotSent != notSent {
		t.Errorf("ConnectionError.NotSent = %v, want %v (err: %v)", ce.NotSent, notSent, err)
	}
	if msg := err.Error(); strings.Contains(msg, "://") || strings.Contains(msg, "/api/v4") {
		t.Errorf("the error holds a URL: %s", msg)
	}
	var te *synthient.TimeoutError
	isTimeout := errors.As(err, &te)
	switch {
	case timeout && !isTimeout:
		t.Errorf("got %T (%v), want a *TimeoutError", err, err)
	case timeout && !te.Timeout():
		t.Errorf("TimeoutError.Timeout() is false")
	case !timeout && isTimeout:
		t.Errorf("got a *TimeoutError (%v), want a plain *ConnectionError", err)
	}
	var ae *synthient.APIError
	if errors.As(err, &ae) {
		t.Errorf("a network failure also matches *APIError (status %d)", ae.Status)
	}
	return ce
}

// lbAPIErr checks that err reaches an *APIError with the given status, and
// returns it.
func lbAPIErr(t *testing.T, err error, status int) *synthient.APIError {
	t.Helper()
	lbNoSecret(t, err)
	if err == nil {
		t.Fatal("got no error")
	}
	var ae *synthient.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("errors.As(err, *APIError) is false for %T: %v", err, err)
	}
	if ae.Status != status {
		t.Errorf("APIError.Status = %d, want %d", ae.Status, status)
	}
	return ae
}

// lbAttemptEvents counts the attempt events in a log.
func lbAttemptEvents(buf *logBuffer) int {
	return strings.Count(buf.String(), `"msg":"synthient: attempt"`)
}

// lbCtx is the context of a call: a watchdog of 10 s, so that a rule that
// is not implemented (a timeout that never fires) fails the test instead
// of hanging it. It is far longer than any wait the tests expect.
func lbCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// lbEventually polls cond (every few milliseconds, for at most 5 s); it is
// for waiting on another goroutine, never on a backoff.
func lbEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// lbServer is an httptest server that counts its requests and its new
// connections, and can hold handlers until the test ends.
type lbServer struct {
	*httptest.Server
	API      string // base URL with /api/v4
	arrivals atomic.Int64
	newConns atomic.Int64
	release  chan struct{}
	once     sync.Once
}

// newLBServer starts an httptest server (TLS if tlsOn) whose handler is h,
// given the server and the request's arrival number (1-based). Finish (also run at cleanup) releases held
// handlers and closes the server, after which the counters are final.
func newLBServer(t *testing.T, tlsOn bool, h func(s *lbServer, n int, w http.ResponseWriter, r *http.Request)) *lbServer {
	t.Helper()
	return startLBServer(t, tlsOn, false, h)
}

// startLBServer is newLBServer; h2 makes a TLS server offer HTTP/2 too.
func startLBServer(t *testing.T, tlsOn, h2 bool, h func(s *lbServer, n int, w http.ResponseWriter, r *http.Request)) *lbServer {
	t.Helper()
	s := &lbServer{release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(s, int(s.arrivals.Add(1)), w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.newConns.Add(1)
		}
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS handshake errors are expected
	if tlsOn {
		s.EnableHTTP2 = h2
		s.StartTLS()
	} else {
		s.Start()
	}
	s.API = s.URL + "/api/v4"
	t.Cleanup(s.Finish)
	return s
}

// Finish releases held handlers and closes the server; it waits for every
// handler to return.
func (s *lbServer) Finish() {
	s.once.Do(func() {
		close(s.release)
		s.Close()
	})
}

// hold blocks a handler until the client goes away or the test ends.
func (s *lbServer) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.release:
	}
}

func (s *lbServer) Arrivals() int { return int(s.arrivals.Load()) }
func (s *lbServer) NewConns() int { return int(s.newConns.Load()) }

func lbWriteJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// lbBodyFor is the success body for a request path.
func lbBodyFor(path string) string {
	if strings.HasSuffix(path, "/account/me") {
		return lbAccountJSON
	}
	return lbIPJSON
}

// lbDeadPort returns a loopback address nothing listens on.
func lbDeadPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// 1. net/http re-sends a body-less GET on its own when a reused keep-alive
// connection dies after the request was written. The server answers the
// first arrival of the whole test and then reads every later request fully
// and closes its connection without answering: the count of arrivals is
// then exactly one per attempt the policy allowed.
func TestLoopbackKeepAliveNoReplay(t *testing.T) {
	newDropServer := func(t *testing.T) *rawServer {
		return newRawServer(t, func(c *rawConn) {
			for {
				req, _, n, err := c.ReadRequest()
				if err != nil || n != 1 {
					return // a later arrival: close without answering
				}
				if c.WriteResponse(http.StatusOK, "application/json", lbBodyFor(req.URL.Path)) != nil {
					return
				}
			}
		})
	}
	ctx := lbCtx(t)

	t.Run("LookupIP", func(t *testing.T) {
		srv := newDropServer(t)
		c, logs := lbClient(t, srv.URL)
		if _, err := c.LookupIP(ctx, lbIP); err != nil {
			t.Fatalf("first LookupIP: %v", err)
		}
		_, err := c.LookupIP(ctx, lbIP)
		srv.Close()
		if got := srv.ArrivalConns(); len(got) < 2 || got[1] != 1 {
			t.Fatalf("arrivals by connection %v: the second request did not reuse the kept-alive connection", got)
		}
		if got := srv.Arrivals(); got != 2 {
			t.Errorf("server saw %d arrivals, want 2 (a billed GET was re-sent by the transport)", got)
		}
		lbConnErr(t, err, false, false)
		lbStop(t, err, 1, retry.MayHaveBeenProcessed)
		if got := lbAttemptEvents(logs); got != 2 {
			t.Errorf("%d attempt events logged, want 2", got)
		}
	})

	t.Run("Account", func(t *testing.T) {
		srv := newDropServer(t)
		c, logs := lbClient(t, srv.URL) // standard class, MaxRetries 2
		if _, err := c.Account(ctx); err != nil {
			t.Fatalf("first Account: %v", err)
		}
		_, err := c.Account(ctx)
		srv.Close()
		if got := srv.ArrivalConns(); len(got) < 2 || got[1] != 1 {
			t.Fatalf("arrivals by connection %v: the second request did not reuse the kept-alive connection", got)
		}
		// 1 for the first call, then one per policy attempt (1 + 2 retries).
		if got := srv.Arrivals(); got != 4 {
			t.Errorf("server saw %d arrivals (by connection %v), want 4: one per attempt the policy allowed", got, srv.ArrivalConns())
		}
		lbConnErr(t, err, false, false)
		lbStop(t, err, 3, retry.AttemptsExhausted)
		if got := lbAttemptEvents(logs); got != 4 {
			t.Errorf("%d attempt events logged, want 4", got)
		}
	})
}

// 2. A fresh connection closed after the request was written: the outcome
// is unknown, so a billed call stops at once and a standard one retries.
func TestLoopbackClosedAfterWrite(t *testing.T) {
	ctx := lbCtx(t)
	newCloser := func(t *testing.T) (*rawServer, *[]byte) {
		var mu sync.Mutex
		var first []byte
		srv := newRawServer(t, func(c *rawConn) {
			_, body, n, err := c.ReadRequest()
			if err == nil && n == 1 {
				mu.Lock()
				first = body
				mu.Unlock()
			}
			// return: the connection is closed without an answer
		})
		return srv, &first
	}

	t.Run("LookupIPs", func(t *testing.T) {
		srv, first := newCloser(t)
		c, _ := lbClient(t, srv.URL)
		ips := []netip.Addr{lbIP, netip.MustParseAddr("198.51.100.1")}
		_, err := c.LookupIPs(ctx, ips)
		srv.Close()
		if got := srv.Arrivals(); got != 1 {
			t.Errorf("server saw %d arrivals, want 1", got)
		}
		if want := `{"ips":["203.0.113.7","198.51.100.1"]}`; string(*first) != want {
			t.Errorf("the server read body %q, want %q", *first, want)
		}
		lbConnErr(t, err, false, false)
		lbStop(t, err, 1, retry.MayHaveBeenProcessed)
	})

	t.Run("Account", func(t *testing.T) {
		srv, _ := newCloser(t)
		c, logs := lbClient(t, srv.URL)
		_, err := c.Account(ctx)
		srv.Close()
		if got := srv.Arrivals(); got != 3 {
			t.Errorf("server saw %d arrivals, want 3", got)
		}
		lbConnErr(t, err, false, false)
		lbStop(t, err, 3, retry.AttemptsExhausted)
		if got := lbAttemptEvents(logs); got != 3 {
			t.Errorf("%d attempt events logged, want 3", got)
		}
	})
}

// 3. A certificate the client does not trust: the request provably never
// left, and a TLS failure is not retried, even in the standard class. With
// the server's root in WithTLSConfig the call succeeds, over HTTP/1.1 even
// though the server offers HTTP/2.
func TestLoopbackUntrustedCertificate(t *testing.T) {
	ctx := lbCtx(t)
	var proto atomic.Value
	srv := startLBServer(t, true, true, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		lbWriteJSON(w, http.StatusOK, lbAccountJSON)
	})

	c, logs := lbClient(t, srv.API)
	_, err := c.Account(ctx)
	lbConnErr(t, err, true, false)
	lbStop(t, err, 1, retry.NotRetryable)
	if got := srv.NewConns(); got != 1 {
		t.Errorf("%d TLS connections were opened, want 1 (a certificate failure is not retried)", got)
	}
	if got := srv.Arrivals(); got != 0 {
		t.Errorf("the handler saw %d requests, want 0", got)
	}
	if got := lbAttemptEvents(logs); got != 1 {
		t.Errorf("%d attempt events logged, want 1", got)
	}
	if !strings.Contains(logs.String(), `"error":"tls"`) {
		t.Errorf("the attempt event does not name a TLS failure:\n%s", logs)
	}

	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	trusted, _ := lbClient(t, srv.API, synthient.WithTLSConfig(&tls.Config{RootCAs: pool}))
	acct, err := trusted.Account(ctx)
	if err != nil {
		t.Fatalf("Account with the server's root CA: %v", err)
	}
	if acct.Email != "ada@example.com" {
		t.Errorf("Account.Email = %q", acct.Email)
	}
	if got := srv.Arrivals(); got != 1 {
		t.Errorf("the handler saw %d requests, want 1", got)
	}
	// The server offers h2; the client speaks HTTP/1.1, on which its
	// timeouts and replay rules are built.
	if got, _ := proto.Load().(string); got != "HTTP/1.1" {
		t.Errorf("the request arrived over %q, want HTTP/1.1", got)
	}
}

// 4. Headers that come later than Timeout after the request was written:
// a *TimeoutError, sent (NotSent false), billed once, standard retried.
func TestLoopbackSlowHeaders(t *testing.T) {
	ctx := lbCtx(t)
	newSlow := func(t *testing.T) *lbServer {
		return newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			s.hold(r) // never answers in time
		})
	}

	t.Run("LookupIP", func(t *testing.T) {
		srv := newSlow(t)
		c, _ := lbClient(t, srv.API, synthient.WithTimeout(150*time.Millisecond))
		_, err := c.LookupIP(ctx, lbIP)
		srv.Finish()
		lbConnErr(t, err, false, true)
		lbStop(t, err, 1, retry.MayHaveBeenProcessed)
		if got := srv.Arrivals(); got != 1 {
			t.Errorf("server saw %d arrivals, want 1", got)
		}
	})

	t.Run("Account", func(t *testing.T) {
		srv := newSlow(t)
		c, _ := lbClient(t, srv.API, synthient.WithTimeout(150*time.Millisecond))
		_, err := c.Account(ctx)
		srv.Finish()
		lbConnErr(t, err, false, true)
		lbStop(t, err, 3, retry.AttemptsExhausted)
		if got := srv.Arrivals(); got != 3 {
			t.Errorf("server saw %d arrivals, want 3", got)
		}
	})
}

// 5. Timeout bounds each read, not the call: a body that trickles in for
// twice the timeout arrives whole; a body that stalls for longer than the
// timeout fails with a *TimeoutError that is never retried.
func TestLoopbackBodyTimeout(t *testing.T) {
	ctx := lbCtx(t)

	t.Run("Trickle", func(t *testing.T) {
		const pieces = 15 // ~600 ms at one piece every 40 ms
		srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			body := lbAccountJSON
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
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
		c, _ := lbClient(t, srv.API, synthient.WithTimeout(300*time.Millisecond))
		acct, err := c.Account(ctx)
		if err != nil {
			lbNoSecret(t, err)
			t.Fatalf("Account over a trickling body: %v", err)
		}
		if acct.Email != "ada@example.com" {
			t.Errorf("Account.Email = %q", acct.Email)
		}
		if got := srv.Arrivals(); got != 1 {
			t.Errorf("server saw %d arrivals, want 1", got)
		}
	})

	t.Run("Stall", func(t *testing.T) {
		srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(lbAccountJSON)))
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, lbAccountJSON[:10])
			w.(http.Flusher).Flush()
			s.hold(r) // the rest never comes
		})
		c, _ := lbClient(t, srv.API, synthient.WithTimeout(150*time.Millisecond))
		_, err := c.Account(ctx)
		srv.Finish()
		lbConnErr(t, err, false, true)
		lbStop(t, err, 1, retry.NotRetryable)
		if got := srv.Arrivals(); got != 1 {
			t.Errorf("server saw %d arrivals, want 1 (a failure while reading a 2xx body is never retried)", got)
		}
	})
}

// TestLoopbackTimeoutStartsAtTheWrite: on a reused keep-alive connection,
// whose read for the next answer began while it sat idle, Timeout bounds
// the wait from when the request was written, not from when it went idle.
// (Idle 1.2 s plus an answer after 1.3 s passes a 2 s bound counted from
// the idle read; each wait alone is well within it.)
func TestLoopbackTimeoutStartsAtTheWrite(t *testing.T) {
	srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
		if n == 2 {
			select {
			case <-time.After(1300 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		lbWriteJSON(w, http.StatusOK, lbAccountJSON)
	})
	c, _ := lbClient(t, srv.API, synthient.WithTimeout(2*time.Second), synthient.WithMaxRetries(0))
	ctx := lbCtx(t)
	if _, err := c.Account(ctx); err != nil {
		t.Fatalf("first Account: %v", err)
	}
	time.Sleep(1200 * time.Millisecond) // the connection idles, its read pending
	if _, err := c.Account(ctx); err != nil {
		t.Fatalf("Account on the reused connection: %v", err)
	}
	if n := srv.NewConns(); n != 1 {
		t.Errorf("%d connections, want 1 (the second call must reuse the first's)", n)
	}
}

// 6. A refused connection: provably not sent; billed stops at once,
// standard retries.
func TestLoopbackDialRefused(t *testing.T) {
	ctx := lbCtx(t)
	base := "http://" + lbDeadPort(t) + "/api/v4"

	t.Run("LookupIP", func(t *testing.T) {
		c, logs := lbClient(t, base)
		_, err := c.LookupIP(ctx, lbIP)
		lbConnErr(t, err, true, false)
		lbStop(t, err, 1, retry.NotRetryable)
		if got := lbAttemptEvents(logs); got != 1 {
			t.Errorf("%d attempt events logged, want 1:\n%s", got, logs)
		}
	})

	t.Run("Account", func(t *testing.T) {
		c, logs := lbClient(t, base)
		_, err := c.Account(ctx)
		lbConnErr(t, err, true, false)
		lbStop(t, err, 3, retry.AttemptsExhausted)
		if got := lbAttemptEvents(logs); got != 3 {
			t.Errorf("%d attempt events logged, want 3:\n%s", got, logs)
		}
		if got := strings.Count(logs.String(), `"error":"dial"`); got != 3 {
			t.Errorf("%d attempt events name a dial failure, want 3:\n%s", got, logs)
		}
	})
}

// 6b. NotSent describes the call, not its last attempt: once an attempt
// may have reached the server (it was read, or answered), a later attempt
// that cannot connect does not make the call "not sent". The server goes
// away after its first request: it stops listening and closes the
// connection, so every retry is refused.
func TestLoopbackNotSentDescribesTheCall(t *testing.T) {
	t.Parallel()
	// goneAfterFirst serves the first request with answer (nil: close
	// without an answer), then closes the listener and the connection.
	goneAfterFirst := func(t *testing.T, answer func(*rawConn)) *rawServer {
		return newRawServer(t, func(c *rawConn) {
			if _, _, _, err := c.ReadRequest(); err != nil {
				return
			}
			if answer != nil {
				answer(c)
			}
			c.srv.ln.Close()
		})
	}
	unavailable := func(c *rawConn) { _ = c.WriteResponse(503, "text/plain", "down") }
	for _, tc := range []struct {
		name   string
		answer func(*rawConn)
	}{
		{"closed after the request was read", nil},
		{"answered 503", unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := goneAfterFirst(t, tc.answer)
			c, _ := lbClient(t, srv.URL)
			_, err := c.Account(lbCtx(t))
			srv.Close()
			if got := srv.Arrivals(); got != 1 {
				t.Fatalf("server saw %d arrivals, want 1", got)
			}
			ce := lbConnErr(t, err, false, false)
			lbStop(t, err, 3, retry.AttemptsExhausted)
			if !errors.Is(ce.Err, syscall.ECONNREFUSED) {
				t.Errorf("Err = %v, want the last attempt's connection refused", ce.Err)
			}
			if msg := err.Error(); strings.Contains(msg, "not sent") || !strings.Contains(msg, "may have been processed") {
				t.Errorf("message %q: want \"may have been processed\" and no \"not sent\"", msg)
			}
		})
	}

	// The call's context ends during the wait after a refused retry: the
	// *Error still reaches a ConnectionError that says the call may have
	// reached the server.
	t.Run("cancelled after a refused retry", func(t *testing.T) {
		t.Parallel()
		srv := goneAfterFirst(t, unavailable)
		ctx, cancel := context.WithCancel(lbCtx(t))
		defer cancel()
		var draws atomic.Int32
		// The jitter is drawn once per retry decision: the second draw is
		// the wait after the refused retry.
		jitter := synthient.WithRandom(func() float64 {
			if draws.Add(1) == 2 {
				cancel()
			}
			return 0
		})
		c, _ := lbClient(t, srv.URL, jitter)
		_, err := c.Account(ctx)
		srv.Close()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want one matching context.Canceled", err)
		}
		lbStop(t, err, 2, retry.ContextDone)
		lbConnErr(t, err, false, false)
		if strings.Contains(err.Error(), "not sent") {
			t.Errorf("message %q says not sent", err)
		}
	})
	// The first attempt is refused; the server then comes up, reads the
	// retry and the caller cancels while it is in flight. The last recorded
	// error is the refused dial, but the call may have reached the server.
	t.Run("cancelled while a retry was in flight", func(t *testing.T) {
		t.Parallel()
		addr := lbDeadPort(t)
		ctx, cancel := context.WithCancel(lbCtx(t))
		defer cancel()
		var srv *rawServer
		var draws atomic.Int32
		// The first draw is the wait after the refused attempt: the server
		// starts listening then.
		jitter := synthient.WithRandom(func() float64 {
			if draws.Add(1) == 1 {
				srv = newRawServerAt(t, addr, func(c *rawConn) {
					if _, _, _, err := c.ReadRequest(); err == nil {
						cancel()
					}
					<-c.srv.Done()
				})
			}
			return 0
		})
		c, _ := lbClient(t, "http://"+addr+"/api/v4", jitter)
		_, err := c.Account(ctx)
		srv.Close()
		if got := srv.Arrivals(); got != 1 {
			t.Fatalf("server saw %d arrivals, want 1", got)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want one matching context.Canceled", err)
		}
		lbStop(t, err, 2, retry.ContextDone)
		lbConnErr(t, err, false, false)
	})
}

// 6c. An attempt that never got a connection sent nothing, also when the
// caller's ctx cut it short while it was dialing (net/http then returns the
// bare context error, which says nothing of the connection). The first
// attempt's TLS handshake runs out of OpenTimeout; the caller cancels while
// the second one is in its handshake.
func TestLoopbackNotSentWhenCancelledWhileDialing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(lbCtx(t))
	defer cancel()
	srv := newRawServer(t, func(c *rawConn) {
		if c.N == 2 {
			cancel()
		}
		<-c.srv.Done() // never answer the ClientHello
	})
	c, _ := lbClient(t, "https://"+srv.Addr+"/api/v4", synthient.WithOpenTimeout(50*time.Millisecond))
	_, err := c.Account(ctx)
	srv.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one matching context.Canceled", err)
	}
	lbStop(t, err, 2, retry.ContextDone)
	ce := lbConnErr(t, err, true, true)
	// The last attempt's error describes the call as the *Error does.
	var base *synthient.Error
	if !errors.As(ce, &base) || base.Op != "Account" || base.Attempts != 2 {
		t.Errorf("the *Error of the last attempt's error = %+v, want Account, 2 attempts", base)
	}
	if strings.Count(err.Error(), "Account") != 1 {
		t.Errorf("message %q names the operation more than once", err)
	}
}

// 6d. An answer that is not HTTP, on a JSON endpoint: ErrMalformedResponse,
// sent once (the server would answer the same again), and the error does
// not quote the answer.
func TestLoopbackMalformedAnswer(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(c *rawConn) {
		if _, _, _, err := c.ReadRequest(); err == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: /next?token=s3cr3t-t0ken\x7f\r\nContent-Length: 0\r\n\r\n")
		}
	})
	c, logs := lbClient(t, srv.URL)
	_, err := c.Account(lbCtx(t))
	srv.Close()
	if got := srv.Arrivals(); got != 1 {
		t.Errorf("server saw %d arrivals, want 1", got)
	}
	ce := lbConnErr(t, err, false, false)
	if !errors.Is(ce, synthient.ErrMalformedResponse) {
		t.Errorf("err = %v, want one matching ErrMalformedResponse", err)
	}
	lbStop(t, err, 1, retry.NotRetryable)
	for _, s := range []string{err.Error(), fmt.Sprintf("%#v", ce), logs.String()} {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("%q quotes the answer", s)
		}
	}
	if !strings.Contains(logs.String(), `"error":"malformed"`) {
		t.Errorf("the log does not name the failure:\n%s", logs)
	}
}

// 7. OpenTimeout bounds the TLS handshake: a peer that accepts TCP and
// never answers the ClientHello.
func TestLoopbackOpenTimeout(t *testing.T) {
	srv := newRawServer(t, func(c *rawConn) {
		<-c.srv.Done() // hold the connection, say nothing
	})
	c, _ := lbClient(t, "https://"+srv.Addr+"/api/v4", synthient.WithOpenTimeout(150*time.Millisecond))
	_, err := c.LookupIP(lbCtx(t), lbIP)
	lbConnErr(t, err, true, true)
	lbStop(t, err, 1, retry.NotRetryable)
	lbEventually(t, "the accept", func() bool { return srv.Accepted() >= 1 })
	srv.Close()
	if got := srv.Accepted(); got != 1 {
		t.Errorf("%d connections were opened, want 1", got)
	}
	if got := srv.Arrivals(); got != 0 {
		t.Errorf("server read %d requests, want 0", got)
	}
}

// 7b. An OpenTimeout is the client's own timeout, not the caller's
// context: the error must not match context.DeadlineExceeded while the
// caller's ctx is alive (callers test errors.Is(err,
// context.DeadlineExceeded) to learn that their own deadline passed), and
// the attempt event names a timeout, not a context end.
func TestLoopbackOpenTimeoutIsNotTheCallersDeadline(t *testing.T) {
	srv := newRawServer(t, func(c *rawConn) {
		<-c.srv.Done() // hold the connection, say nothing
	})
	c, logs := lbClient(t, "https://"+srv.Addr+"/api/v4", synthient.WithOpenTimeout(150*time.Millisecond))
	ctx := lbCtx(t)
	_, err := c.LookupIP(ctx, lbIP)
	lbConnErr(t, err, true, true)
	if ctx.Err() != nil {
		t.Fatalf("the caller's ctx ended: %v", ctx.Err())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, context.DeadlineExceeded) holds for an OpenTimeout while the caller's ctx is alive: %v", err)
	}
	if !strings.Contains(logs.String(), `"error":"timeout"`) {
		t.Errorf("the attempt event does not name a timeout:\n%s", logs)
	}
}

// 8. Giving up on a call never empties the shared pool of idle
// connections (go-retryablehttp calls CloseIdleConnections when it gives
// up).
func TestLoopbackGiveUpKeepsPool(t *testing.T) {
	ctx := lbCtx(t)

	t.Run("AfterStatus", func(t *testing.T) {
		var fail atomic.Bool
		srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			if fail.Load() {
				lbWriteJSON(w, http.StatusServiceUnavailable, `{"title":"down"}`)
				return
			}
			lbWriteJSON(w, http.StatusOK, lbAccountJSON)
		})
		c, _ := lbClient(t, srv.API, synthient.WithMaxRetries(0))
		if _, err := c.Account(ctx); err != nil {
			t.Fatalf("Account: %v", err)
		}
		fail.Store(true)
		_, err := c.Account(ctx)
		lbAPIErr(t, err, http.StatusServiceUnavailable)
		lbStop(t, err, 1, retry.AttemptsExhausted)
		fail.Store(false)
		if _, err := c.Account(ctx); err != nil {
			t.Fatalf("Account after the 503: %v", err)
		}
		if got := srv.NewConns(); got != 1 {
			t.Errorf("%d connections were opened, want 1 (all three calls on one kept-alive connection)", got)
		}
	})

	t.Run("AfterNetworkFailureSameClient", func(t *testing.T) {
		// Two concurrent calls open two connections; a call whose
		// connection is then dropped gives up, and the other idle
		// connection must still serve the next call.
		var phase atomic.Int32 // 0: barrier of two, 1: drop once, 2: answer
		var waiting atomic.Int32
		both := make(chan struct{})
		srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			switch phase.Load() {
			case 0:
				if waiting.Add(1) == 2 {
					close(both)
				}
				select {
				case <-both:
				case <-r.Context().Done():
					return
				case <-s.release:
					return
				}
			case 1:
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			lbWriteJSON(w, http.StatusOK, lbAccountJSON)
		})
		c, _ := lbClient(t, srv.API, synthient.WithMaxRetries(0))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.Account(ctx)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("concurrent Account: %v", err)
			}
		}
		if got := srv.NewConns(); got != 2 {
			t.Fatalf("%d connections after two concurrent calls, want 2", got)
		}
		phase.Store(1)
		_, err := c.Account(ctx)
		lbConnErr(t, err, false, false)
		lbStop(t, err, 1, retry.AttemptsExhausted)
		phase.Store(2)
		if _, err := c.Account(ctx); err != nil {
			t.Fatalf("Account after the dropped connection: %v", err)
		}
		if got := srv.NewConns(); got != 2 {
			t.Errorf("%d connections were opened, want 2: giving up closed the other idle connection", got)
		}
	})

	t.Run("AfterNetworkFailureOtherServer", func(t *testing.T) {
		// Two clients share one transport: a call to a dead server that
		// gives up must not close the idle connection to the live one.
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			lbWriteJSON(w, http.StatusOK, lbAccountJSON)
		})
		live, _ := lbClient(t, srv.API, synthient.WithTransport(tr))
		dead, _ := lbClient(t, "http://"+lbDeadPort(t)+"/api/v4", synthient.WithTransport(tr))
		if _, err := live.Account(ctx); err != nil {
			t.Fatalf("Account: %v", err)
		}
		_, err := dead.Account(ctx)
		lbConnErr(t, err, true, false)
		lbStop(t, err, 3, retry.AttemptsExhausted)
		_, err = dead.LookupIP(ctx, lbIP)
		lbConnErr(t, err, true, false)
		lbStop(t, err, 1, retry.NotRetryable)
		if _, err := live.Account(ctx); err != nil {
			t.Fatalf("Account after the other server failed: %v", err)
		}
		if got := srv.NewConns(); got != 1 {
			t.Errorf("%d connections to the live server, want 1: giving up on the other server closed its idle connection", got)
		}
	})
}

// 9. An error body is read to at most 64 KiB, then the connection is
// closed rather than drained.
func TestLoopbackErrorBodyCap(t *testing.T) {
	ctx := lbCtx(t)
	const size = 1 << 20
	var calls atomic.Int64
	srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			lbWriteJSON(w, http.StatusOK, lbAccountJSON)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(http.StatusBadRequest)
		chunk := strings.Repeat("x", 32<<10)
		for range size / len(chunk) {
			if _, err := io.WriteString(w, chunk); err != nil {
				return // the client closed the connection
			}
		}
	})
	c, _ := lbClient(t, srv.API)
	_, err := c.Account(ctx)
	ae := lbAPIErr(t, err, http.StatusBadRequest)
	lbStop(t, err, 1, retry.NotRetryable)
	if len(ae.Detail) != 64<<10 {
		t.Errorf("len(APIError.Detail) = %d, want %d", len(ae.Detail), 64<<10)
	}
	if _, err := c.Account(ctx); err != nil {
		t.Fatalf("Account after the large error body: %v", err)
	}
	if got := srv.NewConns(); got != 2 {
		t.Errorf("%d connections were opened, want 2: the connection of the capped body was reused, so its rest was read", got)
	}
}

// 10. The headers of every request.
func TestLoopbackRequestHeaders(t *testing.T) {
	ctx := lbCtx(t)
	type seen struct {
		method, path string
		header       http.Header
		body         string
	}
	var mu sync.Mutex
	var reqs []seen
	srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, seen{r.Method, r.URL.Path, r.Header.Clone(), string(b)})
		mu.Unlock()
		p := strings.TrimPrefix(r.URL.Path, "/api/v4")
		switch {
		case p == "/health":
			lbWriteJSON(w, http.StatusOK, `{"status":"ok"}`)
		case p == "/account/me":
			lbWriteJSON(w, http.StatusOK, lbAccountJSON)
		case p == "/lookup/ips":
			lbWriteJSON(w, http.StatusOK, `{"results":[{"ip":"203.0.113.7"},{"ip":"198.51.100.1"},{"ip":"2001:db8::1"}]}`)
		case strings.HasPrefix(p, "/lookup/ip/"):
			lbWriteJSON(w, http.StatusOK, lbIPJSON)
		case strings.HasPrefix(p, "/lookup/domain/"):
			lbWriteJSON(w, http.StatusOK, `{"domain":"example.com","status":"ok"}`)
		default:
			lbWriteJSON(w, http.StatusNotFound, `{"title":"not found"}`)
		}
	})
	ips := []netip.Addr{lbIP, netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("2001:db8::1")}
	run := func(t *testing.T, c *synthient.Client) {
		t.Helper()
		check := func(what string, err error) {
			t.Helper()
			if err != nil {
				lbNoSecret(t, err)
				t.Fatalf("%s: %v", what, err)
			}
		}
		_, err := c.Account(ctx)
		check("Account", err)
		_, err = c.LookupIP(ctx, lbIP)
		check("LookupIP", err)
		res, err := c.LookupIPs(ctx, ips)
		check("LookupIPs", err)
		if len(res) != 3 {
			t.Errorf("LookupIPs gave %d results", len(res))
		}
		_, err = c.LookupDomain(ctx, "example.com", nil)
		check("LookupDomain", err)
		_, err = c.Health(ctx)
		check("Health", err)
	}
	for _, tc := range []struct {
		name, wantUA string
		opts         []synthient.Option
	}{
		{"default", "synthient-go/" + synthient.Version, nil},
		{"WithUserAgent", "synthient-go/" + synthient.Version + " myapp/1.0", []synthient.Option{synthient.WithUserAgent("myapp/1.0")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			reqs = nil
			mu.Unlock()
			c, _ := lbClient(t, srv.API, tc.opts...)
			run(t, c)
			mu.Lock()
			got := append([]seen(nil), reqs...)
			mu.Unlock()
			if len(got) != 5 {
				t.Fatalf("server saw %d requests, want 5", len(got))
			}
			for _, r := range got {
				health := r.path == "/api/v4/health"
				switch keys := r.header.Values("X-Api-Key"); {
				case health && len(keys) != 0:
					t.Errorf("%s %s carries X-Api-Key", r.method, r.path)
				case !health && (len(keys) != 1 || keys[0] != testKey):
					t.Errorf("%s %s: %d X-Api-Key values or not the key, want exactly the key", r.method, r.path, len(keys))
				}
				if ua := r.header.Values("User-Agent"); len(ua) != 1 || ua[0] != tc.wantUA {
					t.Errorf("%s %s: User-Agent %q, want %q", r.method, r.path, ua, tc.wantUA)
				}
				if a := r.header.Values("Accept"); len(a) != 1 || a[0] != "application/json" {
					t.Errorf("%s %s: Accept %q, want application/json", r.method, r.path, a)
				}
				if r.header.Get("Authorization") != "" || r.header.Get("Cookie") != "" {
					t.Errorf("%s %s carries Authorization or Cookie", r.method, r.path)
				}
				if r.path == "/api/v4/lookup/ips" {
					if r.method != http.MethodPost {
						t.Errorf("LookupIPs used %s", r.method)
					}
					if ct := r.header.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/json" {
						t.Errorf("LookupIPs: Content-Type %q, want application/json", ct)
					}
					if want := `{"ips":["203.0.113.7","198.51.100.1","2001:db8::1"]}`; r.body != want {
						t.Errorf("LookupIPs body %q, want %q", r.body, want)
					}
				} else if r.method != http.MethodGet || r.body != "" {
					t.Errorf("%s %s with body %q, want a GET without a body", r.method, r.path, r.body)
				}
			}
		})
	}
}

// 11. JSON endpoints never follow a redirect: the 3xx is the error, and
// the redirect's target sees nothing. A Location that does not parse is
// no different (net/http would parse it first and fail, the URL in its
// text).
func TestLoopbackNoRedirects(t *testing.T) {
	ctx := lbCtx(t)
	other := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
		lbWriteJSON(w, http.StatusOK, lbBodyFor(r.URL.Path))
	})
	const unparsable = "http://127.0.0.1:1/%zz?sig=LOCATIONSECRET"
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, bad := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d unparsable=%v", status, bad), func(t *testing.T) {
				srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
					loc := other.URL + r.URL.Path
					if bad {
						loc = unparsable
					}
					w.Header().Set("Location", loc)
					w.WriteHeader(status)
				})
				c, _ := lbClient(t, srv.API)
				_, err := c.Account(ctx)
				lbAPIErr(t, err, status)
				lbStop(t, err, 1, retry.NotRetryable)
				_, err = c.LookupIP(ctx, lbIP)
				lbAPIErr(t, err, status)
				lbStop(t, err, 1, retry.NotRetryable)
				if msg := fmt.Sprintf("%v %#v", err, err); strings.Contains(msg, "LOCATIONSECRET") {
					t.Errorf("the error holds the Location: %s", msg)
				}
				if got := srv.Arrivals(); got != 2 {
					t.Errorf("server saw %d arrivals, want 2", got)
				}
				if got := other.Arrivals(); got != 0 {
					t.Errorf("the redirect target saw %d requests, want 0", got)
				}
			})
		}
	}
}

// 12. The response hook runs once per API response, with the status, the
// request id and the rate limit; its error is returned unchanged.
func TestLoopbackResponseHook(t *testing.T) {
	ctx := lbCtx(t)

	t.Run("EachAttempt", func(t *testing.T) {
		srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/health") {
				w.Header().Set("X-Request-Id", "req-health")
				lbWriteJSON(w, http.StatusOK, `{"status":"ok"}`)
				return
			}
			h := w.Header()
			h.Set("X-Request-Id", "req-"+strconv.Itoa(n))
			h.Set("RateLimit-Limit", "100")
			h.Set("RateLimit-Remaining", strconv.Itoa(100-n))
			h.Set("RateLimit-Reset", strconv.Itoa(60-n))
			if n < 3 {
				lbWriteJSON(w, http.StatusServiceUnavailable, `{"title":"down"}`)
				return
			}
			lbWriteJSON(w, http.StatusOK, lbAccountJSON)
		})
		var mu sync.Mutex
		var infos []*synthient.ResponseInfo
		hook := func(ri *synthient.ResponseInfo) error {
			mu.Lock()
			infos = append(infos, ri)
			mu.Unlock()
			return nil
		}
		c, _ := lbClient(t, srv.API, synthient.WithResponseHook(hook))
		if _, err := c.Account(ctx); err != nil {
			lbNoSecret(t, err)
			t.Fatalf("Account: %v", err)
		}
		mu.Lock()
		got := append([]*synthient.ResponseInfo(nil), infos...)
		infos = nil
		mu.Unlock()
		if len(got) != 3 {
			t.Fatalf("the hook ran %d times, want 3 (once per response)", len(got))
		}
		for i, ri := range got {
			n := i + 1
			wantStatus := http.StatusServiceUnavailable
			if n == 3 {
				wantStatus = http.StatusOK
			}
			if ri.Status != wantStatus {
				t.Errorf("response %d: Status %d, want %d", n, ri.Status, wantStatus)
			}
			if want := "req-" + strconv.Itoa(n); ri.RequestID != want || ri.Header.Get("X-Request-Id") != want {
				t.Errorf("response %d: RequestID %q, header %q, want %q", n, ri.RequestID, ri.Header.Get("X-Request-Id"), want)
			}
			want := synthient.RateLimit{Limit: 100, Remaining: 100 - n, Reset: time.Duration(60-n) * time.Second}
			if ri.RateLimit == nil || *ri.RateLimit != want {
				t.Errorf("response %d: RateLimit %+v, want %+v", n, ri.RateLimit, want)
			}
		}

		if _, err := c.Health(ctx); err != nil {
			lbNoSecret(t, err)
			t.Fatalf("Health: %v", err)
		}
		mu.Lock()
		got = append([]*synthient.ResponseInfo(nil), infos...)
		mu.Unlock()
		if len(got) != 1 {
			t.Fatalf("the hook ran %d times for /health, want 1", len(got))
		}
		if ri := got[0]; ri.Status != http.StatusOK || ri.RequestID != "req-health" || ri.RateLimit != nil {
			t.Errorf("/health: Status %d, RequestID %q, RateLimit %+v; want 200, req-health, nil", ri.Status, ri.RequestID, ri.RateLimit)
		}
	})

	t.Run("Error", func(t *testing.T) {
		srv := newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/account/me") {
				lbWriteJSON(w, http.StatusServiceUnavailable, `{"title":"down"}`)
				return
			}
			lbWriteJSON(w, http.StatusOK, lbIPJSON)
		})
		hookErr := errors.New("the hook refuses")
		var calls atomic.Int64
		c, _ := lbClient(t, srv.API, synthient.WithResponseHook(func(*synthient.ResponseInfo) error {
			calls.Add(1)
			return hookErr
		}))
		_, err := c.Account(ctx) // a 503 the standard class would retry
		if err != hookErr {
			t.Errorf("Account returned %T %v, want the hook's error itself", err, err)
		}
		if got := srv.Arrivals(); got != 1 {
			t.Errorf("server saw %d arrivals, want 1: the hook's error stops the call", got)
		}
		if got := calls.Load(); got != 1 {
			t.Errorf("the hook ran %d times, want 1", got)
		}
		_, err = c.LookupIP(ctx, lbIP) // a 200
		if err != hookErr {
			t.Errorf("LookupIP returned %T %v, want the hook's error itself", err, err)
		}
		if got := srv.Arrivals(); got != 2 {
			t.Errorf("server saw %d arrivals, want 2", got)
		}
	})
}

// 13. Waiting out a Retry-After against a real server: a cancelled ctx
// ends the wait at once, and a wait that would pass the ctx deadline is
// not started.
func TestLoopbackRetryAfterContext(t *testing.T) {
	newLimiter := func(t *testing.T, retryAfter string) *lbServer {
		return newLBServer(t, false, func(s *lbServer, n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", retryAfter)
			w.Header().Set("X-Request-Id", "req-"+strconv.Itoa(n))
			lbWriteJSON(w, http.StatusTooManyRequests, `{"title":"slow down"}`)
		})
	}

	t.Run("Cancel", func(t *testing.T) {
		srv := newLimiter(t, "30")
		c, logs := lbClient(t, srv.API)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Cancel once the server saw the request and the client
			// decided to wait out the 30 s.
			for srv.Arrivals() < 1 || !strings.Contains(logs.String(), `"decision":"retry"`) {
				if ctx.Err() != nil {
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
			cancel()
		}()
		start := time.Now()
		_, err := c.Account(ctx)
		elapsed := time.Since(start)
		cancel()
		wg.Wait()
		// Not a timing assertion: only "the 30 s wait was not served".
		if elapsed > 10*time.Second {
			t.Errorf("the call returned after %v: the cancellation did not end the wait", elapsed)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(err, context.Canceled) is false: %v", err)
		}
		ae := lbAPIErr(t, err, http.StatusTooManyRequests)
		if ae.RetryAfter == nil || *ae.RetryAfter != 30*time.Second {
			t.Errorf("APIError.RetryAfter = %v, want 30s", ae.RetryAfter)
		}
		if ae.RequestID != "req-1" {
			t.Errorf("APIError.RequestID = %q, want req-1", ae.RequestID)
		}
		lbStop(t, err, 1, retry.ContextDone)
		if got := srv.Arrivals(); got != 1 {
			t.Errorf("server saw %d arrivals, want 1", got)
		}
		// The stop event names the outcome of the attempt it ends.
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		var stop map[string]any
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &stop); err != nil {
			t.Fatalf("last log line %q: %v", lines[len(lines)-1], err)
		}
		if stop["reason"] != string(retry.ContextDone) || stop["status"] != float64(429) || stop["request_id"] != "req-1" || stop["level"] != "INFO" {
			t.Errorf("stop event %v, want reason context_done, status 429, request_id req-1 at INFO", stop)
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		srv := newLimiter(t, "10")
		c, _ := lbClient(t, srv.API)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := c.LookupIP(ctx, lbIP)
		if ctx.Err() != nil {
			t.Errorf("the call returned only after its deadline passed: it did not stop at once")
		}
		ae := lbAPIErr(t, err, http.StatusTooManyRequests)
		if ae.RetryAfter == nil || *ae.RetryAfter != 10*time.Second {
			t.Errorf("APIError.RetryAfter = %v, want 10s", ae.RetryAfter)
		}
		lbStop(t, err, 1, retry.RetryAfterExceedsDeadline)
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the error matches context.DeadlineExceeded, but the deadline had not passed: %v", err)
		}
		if got := srv.Arrivals(); got != 1 {
			t.Errorf("server saw %d arrivals, want 1", got)
		}
	})
}
