package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/synthient-go/synthient"
)

func (a *app) lookupIPsCommand() *cobra.Command {
	var o lookupIPsOptions
	cmd := &cobra.Command{
		Use:   "ips {--file F | ADDR...}",
		Short: "Look up many IP addresses, in batches of up to 1000 (0.9 credit each)",
		Long: `Look up every address in a file, one per line ("-" reads stdin; blank lines and
lines starting with # are skipped), or the addresses given as arguments
(line N is the Nth argument), in requests of --batch-size addresses with
--concurrency of them in flight. Results come in input order: one table row,
or one JSON line with --output json, per distinct address looked up. An
address repeated later in the input is sent, charged and printed once, at its
first occurrence; --keep-duplicates sends and prints every occurrence.

Every address line has exactly one outcome, counted in the summary on stderr:
  looked up  printed on stdout
  invalid    not an IP address: reported on stderr with its line number
  not sent   never reached the API (credits ran out, Ctrl-C): safe to send again
  rejected   refused by the API without a charge (401, 403, 422, ...): safe to
             send again once the cause is fixed
  unknown    the request failed after it was sent (a 5xx, a cut connection):
             the API may have processed and charged it; do not resend blindly
--failed FILE receives the addresses not sent or rejected, ready to feed back
in; --unknown FILE the unknown ones. After a 402, 401 or 403 nothing more is
sent: the rest of the input is read and counted as not sent. Ctrl-C stops
sending and reading; every address read is still accounted for (exit 130).
The summary gives the credits spent and possibly spent, from the answers.

--dry-run reads and checks the input and prints the addresses, the distinct
ones, the requests and the credits the run would take, sending no lookup;
with an API key it also shows the credits left (a free request).

Exit code: 0 when every address was looked up, also when lines were not IP
addresses (each is reported on stderr and counted in the summary); 3 when
some were not sent, rejected or unknown; 2 when no line is an IP address;
130 on Ctrl-C.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.addrs = args
			if err := o.check(); err != nil {
				return err
			}
			return a.lookupIPs(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.file, "file", "", `file of addresses, one per line ("-" for stdin)`)
	f.IntVar(&o.concurrency, "concurrency", synthient.DefaultBulkConcurrency,
		fmt.Sprintf("requests in flight at once, 1 to %d", synthient.MaxBulkConcurrency))
	f.IntVar(&o.batchSize, "batch-size", synthient.MaxBatchSize,
		fmt.Sprintf("addresses per request, 1 to %d", synthient.MaxBatchSize))
	f.BoolVar(&o.keepDuplicates, "keep-duplicates", false, "send and print every occurrence of a repeated address (each is charged)")
	f.StringVar(&o.failed, "failed", "", "write the addresses safe to send again (not sent or rejected) to this file")
	f.StringVar(&o.unknown, "unknown", "", "write the addresses that may have been processed and charged to this file")
	f.BoolVar(&o.dryRun, "dry-run", false, "check the input and print the requests and credits it would take; look nothing up")
	return cmd
}

// lookupIPsOptions are the flags of lookup ips.
type lookupIPsOptions struct {
	file, failed, unknown  string
	addrs                  []string // the addresses given as arguments, in place of --file
	concurrency, batchSize int
	keepDuplicates, dryRun bool
}

// check refuses neither --file nor addresses (or both), a --concurrency
// or --batch-size out of range, and --failed and --unknown naming the same
// file.
func (o *lookupIPsOptions) check() error {
	switch {
	case o.file == "" && len(o.addrs) == 0:
		return usageError("lookup ips needs addresses, or --file (use - for stdin)")
	case o.file != "" && len(o.addrs) > 0:
		return usageError("lookup ips takes addresses or --file, not both")
	case slices.ContainsFunc(o.addrs, func(s string) bool { return strings.ContainsAny(s, "\r\n") }):
		return usageError("an address argument holds a line break: give one address per argument")
	case o.concurrency < 1 || o.concurrency > synthient.MaxBulkConcurrency:
		return usageError("--concurrency must be 1 to %d, not %d", synthient.MaxBulkConcurrency, o.concurrency)
	case o.batchSize < 1 || o.batchSize > synthient.MaxBatchSize:
		return usageError("--batch-size must be 1 to %d, not %d", synthient.MaxBatchSize, o.batchSize)
	case o.failed != "" && o.unknown != "" && sameFile(o.failed, o.unknown):
		return usageError("--failed %s and --unknown %s are the same file: name two files", o.failed, o.unknown)
	}
	return nil
}

// params are the SDK's parameters for the flags.
func (o *lookupIPsOptions) params() *synthient.BulkParams {
	return &synthient.BulkParams{Concurrency: o.concurrency, BatchSize: o.batchSize, KeepDuplicates: o.keepDuplicates}
}

// lookupIPs runs lookup ips in its steps: open the input, refuse an
// output file that is the input, then either plan the run (--dry-run) or
// run it.
func (a *app) lookupIPs(ctx context.Context, o *lookupIPsOptions) error {
	in, closeIn, err := a.openBatchInput(ctx, o)
	if err != nil {
		return err
	}
	defer closeIn()
	for _, out := range []struct{ flag, name string }{{"--failed", o.failed}, {"--unknown", o.unknown}} {
		if err := checkNotInput(out.flag, out.name, in); err != nil {
			return err
		}
	}
	if o.dryRun {
		return a.planLookupIPs(ctx, o, in)
	}
	return a.runLookupIPs(ctx, o, in)
}

// runLookupIPs looks the input up: it builds the client, counts the
// input for the progress bar, creates the output files, and hands the
// input's addresses to the SDK's LookupIPsAll, handling each result as it
// comes (see ipsRun). A write error on stdout stops the run as an
// interrupt would, so that no more credits are spent for output that is
// lost.
func (a *app) runLookupIPs(ctx context.Context, o *lookupIPsOptions, in io.Reader) error {
	c, err := a.newClient()
	if err != nil {
		return err
	}
	total, err := a.countForBar(in)
	if err != nil {
		return err
	}
	failed, unknown, err := createLists(o)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	lines := newAddrReader(runCtx, in, a.reportInvalid)
	defer lines.close()
	r := a.newIPsRun(lines, total, failed, unknown, stop)
	for res, err := range c.LookupIPsAll(runCtx, lines.addrs(), o.params()) {
		r.handle(res, err)
	}
	stopped := runCtx.Err() != nil
	if stopped {
		r.drain(runCtx.Err())
	}
	return r.finish(ctx, stopped)
}

// openBatchInput opens the input of lookup ips: the addresses given as
// arguments, one per line; stdin for --file -; else the file, which the
// returned func closes (for the others it does nothing).
func (a *app) openBatchInput(ctx context.Context, o *lookupIPsOptions) (io.Reader, func(), error) {
	switch {
	case len(o.addrs) > 0:
		return strings.NewReader(strings.Join(o.addrs, "\n") + "\n"), func() {}, nil
	case o.file == "-":
		return a.env.stdin, func() {}, nil
	}
	f, err := openInterruptible(ctx, o.file)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// countForBar returns the number of address lines of the input, for the
// progress bar, when stderr is a terminal and the input a regular file
// (see countAddresses); else -1, unknown.
func (a *app) countForBar(in io.Reader) (int64, error) {
	f, ok := in.(*os.File)
	if !ok || !a.showProgress() {
		return -1, nil
	}
	return countAddresses(f)
}

// openInterruptible opens the file name for reading, which blocks for a
// named pipe until a writer opens it, unless ctx is done first. A file
// that cannot be opened is a usage error.
func openInterruptible(ctx context.Context, name string) (*os.File, error) {
	return interruptible(ctx, func() (*os.File, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageError("%v", err)
		}
		return f, nil
	}, func(f *os.File) { f.Close() })
}

// checkNotInput refuses an output file (flag names it) that is the input
// itself, by any path, hard link or symbolic link (or, with --file -, the
// file stdin was redirected from): creating it would empty the input
// before it is read.
func checkNotInput(flag, name string, in io.Reader) error {
	f, ok := in.(*os.File)
	if name == "" || !ok {
		return nil
	}
	inInfo, err := f.Stat()
	if err != nil || !inInfo.Mode().IsRegular() {
		// A pipe or a terminal cannot be checked: a pipe fed from the
		// output file itself (cat f | synthient lookup ips --file -
		// --failed f) loses what cat had not read yet when f is created,
		// and nothing here can tell what feeds a pipe.
		return nil
	}
	outInfo, err := os.Stat(name)
	if err != nil || !os.SameFile(inInfo, outInfo) {
		return nil
	}
	return usageError("%s %s is the input file: writing it would empty the addresses before they are read", flag, name)
}

// sameFile reports whether the paths a and b name the same file: the
// same file when both exist, else the same path once the symbolic links
// of their directories are resolved.
func sameFile(a, b string) bool {
	ai, aErr := os.Stat(a)
	bi, bErr := os.Stat(b)
	if aErr == nil && bErr == nil {
		return os.SameFile(ai, bi)
	}
	return canonicalPath(a) == canonicalPath(b)
}

// canonicalPath is name made absolute, its directory's symbolic links
// resolved where they can be.
func canonicalPath(name string) string {
	abs, err := filepath.Abs(name)
	if err != nil {
		return name
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return abs
	}
	return filepath.Join(dir, filepath.Base(abs))
}

// addrList is an output file of addresses, one per line (--failed,
// --unknown). A nil *addrList, for a flag not given, writes nothing.
type addrList struct {
	flag, name string
	f          *os.File
	w          *bufio.Writer
}

// createLists creates the --failed and --unknown files that o names. Both
// are opened before either is emptied: when one cannot be, the other keeps
// what it held (the addresses of an earlier run, say).
func createLists(o *lookupIPsOptions) (failed, unknown *addrList, err error) {
	if failed, err = openList("--failed", o.failed); err != nil {
		return nil, nil, err
	}
	if unknown, err = openList("--unknown", o.unknown); err != nil {
		failed.close()
		return nil, nil, err
	}
	for _, l := range []*addrList{failed, unknown} {
		if err := l.empty(); err != nil {
			failed.close()
			unknown.close()
			return nil, nil, err
		}
	}
	return failed, unknown, nil
}

// openList opens, or creates, the file name of flag without emptying it,
// or returns nil when name is empty. A file that cannot be opened for
// writing is a usage error.
func openList(flag, name string) (*addrList, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, usageError("%s: %v", flag, err)
	}
	return &addrList{flag: flag, name: name, f: f, w: bufio.NewWriter(f)}, nil
}

// empty truncates the file, for a list that is to hold this run's
// addresses only.
func (l *addrList) empty() error {
	if l == nil {
		return nil
	}
	if err := l.f.Truncate(0); err != nil {
		return usageError("%s: %v", l.flag, err)
	}
	return nil
}

// add writes ip as a line; a write error is kept for close.
func (l *addrList) add(ip netip.Addr) {
	if l != nil {
		l.w.WriteString(ip.String())
		l.w.WriteByte('\n')
	}
}

// close flushes and closes the file, and returns the first error writing
// it.
func (l *addrList) close() error {
	if l == nil {
		return nil
	}
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s %s: %w", l.flag, l.name, err)
	}
	return nil
}

// hint is " (in --flag NAME)", or "" for a flag not given.
func (l *addrList) hint() string {
	if l == nil {
		return ""
	}
	return " (in " + l.flag + " " + l.name + ")"
}

// planLookupIPs is --dry-run: it reads and checks the input as a run
// would, and prints what the run would send and cost (synthient.
// PlanLookupIPsAll), and, with a key, the credits left. Nothing billed
// is sent. Invalid lines are reported, and counted, as in a run.
func (a *app) planLookupIPs(ctx context.Context, o *lookupIPsOptions, in io.Reader) error {
	lines := newAddrReader(ctx, in, a.reportInvalid)
	defer lines.close()
	plan, err := synthient.PlanLookupIPsAll(lines.addrs(), o.params())
	if err != nil {
		return err
	}
	if err := lines.end(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := a.writePlan(plan, a.creditsLeft(ctx)); err != nil {
		return err
	}
	if err := noAddressError(plan.Invalid, plan.Addresses, a.invalidWhere()); err != nil {
		return err
	}
	a.invalidNote(plan.Invalid)
	return nil
}

// dryRunPlan is the JSON form of a dry run's plan.
type dryRunPlan struct {
	Addresses   int64  `json:"addresses"`
	Invalid     int64  `json:"invalid"`
	Duplicates  int64  `json:"duplicates"`
	Distinct    int64  `json:"distinct"`
	Requests    int64  `json:"requests"`
	Credits     int64  `json:"credits"`
	CreditsLeft *int64 `json:"credits_left,omitempty"`
	Fits        *bool  `json:"fits,omitempty"`
}

// writePlan prints plan, with the credits left when left is not nil.
func (a *app) writePlan(plan *synthient.BulkPlan, left *int64) error {
	p := dryRunPlan{Addresses: plan.Addresses, Invalid: plan.Invalid, Duplicates: plan.Duplicates,
		Distinct: plan.Distinct, Requests: plan.Requests, Credits: plan.Credits, CreditsLeft: left}
	if left != nil {
		fits := *left >= plan.Credits
		p.Fits = &fits
	}
	switch {
	case a.json():
		return a.emit(p)
	case a.csv():
		return writeCSV(a.env.stdout, planCSVHeader, planCSVRow(&p))
	}
	t := newTable(a.env.stdout)
	for _, r := range []struct {
		name string
		n    int64
	}{{"Addresses", p.Addresses}, {"Invalid", p.Invalid}, {"Duplicates", p.Duplicates},
		{"Distinct", p.Distinct}, {"Requests", p.Requests}, {"Credits", p.Credits}} {
		t.row(r.name, strconv.FormatInt(r.n, 10))
	}
	if left != nil {
		verdict := "enough"
		if !*p.Fits {
			verdict = "not enough"
		}
		t.row("Credits left", fmt.Sprintf("%d (%s)", *left, verdict))
	}
	return t.flush()
}

// creditsLeft asks the account's credits (a free request) when a key is
// configured; nil without one, or when the request fails, which it
// reports on stderr without failing the dry run.
func (a *app) creditsLeft(ctx context.Context) *int64 {
	if a.key == "" && !a.fake {
		return nil
	}
	c, err := a.newClient()
	if err == nil {
		var acct *synthient.Account
		if acct, err = c.Account(ctx); err == nil {
			return &acct.LookupQuota.Credits
		}
	}
	fmt.Fprintln(a.env.stderr, "synthient: credits left unknown: "+a.describe(err))
	return nil
}

// ipsRun is one run of lookup ips: it prints each looked-up address,
// writes the others to their file, reports failed requests on stderr and
// counts the outcomes, as the SDK yields the results. Everything it does
// happens on the goroutine that ranges over the results.
type ipsRun struct {
	a                *app
	rows             *table    // the text output; nil for JSON and CSV
	pending          int       // rows of rows not flushed yet
	csvRows          *csvTable // the CSV output; nil for text and JSON
	bar              *progressbar.ProgressBar
	total            int64 // the bar's total: the address lines; -1 if unknown
	failed, unknown  *addrList
	lines            *addrReader
	stop             func() // ends the run, as an interrupt does
	tally            ipsTally
	group            failureGroup
	printErr, sdkErr error // the first error writing stdout; an error of the SDK's own
}

// newIPsRun starts the output of a run that reads lines: the progress
// bar of total address lines (-1: unknown) when stderr is a terminal, and
// the table's header in text output. stop ends the run early.
func (a *app) newIPsRun(lines *addrReader, total int64, failed, unknown *addrList, stop func()) *ipsRun {
	r := &ipsRun{a: a, lines: lines, total: total, failed: failed, unknown: unknown, stop: stop}
	if a.showProgress() {
		r.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(a.progress),
			progressbar.OptionSetDescription("looking up"),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(50*time.Millisecond),
			progressbar.OptionSetSpinnerChangeInterval(0), // no spinner goroutine
		)
	}
	switch {
	case a.csv():
		r.csvRows = newCSVTable(a.env.stdout, ipCSVHeader...)
	case !a.json():
		r.rows = newTable(a.env.stdout)
		r.rows.row(ipHeader...)
	}
	return r
}

// handle takes one result: it counts it, reports a failure, writes the
// address where its outcome says, and advances the progress bar.
func (r *ipsRun) handle(res synthient.BulkResult, err error) {
	if res.Index < 0 { // the SDK refused its parameters: nothing was read
		r.sdkErr = err
		return
	}
	line := r.lines.answered()
	r.tally.add(res)
	r.track(res, err, line)
	r.file(res, line)
	if r.bar != nil {
		r.bar.Add(1)
	}
}

// file writes the address of res where its outcome says: a looked-up one
// on stdout, one safe to send again in --failed, an unknown one in
// --unknown. A duplicate is written nowhere: its first occurrence was.
// line is the input line of res.
func (r *ipsRun) file(res synthient.BulkResult, line int64) {
	switch {
	case res.Duplicate:
	case res.Outcome == synthient.LookedUp:
		r.print(res, line)
	case res.Outcome == synthient.NotSent, res.Outcome == synthient.Rejected:
		r.failed.add(res.IP)
	case res.Outcome == synthient.Unknown:
		r.unknown.add(res.IP)
	}
}

// print writes the lookup of res, from input line, on stdout: a text
// row (the table is flushed as each request's rows begin, its columns
// aligned within them), a CSV row (flushed at once) or a JSON document. A
// failure of --jq or --template on it is reported and the run goes on
// (app.tolerate); the first other error stops the run: the results after
// it would be lost.
func (r *ipsRun) print(res synthient.BulkResult, line int64) {
	if r.printErr != nil {
		return
	}
	var err error
	switch {
	case r.rows != nil:
		if res.Credits > 0 && r.pending > 0 { // the first result of a request
			err, r.pending = r.rows.flush(), 0
		}
		r.rows.row(ipRow(res.Lookup)...)
		r.pending++
	case r.csvRows != nil:
		if err = r.csvRows.row(ipCSVRow(res.Lookup)...); err == nil {
			err = r.csvRows.flush()
		}
	default:
		err = r.a.tolerate(r.a.emit(res.Lookup), "line", line)
	}
	if err != nil {
		r.printErr = err
		r.stop()
	}
}

// track gathers the failed addresses into runs of the same outcome and
// error, and reports each run once it ends. An invalid line or a
// duplicate does not end a run.
func (r *ipsRun) track(res synthient.BulkResult, err error, line int64) {
	switch {
	case res.Duplicate || res.Outcome == synthient.Invalid:
		return
	case res.Outcome == synthient.LookedUp:
		r.reportGroup()
		return
	case !r.group.extends(res.Outcome, err):
		r.reportGroup()
		r.group = failureGroup{outcome: res.Outcome, err: err, first: line}
	}
	r.group.n++
	r.group.last = line
}

// reportGroup reports the run of failed addresses gathered, if any, as
// one line on stderr: its input lines, its count, what its outcome means
// and the request's error; the addresses themselves are in the files.
func (r *ipsRun) reportGroup() {
	g := &r.group
	if g.n == 0 || r.a.quiet {
		*g = failureGroup{}
		return
	}
	lines := fmt.Sprintf("lines %d-%d", g.first, g.last)
	if g.first == g.last {
		lines = fmt.Sprintf("line %d", g.first)
	}
	fmt.Fprintf(r.a.env.stderr, "synthient: %s: %s %s: %s\n",
		lines, plural(g.n, "address", "addresses"), r.outcomeText(g.outcome), r.a.describe(g.err))
	*g = failureGroup{}
}

// outcomeText says what an outcome other than LookedUp and Invalid means
// for the user, and where its addresses went.
func (r *ipsRun) outcomeText(o synthient.BulkOutcome) string {
	switch o {
	case synthient.NotSent:
		return "not sent, safe to send again" + r.failed.hint()
	case synthient.Rejected:
		return "rejected without a charge, safe to send again once the cause is fixed" + r.failed.hint()
	}
	return "possibly charged (the request may have been processed); do not resend blindly" + r.unknown.hint()
}

// drain accounts for the lines the input had already delivered when the
// run was stopped (cause: why), which the SDK did not read: an address is
// not sent, and goes to --failed.
func (r *ipsRun) drain(cause error) {
	for ip := range r.lines.buffered() {
		res := synthient.BulkResult{IP: ip, Outcome: synthient.NotSent}
		if !ip.IsValid() {
			res.Outcome = synthient.Invalid
		}
		r.tally.add(res)
		r.track(res, cause, r.lines.line)
		r.file(res, r.lines.line)
		if r.bar != nil {
			r.bar.Add(1)
		}
	}
}

// finish reports the last failures, ends the output, closes the files,
// prints the summary (stopped: the run was stopped before the input
// ended), and returns the command's outcome, first of: an interrupt
// (ctx), an error of the SDK, a failure to read the input, to write
// stdout or a file, and the addresses not looked up (see ipsTally.err).
func (r *ipsRun) finish(ctx context.Context, stopped bool) error {
	r.reportGroup()
	if err := r.flushRows(); err != nil && r.printErr == nil {
		r.printErr = err
	}
	r.endBar(stopped)
	fileErr := errors.Join(r.failed.close(), r.unknown.close())
	r.printSummary(stopped)
	for _, err := range []error{ctx.Err(), r.sdkErr, r.lines.end(), r.printErr, fileErr} {
		if err != nil {
			return err
		}
	}
	if err := r.tally.err(r.failed, r.unknown, r.a.invalidWhere()); err != nil {
		return err
	}
	r.a.invalidNote(r.tally.invalid)
	return r.a.shapeFailuresError("results")
}

// flushRows ends the text or CSV output.
func (r *ipsRun) flushRows() error {
	switch {
	case r.rows != nil:
		return r.rows.flush()
	case r.csvRows != nil:
		return r.csvRows.flush()
	}
	return nil
}

// endBar leaves the progress bar on a line of its own. Once the input
// ended, a bar of an unknown total learns it, and shows 100%.
func (r *ipsRun) endBar(stopped bool) {
	if r.bar == nil {
		return
	}
	if n := r.tally.total(); !stopped && n > 0 && r.total < 0 {
		r.bar.ChangeMax64(n)
		r.bar.Finish()
	}
	r.bar.Exit()
	fmt.Fprintln(r.a.progress)
}

// printSummary prints the counts on stderr and, for a run stopped early,
// the last line read.
func (r *ipsRun) printSummary(stopped bool) {
	if r.a.quiet {
		return
	}
	fmt.Fprintln(r.a.env.stderr, "synthient: "+r.tally.summary())
	if stopped {
		fmt.Fprintf(r.a.env.stderr, "synthient: stopped after line %d of the input: every address up to it is counted above; the lines after it were not read\n", r.lines.line)
	}
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
// belongs to the group. Errors of the SDK are pointers: one request's
// addresses share its error.
func (g *failureGroup) extends(o synthient.BulkOutcome, err error) bool {
	return g.n > 0 && g.outcome == o && sameError(g.err, err)
}

// sameError reports whether a and b are the same error value, without
// comparing errors whose type is not comparable.
func sameError(a, b error) bool {
	if a == nil || b == nil || !reflect.TypeOf(a).Comparable() || reflect.TypeOf(a) != reflect.TypeOf(b) {
		return a == nil && b == nil
	}
	return a == b
}

// ipsTally counts the outcomes of a run. Each address line is counted
// once: a duplicate as a duplicate, whatever its first occurrence's
// outcome, every other address by its outcome.
type ipsTally struct {
	lookedUp, invalid, notSent, rejected, unknown, duplicates int64
	// credits is what the answered requests cost; maybeCredits what the
	// requests that may have been processed would have.
	credits, maybeCredits int64
}

// add counts res.
func (t *ipsTally) add(res synthient.BulkResult) {
	switch {
	case res.Duplicate:
		t.duplicates++
	case res.Outcome == synthient.LookedUp:
		t.lookedUp++
	case res.Outcome == synthient.Invalid:
		t.invalid++
	case res.Outcome == synthient.NotSent:
		t.notSent++
	case res.Outcome == synthient.Rejected:
		t.rejected++
	case res.Outcome == synthient.Unknown:
		t.unknown++
	}
	switch res.Outcome {
	case synthient.LookedUp:
		t.credits += int64(res.Credits)
	case synthient.Unknown:
		t.maybeCredits += int64(res.Credits)
	}
}

// total is the address lines counted.
func (t *ipsTally) total() int64 {
	return t.lookedUp + t.invalid + t.notSent + t.rejected + t.unknown + t.duplicates
}

// summary is the one-line summary of the run.
func (t *ipsTally) summary() string {
	return fmt.Sprintf("%s read: %d looked up, %d invalid, %d not sent, %d rejected, %d unknown (possibly charged), %s; credits: %d spent, %d possibly spent",
		plural(t.total(), "address", "addresses"), t.lookedUp, t.invalid, t.notSent, t.rejected, t.unknown,
		plural(t.duplicates, "duplicate not sent again", "duplicates not sent again"), t.credits, t.maybeCredits)
}

// err is the run's error when not every address was looked up: exit 3
// when some failed (not sent, rejected or unknown), exit 2 when no line
// was an address at all (where says where the invalid lines are listed);
// nil when every address was looked up, invalid lines or not: those are
// reported on stderr and counted in the summary (see invalidNote).
func (t *ipsTally) err(failed, unknown *addrList, where string) error {
	var parts []string
	if n := t.notSent + t.rejected; n > 0 {
		parts = append(parts, plural(n, "address", "addresses")+" not looked up, safe to send again"+failed.hint())
	}
	if t.unknown > 0 {
		parts = append(parts, plural(t.unknown, "address", "addresses")+" possibly charged, do not resend blindly"+unknown.hint())
	}
	if len(parts) == 0 {
		return noAddressError(t.invalid, t.total(), where)
	}
	if t.invalid > 0 {
		parts = append(parts, plural(t.invalid, "line is not an IP address", "lines are not IP addresses")+where)
	}
	return &exitError{code: exitAPI, err: errors.New(strings.Join(parts, "; "))}
}

// noAddressError is the usage error (exit 2) of an input of which none
// of the total lines is an IP address (invalid of them are not); nil when
// some line is one, or the input is empty.
func noAddressError(invalid, total int64, where string) error {
	if invalid == 0 || invalid < total {
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("no line of the input is an IP address: %s%s",
		plural(invalid, "line is not one", "lines are not"), where)}
}

// invalidNote is the last line on stderr of a run, or dry run, that met
// invalid lines and otherwise succeeded, under --quiet: the lines are
// not listed, and the summary is not printed, but the count is.
func (a *app) invalidNote(invalid int64) {
	if a.quiet && invalid > 0 {
		fmt.Fprintf(a.env.stderr, "synthient: %s%s\n",
			plural(invalid, "line is not an IP address", "lines are not IP addresses"), a.invalidWhere())
	}
}

// invalidWhere says where the invalid lines are listed: above, on stderr,
// unless --quiet kept them off: then --dry-run, which costs nothing,
// lists them.
func (a *app) invalidWhere() string {
	if a.quiet {
		return " (lookup ips --dry-run lists them, without a charge)"
	}
	return " (listed above)"
}
