package batch

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// run is one run: it prints each looked-up address, writes the others to
// their file, reports failed requests on stderr and counts the outcomes,
// as the SDK yields the results. Everything it does happens on the
// goroutine that ranges over the results.
type run struct {
	cfg              *Config
	rows             *render.Stream // the text output; nil for JSON and CSV
	pending          int            // rows of rows not flushed yet
	csvRows          *csvOut        // the CSV output; nil for text and JSON
	bar              *progress      // nil for none
	failed, unknown  *List
	lines            *addrinput.Reader
	stop             context.CancelCauseFunc // ends the run, as an interrupt does
	jr               *journalRun             // nil without a journal
	tally            Tally
	group            failureGroup
	printErr, sdkErr error // the first error writing stdout; an error of the SDK's own
	stopCause        error // why the run stopped after printErr
	// stopReason is why the run was stopped, for the addresses it did not
	// send or did not get the answer of: an interrupt, else stopCause.
	stopReason func() error
}

// newRun starts the output of a run that reads lines: the progress bar
// of total address lines (-1: unknown), and the table's header in text
// output. stop ends the run early.
func (cfg *Config) newRun(lines *addrinput.Reader, total int64, failed, unknown *List, stop context.CancelCauseFunc) *run {
	r := &run{cfg: cfg, lines: lines, failed: failed, unknown: unknown, stop: stop,
		jr: newJournalRun(cfg.Journal, cfg.ResendUnknown)}
	r.tally.Journal = cfg.Journal != nil
	if cfg.Bar != nil {
		r.bar = newProgress(cfg.Bar, total)
	}
	p := cfg.Printer
	switch {
	case p.CSV() && r.jr == nil:
		r.csvRows = &csvOut{CSV: render.NewCSV(p.Out, render.IPCSVHeader...)}
	case p.CSV():
		// One header per journal: with the first row, unless an earlier
		// run printed it.
		r.csvRows = &csvOut{CSV: render.NewCSV(p.Out)}
		if cfg.csvHeaderDue() {
			r.csvRows.header = render.IPCSVHeader
		}
	case !p.JSON():
		r.rows = render.NewStream(p.Out, render.IPColumns...)
	}
	return r
}

// handle takes one result: it counts it, reports a failure, writes the
// address where its outcome says, and advances the progress bar.
func (r *run) handle(res synthient.BulkResult, err error) {
	if res.Index < 0 { // the SDK refused its parameters: nothing was read
		r.sdkErr = err
		return
	}
	if errors.Is(err, context.Canceled) {
		err = r.stopReason() // not "context canceled"
	}
	line := r.lineOf()
	r.tally.Add(res)
	r.track(res, err, line)
	r.file(res, line)
	r.bar.add(r.pending > 0)
}

// lineOf returns the input line of the address the SDK just answered:
// the next entry handed out that the journal did not settle (the SDK
// answers in order). The settled entries before it are accounted for on
// the way.
func (r *run) lineOf() int64 {
	for {
		e, ok := r.lines.Next()
		if !ok {
			return 0
		}
		if !e.Skipped {
			return e.Line
		}
		r.skipped(e)
	}
}

// skipped accounts for an address the journal settles: looked up by an
// earlier run (counted, not printed), or possibly charged by one (in
// --unknown, reported); a second occurrence is a duplicate.
func (r *run) skipped(e addrinput.Entry) {
	st, first := r.jr.settled(e.IP)
	res := synthient.BulkResult{IP: e.IP, Outcome: synthient.Unknown, Duplicate: !first}
	switch {
	case !first:
		r.tally.Duplicates++
	case st == journal.LookedUp:
		r.tally.Earlier++
		res.Outcome = synthient.LookedUp
	default:
		r.tally.Unknown++
		r.unknown.Add(e.IP)
	}
	r.track(res, errEarlierRun, e.Line)
	r.bar.add(r.pending > 0)
}

// skippedTail accounts for the settled entries after the last address the
// SDK answered.
func (r *run) skippedTail() {
	for e, ok := r.lines.Next(); ok; e, ok = r.lines.Next() {
		r.skipped(e)
	}
}

