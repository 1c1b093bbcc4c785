package synthient_test

// The package's test servers. Pick by what the test needs to control:
//
//   - apiServer: a real net/http server on loopback (http, https, or https
//     offering HTTP/2) whose handler gets each request's arrival number; it
//     records the requests and counts arrivals and new connections. For
//     anything an http.Handler can answer.
//   - rawServer: a loopback TCP server that speaks HTTP/1.1 by hand, for
//     what net/http's server cannot do: close a connection after reading a
//     request, reset it mid-body, send a malformed head, hold a TLS
//     handshake.
//   - mockAPI (call_test.go): an httpmock transport with scripted replies,
//     inside synctest bubbles, for the retry rules, where time must be fake.
//   - synthienttest.Server: the fake API, for end-to-end behaviour.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// request is what an apiServer recorded of one request.
type request struct {
	Method   string
	Path     string // r.URL.Path, unescaped
	RawQuery string
	Query    url.Values
	Header   http.Header
}

// apiServer is a loopback httptest server that records every request and
// answers through its handler, which gets the request's 1-based arrival
// number. A handler that waits must watch r.Context(): it ends when the
// client goes away or the test ends.
type apiServer struct {
	*httptest.Server
	// Base is the API base URL: URL + "/api/v4".
	Base string

	handler  func(n int, w http.ResponseWriter, r *http.Request)
	quit     chan struct{} // closed when the test ends
	once     sync.Once
	mu       sync.Mutex
	reqs     []request
	arrivals atomic.Int64
	newConns atomic.Int64
}

// serverOption configures an apiServer.
type serverOption func(*serverConfig)

type serverConfig struct{ tls, http2 bool }

// withTLS serves https with httptest's certificate (the client needs
// synthient.WithTLSConfig with the server's root).
func withTLS() serverOption { return func(c *serverConfig) { c.tls = true } }

// withHTTP2 serves https and offers HTTP/2 too.
func withHTTP2() serverOption { return func(c *serverConfig) { c.tls, c.http2 = true, true } }

// newAPIServer starts an apiServer whose handler is h (nil answers 200
// with no body). It is closed when the test ends, after which its counters
// are final.
func newAPIServer(t testing.TB, h func(n int, w http.ResponseWriter, r *http.Request), opts ...serverOption) *apiServer {
	t.Helper()
	s := &apiServer{handler: h, quit: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.newConns.Add(1)
		}
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS handshake errors are expected
	var cfg serverConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	s.EnableHTTP2 = cfg.http2
	if cfg.tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	s.Base = s.URL + "/api/v4"
	t.Cleanup(s.Finish)
	return s
}

// Finish ends every waiting handler and closes the server; it waits for
// the handlers to return. It is safe to call more than once.
func (s *apiServer) Finish() {
	s.once.Do(func() {
		close(s.quit)
		s.Close()
	})
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, request{
		Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Query: r.URL.Query(), Header: r.Header.Clone(),
	})
	s.mu.Unlock()
	n := int(s.arrivals.Add(1))
	// The request's context also ends when the test ends, so that a
	// handler waiting on it never keeps Close waiting.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	if s.handler != nil {
		s.handler(n, w, r.WithContext(ctx))
	}
}

// Arrivals returns the number of requests received so far.
func (s *apiServer) Arrivals() int { return int(s.arrivals.Load()) }

// NewConns returns the number of connections opened to the server so far.
func (s *apiServer) NewConns() int { return int(s.newConns.Load()) }

// Requests returns a copy of the recorded requests, in arrival order.
func (s *apiServer) Requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.reqs...)
}

// Paths returns the path of every recorded request, in arrival order.
func (s *apiServer) Paths() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Path)
	}
	return out
}

