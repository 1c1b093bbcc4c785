package retry_test

// Tests of classify.go: ClassifyError on errors built by hand, on every
// TLS alert a peer can send, and on the real errors of loopback
// connections (a closed port, an untrusted certificate, a refused
// handshake, a scheme mismatch, timeouts, a dropped connection, an answer
// that is not HTTP).

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/nettest"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/retry/internal/retrytest"
)

func TestClassifyError(t *testing.T) {
	t.Parallel()
	dnsErr := &net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}
	refused := &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}
	reset := &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}
	cases := []struct {
		name string
		err  error
		want retry.Failure
	}{
		{"nil", nil, retry.Failure{}},

		// Provably never sent: DNS and dial.
		{"dial refused", &net.OpError{Op: "dial", Net: "tcp", Err: refused}, retry.Failure{NotSent: true}},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, retry.Failure{NotSent: true, Timeout: true}},
		{"DNS", dnsErr, retry.Failure{NotSent: true}},
		{"DNS inside dial", &net.OpError{Op: "dial", Net: "tcp", Err: dnsErr}, retry.Failure{NotSent: true}},
		{"DNS timeout", &net.DNSError{Err: "i/o timeout", Name: "api.invalid", IsTimeout: true}, retry.Failure{NotSent: true, Timeout: true}},
		{"proxy CONNECT", &net.OpError{Op: "proxyconnect", Net: "tcp", Err: refused}, retry.Failure{NotSent: true}},

		// Certificate failures: TLS and never sent.
		{"unknown authority", x509.UnknownAuthorityError{}, retry.Failure{TLS: true, NotSent: true}},
		{"verification error", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, retry.Failure{TLS: true, NotSent: true}},

		// Other TLS failures.
		{"record header", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, retry.Failure{TLS: true}},
		{"alert", tls.AlertError(40), retry.Failure{TLS: true}},
		{"tls: text", errors.New("tls: handshake failure"), retry.Failure{TLS: true}},

		// A handshake refused by the peer's alert: never reached the API.
		{"remote handshake failure", &net.OpError{Op: "remote error", Err: errors.New("tls: handshake failure")}, retry.Failure{TLS: true, NotSent: true}},
		{"remote protocol version", &net.OpError{Op: "remote error", Err: errors.New("tls: protocol version not supported")}, retry.Failure{TLS: true, NotSent: true}},
		{"remote certificate required", &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, retry.Failure{TLS: true, NotSent: true}},
		// Alerts about records, which a peer sends at any time: unknown.
		{"remote bad record MAC", &net.OpError{Op: "remote error", Err: errors.New("tls: bad record MAC")}, retry.Failure{TLS: true}},
		{"remote internal error", &net.OpError{Op: "remote error", Err: errors.New("tls: internal error")}, retry.Failure{TLS: true}},
		{"local handshake failure", &net.OpError{Op: "local error", Err: errors.New("tls: handshake failure")}, retry.Failure{TLS: true}},

		// Outcome unknown: the request may have been written.
		{"read deadline", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, retry.Failure{Timeout: true}},
		{"write deadline", &net.OpError{Op: "write", Net: "tcp", Err: os.ErrDeadlineExceeded}, retry.Failure{Timeout: true}},
		{"EOF", io.EOF, retry.Failure{}},
		{"unexpected EOF", io.ErrUnexpectedEOF, retry.Failure{}},
		{"connection reset on read", &net.OpError{Op: "read", Net: "tcp", Err: reset}, retry.Failure{}},
		{"broken pipe on write", &net.OpError{Op: "write", Net: "tcp", Err: &os.SyscallError{Syscall: "write", Err: syscall.EPIPE}}, retry.Failure{}},
		{"plain error", errors.New("something broke"), retry.Failure{}},

		// net/http's TLS handshake timeout is told by its whole text
		// (timeoutText stands in for its unexported type): nothing was
		// sent. A longer text is another timeout.
		{"TLS handshake timeout", timeoutText("net/http: TLS handshake timeout"), retry.Failure{Timeout: true, NotSent: true}},
		{"longer than a TLS handshake timeout", timeoutText("net/http: TLS handshake timeout, and more"), retry.Failure{Timeout: true}},
	}
	wrappers := []struct {
		name string
		wrap func(error) error
	}{
		{"bare", func(err error) error { return err }},
		{"url.Error", func(err error) error { return &url.Error{Op: "Get", URL: "https://api.example/v4", Err: err} }},
		{"fmt %w", func(err error) error { return fmt.Errorf("attempt 1: %w", err) }},
		{"url.Error in fmt %w", func(err error) error {
			return fmt.Errorf("attempt 1: %w", &url.Error{Op: "Post", URL: "https://api.example/v4", Err: err})
		}},
	}
	for _, tc := range cases {
		for _, w := range wrappers {
			if tc.err == nil && w.name != "bare" {
				continue
			}
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				t.Parallel()
				err := w.wrap(tc.err)
				assert.Equal(t, tc.want, retry.ClassifyError(err), "ClassifyError(%v)", err)
			})
		}
	}
}