// file writes the address of res where its outcome says: a looked-up one
// on stdout, one safe to send again in --failed, an unknown one in
// --unknown. A duplicate is written nowhere: its first occurrence was.
// line is the input line of res.
func (r *run) file(res synthient.BulkResult, line int64) {
	switch {
	case res.Duplicate:
	case res.Outcome == synthient.LookedUp:
		r.print(res, line)
	case res.Outcome == synthient.NotSent, res.Outcome == synthient.Rejected:
		r.failed.Add(res.IP)
		r.jr.done(res.IP, res.Outcome)
	case res.Outcome == synthient.Unknown:
		r.unknown.Add(res.IP)
		r.jr.done(res.IP, res.Outcome)
	}
}

// print writes the lookup of res, from input line, on stdout: a text
// row (the table is flushed as each request's rows begin, and before each
// request is sent: beforeSend), a CSV row (flushed at once) or a JSON
// document, and records it in the journal once it is written. A failure
// of --jq or --template on it is reported and the run goes on
// (output.Printer.Tolerate); the first other error stops the run (fail).
func (r *run) print(res synthient.BulkResult, line int64) {
	if r.printErr != nil {
		return
	}
	var err error
	switch {
	case r.rows != nil:
		if res.Credits > 0 && r.pending > 0 { // the first result of a request
			if r.flushTable(); r.printErr != nil {
				return
			}
		}
		r.rows.Row(render.IPRow(res.Lookup)...)
		r.jr.print(res.IP)
		r.pending++
		return
	case r.csvRows != nil:
		err = r.csvRows.row(render.IPCSVRow(res.Lookup))
	default:
		p := r.cfg.Printer
		err = p.Tolerate(p.Emit(res.Lookup), "line", line)
	}
	if err != nil {
		r.fail(err)
		return
	}
	r.jr.done(res.IP, synthient.LookedUp)
}

// flushTable writes out the table rows held back, and records them in the
// journal; an error stops the run (fail).
func (r *run) flushTable() {
	err := r.rows.Flush()
	r.pending = 0
	if err != nil {
		r.fail(err)
		return
	}
	r.jr.flushed()
	r.bar.release()
}

// fail stops the run after err, the first error writing stdout: the
// results after it would be lost (and the journal does not hold them as
// looked up), so no more credits are spent on them. The addresses not
// sent give the reason (stopCause).
func (r *run) fail(err error) {
	r.printErr = err
	r.stopCause = fmt.Errorf("stopped after an error writing stdout: %w", err)
	if errors.Is(err, syscall.EPIPE) {
		r.stopCause = errStdoutClosed
	}
	r.stop(r.stopCause)
}

// errInterrupted is why a run interrupted (Ctrl-C, SIGTERM) did not send
// an address, or did not get its answer.
var errInterrupted = errors.New("interrupted (Ctrl-C or SIGTERM)")

// errStdoutClosed is why a run whose stdout closed (EPIPE: a pipe into
// head that exited) sends nothing more.
var errStdoutClosed = errors.New("stdout was closed by its reader (a pipe into head, say): nothing more is sent")

// beforeSend runs before each request is sent (BulkParams.BeforeSend): it
// writes out the table rows held back, so that a stdout that closed (a
// pipe into head) or failed stops the run before the request is sent and
// charged, then records the request in the journal.
func (r *run) beforeSend(addrs []netip.Addr) error {
	if r.rows != nil && r.pending > 0 && r.printErr == nil {
		r.flushTable()
	}
	if r.printErr != nil {
		return r.stopCause
	}
	if r.jr == nil {
		return nil
	}
	return r.jr.beforeSend(addrs)
}

// csvOut is the CSV output of a run: its header, while it is due, goes
// out with the first row.
type csvOut struct {
	*render.CSV
	header []string // nil once written, or when not due
}

// row writes cells, after the header when it is due, and flushes them.
func (c *csvOut) row(cells []string) error {
	if c.header != nil {
		if err := c.Row(c.header...); err != nil {
			return err
		}
		c.header = nil
	}
	if err := c.Row(cells...); err != nil {
		return err
	}
	return c.Flush()
}

// track gathers the failed addresses into runs of the same outcome and
// error, and reports each run once it ends. An invalid line or a
// duplicate does not end a run.
func (r *run) track(res synthient.BulkResult, err error, line int64) {
	switch {
	case res.Duplicate || res.Outcome == synthient.Invalid:
		return
	case res.Outcome == synthient.LookedUp:
		r.reportGroup()
		return
	case !r.group.extends(res.Outcome, err, r.cfg.Describe):
		r.reportGroup()
		r.group = failureGroup{outcome: res.Outcome, err: err, first: line}
	}
	r.group.n++
	r.group.last = line
}

