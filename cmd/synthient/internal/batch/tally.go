package batch

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// Tally counts the outcomes of a run. Each address line is counted once:
// a duplicate as a duplicate, whatever its first occurrence's outcome,
// every other address by its outcome.
type Tally struct {
	LookedUp, Invalid, NotSent, Rejected, Unknown, Duplicates int64
	// Earlier is the addresses a journal holds as looked up by an earlier
	// run (not sent or printed again).
	Earlier int64
	// Journal reports a run with a journal, whose summary counts Earlier.
	Journal bool
	// Credits is what the answered requests cost; MaybeCredits what the
	// requests that may have been processed would have.
	Credits, MaybeCredits int64
}

// Add counts res.
func (t *Tally) Add(res synthient.BulkResult) {
	switch {
	case res.Duplicate:
		t.Duplicates++
	case res.Outcome == synthient.LookedUp:
		t.LookedUp++
	case res.Outcome == synthient.Invalid:
		t.Invalid++
	case res.Outcome == synthient.NotSent:
		t.NotSent++
	case res.Outcome == synthient.Rejected:
		t.Rejected++
	case res.Outcome == synthient.Unknown:
		t.Unknown++
	}
	switch res.Outcome {
	case synthient.LookedUp:
		t.Credits += int64(res.Credits)
	case synthient.Unknown:
		t.MaybeCredits += int64(res.Credits)
	}
}

// Total is the address lines counted.
func (t *Tally) Total() int64 {
	return t.LookedUp + t.Earlier + t.Invalid + t.NotSent + t.Rejected + t.Unknown + t.Duplicates
}

// Summary is the one-line summary of the run.
func (t *Tally) Summary() string {
	earlier := ""
	if t.Journal {
		earlier = fmt.Sprintf(", %d looked up earlier (in the journal)", t.Earlier)
	}
	return fmt.Sprintf("%s read: %s%s, %s, %s, %s, %s, %s; credits: %d spent, %d possibly spent",
		render.Plural(t.Total(), "address", "addresses"), paintIf(t.LookedUp, textsafe.Green, "%d looked up"), earlier,
		paintIf(t.Invalid, textsafe.Yellow, "%d invalid"), paintIf(t.NotSent, textsafe.Yellow, "%d not sent"),
		paintIf(t.Rejected, textsafe.Yellow, "%d rejected"), paintIf(t.Unknown, textsafe.Red, "%d unknown (possibly charged)"),
		render.Plural(t.Duplicates, "duplicate not sent again", "duplicates not sent again"), t.Credits, t.MaybeCredits)
}

// paintIf renders the count n by format, coloured with style on a
// terminal when it is not 0.
func paintIf(n int64, style textsafe.Style, format string) string {
	text := fmt.Sprintf(format, n)
	if n == 0 {
		return text
	}
	return textsafe.Paint(style, text)
}

// err is the run's error when not every address was looked up: exit 3
// when some failed (not sent, rejected or unknown), exit 2 when no line
// was an address at all (where says where the invalid lines are listed);
// nil when every address was looked up, invalid lines or not: those are
// reported on stderr and counted in the summary.
func (t *Tally) err(failed, unknown *List, where string) error {
	var parts []string
	if n := t.NotSent + t.Rejected; n > 0 {
		parts = append(parts, render.Plural(n, "address", "addresses")+" not looked up, safe to send again"+failed.hint())
	}
	if t.Unknown > 0 {
		parts = append(parts, render.Plural(t.Unknown, "address", "addresses")+" possibly charged, do not resend blindly"+unknown.hint())
	}
	if len(parts) == 0 {
		return NoAddressError(t.Invalid, t.Total(), where)
	}
	if t.Invalid > 0 {
		parts = append(parts, render.Plural(t.Invalid, "line is not an IP address", "lines are not IP addresses")+where)
	}
	return clierr.New(clierr.API, errors.New(strings.Join(parts, "; ")))
}

// NoAddressError is the usage error (exit 2) of an input of which none of
// the total lines is an IP address (invalid of them are not); nil when
// some line is one, or the input is empty. where says where the invalid
// lines are listed.
func NoAddressError(invalid, total int64, where string) error {
	if invalid == 0 || invalid < total {
		return nil
	}
	return clierr.New(clierr.Usage, fmt.Errorf("no line of the input is an IP address: %s%s",
		render.Plural(invalid, "line is not one", "lines are not"), where))
}

// failureGroup is a run of consecutive failed addresses of the same
// outcome and error: one request's, or those not sent after a stop.
type failureGroup struct {
	outcome     synthient.BulkOutcome
	err         error
	n           int64 // addresses
	first, last int64 // their first and last input lines
}

// extends reports whether an address with outcome o and error err
// belongs to the group: the same error (errors of the SDK are pointers:
// one request's addresses share its error), or one that describe renders
// the same (the report shows only that line).
func (g *failureGroup) extends(o synthient.BulkOutcome, err error, describe func(error) string) bool {
	if g.n == 0 || g.outcome != o {
		return false
	}
	return sameError(g.err, err) || err != nil && g.err != nil && describe(g.err) == describe(err)
}

// sameError reports whether a and b are the same error value, without
// comparing errors whose type is not comparable.
func sameError(a, b error) bool {
	if a == nil || b == nil || !reflect.TypeOf(a).Comparable() || reflect.TypeOf(a) != reflect.TypeOf(b) {
		return a == nil && b == nil
	}
	return a == b //nolint:errorlint // the same value, not a match: one request's addresses share its error
}
