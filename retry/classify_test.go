package retry_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/synthient-go/synthient/retry"
)

func TestClassifyError(t *testing.T) {
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
				err := w.wrap(tc.err)
				if got := retry.ClassifyError(err); got != tc.want {
					t.Fatalf("ClassifyError(%v) = %+v, want %+v", err, got, tc.want)
				}
				if tc.err == nil {
					return
				}
				a := retry.AttemptOf(nil, err)
				if a.Err != err || a.Failure != tc.want || a.Status != 0 {
					t.Fatalf("AttemptOf = %+v, want the error and its Failure %+v", a, tc.want)
				}
			})
		}
	}
}

// TestClassifyErrorCertificates uses a real certificate for the
// certificate errors that need one.
func TestClassifyErrorCertificates(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	cert := srv.Certificate()
	for _, err := range []error{
		x509.HostnameError{Certificate: cert, Host: "api.synthient.com"},
		x509.CertificateInvalidError{Cert: cert, Reason: x509.Expired},
		&tls.CertificateVerificationError{UnverifiedCertificates: []*x509.Certificate{cert}, Err: x509.HostnameError{Certificate: cert, Host: "x"}},
	} {
		wrapped := &url.Error{Op: "Get", URL: "https://api.synthient.com", Err: err}
		if got, want := retry.ClassifyError(wrapped), (retry.Failure{TLS: true, NotSent: true}); got != want {
			t.Errorf("ClassifyError(%v) = %+v, want %+v", wrapped, got, want)
		}
	}
}

// TestClassifyErrorLoopbackDialRefused dials a loopback port that was just
// closed: the real error must say the request never left.
func TestClassifyErrorLoopbackDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}

	_, err = net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		t.Skip("something else is listening on the closed port")
	}
	if got := retry.ClassifyError(err); !got.NotSent || got.TLS {
		t.Errorf("net.Dial error %v: ClassifyError = %+v, want NotSent and not TLS", err, got)
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/lookup/ip/1.1.1.1")
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET on a closed port succeeded")
	}
	if got := retry.ClassifyError(err); !got.NotSent || got.TLS {
		t.Errorf("http.Client error %v: ClassifyError = %+v, want NotSent and not TLS", err, got)
	}
	// And a billed call calls it a failure, not an unknown outcome.
	p, _ := detPolicy(retry.Billed, 1)
	checkOutcome(t, p.Start().Decide(context.Background(), retry.AttemptOf(nil, err)), stopWith(retry.NotRetryable))
	p, _ = detPolicy(retry.Standard, 1)
	checkOutcome(t, p.Start().Decide(context.Background(), retry.AttemptOf(nil, err)), retryIt)
}

// TestClassifyErrorLoopbackUntrustedCertificate talks to a real TLS
// server whose certificate the client does not trust.
func TestClassifyErrorLoopbackUntrustedCertificate(t *testing.T) {
	srv, arrivals := quietServer(t, &tls.Config{})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}
	defer tr.CloseIdleConnections()
	_, err := (&http.Client{Transport: tr}).Get(srv.URL)
	checkTLSNeverLeft(t, err, arrivals)
}

// TestClassifyErrorLoopbackProtocolVersion: a TLS 1.3-only server refuses
// a client that speaks at most TLS 1.2 with a protocol_version alert. The
// handshake failed: nothing reached the server's handler.
func TestClassifyErrorLoopbackProtocolVersion(t *testing.T) {
	srv, arrivals := quietServer(t, &tls.Config{MinVersion: tls.VersionTLS13})
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	_, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Fatalf("err = %v, want a protocol version alert", err)
	}
	checkTLSNeverLeft(t, err, arrivals)
}

// TestClassifyErrorLoopbackSchemeMismatch: an https URL pointed at a plain
// HTTP server. net/http's Client reports http.ErrSchemeMismatch; the TLS
// handshake failed, so the request never left and no class retries it.
func TestClassifyErrorLoopbackSchemeMismatch(t *testing.T) {
	srv, arrivals := quietServer(t, nil)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, err := (&http.Client{Transport: tr}).Get("https://" + srv.Listener.Addr().String() + "/account/me")
	if !errors.Is(err, http.ErrSchemeMismatch) {
		t.Fatalf("err = %v, want http.ErrSchemeMismatch", err)
	}
	checkTLSNeverLeft(t, err, arrivals)
}