// reportGroup reports the run of failed addresses gathered, if any, as
// one line on stderr: its input lines, its count, what its outcome means
// and the request's error; the addresses themselves are in the files.
func (r *run) reportGroup() {
	g := &r.group
	if g.n == 0 || r.cfg.Quiet {
		*g = failureGroup{}
		return
	}
	lines := fmt.Sprintf("lines %d-%d", g.first, g.last)
	if g.first == g.last {
		lines = fmt.Sprintf("line %d", g.first)
	}
	_, _ = fmt.Fprintf(r.cfg.Err, "synthient: %s: %s %s: %s\n",
		lines, render.Plural(g.n, "address", "addresses"), outcomeText(g.outcome, r.failed, r.unknown), r.cfg.Describe(g.err))
	*g = failureGroup{}
}

// outcomeText says what an outcome other than LookedUp and Invalid means
// for the user, and where its addresses went: failed or unknown.
func outcomeText(o synthient.BulkOutcome, failed, unknown *List) string {
	switch o {
	case synthient.NotSent:
		return textsafe.Paint(textsafe.Yellow, "not sent") + ", safe to send again" + failed.hint()
	case synthient.Rejected:
		return textsafe.Paint(textsafe.Yellow, "rejected") + " without a charge, safe to send again once the cause is fixed" + failed.hint()
	}
	return textsafe.Paint(textsafe.Red, "possibly charged") + " (the request may have been processed); do not resend blindly" + unknown.hint()
}

// drain accounts for the lines the input had already delivered when the
// run was stopped (cause: why), which the SDK did not read: an address is
// not sent, and goes to --failed.
func (r *run) drain(cause error) {
	for e := range r.lines.Buffered() {
		if e.Skipped {
			r.skipped(e)
			continue
		}
		res := synthient.BulkResult{IP: e.IP, Outcome: synthient.NotSent}
		if !e.IP.IsValid() {
			res.Outcome = synthient.Invalid
		}
		r.tally.Add(res)
		r.track(res, cause, r.lines.Line())
		r.file(res, r.lines.Line())
		r.bar.add(r.pending > 0)
	}
}

// finish reports the last failures, ends the output, closes the files,
// prints the summary (stopped: the run was stopped before the input
// ended), and returns the run's outcome (see Config.Run).
func (r *run) finish(ctx context.Context, stopped bool) error {
	r.reportGroup()
	if err := r.flushRows(); err != nil && r.printErr == nil {
		r.printErr = err
	} else if err == nil {
		r.jr.flushed()
		r.bar.release()
	}
	r.bar.end(stopped, r.tally.Total())
	fileErr := errors.Join(r.failed.Close(), r.unknown.Close(), r.jr.close())
	r.printSummary(stopped)
	for _, err := range []error{ctx.Err(), r.sdkErr, r.lines.End(), r.printErr, fileErr} {
		if err != nil {
			return err
		}
	}
	if r.tally.Total() == 0 && r.cfg.NoAddress != nil {
		return r.cfg.NoAddress
	}
	if err := r.tally.err(r.failed, r.unknown, r.cfg.InvalidWhere()); err != nil {
		return err
	}
	r.cfg.InvalidNote(r.tally.Invalid)
	return r.cfg.Printer.FailuresError("results")
}

// flushRows ends the text or CSV output.
func (r *run) flushRows() error {
	switch {
	case r.rows != nil:
		return r.rows.Flush()
	case r.csvRows != nil:
		return r.csvRows.Flush()
	}
	return nil
}

// printSummary prints the counts on stderr and, for a run stopped early,
// the last line read.
func (r *run) printSummary(stopped bool) {
	if r.cfg.Quiet {
		return
	}
	_, _ = fmt.Fprintln(r.cfg.Err, "synthient: "+r.tally.Summary())
	if stopped {
		_, _ = fmt.Fprintf(r.cfg.Err, "synthient: stopped after line %d of the input: every address up to it is counted above; the lines after it were not read\n", r.lines.Line())
	}
}
