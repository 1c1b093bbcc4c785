// Package transport is the client's own connections to the API: an
// HTTP/1.1 http.Transport whose dials and reads and writes have timeouts
// of their own.
//
// The model. A connection is opened within the open timeout: the dial
// and, for https, the TLS handshake with it (dialTLS), every failure of
// which is a dial error (the request never left). Each Read and each Write
// on an open connection is then bounded by the timeout (deadlineConn): a
// Write also restarts the read deadline, so the wait for an answer starts
// when the request was written, even if a read was already pending. The
// pool lets an idle connection go before its pending read would time out.
// HTTP/1.1 alone keeps the timeouts exact (a connection carries one
// request at a time) and the replay rules simple. No proxy is used: the
// library reads no environment.
package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"time"
)

// New returns the client's own transport: each connection opened within
// open, each read and write on it bounded by timeout. cfg configures https
// (nil: TLS 1.2 at least); its ServerName defaults to the host dialled.
func New(timeout, open time.Duration, cfg *tls.Config) *http.Transport {
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
