package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// toolError is why a call failed, as an agent can act on it (see
// docs/errors.md for the SDK's errors it comes from). It holds no API key
// (the server's text is redacted) and no stack.
type toolError struct {
	Message     string              `json:"message" jsonschema:"what went wrong, in one line"`
	Argument    string              `json:"argument,omitempty" jsonschema:"the argument at fault (such as ips[2] or stream); nothing was sent"`
	Status      int                 `json:"status,omitempty" jsonschema:"the HTTP status the API answered"`
	Title       string              `json:"title,omitempty" jsonschema:"the API problem's title"`
	Detail      string              `json:"detail,omitempty" jsonschema:"the API problem's detail"`
	FieldErrors map[string][]string `json:"field_errors,omitempty" jsonschema:"the API's validation messages by field"`
	StopReason  string              `json:"stop_reason,omitempty" jsonschema:"why the client stopped sending, such as may_have_been_processed or rate_limited_without_retry_after"`
	RequestID   string              `json:"request_id,omitempty" jsonschema:"the API's request id, for Synthient support"`
	// RetryAfterSeconds is nil when the API did not say.
	RetryAfterSeconds *float64 `json:"retry_after_seconds,omitempty" jsonschema:"how long the API asked to wait before calling again"`
	Attempts          int      `json:"attempts,omitempty" jsonschema:"requests the client sent for the call"`
	// MayHaveBeenCharged reports a billed request that reached the API and
	// failed after: it may have been processed, and charged.
	MayHaveBeenCharged bool   `json:"may_have_been_charged" jsonschema:"the request reached the API and its outcome is unknown: it may have been charged, and a repeat may be charged again"`
	Hint               string `json:"hint,omitempty" jsonschema:"what to do about it"`
}

// argumentError is a bad argument of a tool call: nothing was sent.
type argumentError struct {
	name string
	err  error
}

func (e *argumentError) Error() string { return e.name + ": " + e.err.Error() }
func (e *argumentError) Unwrap() error { return e.err }

// argError returns the error of argument name: err, or the message
// format and args make.
func argError(name string, format string, args ...any) error {
	return &argumentError{name: name, err: fmt.Errorf(format, args...)}
}

// invalidArg returns err as the error of argument name when the SDK
// refused it before sending anything (ErrInvalidArgument); else err.
func invalidArg(name string, err error) error {
	if errors.Is(err, synthient.ErrInvalidArgument) {
		return &argumentError{name: name, err: err}
	}
	return err
}

// toolError describes err; maybe reports that the call may have been
// charged. The SDK's typed errors are read with one errors.As each.
func (t *tools) toolError(err error, maybe bool) *toolError {
	te := &toolError{Message: t.describe(err), MayHaveBeenCharged: maybe}
	if ae := (*argumentError)(nil); errors.As(err, &ae) {
		te.Argument = ae.name
		te.Message = ae.name + ": " + t.describe(ae.err)
	}
	if e := (*synthient.Error)(nil); errors.As(err, &e) {
		te.StopReason, te.Attempts = string(e.StopReason), e.Attempts
	}
	if ae := (*synthient.APIError)(nil); errors.As(err, &ae) && !errors.Is(err, context.Canceled) {
		te.Status, te.Title, te.Detail, te.FieldErrors, te.RequestID = ae.Status, t.redact(ae.Title), t.redact(ae.Detail), ae.Errors, ae.RequestID
		if ae.RetryAfter != nil {
			te.RetryAfterSeconds = ptr(ae.RetryAfter.Seconds())
		}
	}
	te.Hint = hintOf(te)
	if ce := (*synthient.ConnectionError)(nil); errors.As(err, &ce) && ce.NotSent && te.Hint == "" {
		te.Hint = "the API could not be reached and nothing was sent or charged: calling again is safe"
	}
	return te
}

