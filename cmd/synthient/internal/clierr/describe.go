package clierr

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// Describer renders errors as the one line the command prints.
type Describer struct {
	// Secrets are redacted from a problem detail before it is cut short.
	Secrets *redact.Redactor
	// BaseURL returns the base URL the command was given ("" for the
	// default), for the hints of a 404 and a base URL that does not parse.
	BaseURL func() string
}

// Describe renders an error as one line, without the "synthient: " prefix
// of the SDK's messages: for an API error its status, title or detail,
// field errors and notes (see errorNotes). The detail is cut to 300 bytes
// after the secrets in it were redacted: a secret cut in two would no
// longer be found by the textsafe.Writer.
func (d *Describer) Describe(err error) string {
	var apiErr *synthient.APIError
	if !errors.As(err, &apiErr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return d.inCLITerms(err, strings.TrimPrefix(render.OneLine(err.Error()), "synthient: ")) + attemptsNote(err)
	}
	var b strings.Builder
	b.WriteString(apiErr.Error())
	if text := problemText(apiErr); text != "" {
		b.WriteString(": ")
		b.WriteString(render.OneLine(render.Truncate(d.Secrets.RedactString(text), 300)))
	}
	for field, msgs := range apiErr.Errors {
		fmt.Fprintf(&b, "; %s: %s", render.OneLine(field), render.OneLine(strings.Join(msgs, ", ")))
	}
	notes := errorNotes(err, apiErr)
	if base := d.baseURL(); apiErr.Status == http.StatusNotFound && base != "" && !strings.HasSuffix(strings.TrimRight(base, "/"), "/api/v4") {
		notes = append(notes, "the base URL "+strconv.Quote(base)+" does not end in /api/v4")
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	return b.String()
}

func (d *Describer) baseURL() string {
	if d.BaseURL == nil {
		return ""
	}
	return d.BaseURL()
}

// problemText is what an API error says beyond its status: its detail,
// else its title. A text body may repeat the status line ("401
// Unauthorized: malformed API key"): the status is printed once.
func problemText(apiErr *synthient.APIError) string {
	text := apiErr.Detail
	if text == "" {
		text = apiErr.Title
	}
	if rest, ok := strings.CutPrefix(text, apiErr.Error()); ok {
		text = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
	}
	return text
}

// errorNotes are what Describe adds in parentheses to an API error: its
// request id, its Retry-After and, when the SDK stopped retrying, the
// attempts it made and why it stopped.
func errorNotes(err error, apiErr *synthient.APIError) []string {
	var notes []string
	if apiErr.RequestID != "" {
		notes = append(notes, "request id "+render.OneLine(apiErr.RequestID))
	}
	if apiErr.RetryAfter != nil {
		notes = append(notes, "retry after "+apiErr.RetryAfter.String())
	}
	var base *synthient.Error
	if errors.As(err, &base) && base.StopReason != "" {
		count := fmt.Sprintf("%d attempt(s)", base.Attempts)
		if render.SumsLegs(base.Op) {
			count = render.Attempts(base.Op, base.Attempts)
		}
		notes = append(notes, count+", "+string(base.StopReason))
	}
	return notes
}

// attemptsNote says, for an error of a request that is not an API error
// (a connection refused, a timeout, a file that cannot be written), how
// many attempts the SDK made and why it stopped: " (3 attempts,
// attempts_exhausted)", or " (3 requests)" for a download, whose count
// adds up its legs (render.Attempts); "" when it sent nothing.
func attemptsNote(err error) string {
	var base *synthient.Error
	if !errors.As(err, &base) || base.Attempts == 0 {
		return ""
	}
	note := render.Attempts(base.Op, base.Attempts)
	if base.StopReason != "" {
		note += ", " + string(base.StopReason)
	}
	return " (" + note + ")"
}

// sdkMethod matches the SDK method name that opens the SDK's messages
// ("LookupDomain: domain holds '/'"), an exported Go name and a colon: a
// CLI user typed a command, not a method.
var sdkMethod = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*: `)

// inCLITerms rewords msg, the text of err, in the command line's terms: no
// "invalid argument" or SDK method name, and the value or flag that fixes
// it where there is one.
func (d *Describer) inCLITerms(err error, msg string) string {
	msg = sdkMethod.ReplaceAllString(strings.TrimPrefix(msg, "invalid argument: "), "")
	switch {
	case errors.Is(err, fs.ErrExist):
		msg += " (--force replaces it)"
	case strings.HasPrefix(msg, "base URL"):
		msg = fmt.Sprintf("%s: %q (--base-url or SYNTHIENT_BASE_URL: an absolute http(s) URL ending in /api/v4, such as %s)",
			msg, d.baseURL(), synthient.DefaultBaseURL)
	}
	return msg
}
