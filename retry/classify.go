package retry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"sync"
)

// ClassifyError tells what a transport error means for retrying: whether
// the request provably never left the client, whether it is a TLS failure,
// whether a wait ran out, and whether the server answered with something
// that is not HTTP (Malformed: net/http's errors for a bad status line,
// header line, Content-Length or Transfer-Encoding, which quote the
// server's bytes).
//
// A request provably never left when the error comes from resolving the
// host, dialing (including a proxy's CONNECT), or from a certificate that
// failed verification, from a server that refused the TLS handshake with
// an alert only a handshake sends (protocol version, handshake failure,
// certificate required...), or from a server that answered the handshake
// in plain HTTP (http.ErrSchemeMismatch): the request never reached the
// server's application. Any other error leaves the outcome unknown,
// because the request may have been written, or partly written, when it
// struck.
//
// ClassifyError tells failures apart by their types and exported values
// (net's, crypto/tls's, crypto/x509's, net/http's and net/textproto's),
// and by text only for the few that have neither: those are listed in
// goTexts.
func ClassifyError(err error) Failure {
	var f Failure
	if err == nil {
		return f
	}
	var ne net.Error
	f.Timeout = errors.As(err, &ne) && ne.Timeout()
	cert := isCertificateError(err)
	// net/http's Client replaces the bad TLS record of a server that
	// answered a handshake in plain HTTP with ErrSchemeMismatch: the
	// handshake failed, so nothing was sent.
	mismatch := errors.Is(err, http.ErrSchemeMismatch)
	alert, received := receivedAlert(err)
	refused := received && isHandshakeAlert(alert)
	f.TLS = !f.Timeout && (cert || mismatch || received || isTLSError(err))
	// The texts are read only when the types left something open: whether
	// a timeout struck in the handshake, whether an error is a TLS
	// failure, whether an answer is malformed.
	var texts textKind
	if !f.TLS {
		texts = goTextsIn(err)
	}
	f.TLS = f.TLS || !f.Timeout && texts&tlsFailure != 0
	f.Malformed = !f.TLS && (isProtocolError(err) || texts&malformedAnswer != 0)

	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		f.NotSent = true
	case errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect"):
		f.NotSent = true
	case cert, mismatch, refused:
		f.NotSent = true
	case f.Timeout && texts&handshakeTimeout != 0:
		f.NotSent = true
	}
	return f
}

// A textKind says what an entry of goTexts means; a set of them is a
// bitmask.
type textKind uint8

const (
	handshakeTimeout textKind = 1 << iota // the TLS handshake ran out of time: nothing was sent
	tlsFailure                            // a TLS failure
	malformedAnswer                       // the server's answer is not HTTP
)

// A goText is an error text of net/http or crypto/tls: the whole text of
// an error (whole) or its beginning, and what it means.
type goText struct {
	text  string
	whole bool
	kind  textKind
}

// goTexts are the failures that net/http and crypto/tls report by their
// text alone: errors made with errors.New or fmt.Errorf, or of an
// unexported type, that no exported type or value tells apart. A Go
// release may change these texts: TestGoTexts produces each one with
// net/http's or crypto/tls's own code and fails when the text is no longer
// there.
var goTexts = []goText{
	// net/http's tlsHandshakeTimeoutError (unexported): the Transport's
	// TLSHandshakeTimeout ran out before the handshake ended.
	{"net/http: TLS handshake timeout", true, handshakeTimeout},
	// crypto/tls's errors.New and fmt.Errorf failures of a handshake or a
	// record (an unexpected message, a bad key share, an unsupported
	// version...), and the alerts it sends itself.
	{"tls: ", false, tlsFailure},
	// net/http's badStringError (fmt.Errorf) for a status line: malformed
	// HTTP response, status code or version.
	{"malformed HTTP ", false, malformedAnswer},
	// net/http's fmt.Errorf errors for a Content-Length field.
	{"bad Content-Length ", false, malformedAnswer},
	{"invalid empty Content-Length ", false, malformedAnswer},
	{"http: message cannot contain multiple Content-Length headers", false, malformedAnswer},
	// net/http's unsupportedTEError (unexported) for a Transfer-Encoding
	// field.
	{"unsupported transfer encoding: ", false, malformedAnswer},
	{"too many transfer encodings: ", false, malformedAnswer},
	// net/http's badStringError for a Trailer field that names
	// Transfer-Encoding, Trailer or Content-Length: of a request being
	// written (invalid) and of a response (bad).
	{"invalid Trailer key ", false, malformedAnswer},
	{"bad trailer key ", false, malformedAnswer},
	// net/http's fmt.Errorf error for a response head longer than the
	// Transport's MaxResponseHeaderBytes.
	{"net/http: server response headers exceeded ", false, malformedAnswer},
}

