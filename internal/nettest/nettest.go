// Package nettest holds the loopback servers and clients that the tests of
// several packages share, so that none of them keeps a copy: a server
// that counts the requests it gets, a client whose idle connections close
// with the test, and an address nothing listens on. It is for tests only;
// each function closes what it opens when the test ends.
package nettest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
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
