package retry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/textproto"
	"strings"
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
	refused := isHandshakeAlert(err)
	f.TLS = !f.Timeout && (cert || mismatch || refused || isTLSError(err))
	f.Malformed = !f.TLS && isMalformedAnswer(err)

	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		f.NotSent = true
	case errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect"):
		f.NotSent = true
	case cert, mismatch, refused:
		f.NotSent = true
	case f.Timeout && inChain(err, "net/http: TLS handshake timeout"):
		f.NotSent = true
	}
	return f
}

// inChain reports whether an error in err's chain has exactly the text msg.
func inChain(err error, msg string) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == msg {
			return true
		}
	}
	return false
}

// malformedAnswers are the beginnings of net/http's errors for a response
// head it could not parse (badStringError, unsupportedTEError and the
// Content-Length checks of net/http's transfer.go); each quotes the
// server's bytes after it.
var malformedAnswers = []string{
	"malformed HTTP ",
	"bad Content-Length ",
	"invalid empty Content-Length ",
	"http: message cannot contain multiple Content-Length headers",
	"unsupported transfer encoding: ",
	"too many transfer encodings: ",
	"invalid Trailer key ",
	"bad trailer key ",
	"net/http: server response headers exceeded ",
}

// isMalformedAnswer reports whether err's chain holds net/http's or
// net/textproto's error for a response that is not HTTP.
func isMalformedAnswer(err error) bool {
	var proto textproto.ProtocolError
	if errors.As(err, &proto) {
		return true
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		for _, prefix := range malformedAnswers {
			if strings.HasPrefix(msg, prefix) {
				return true
			}
		}
	}
	return false
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
	if errors.As(err, &header) || errors.As(err, &alert) || errors.As(err, &ech) {
		return true
	}
	// crypto/tls reports most protocol failures as plain errors whose text
	// starts with "tls: ".
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "tls: ") {
			return true
		}
	}
	return false
}

// handshakeAlerts are the texts of the TLS alerts that refuse a handshake
// (RFC 8446, section 6.2): a peer sends them while negotiating, never about
// application data. crypto/tls reports a received alert as a *net.OpError
// with Op "remote error" whose Err reads "tls: " and the alert's text.
var handshakeAlerts = map[string]bool{
	"tls: handshake failure":               true,
	"tls: bad certificate":                 true,
	"tls: unsupported certificate":         true,
	"tls: revoked certificate":             true,
	"tls: expired certificate":             true,
	"tls: unknown certificate":             true,
	"tls: unknown certificate authority":   true,
	"tls: access denied":                   true,
	"tls: protocol version not supported":  true,
	"tls: insufficient security level":     true,
	"tls: inappropriate fallback":          true,
	"tls: missing extension":               true,
	"tls: unsupported extension":           true,
	"tls: certificate unobtainable":        true,
	"tls: unrecognized name":               true,
	"tls: bad certificate status response": true,
	"tls: bad certificate hash value":      true,
	"tls: unknown PSK identity":            true,
	"tls: certificate required":            true,
	"tls: no application protocol":         true,
	"tls: encrypted client hello required": true,
}

// isHandshakeAlert reports whether err's chain holds a TLS alert from the
// peer that refuses a handshake.
func isHandshakeAlert(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if op, ok := e.(*net.OpError); ok && op.Op == "remote error" && op.Err != nil {
			return handshakeAlerts[op.Err.Error()]
		}
	}
	return false
}