// remoteAlerts are the TLS alerts a peer can send, and whether each says
// that the request never left: a handshake alert does (RFC 8446, section
// 6.2); an alert about records, or one crypto/tls has no name for, leaves
// the outcome unknown.
var remoteAlerts = []struct {
	alert   tls.AlertError
	notSent bool
}{
	// Handshake alerts.
	{40, true},  // handshake failure
	{42, true},  // bad certificate
	{43, true},  // unsupported certificate
	{44, true},  // revoked certificate
	{45, true},  // expired certificate
	{46, true},  // unknown certificate
	{48, true},  // unknown certificate authority
	{49, true},  // access denied
	{70, true},  // protocol version not supported
	{71, true},  // insufficient security level
	{86, true},  // inappropriate fallback
	{109, true}, // missing extension
	{110, true}, // unsupported extension
	{111, true}, // certificate unobtainable
	{112, true}, // unrecognized name
	{113, true}, // bad certificate status response
	{114, true}, // bad certificate hash value
	{115, true}, // unknown PSK identity
	{116, true}, // certificate required
	{120, true}, // no application protocol
	{121, true}, // encrypted client hello required
	// Alerts about records, or sent at any time.
	{0, false},   // close notify
	{10, false},  // unexpected message
	{20, false},  // bad record MAC
	{21, false},  // decryption failed
	{22, false},  // record overflow
	{30, false},  // decompression failure
	{47, false},  // illegal parameter
	{50, false},  // error decoding message
	{51, false},  // error decrypting message
	{60, false},  // export restriction
	{80, false},  // internal error
	{90, false},  // user canceled
	{100, false}, // no renegotiation
	{255, false}, // no name: "tls: alert(255)"
}

// TestClassifyErrorRemoteAlerts: crypto/tls reports an alert from the peer
// as a *net.OpError with Op "remote error". Every alert that refuses a
// handshake (RFC 8446, section 6.2) says the request never left; an alert
// a peer may send about records at any time, or one crypto/tls has no name
// for, leaves the outcome unknown. The texts are crypto/tls's own: each
// alert is its tls.AlertError.
func TestClassifyErrorRemoteAlerts(t *testing.T) {
	t.Parallel()
	for _, tc := range remoteAlerts {
		t.Run(tc.alert.Error(), func(t *testing.T) {
			t.Parallel()
			err := &url.Error{Op: "Get", URL: "https://api.example/v4", Err: &net.OpError{Op: "remote error", Err: tc.alert}}
			assert.Equal(t, retry.Failure{TLS: true, NotSent: tc.notSent}, retry.ClassifyError(err), "ClassifyError(%v)", err)
		})
	}
}

// TestClassifyErrorCertificates uses a real certificate for the
// certificate errors that need one.
func TestClassifyErrorCertificates(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	cert := srv.Certificate()
	for _, err := range []error{
		x509.HostnameError{Certificate: cert, Host: "api.synthient.com"},
		x509.CertificateInvalidError{Cert: cert, Reason: x509.Expired},
		&tls.CertificateVerificationError{UnverifiedCertificates: []*x509.Certificate{cert}, Err: x509.HostnameError{Certificate: cert, Host: "x"}},
	} {
		wrapped := &url.Error{Op: "Get", URL: "https://api.synthient.com", Err: err}
		assert.Equal(t, retry.Failure{TLS: true, NotSent: true}, retry.ClassifyError(wrapped), "ClassifyError(%v)", wrapped)
	}
}

