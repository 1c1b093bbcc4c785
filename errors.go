package synthient

import (
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient/retry"
)

var (
	// ErrMalformedResponse is matched (errors.Is) by the *ConnectionError
	// of an answer that is not HTTP: a status line, header line,
	// Content-Length or Transfer-Encoding net/http cannot parse. The
	// request reached the server (NotSent is false) and is not sent again.
	// net/http's own error is not kept: it quotes the server's bytes, which
	// can hold a redirect's presigned URL.
	ErrMalformedResponse = errors.New("malformed HTTP response")
	// ErrInvalidArgument is matched (errors.Is) by every error for an
	// argument or option that was rejected before anything was sent.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrClosed is matched (errors.Is) by the error of every call made
	// after Close.
	ErrClosed = errors.New("client is closed")
)

// StopReason says why a call stopped sending requests; see the constants
// of package retry (retry.AttemptsExhausted, retry.MayHaveBeenProcessed, ...).
type StopReason = retry.StopReason

// Error is the base of every failure of a request: errors.As(err,
// new(*Error)) holds for an *APIError, *ConnectionError, *TimeoutError and
// *DecodeError too, and gives the operation, the number of requests sent
// and why the client stopped.
//
// An *Error is also returned itself: for an export listing that repeats a
// cursor, a download redirect the client cannot follow, and a call whose
// context was cancelled or expired (then errors.Is(err, ctx.Err()) holds,
// and errors.As still reaches the last *APIError or *ConnectionError).
type Error struct {
	// Op is the method that failed, such as "LookupIP".
	Op string
	// Attempts is the number of attempts the call made, counting those
	// that never left the client (see ConnectionError.NotSent).
	Attempts int
	// StopReason says why the client stopped sending; empty when the
	// failure did not come from the attempt loop.
	StopReason StopReason
	// Message describes the failure; empty when Err says it all.
	Message string
	// Err is the underlying error, if any.
	Err error

	last error // the last attempt's error, under a cancellation
	view bool  // built by errors.As over a typed error that names Op itself
}

// Error returns "synthient: <Op>: <Message or Err>". It holds no URL, key
// or response text.
func (e *Error) Error() string {
	if e.view && e.Err != nil {
		return e.Err.Error() // it names the operation itself
	}
	var b strings.Builder
	b.WriteString("synthient: ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	switch {
	case e.Message != "" && e.Err != nil:
		b.WriteString(e.Message)
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	case e.Message != "":
		b.WriteString(e.Message)
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString("request failed")
	}
	if e.last != nil {
		b.WriteString(" (last error: ")
		// The last error names the operation too: once is enough.
		b.WriteString(strings.TrimPrefix(e.last.Error(), "synthient: "+e.Op+": "))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the underlying error and, for a cancelled call, the last
// attempt's error.
func (e *Error) Unwrap() []error {
	switch {
	case e.Err != nil && e.last != nil:
		return []error{e.Err, e.last}
	case e.Err != nil:
		return []error{e.Err}
	case e.last != nil:
		return []error{e.last}
	}
	return nil
}

// transportCause returns the cause of a failed request as the typed errors
// keep it, and what it means for retrying: without the *url.Error around
// it (its URL may hold a presigned query), and ErrMalformedResponse in
// place of an error that quotes the server's bytes.
func transportCause(err error) (retry.Failure, error) {
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = ue.Err
	}
	f := retry.ClassifyError(err)
	if f.Malformed {
		err = ErrMalformedResponse
	}
	return f, err
}

// meta is what the attempt loop records on the typed errors, exposed
// through errors.As(err, new(*Error)).
type meta struct {
	op       string
	attempts int
	reason   StopReason
}

// as builds the *Error that errors.As gives for a typed error e; named
// reports that e's text starts with "synthient: <Op>: " itself.
func (m meta) as(target any, e error, named bool) bool {
	p, ok := target.(**Error)
	if !ok {
		return false
	}
	*p = &Error{Op: m.op, Attempts: m.attempts, StopReason: m.reason, Err: e, view: named}
	return true
}

// APIError is an error status from the API or from the export storage
// host. Its fields come from the RFC 9457 problem details of the body, or
// from a text/plain body (Detail).
//
// The fields other than Status hold server text: show them to people, but
// do not log them blindly. Error() holds the status alone.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Type is the problem type URI (RFC 9457 "type").
	Type string
	// Title is the problem's short summary.
	Title string
	// Detail explains this occurrence, or is the text of a text/plain body
	// (at most 64 KiB of it). For an unhealthy /health it lists the
	// problems.
	Detail string
	// Errors holds validation messages by request field (a 422); nil when
	// there are none.
	Errors map[string][]string
	// RequestID identifies the request to Synthient support: the
	// X-Request-Id header, else the problem's "instance".
	RequestID string
	// RetryAfter is the wait the response asked for; nil when it did not
	// say, or said something unusable.
	RetryAfter *time.Duration

	meta meta
}

