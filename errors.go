package synthient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient/internal/problem"
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
	// ErrRateLimitHold is matched (errors.Is) by the error of a call that
	// rate-limit pacing stopped: the model of the operation's rate limit
	// held the next attempt past the context's deadline, so the client
	// returned at once, without waiting and without sending it (stop reason
	// retry.PacingExceedsDeadline, or retry.TeamShareExceedsDeadline for a
	// hold for the team). For a first attempt nothing was sent:
	// the error is a *ConnectionError with NotSent set. For a retry the
	// error also reaches the last attempt's error (an *APIError, say) with
	// errors.As, which tells whether the call reached the server.
	ErrRateLimitHold = errors.New("rate-limit hold would pass the deadline")
	// ErrCreditBudget is matched (errors.Is) by the error of a call whose
	// request the client's credit budget refused (see WithCreditBudget):
	// the request's cost did not fit what the budget had left, so the
	// request was not sent (stop reason retry.CreditBudgetExhausted). For a
	// first attempt the error is a *ConnectionError with NotSent set; for
	// a retry it also reaches the last attempt's error (a 429's *APIError,
	// say) with errors.As. A CreditBudget's Reserve returns an error
	// matching it when the credits do not fit.
	ErrCreditBudget = errors.New("credit budget exhausted")
)

// StopReason says why a call stopped sending requests; see the constants
// of package retry (retry.AttemptsExhausted, retry.MayHaveBeenProcessed, ...).
type StopReason = retry.StopReason

// Error is the base of every failure of a request: errors.As(err,
// new(*Error)) holds for an *APIError, *ConnectionError, *TimeoutError and
// *DecodeError too, and gives the operation, the number of requests sent
// and why the client stopped.
//
// An *Error is also returned itself: for a call on a closed client
// (ErrClosed), an export listing that repeats a cursor, a download redirect
// the client cannot follow, a download that is not the file (ErrSizeMismatch,
// ErrSizeUnknown, ErrChecksumMismatch, a storage answer other than 200), a
// writer or file that fails, and a call whose context was cancelled or
// expired (then errors.Is(err, ctx.Err()) holds, and errors.As still
// reaches the last *APIError or *ConnectionError).
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
	// held reports that rate-limit pacing held the attempt, which was
	// never sent; it words the message.
	held bool
	// budget reports that the credit budget refused the attempt, or failed
	// to reserve its cost, so it was never sent; it words the message.
	budget bool
	meta   meta
}