// failedGet sends a GET of url with hc and returns its error, which the
// test requires: a response fails it (and is closed).
func failedGet(t *testing.T, hc *http.Client, url string) error {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := hc.Do(req)
	if err == nil {
		_ = resp.Body.Close() // the test fails: what Close says adds nothing
	}
	require.Error(t, err, "GET %s succeeded", url)
	return err
}

// requireDecisions checks what a call of each class (Billed, Standard,
// Never) decides on its first attempt that failed with err.
func requireDecisions(t *testing.T, err error, billed, standard, never retrytest.Outcome) {
	t.Helper()
	for c, want := range map[retry.Class]retrytest.Outcome{retry.Billed: billed, retry.Standard: standard, retry.Never: never} {
		p, _ := retrytest.DetPolicy(c, 1)
		retrytest.RequireOutcome(t, p.Start().Decide(context.Background(), retry.Attempt{Err: err, Failure: retry.ClassifyError(err)}), want)
	}
}

// TestClassifyErrorLoopbackDialRefused dials a loopback port that was just
// closed: the real error must say the request never left.
func TestClassifyErrorLoopbackDialRefused(t *testing.T) {
	t.Parallel()
	addr := nettest.DeadAddr(t)
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(t.Context(), "tcp", addr)
	if err == nil {
		_ = c.Close() // not the dead address after all

		t.Skip("something else is listening on the closed port")
	}
	assert.Equal(t, retry.Failure{NotSent: true}, retry.ClassifyError(err), "ClassifyError(%v) of net.Dial", err)

	err = failedGet(t, nettest.HTTPClient(t, nil), "http://"+addr+"/lookup/ip/1.1.1.1")
	assert.Equal(t, retry.Failure{NotSent: true}, retry.ClassifyError(err), "ClassifyError(%v) of http.Client", err)
	// And a billed call calls it a failure, not an unknown outcome.
	requireDecisions(t, err, retrytest.StopWith(retry.NotRetryable), retrytest.RetryIt, retrytest.StopWith(retry.NotRetryable))
}

// TestClassifyErrorLoopbackUntrustedCertificate talks to a real TLS
// server whose certificate the client does not trust.
func TestClassifyErrorLoopbackUntrustedCertificate(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServerTLS(t, &tls.Config{}, nil)
	hc := nettest.HTTPClient(t, &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}})
	err := failedGet(t, hc, srv.URL)
	requireTLSNeverLeft(t, err, arrivals)
}

// TestClassifyErrorLoopbackProtocolVersion: a TLS 1.3-only server refuses
// a client that speaks at most TLS 1.2 with a protocol_version alert. The
// handshake failed: nothing reached the server's handler.
func TestClassifyErrorLoopbackProtocolVersion(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServerTLS(t, &tls.Config{MinVersion: tls.VersionTLS13}, nil)
	hc := nettest.HTTPClient(t, &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}}) //nolint:gosec // the handshake is refused before any certificate
	err := failedGet(t, hc, srv.URL)
	require.ErrorContains(t, err, "protocol version", "want a protocol version alert")
	requireTLSNeverLeft(t, err, arrivals)
}

// TestClassifyErrorLoopbackSchemeMismatch: an https URL pointed at a plain
// HTTP server. net/http's Client reports http.ErrSchemeMismatch; the TLS
// handshake failed, so the request never left and no class retries it.
func TestClassifyErrorLoopbackSchemeMismatch(t *testing.T) {
	t.Parallel()
	srv, arrivals := nettest.CountingServer(t, nil)
	err := failedGet(t, nettest.HTTPClient(t, nil), "https://"+srv.Listener.Addr().String()+"/account/me")
	require.ErrorIs(t, err, http.ErrSchemeMismatch)
	requireTLSNeverLeft(t, err, arrivals)
}

// requireTLSNeverLeft checks that err, from a real GET, is a TLS failure
// before anything was sent, that no request arrived, and that no class
// retries it.
func requireTLSNeverLeft(t *testing.T, err error, arrivals *atomic.Int32) {
	t.Helper()
	assert.Equal(t, retry.Failure{TLS: true, NotSent: true}, retry.ClassifyError(err), "ClassifyError(%v)", err)
	assert.Zero(t, arrivals.Load(), "requests arrived")
	notRetryable := retrytest.StopWith(retry.NotRetryable)
	requireDecisions(t, err, notRetryable, notRetryable, notRetryable)
}