// Error returns the status code and its standard text, such as "429 Too
// Many Requests", or the bare code for a status without one ("599"). It
// holds nothing from the body, so it is safe to log.
func (e *APIError) Error() string {
	code := strconv.Itoa(e.Status)
	if text := http.StatusText(e.Status); text != "" {
		return code + " " + text
	}
	return code
}

// As lets errors.As(err, new(*Error)) reach the base error.
func (e *APIError) As(target any) bool { return e.meta.as(target, e, false) }

// ConnectionError reports that the request could not be sent or its
// response could not be read. Unwrap gives the cause.
//
// NotSent tells a confirmed failure from an unknown outcome, for the whole
// call: it is true only when no attempt of the call can have reached the
// server (each failed in DNS, dial or TLS handshake), so nothing was done
// or charged. When it is false some attempt was written, or partly
// written, or was answered, and the server may have acted on the call. A
// billed lookup is never sent again in that case.
//
// NotSent, like Error's Attempts and StopReason, describes the call; Err
// describes its last attempt. So a call whose first attempt reached the
// server and whose retry then failed to connect has NotSent false and an
// Err of "connection refused".
type ConnectionError struct {
	// NotSent reports that no attempt of the call can have reached the
	// server.
	NotSent bool
	// Err is the last attempt's cause, without the request URL.
	Err error

	// attemptNotSent reports that the last attempt itself never left the
	// client, whatever the earlier ones did; it words the message.
	attemptNotSent bool
	meta           meta
}

// Error describes the failure and whether the call may have reached the
// server. It holds no URL or key.
func (e *ConnectionError) Error() string {
	return e.describe("connection failed")
}

func (e *ConnectionError) describe(what string) string {
	var b strings.Builder
	b.WriteString("synthient: ")
	if e.meta.op != "" {
		b.WriteString(e.meta.op)
		b.WriteString(": ")
	}
	b.WriteString(what)
	switch {
	case e.NotSent:
		b.WriteString(" (request not sent)")
	case e.attemptNotSent:
		b.WriteString(" (request may have been processed: an earlier attempt reached the server)")
	default:
		b.WriteString(" (request may have been processed)")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ConnectionError) Unwrap() error { return e.Err }

// As lets errors.As(err, new(*Error)) reach the base error.
func (e *ConnectionError) As(target any) bool { return e.meta.as(target, e, true) }

// TimeoutError reports that the last attempt's wait for a connection
// (OpenTimeout), or for a read or a write on it (Timeout), ran out. It is a
// ConnectionError too: errors.As(err, new(*ConnectionError)) holds, and
// NotSent tells whether any attempt of the call can have reached the
// server.
type TimeoutError struct {
	ConnectionError
}

// Error describes the timeout and whether the request may have reached the
// server.
func (e *TimeoutError) Error() string {
	if e.NotSent || e.attemptNotSent {
		return e.describe("timed out connecting")
	}
	return e.describe("timed out")
}

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// As lets errors.As reach the embedded *ConnectionError and the base
// *Error.
func (e *TimeoutError) As(target any) bool {
	if p, ok := target.(**ConnectionError); ok {
		*p = &e.ConnectionError
		return true
	}
	return e.meta.as(target, e, true)
}

// DecodeError reports a 2xx response whose body did not match the API's
// schema. It is never retried: for a billed lookup, the credits were spent.
type DecodeError struct {
	// Status is the response's status code.
	Status int
	// Err is the decoding failure.
	Err error
	// Missing lists, for LookupIPs, the addresses the response had no
	// result for.
	Missing []netip.Addr

	meta meta
}

// Error describes the decoding failure.
func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("synthient: ")
	if e.meta.op != "" {
		b.WriteString(e.meta.op)
		b.WriteString(": ")
	}
	b.WriteString("decoding response")
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the decoding failure.
func (e *DecodeError) Unwrap() error { return e.Err }

// As lets errors.As(err, new(*Error)) reach the base error.
func (e *DecodeError) As(target any) bool { return e.meta.as(target, e, true) }