// quietServer starts a loopback server that counts the requests reaching
// its handler and logs nothing; with cfg, a TLS one with that config (and
// httptest's certificate).
func quietServer(t *testing.T, cfg *tls.Config) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var arrivals atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
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

// checkTLSNeverLeft asserts that err, from a real GET, is a TLS failure
// before anything was sent, that no request arrived, and that no class
// retries it.
func checkTLSNeverLeft(t *testing.T, err error, arrivals *atomic.Int32) {
	t.Helper()
	if err == nil {
		t.Fatal("GET succeeded")
	}
	if got, want := retry.ClassifyError(err), (retry.Failure{TLS: true, NotSent: true}); got != want {
		t.Errorf("ClassifyError(%v) = %+v, want %+v", err, got, want)
	}
	if n := arrivals.Load(); n != 0 {
		t.Errorf("%d requests arrived", n)
	}
	for _, c := range []retry.Class{retry.Billed, retry.Standard, retry.Never} {
		p, _ := detPolicy(c, 1)
		checkOutcome(t, p.Start().Decide(context.Background(), retry.AttemptOf(nil, err)), stopWith(retry.NotRetryable))
	}
}

// TestClassifyErrorLoopbackTLSHandshakeTimeout: a server that accepts the
// connection and never answers the TLS handshake. The request provably never
// left (it waits for the handshake), so the real error must say NotSent;
// and it is a timeout.
func TestClassifyErrorLoopbackTLSHandshakeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()

	tr := &http.Transport{TLSHandshakeTimeout: 50 * time.Millisecond}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + ln.Addr().String() + "/lookup/ip/1.1.1.1")
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET succeeded")
	}
	got := retry.ClassifyError(err)
	if !got.Timeout || !got.NotSent {
		t.Errorf("ClassifyError(%v) = %+v, want Timeout and NotSent (a TLS handshake timeout happens before the request is written)", err, got)
	}
	p, _ := detPolicy(retry.Billed, 1)
	checkOutcome(t, p.Start().Decide(context.Background(), retry.AttemptOf(nil, err)), stopWith(retry.NotRetryable))
}

// TestClassifyErrorLoopbackResponseTimeout: the request was written and the
// server never answered: a timeout whose outcome is unknown.
func TestClassifyErrorLoopbackResponseTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release) // runs before srv.Close

	tr := &http.Transport{ResponseHeaderTimeout: 50 * time.Millisecond}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET succeeded")
	}
	if got, want := retry.ClassifyError(err), (retry.Failure{Timeout: true}); got != want {
		t.Errorf("ClassifyError(%v) = %+v, want %+v", err, got, want)
	}
	p, _ := detPolicy(retry.Billed, 1)
	checkOutcome(t, p.Start().Decide(context.Background(), retry.AttemptOf(nil, err)), stopWith(retry.MayHaveBeenProcessed))
	p, _ = detPolicy(retry.Standard, 1)
	checkOutcome(t, p.Start().Decide(context.Background(), retry.AttemptOf(nil, err)), retryIt)
}

// TestClassifyErrorLoopbackConnectionClosed: the server reads the request
// and drops the connection: the outcome is unknown.
func TestClassifyErrorLoopbackConnectionClosed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET succeeded")
	}
	if got, want := retry.ClassifyError(err), (retry.Failure{}); got != want {
		t.Errorf("ClassifyError(%v) = %+v, want %+v", err, got, want)
	}
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
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				_, _ = http.ReadRequest(bufio.NewReader(c))
				_, _ = io.WriteString(c, tc.answer)
			}()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := client.Get("http://" + ln.Addr().String() + "/")
			if err == nil {
				resp.Body.Close()
				t.Fatal("GET succeeded")
			}
			if got, want := retry.ClassifyError(err), (retry.Failure{Malformed: true}); got != want {
				t.Errorf("ClassifyError(%v) = %+v, want %+v", err, got, want)
			}
		})
	}
}