// TestClassifyErrorLoopbackTLSHandshakeTimeout: a server that accepts the
// connection and never answers the TLS handshake. The request provably never
// left (it waits for the handshake), so the real error must say NotSent;
// and it is a timeout.
func TestClassifyErrorLoopbackTLSHandshakeTimeout(t *testing.T) {
	t.Parallel()
	// The server reads what the client sends until it hangs up.
	addr := rawServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	hc := nettest.HTTPClient(t, &http.Transport{TLSHandshakeTimeout: 50 * time.Millisecond})
	err := failedGet(t, hc, "https://"+addr+"/lookup/ip/1.1.1.1")
	// A TLS handshake timeout happens before the request is written.
	assert.Equal(t, retry.Failure{Timeout: true, NotSent: true}, retry.ClassifyError(err), "ClassifyError(%v)", err)
	requireDecisions(t, err, retrytest.StopWith(retry.NotRetryable), retrytest.RetryIt, retrytest.StopWith(retry.NotRetryable))
}

// TestClassifyErrorLoopbackResponseTimeout: the request was written and the
// server never answered: a timeout whose outcome is unknown.
func TestClassifyErrorLoopbackResponseTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := nettest.CountingServer(t, func(int32, http.ResponseWriter, *http.Request) { <-release })
	t.Cleanup(func() { close(release) }) // runs before srv.Close

	hc := nettest.HTTPClient(t, &http.Transport{ResponseHeaderTimeout: 50 * time.Millisecond})
	err := failedGet(t, hc, srv.URL)
	assert.Equal(t, retry.Failure{Timeout: true}, retry.ClassifyError(err), "ClassifyError(%v)", err)
	requireDecisions(t, err, retrytest.StopWith(retry.MayHaveBeenProcessed), retrytest.RetryIt, retrytest.StopWith(retry.NotRetryable))
}

// TestClassifyErrorLoopbackConnectionClosed: the server reads the request
// and drops the connection: the outcome is unknown.
func TestClassifyErrorLoopbackConnectionClosed(t *testing.T) {
	t.Parallel()
	srv, _ := nettest.CountingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close() // read, and not answered
		}
	})
	err := failedGet(t, nettest.HTTPClient(t, nil), srv.URL)
	assert.Equal(t, retry.Failure{}, retry.ClassifyError(err), "ClassifyError(%v)", err)
}

// An answer that is not HTTP: net/http's error quotes the server's bytes,
// the request reached the server, and ClassifyError says Malformed.
func TestClassifyErrorLoopbackMalformedAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer string
	}{
		{"status line", "HTTP/1.1 2x0 OK\r\n\r\n"},
		{"not HTTP at all", "/bucket/object?X-Amz-Signature=abc\r\n\r\n"},
		{"header line with a control byte", "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://s/o?sig=abc\x01\r\nContent-Length: 0\r\n\r\n"},
		{"header line without a colon", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"},
		{"bad Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n"},
		{"two Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"},
		{"unsupported transfer encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: rot13\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := rawServer(t, answerHTTP(tc.answer))
			hc := nettest.HTTPClient(t, nil)
			hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			err := failedGet(t, hc, "http://"+addr+"/")
			assert.Equal(t, retry.Failure{Malformed: true}, retry.ClassifyError(err), "ClassifyError(%v)", err)
		})
	}
}

// timeoutText is an error with a net.Error's Timeout and a given text, a
// stand-in for net/http's unexported tlsHandshakeTimeoutError.
type timeoutText string

func (e timeoutText) Error() string { return string(e) }
func (timeoutText) Timeout() bool   { return true }
func (timeoutText) Temporary() bool { return true }