// writeJSON answers status with a JSON body and its Content-Length.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// writeProblem answers status with an RFC 9457 problem body; kv are extra
// header pairs.
func writeProblem(w http.ResponseWriter, status int, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		w.Header().Set(kv[i], kv[i+1])
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"https://docs.synthient.com/errors/x","title":%q,"status":%d,"detail":"detail of %d"}`,
		http.StatusText(status), status, status)
}

// rawServer is a loopback TCP server that speaks HTTP/1.1 by hand. Each
// accepted connection runs serve in its own goroutine; the connection is
// closed when serve returns. Close (also run when the test ends) closes the
// listener and every connection and waits for the goroutines, so that the
// counters are final once it returns.
type rawServer struct {
	// URL is the API base URL, http://127.0.0.1:port/api/v4.
	URL string
	// Origin is http://127.0.0.1:port, for a storage host.
	Origin string
	// Addr is the listener's address, host:port.
	Addr string

	ln    net.Listener
	serve func(*rawConn)
	done  chan struct{} // closed by Close

	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
	accepted atomic.Int64 // connections accepted
	arrivals atomic.Int64 // requests read, over every connection

	arrMu   sync.Mutex
	arrConn []int64         // connection number (1-based) of each arrival
	reqs    []*http.Request // every request read
}

// rawConn is one accepted connection of a rawServer.
type rawConn struct {
	net.Conn
	// N is the connection's number, 1-based, in accept order.
	N   int64
	br  *bufio.Reader
	srv *rawServer
}

// newRawServer starts a rawServer whose connections are handled by serve.
func newRawServer(t testing.TB, serve func(*rawConn)) *rawServer {
	t.Helper()
	return newRawServerAt(t, "127.0.0.1:0", serve)
}

// newRawServerAt is newRawServer listening on addr, such as a port that
// refused an earlier connection.
func newRawServerAt(t testing.TB, addr string, serve func(*rawConn)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "listen")
	s := &rawServer{
		URL:    "http://" + ln.Addr().String() + "/api/v4",
		Origin: "http://" + ln.Addr().String(),
		Addr:   ln.Addr().String(),
		ln:     ln,
		serve:  serve,
		done:   make(chan struct{}),
		conns:  make(map[net.Conn]struct{}),
	}
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.Close)
	return s
}

func (s *rawServer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		rc := &rawConn{Conn: c, N: s.accepted.Add(1), br: bufio.NewReader(c), srv: s}
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serve(rc)
		}()
	}
}

// Close stops the server: it closes the listener and every open
// connection, and waits until every goroutine of the server has returned.
// It is safe to call more than once.
func (s *rawServer) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
		s.ln.Close()
		for c := range s.conns {
			c.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// StopListening closes the listener alone: later connections are refused,
// open ones go on.
func (s *rawServer) StopListening() { s.ln.Close() }

// Done is closed when the server is closing; a handler that holds its
// connection waits on it.
func (s *rawServer) Done() <-chan struct{} { return s.done }

// Accepted returns the number of connections accepted so far.
func (s *rawServer) Accepted() int { return int(s.accepted.Load()) }

// Arrivals returns the number of requests read so far, over every
// connection.
func (s *rawServer) Arrivals() int { return int(s.arrivals.Load()) }

// ArrivalConns returns the connection number of each arrival, in order.
func (s *rawServer) ArrivalConns() []int64 {
	s.arrMu.Lock()
	defer s.arrMu.Unlock()
	return append([]int64(nil), s.arrConn...)
}

// Requests returns the requests read so far, in arrival order.
func (s *rawServer) Requests() []*http.Request {
	s.arrMu.Lock()
	defer s.arrMu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// ReadRequest reads one whole request (head and body) from the connection
// and counts it as an arrival. n is the arrival's number over the whole
// server, 1-based. An error means the peer closed the connection or sent
// something that is not HTTP/1.1.
func (c *rawConn) ReadRequest() (req *http.Request, body []byte, n int, err error) {
	req, err = http.ReadRequest(c.br)
	if err != nil {
		return nil, nil, 0, err
	}
	body, err = io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, nil, 0, err
	}
	c.srv.arrMu.Lock()
	n = int(c.srv.arrivals.Add(1))
	c.srv.arrConn = append(c.srv.arrConn, c.N)
	c.srv.reqs = append(c.srv.reqs, req)
	c.srv.arrMu.Unlock()
	return req, body, n, nil
}

// WriteResponse writes a complete HTTP/1.1 response with a Content-Length,
// leaving the connection open (keep-alive).
func (c *rawConn) WriteResponse(status int, contentType, body string) error {
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %s\r\n\r\n",
		status, http.StatusText(status), contentType, strconv.Itoa(len(body)))
	_, err := io.WriteString(c.Conn, head+body)
	return err
}

// Reset closes the connection with an RST instead of a FIN.
func (c *rawConn) Reset() {
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Conn.Close()
}

// Wait blocks until ch is closed or the server closes; it reports whether
// ch was closed.
func (c *rawConn) Wait(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-c.srv.done:
		return false
	}
}