// Error describes the failure and whether the call may have reached the
// server. It holds no URL or key.
func (e *ConnectionError) Error() string {
	switch {
	case e.held:
		return e.describe("held by rate-limit pacing")
	case e.budget && errors.Is(e.Err, ErrCreditBudget):
		return e.describe("refused by the credit budget")
	case e.budget:
		return e.describe("credit budget failed")
	}
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

// The constructors below build every typed error of the package; the rest
// of it calls them. m describes the call: its operation, its attempts and,
// once the call stopped, why.

// opError is the *Error of the call m describes, failing with what (empty
// when err says it all) and err (nil for none).
func opError(m meta, what string, err error) *Error {
	return &Error{Op: m.op, Attempts: m.attempts, StopReason: m.reason, Message: what, Err: err}
}

// closedError is the *Error of a call made after Close.
func closedError(op string) *Error {
	return opError(meta{op: op}, "", ErrClosed)
}

// stopError is the *Error of a call that stopped for m.reason with no
// typed error of its own to return: its context ended, and err is the
// context's error. last is the last attempt's typed error, nil when there
// was none; the *Error wraps it too.
func stopError(m meta, err, last error) *Error {
	e := opError(m, "", err)
	e.last = last
	return e
}

// notRetryable is the *Error of a failure found after the call's requests
// were answered, such as a download that is not the file: nothing is sent
// again.
func notRetryable(m meta, what string, err error) *Error {
	m.reason = retry.NotRetryable
	return opError(m, what, err)
}

// downloadError is the notRetryable *Error of a download, matching
// sentinel (nil for none), its message formatted from format and args.
func downloadError(m meta, sentinel error, format string, args ...any) *Error {
	return notRetryable(m, fmt.Sprintf(format, args...), sentinel)
}

// outcome is the latest attempt of a call that failed, kept as values
// until the call stops: then callError builds its typed error, once. The
// zero outcome is none.
type outcome struct {
	// answer is a response the call did not accept; its status is 0 for
	// an attempt that got none.
	answer answer
	// retryAfter is the policy's reading of the answer's Retry-After,
	// valid when hasRetryAfter is set.
	retryAfter    time.Duration
	hasRetryAfter bool
	// cause is the failure of an attempt that got no response, without
	// the request URL; failure classifies it.
	cause   error
	failure retry.Failure
	// notSent reports that the attempt itself cannot have reached the
	// server; timeout that its error is a *TimeoutError.
	notSent, timeout bool
	// held reports that rate-limit pacing held the attempt, unsent; cause
	// is then the context's error or ErrRateLimitHold.
	held bool
	// budget reports that the credit budget refused the attempt, or
	// failed, unsent; cause is then the budget's error.
	budget bool
}

// set reports whether o is an attempt's.
func (o *outcome) set() bool { return o.answer.status != 0 || o.cause != nil }

// attemptOutcome is the outcome of an attempt that failed with cause, as f
// classifies it.
func attemptOutcome(cause error, f retry.Failure) outcome {
	return outcome{cause: cause, failure: f, notSent: f.NotSent, timeout: f.Timeout}
}

// heldOutcome is the outcome of a first attempt that rate-limit pacing
// held and never sent: ctxErr when the caller's context ended during the
// hold, else ErrRateLimitHold.
func heldOutcome(ctxErr error) outcome {
	if ctxErr == nil {
		ctxErr = ErrRateLimitHold
	}
	return outcome{cause: ctxErr, notSent: true, held: true}
}

// budgetOutcome is the outcome of a first attempt that the credit budget
// did not let go: cause is its Reserve's error, which matches
// ErrCreditBudget when the credits did not fit.
func budgetOutcome(cause error) outcome {
	return outcome{cause: cause, notSent: true, budget: true}
}

// budgetRefusal is the error of a CreditBudget that cannot reserve need
// credits: left of the window's credits are left, until resets (zero for
// a budget that never refills).
func budgetRefusal(need, left, credits int64, resets time.Time) error {
	unit := "credits"
	if need == 1 {
		unit = "credit"
	}
	if resets.IsZero() {
		return fmt.Errorf("%w: %d %s needed, %d left of %d", ErrCreditBudget, need, unit, left, credits)
	}
	return fmt.Errorf("%w: %d %s needed, %d left of %d until %s",
		ErrCreditBudget, need, unit, left, credits, resets.UTC().Format(time.RFC3339))
}

// budgetStopError is the error of a call that the credit budget stopped
// before its next attempt, for m.reason (retry.CreditBudgetExhausted or
// retry.CreditBudgetFailed), cause being the budget's error: for a
// first attempt (o is none) a *ConnectionError with NotSent set; for a
// retry an *Error that wraps cause and the last attempt's typed error.
func budgetStopError(m meta, cause error, o *outcome, reached bool) error {
	if !o.set() {
		o := budgetOutcome(cause)
		return callError(m, &o, reached)
	}
	return stopError(m, cause, callError(m, o, reached))
}

// callError is the typed error of the call m describes, whose latest
// failed attempt is o: an *APIError for an answer, else a *TimeoutError or
// *ConnectionError, whose NotSent is false when reached reports that some
// attempt of the call may have reached the server. It is nil when o is
// none.
func callError(m meta, o *outcome, reached bool) error {
	switch {
	case o.answer.status != 0:
		var ra *time.Duration
		if o.hasRetryAfter {
			ra = &o.retryAfter
		}
		return apiError(m, o.answer, ra)
	case o.cause == nil:
		return nil
	}
	ce := ConnectionError{NotSent: o.notSent && !reached, Err: o.cause, attemptNotSent: o.notSent, held: o.held, budget: o.budget, meta: m}
	return connectionError(ce, o.timeout)
}

// stoppedError is the error of the call m describes, which stopped for
// m.reason after its latest failed attempt o: that attempt's typed error
// (callError), or for a context that ended (ctxErr), an *Error that wraps
// both the context's error and the attempt's. errors.As from either
// reaches an *Error with the same fields.
func stoppedError(m meta, ctxErr error, o *outcome, reached bool) error {
	last := callError(m, o, reached)
	if m.reason == retry.ContextDone || last == nil {
		return stopError(m, ctxErr, last)
	}
	return last
}

// readError is the error of a failure, err, while reading the body of an
// answered request (see lateError).
func readError(ctx context.Context, m meta, err error) error {
	return lateError(ctx, m, err, false)
}

// lateError is the error of a failure, err, after the call was answered:
// while reading a body, or sending the storage leg of a download. The
// call reached the server, so it is never sent again and NotSent is false;
// attemptNotSent reports that the failed request itself never left the
// client, which words the message. After ctx ended it is the context's
// *Error instead.
func lateError(ctx context.Context, m meta, err error, attemptNotSent bool) error {
	if ctx.Err() != nil {
		m.reason = retry.ContextDone
		return stopError(m, ctx.Err(), nil)
	}
	m.reason = retry.NotRetryable
	timeout := retry.ClassifyError(err).Timeout
	return connectionError(ConnectionError{Err: err, attemptNotSent: attemptNotSent, meta: m}, timeout)
}

// connectionError returns ce, as a *TimeoutError when timeout is set.
func connectionError(ce ConnectionError, timeout bool) error {
	if timeout {
		return &TimeoutError{ce}
	}
	return &ce
}

// answer is an error response as the API sent it: its status, request ID
// and the problem details of its body.
type answer struct {
	status    int
	requestID string
	problem   problem.Details
}

// readAnswer reads at most 64 KiB of an error response's body, closes it,
// and parses it. The request ID is the X-Request-Id header, else the
// problem's "instance".
func readAnswer(resp *http.Response) answer {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, problem.MaxBody))
	_ = resp.Body.Close()
	resp.Body = http.NoBody
	a := answer{status: resp.StatusCode, requestID: resp.Header.Get("X-Request-Id")}
	a.problem = problem.Parse(resp.Header.Get("Content-Type"), body)
	if a.requestID == "" {
		a.requestID = a.problem.Instance
	}
	return a
}

// apiError is the *APIError of a for the call m describes; retryAfter is
// the wait the response asked for, nil when it did not say.
func apiError(m meta, a answer, retryAfter *time.Duration) *APIError {
	d := &a.problem
	return &APIError{
		Status:     a.status,
		Type:       d.Type,
		Title:      d.Title,
		Detail:     d.Detail,
		Errors:     d.Errors,
		RequestID:  a.requestID,
		RetryAfter: retryAfter,
		meta:       m,
	}
}

// decodeError is the *DecodeError of a 2xx body, of status, that did not
// decode.
func decodeError(m meta, status int, err error) *DecodeError {
	return &DecodeError{Status: status, Err: err, meta: m}
}

// shapeError is the *DecodeError of a 200 body that decoded but is not
// what the operation returns; what says how.
func shapeError(m meta, what string) *DecodeError {
	return decodeError(m, http.StatusOK, errors.New(what))
}