// BenchmarkClassifyError measures ClassifyError on the errors of failed
// attempts as an http.Client returns them (inside a *url.Error).
//
//	go test -run '^$' -bench ClassifyError -benchmem ./retry
func BenchmarkClassifyError(b *testing.B) {
	const u = "https://api.synthient.com/v4/lookup/ip/192.0.2.1"
	wrap := func(err error) error { return &url.Error{Op: "Get", URL: u, Err: err} }
	for _, bc := range []struct {
		name string
		err  error
	}{
		{"dial refused", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}})},
		{"read reset", wrap(&net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}})},
		{"EOF", wrap(io.EOF)},
		{"TLS handshake timeout", wrap(timeoutText("net/http: TLS handshake timeout"))},
		{"remote alert", wrap(&net.OpError{Op: "remote error", Err: tls.AlertError(70)})},
		{"malformed", wrap(fmt.Errorf("%s %q", "malformed HTTP status code", "2x0"))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				retry.ClassifyError(bc.err)
			}
		})
	}
}

// rawServer starts a loopback TCP server, stopped when the test ends, that
// runs serve on each connection it accepts and then closes it. It returns
// the server's host:port.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				serve(c)
				_ = c.Close() // the server's side: what the client saw is the test
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close() // stops Accept; an error would be that it was closed
		wg.Wait()
	})
	return ln.Addr().String()
}

// answerHTTP is a rawServer's serve that reads one request and writes
// answer, as it is.
func answerHTTP(answer string) func(net.Conn) {
	return func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			_, _ = io.WriteString(c, answer)
		}
	}
}

// answerTLS is a rawServer's serve that reads the client's first TLS
// record (its ClientHello), writes record as it is, and reads until the
// client closes the connection.
func answerTLS(record []byte) func(net.Conn) {
	return func(c net.Conn) {
		hdr := make([]byte, 5)
		if _, err := io.ReadFull(c, hdr); err != nil {
			return
		}
		if _, err := io.CopyN(io.Discard, c, int64(hdr[3])<<8|int64(hdr[4])); err != nil {
			return
		}
		if _, err := c.Write(record); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, c)
	}
}

// chainHasText reports whether an error in err's chain has the text of
// entry: all of it when entry.Whole, else at its beginning.
func chainHasText(err error, entry retry.GoText) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		if msg == entry.Text || !entry.Whole && strings.HasPrefix(msg, entry.Text) {
			return true
		}
	}
	return false
}

