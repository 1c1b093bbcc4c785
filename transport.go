package synthient

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/synthient-go/synthient/retry/retryhttp"
)

// newTransport returns the client's own HTTP/1.1 transport: each connect
// bounded by open, each read and write by timeout, no proxy (the library
// reads no environment).
//
// HTTP/1.1 keeps the timeouts exact (a connection carries one request at a
// time) and the replay rules simple.
func newTransport(timeout, open time.Duration, cfg *tls.Config) *http.Transport {
	d := &dialer{timeout: timeout, open: open, tls: cfg}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	return &http.Transport{
		DialContext:         d.dial,
		DialTLSContext:      d.dialTLS,
		Protocols:           &protocols,
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 64,
		// Large reads for downloads and streams: fewer system calls.
		ReadBufferSize: 64 << 10,
		// An idle connection's pending read would time out after timeout;
		// the pool lets go of it first, so a request never picks up a
		// connection that is about to fail.
		IdleConnTimeout: min(90*time.Second, timeout*3/4),
	}
}

type dialer struct {
	timeout, open time.Duration
	tls           *tls.Config
}

func (d *dialer) netDialer() *net.Dialer {
	return &net.Dialer{Timeout: d.open, KeepAlive: 30 * time.Second}
}

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.netDialer().DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: conn, timeout: d.timeout, armed: true}, nil
}

// dialTLS dials and completes the TLS handshake within one open timeout.
// Every failure is reported as a dial error: the request never left.
func (d *dialer) dialTLS(parent context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(parent, d.open)
	defer cancel()
	raw, err := d.netDialer().DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cfg := d.tls.Clone()
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	conn := &deadlineConn{Conn: raw, timeout: d.timeout}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close() // the handshake's error is the one to report
		if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
			// The open timeout, not the caller's deadline: report it as
			// net.Dialer reports its own timeout.
			err = os.ErrDeadlineExceeded
		}
		return nil, &net.OpError{Op: "dial", Net: network, Addr: raw.RemoteAddr(), Err: err}
	}
	conn.armed = true
	return tc, nil
}

// deadlineConn bounds each Read and each Write by timeout. A Write also
// restarts the read deadline: the wait for the answer starts when the
// request was written, even if a read was already pending. Until armed
// (during a TLS handshake, bounded by the open timeout) it sets none.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
	armed   bool
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	if c.armed {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	}
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	if !c.armed {
		return c.Conn.Write(b)
	}
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	n, err := c.Conn.Write(b)
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	return n, err
}

// newHTTPClient returns the http.Client that sends every request of a
// client through rt:
//   - retryhttp.NoReplay makes each request one that net/http never sends again
//     on its own, and has no CloseIdleConnections: go-retryablehttp, which
//     calls the http.Client's whenever it gives up on a call, cannot empty
//     the shared pool;
//   - locationAside moves the Location of every 3xx aside;
//   - no redirect is followed: JSON endpoints take none, and downloads
//     follow their one 307 themselves.
func newHTTPClient(rt http.RoundTripper) *http.Client {
	return &http.Client{
		Transport:     retryhttp.NoReplay(locationAside{rt}),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// locationAside is a RoundTripper that moves the Location of every 3xx
// aside, to movedLocation: http.Client parses a Location before it asks
// CheckRedirect, and one that does not parse fails the request with the
// URL, presigned query and all, in the error's text; without a Location
// it returns the 3xx as it is.
type locationAside struct{ rt http.RoundTripper }

func (t locationAside) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if resp != nil && resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header != nil {
		if v, ok := resp.Header["Location"]; ok {
			delete(resp.Header, "Location")
			resp.Header[movedLocation] = v
		}
	}
	return resp, err
}

// movedLocation is the header key locationAside keeps a 3xx's Location
// under. No server can send it: net/http refuses a header name with
// parentheses.
const movedLocation = "Location (moved aside)"

// location returns the Location of a response, moved aside by
// locationAside or not.
func location(h http.Header) string {
	if v := h[movedLocation]; len(v) > 0 {
		return v[0]
	}
	return h.Get("Location")
}

// headerCopy returns a copy of a response's header as the server sent it,
// the Location back in place.
func headerCopy(h http.Header) http.Header {
	c := h.Clone()
	if v, ok := c[movedLocation]; ok {
		delete(c, movedLocation)
		c["Location"] = v
	}
	return c
}