// goTextsIn returns the kinds of the entries of goTexts that the texts of
// err's chain match.
func goTextsIn(err error) textKind {
	var kinds textKind
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		for _, t := range goTexts {
			if msg == t.text || !t.whole && strings.HasPrefix(msg, t.text) {
				kinds |= t.kind
			}
		}
	}
	return kinds
}

// isProtocolError reports whether err's chain holds net/textproto's error
// for a malformed line, which net/http returns for a response header line
// it cannot read.
func isProtocolError(err error) bool {
	var proto textproto.ProtocolError
	return errors.As(err, &proto)
}

func isCertificateError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) ||
		errors.As(err, &hostname) || errors.As(err, &invalid)
}

func isTLSError(err error) bool {
	var (
		header tls.RecordHeaderError
		alert  tls.AlertError
		ech    *tls.ECHRejectionError
	)
	return errors.As(err, &header) || errors.As(err, &alert) || errors.As(err, &ech)
}

// handshakeAlerts are the TLS alerts that refuse a handshake (RFC 8446,
// section 6.2): a peer sends them while negotiating, never about
// application data.
var handshakeAlerts = [...]tls.AlertError{
	40,  // handshake_failure
	42,  // bad_certificate
	43,  // unsupported_certificate
	44,  // certificate_revoked
	45,  // certificate_expired
	46,  // certificate_unknown
	48,  // unknown_ca
	49,  // access_denied
	70,  // protocol_version
	71,  // insufficient_security
	86,  // inappropriate_fallback
	109, // missing_extension
	110, // unsupported_extension
	111, // certificate_unobtainable
	112, // unrecognized_name
	113, // bad_certificate_status_response
	114, // bad_certificate_hash_value
	115, // unknown_psk_identity
	116, // certificate_required
	120, // no_application_protocol
	121, // encrypted_client_hello_required
}

func isHandshakeAlert(a tls.AlertError) bool {
	return slices.Contains(handshakeAlerts[:], a)
}

// receivedAlert returns the TLS alert from the peer that err's chain
// holds: crypto/tls reports a received alert as a *net.OpError with Op
// "remote error" whose Err is the alert. It looks at the first such
// *net.OpError only.
func receivedAlert(err error) (tls.AlertError, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if op, ok := e.(*net.OpError); ok && op.Op == "remote error" && op.Err != nil { //nolint:errorlint // the chain's first *net.OpError with this Op, which errors.As cannot ask for
			return alertOf(op.Err)
		}
	}
	return 0, false
}

// alertOf returns the TLS alert that err is. crypto/tls reports an alert
// it received as a value of an unexported type, whose text is that of the
// tls.AlertError of the same number (both are crypto/tls's alert names):
// alertOf finds the number back through crypto/tls's own texts, so that a
// change of a name in crypto/tls changes both sides.
func alertOf(err error) (tls.AlertError, bool) {
	var a tls.AlertError
	if errors.As(err, &a) {
		return a, true
	}
	a, ok := alertsByText()[err.Error()]
	return a, ok
}

// alertsByText maps the text of every tls.AlertError to its number.
var alertsByText = sync.OnceValue(func() map[string]tls.AlertError {
	m := make(map[string]tls.AlertError, 256)
	for n := range 256 {
		a := tls.AlertError(n)
		m[a.Error()] = a
	}
	return m
})
