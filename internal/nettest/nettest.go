// Package nettest holds the loopback servers and clients that the tests of
// several packages share, so that none of them keeps a copy: a server
// that counts the requests it gets, a listener that accepts and never
// speaks, a client whose idle connections close with the test, and an
// address nothing listens on. It is for tests only; each function closes
// what it opens when the test ends.
package nettest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// CountingServer starts a loopback HTTP server whose handler h gets the
// 1-based number of each arrival (a nil h answers an empty 200); the
// counter holds the arrivals. It does not log: the connections the tests
// drop are no news.
func CountingServer(t testing.TB, h func(n int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	return CountingServerTLS(t, nil, h)
}

// CountingServerTLS is CountingServer over TLS with cfg and httptest's
// certificate (plain HTTP when cfg is nil).
func CountingServerTLS(t testing.TB, cfg *tls.Config, h func(n int32, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
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

// HTTPClient returns a client over tr (a new http.Transport when tr is
// nil), whose idle connections are closed when the test ends.
func HTTPClient(t testing.TB, tr *http.Transport) *http.Client {
	t.Helper()
	if tr == nil {
		tr = &http.Transport{}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// DeadAddr returns a loopback host:port nothing listens on.
func DeadAddr(t testing.TB) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// Silent is a loopback listener that accepts connections and never reads
// from them nor writes to them: a TLS handshake with it is never answered,
// nor a request. It is safe for concurrent use.
type Silent struct {
	// Addr is the listener's address, host:port.
	Addr string

	ln       net.Listener
	accepted atomic.Int32
	onAccept func(n int)
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	conns    []net.Conn
}

// NewSilent starts a Silent, closed when the test ends. onAccept, when not
// nil, is called with the 1-based number of each connection accepted.
func NewSilent(t testing.TB, onAccept func(n int)) *Silent {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &Silent{Addr: ln.Addr().String(), ln: ln, onAccept: onAccept, done: make(chan struct{})}
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

func (s *Silent) accept() {
	defer close(s.done)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		n := int(s.accepted.Add(1))
		if s.onAccept != nil {
			s.onAccept(n)
		}
	}
}

// Accepted returns the number of connections accepted so far.
func (s *Silent) Accepted() int { return int(s.accepted.Load()) }

// Close closes the listener and every connection it accepted; once it
// returned, Accepted is final. It is safe to call more than once.
func (s *Silent) Close() {
	s.once.Do(func() {
		_ = s.ln.Close()
		<-s.done
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			_ = c.Close()
		}
	})
}