// hintOf is what an agent can do about te.
func hintOf(te *toolError) string {
	switch {
	case te.Argument != "":
		return "fix " + te.Argument + " and call again: nothing was sent"
	case te.MayHaveBeenCharged:
		return "the request reached the API and its outcome is unknown: it may have been charged; calling again may be charged again"
	case te.StopReason == string(retry.CreditBudgetExhausted):
		return "this session's credit budget has too few credits left for this call (credits_left says what is left): nothing was sent or charged. " +
			"Answers already in the cache are still free, and a lookup_ip of fewer addresses may fit; ask the user before spending more"
	case te.Status == http.StatusPaymentRequired:
		return "the team is out of lookup credits: get_account says when they refill (lookup_quota.resets_in); nothing was charged"
	case te.Status == http.StatusTooManyRequests && te.RetryAfterSeconds != nil:
		return fmt.Sprintf("rate limited: wait %g seconds, then call again; nothing was charged", *te.RetryAfterSeconds)
	case te.Status == http.StatusTooManyRequests:
		return "rate limited with no time given to wait (the team's rate, its monthly budget, or too many open streams): wait a minute before calling again; nothing was charged"
	case te.Status == http.StatusUnauthorized:
		return "the API refused the server's key: the user must fix it; calling again will not help"
	case te.Status == http.StatusForbidden:
		return "the key lacks the scope this needs (get_account lists its scopes)"
	case te.Status == http.StatusNotFound:
		return "the API has no such thing: check the arguments (list_feed_snapshots lists the snapshot ids)"
	case te.StopReason == string(retry.ContextDone):
		return "the call was cancelled or ran out of time"
	case te.Status >= 500:
		return "the API failed: calling again later is safe (nothing was charged)"
	}
	return ""
}

// text renders te for the model: the message (which holds the status,
// the problem, the request id, Retry-After, the attempts and the stop
// reason), whether the call may have been charged, and what to do.
func (te *toolError) text() string {
	text := "Error: " + te.Message
	if te.MayHaveBeenCharged {
		text += "\nMay have been charged: yes"
	}
	if te.Hint != "" {
		text += "\nHint: " + te.Hint
	}
	return text
}

// mayHaveCharged reports whether err, of a billed call, leaves the charge
// unknown: an answer that did not decode (charged), a 5xx, or a failure
// after the request may have reached the API.
func mayHaveCharged(err error) bool {
	if errors.Is(err, synthient.ErrInvalidArgument) {
		return false
	}
	if de := (*synthient.DecodeError)(nil); errors.As(err, &de) {
		return true
	}
	if ae := (*synthient.APIError)(nil); errors.As(err, &ae) {
		return ae.Status >= 500
	}
	if ce := (*synthient.ConnectionError)(nil); errors.As(err, &ce) {
		return !ce.NotSent
	}
	return false
}

// Outcomes of an address, as lookup_ip reports them.
const (
	outcomeLookedUp = "looked_up"
	outcomeInvalid  = "invalid"
	outcomeNotSent  = "not_sent"
	outcomeMaybe    = "may_have_been_charged"
	outcomeRejected = "rejected"
)

// bulkOutcomes name the SDK's outcomes of a bulk lookup as lookup_ip
// reports them.
var bulkOutcomes = map[synthient.BulkOutcome]string{
	synthient.LookedUp: outcomeLookedUp, synthient.Invalid: outcomeInvalid, synthient.NotSent: outcomeNotSent,
	synthient.Unknown: outcomeMaybe, synthient.Rejected: outcomeRejected,
}

// outcomeOf is the outcome of a single lookup that failed with err, as
// bulkOutcomes names a bulk one's. shared reports a lookup that shared
// another call's request, and so sent nothing of its own.
func outcomeOf(err error, shared bool) string {
	var ae *synthient.APIError
	switch {
	case errors.Is(err, synthient.ErrInvalidArgument):
		return outcomeInvalid
	case errors.Is(err, synthient.ErrCreditBudget): // also a retry refused after a 429: nothing charged
		return outcomeNotSent
	case !shared && mayHaveCharged(err):
		return outcomeMaybe
	case errors.As(err, &ae) && ae.Status < 500:
		return outcomeRejected
	}
	return outcomeNotSent
}

// schemaNoise is what schemaMessage removes from the SDK's message: the
// path before the argument's name, and the fractions of its numbers.
var schemaNoise = strings.NewReplacer(`validating "arguments": `, "", "validating root: ", "", "validating /properties/", "", "/1 ", " ", ".000000", "")

// schemaMessage is the SDK's message of an argument its schema refused,
// shortened: "count: maximum: 501 is greater than 500".
func schemaMessage(msg string) string { return schemaNoise.Replace(msg) }

// schemaProperty finds the argument a schema validation error names, as
// the SDK words it: "validating /properties/count: ...", "/items/2",
// "missing properties: ["stream"]", "additional properties ["verbose"]".
var schemaProperty = regexp.MustCompile(`/properties/([A-Za-z_]+)(/items/([0-9]+))?|properties:? \["([A-Za-z_]+)"`)

// schemaArgument returns the argument msg names, "arguments" for none: "count",
// or "ips[2]" for an item.
func schemaArgument(msg string) string {
	m := schemaProperty.FindStringSubmatch(msg)
	switch {
	case m == nil:
		return "arguments"
	case m[4] != "":
		return m[4]
	case m[3] != "":
		return m[1] + "[" + m[3] + "]"
	}
	return m[1]
}