// TestGoTexts produces every failure that ClassifyError tells by its text
// (retry.GoTexts) with net/http's and crypto/tls's own code, against
// loopback servers that send the bytes that cause it. Each must still
// have the table's text, and be classified as it is meant to be: when a
// Go release changes a text, this test fails.
func TestGoTexts(t *testing.T) {
	t.Parallel()
	malformed := retry.Failure{Malformed: true}
	cases := []struct {
		text string // the entry of retry.GoTexts
		name string
		get  func(t *testing.T) error // the failed GET
		want retry.Failure
	}{
		{"net/http: TLS handshake timeout", "a server silent in the handshake", func(t *testing.T) error {
			addr := rawServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
			hc := nettest.HTTPClient(t, &http.Transport{TLSHandshakeTimeout: 50 * time.Millisecond})
			return failedGet(t, hc, "https://"+addr+"/")
		}, retry.Failure{Timeout: true, NotSent: true}},
		{"tls: ", "a HelloRequest instead of a ServerHello", func(t *testing.T) error {
			// A handshake record (22) of TLS 1.2 holding a HelloRequest
			// (type 0, empty).
			addr := rawServer(t, answerTLS([]byte{22, 3, 3, 0, 4, 0, 0, 0, 0}))
			hc := nettest.HTTPClient(t, &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}) //nolint:gosec // the server sends no certificate
			return failedGet(t, hc, "https://"+addr+"/")
		}, retry.Failure{TLS: true}},
		{"malformed HTTP ", "status code", httpAnswer("HTTP/1.1 2x0 OK\r\n\r\n"), malformed},
		{"malformed HTTP ", "version", httpAnswer("HTTP/9.x 200 OK\r\n\r\n"), malformed},
		{"malformed HTTP ", "response", httpAnswer("SSH-2.0-OpenSSH_9.6\r\n\r\n"), malformed},
		{"bad Content-Length ", "not a number", httpAnswer("HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n"), malformed},
		{"invalid empty Content-Length ", "empty", httpAnswer("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n"), malformed},
		{"http: message cannot contain multiple Content-Length headers", "two values",
			httpAnswer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), malformed},
		{"unsupported transfer encoding: ", "rot13", httpAnswer("HTTP/1.1 200 OK\r\nTransfer-Encoding: rot13\r\n\r\n"), malformed},
		{"too many transfer encodings: ", "two fields",
			httpAnswer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), malformed},
		{"invalid Trailer key ", "a request's Trailer naming Content-Length", func(t *testing.T) error {
			addr := rawServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/", io.NopCloser(strings.NewReader("x")))
			require.NoError(t, err)
			req.Trailer = http.Header{"Content-Length": nil}
			resp, err := nettest.HTTPClient(t, nil).Do(req)
			if err == nil {
				_ = resp.Body.Close() // the test fails: what Close says adds nothing
			}
			require.Error(t, err, "POST with a Trailer naming Content-Length succeeded")
			return err
		}, malformed},
		{"bad trailer key ", "a response's Trailer naming Content-Length",
			httpAnswer("HTTP/1.1 200 OK\r\nTrailer: Content-Length\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), malformed},
		{"net/http: server response headers exceeded ", "a head above MaxResponseHeaderBytes", func(t *testing.T) error {
			addr := rawServer(t, answerHTTP("HTTP/1.1 200 OK\r\nX-Long: "+strings.Repeat("a", 4096)+"\r\n\r\n"))
			hc := nettest.HTTPClient(t, &http.Transport{MaxResponseHeaderBytes: 1024})
			return failedGet(t, hc, "http://"+addr+"/")
		}, malformed},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		tested[tc.text] = true
	}
	entries := retry.GoTexts()
	for _, entry := range entries {
		assert.True(t, tested[entry.Text], "retry.GoTexts holds %q, which no case produces", entry.Text)
	}
	for _, tc := range cases {
		i := slices.IndexFunc(entries, func(e retry.GoText) bool { return e.Text == tc.text })
		require.GreaterOrEqual(t, i, 0, "%q is not in retry.GoTexts", tc.text)
		t.Run(tc.text+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.get(t)
			t.Logf("the error: %v", err)
			assert.True(t, chainHasText(err, entries[i]), "no error in the chain of %q has the text %q: has Go changed it?", err, tc.text)
			assert.Equal(t, tc.want, retry.ClassifyError(err), "ClassifyError(%v)", err)
		})
	}
}

// httpAnswer returns a failed GET from a loopback server that answers
// answer.
func httpAnswer(answer string) func(t *testing.T) error {
	return func(t *testing.T) error {
		addr := rawServer(t, answerHTTP(answer))
		return failedGet(t, nettest.HTTPClient(t, nil), "http://"+addr+"/")
	}
}

// TestClassifyErrorLoopbackRemoteAlerts: a server that answers the
// ClientHello with a fatal alert. crypto/tls reports it as a *net.OpError
// with Op "remote error" whose Err has the text of the tls.AlertError of
// the same number (ClassifyError reads the alert through it), and the
// alert tells whether the request never left.
func TestClassifyErrorLoopbackRemoteAlerts(t *testing.T) {
	t.Parallel()
	for _, tc := range remoteAlerts {
		if tc.alert == 0 {
			continue // close_notify: crypto/tls reports io.EOF
		}
		t.Run(tc.alert.Error(), func(t *testing.T) {
			t.Parallel()
			// An alert record (21) of TLS 1.2: level fatal (2), the alert.
			addr := rawServer(t, answerTLS([]byte{21, 3, 3, 0, 2, 2, byte(tc.alert)}))
			hc := nettest.HTTPClient(t, &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}) //nolint:gosec // the server sends no certificate
			err := failedGet(t, hc, "https://"+addr+"/")
			var op *net.OpError
			require.ErrorAs(t, err, &op)
			assert.Equal(t, "remote error", op.Op, "Op of %v", err)
			require.Error(t, op.Err, "Err of %v", err)
			assert.Equal(t, tc.alert.Error(), op.Err.Error(), "the text of the alert received")
			assert.Equal(t, retry.Failure{TLS: true, NotSent: tc.notSent}, retry.ClassifyError(err), "ClassifyError(%v)", err)
		})
	}
}
