package synthient_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// rawServer is a loopback TCP server that speaks HTTP/1.1 by hand, for
// the scenarios net/http's server cannot produce: a connection closed after
// a request was read, a TLS peer that never answers. Each accepted
// connection runs serve in its own goroutine; the connection is closed when
// serve returns. Close (also run at the test's cleanup) closes the listener
// and every connection and waits for the goroutines, so that the counters
// are final once it returns.
type rawServer struct {
	// URL is the API base URL, http://127.0.0.1:port/api/v4.
	URL string
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
	arrConn []int64 // connection number (1-based) of each arrival
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
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &rawServer{
		URL:   "http://" + ln.Addr().String() + "/api/v4",
		Addr:  ln.Addr().String(),
		ln:    ln,
		serve: serve,
		done:  make(chan struct{}),
		conns: make(map[net.Conn]struct{}),
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

// ReadRequest reads one whole request (head and body) from the
// connection and counts it as an arrival. n is the arrival's number over
// the whole server, 1-based. An error means the peer closed the connection
// or sent something that is not HTTP/1.1.
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
