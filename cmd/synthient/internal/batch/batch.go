// Package batch runs a bulk lookup for the command line: it hands the
// input's addresses to the SDK's LookupIPsAll, prints each looked-up
// address as its answer comes, files the others in --failed or
// --unknown, reports failed requests on stderr and ends with a summary
// that accounts for every address line.
package batch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// Config is how a run prints.
type Config struct {
	// Printer prints the results on stdout.
	Printer *output.Printer
	// Err is stderr: invalid lines, failure reports, the summary.
	Err   io.Writer
	Quiet bool // print nothing on Err but the final error
	// Describe renders an error as one line.
	Describe func(error) string
	// Bar is where the progress bar draws; nil for none.
	Bar io.Writer
	// Secrets are redacted from the invalid lines reported.
	Secrets *redact.Redactor
	// Journal, when not nil, records the run as it goes, and settles the
	// addresses an earlier run looked up (see package journal); Run
	// closes it.
	Journal *journal.Journal
	// ResendUnknown sends again the addresses the journal holds as
	// possibly charged; without it they go to --unknown unsent.
	ResendUnknown bool
	// Stdout is stdout as it is: a run with a journal that appends to a
	// file a killed run left in the middle of a line starts a new line,
	// and prints no CSV header where the file has one.
	Stdout io.Writer
	// NoAddress, when not nil, is the error of a run whose input held no
	// address line at all (empty, or only comments), which is otherwise
	// a success.
	NoAddress error
}

// Input is the addresses of a run: the reader of their lines, and how
// many address lines it has, for the progress bar (-1: unknown).
type Input struct {
	R     io.Reader
	Total int64
}

// Run looks up the addresses of in with c and p, printing as it goes (see
// the package comment), and returns the run's outcome: first of an
// interrupt (ctx), an error of the SDK, a failure to read the input, to
// write stdout or a file, and the addresses not looked up (exit 3), or no
// address at all (exit 2). A write error on stdout stops the run as an
// interrupt would, so that no more credits are spent for output that is
// lost. failed and unknown are closed.
func (cfg *Config) Run(ctx context.Context, c *synthient.Client, in Input, p *synthient.BulkParams, failed, unknown *List) error {
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	lines := addrinput.NewReader(runCtx, in.R, cfg.ReportInvalid)
	defer lines.Close()
	r := cfg.newRun(lines, in.Total, failed, unknown, stop)
	r.stopReason = func() error {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return context.Cause(runCtx)
	}
	params := *p
	params.BeforeSend = r.beforeSend
	if r.jr != nil {
		if err := endTornLine(cfg.Stdout); err != nil {
			// Nothing was sent, nor written to the files: the error
			// is the one to report.
			_, _, _ = failed.Close(), unknown.Close(), r.jr.close()
			return err
		}
		cfg.journalNote()
		lines.Skip = r.jr.skip
	}
	for res, err := range c.LookupIPsAll(runCtx, lines.Addrs(), &params) {
		r.handle(res, err)
	}
	r.skippedTail()
	stopped := runCtx.Err() != nil
	if stopped {
		r.drain(r.stopReason())
	}
	return r.finish(ctx, stopped)
}

// endTornLine writes a newline to out when it is a regular file that
// does not end with one: a run killed while it wrote a result leaves part
// of a line (its address is possibly charged, and the journal says so),
// and the results of the run that resumes it, appended, must not join it.
// A newline that cannot be written is an error: the results would join
// the torn line, or be lost with it, and credits would be spent for them.
func endTornLine(out io.Writer) error {
	f, size := regularFile(out)
	if f == nil || size == 0 {
		return nil
	}
	last := make([]byte, 1)
	if !readAt(f, last, size-1) {
		return nil // its end cannot be read: the results' writes report its errors
	}
	if last[0] != '\n' {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			return fmt.Errorf("ending the torn last line of stdout: %w", err)
		}
	}
	return nil
}

// csvHeaderDue reports whether a CSV run with a journal prints the header
// (with its first row): once per journal. When stdout is a regular file
// (>> results.csv), the header is due unless the file begins with it;
// else (a pipe) unless the journal holds addresses looked up, which an
// earlier run printed after the header.
func (cfg *Config) csvHeaderDue() bool {
	line := render.CSVLine(render.IPCSVHeader...)
	if f, size := regularFile(cfg.Stdout); f != nil {
		head := make([]byte, len(line))
		return size < int64(len(line)) || !readAt(f, head, 0) || !bytes.Equal(head, line)
	}
	lookedUp, _, _ := cfg.Journal.Counts()
	return lookedUp == 0
}

// regularFile returns out and its size when it is a regular file; nil
// when it is not, or cannot be checked.
func regularFile(out io.Writer) (*os.File, int64) {
	f, ok := out.(*os.File)
	if !ok {
		return nil, 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, 0
	}
	return f, fi.Size()
}

// readAt reads len(p) bytes of f at off, and reports whether it could. A
// file opened for writing only (>>) is read anew, where the system has a
// name for the descriptor (Linux).
func readAt(f *os.File, p []byte, off int64) bool {
	if _, err := f.ReadAt(p, off); err == nil {
		return true
	}
	r, err := os.Open("/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10))
	if err != nil {
		return false
	}
	defer r.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	_, err = r.ReadAt(p, off)
	return err == nil
}

// journalNote says, before a run with a journal, what the journal holds
// from earlier runs, unless --quiet or it holds nothing.
func (cfg *Config) journalNote() {
	lookedUp, unknown, retry := cfg.Journal.Counts()
	if cfg.Quiet || lookedUp+unknown+retry == 0 && !cfg.Journal.Torn() {
		return
	}
	torn := ""
	if cfg.Journal.Torn() {
		torn = "; its last record was cut short (a crash while it was written) and is ignored"
	}
	resend := "not sent again, in --unknown"
	if cfg.ResendUnknown {
		resend = "sent again, as --resend-unknown asks"
	}
	_, _ = fmt.Fprintf(cfg.Err, "synthient: journal %s: from earlier runs, %s (not sent or printed again), %s (%s), %s%s\n",
		cfg.Journal.Path(), render.Plural(int64(lookedUp), "address looked up", "addresses looked up"),
		render.Plural(int64(unknown), "address possibly charged", "addresses possibly charged"), resend,
		render.Plural(int64(retry), "address to send again", "addresses to send again"), torn)
}

// ReportInvalid reports the line that is not an address on stderr, cut to
// 80 bytes after every substring shaped like a key and every secret in it
// was redacted (an API key in the wrong file, also inside a line such as
// "x-api-key: KEY").
func (cfg *Config) ReportInvalid(line int64, text string) {
	if cfg.Quiet {
		return
	}
	// The key shapes of this line are redacted here, where it is printed,
	// not added to the secrets every later line is searched for: a file of
	// key-shaped lines would make each line slower to print than the last.
	shown := render.Truncate(redact.ReplaceKeyShapes(cfg.Secrets.RedactString(text)), 80)
	_, _ = fmt.Fprintf(cfg.Err, "synthient: line %d: %q is not an IP address; not looked up\n", line, shown)
}

// InvalidNote is the last line on stderr of a run, or dry run, that met
// invalid lines and otherwise succeeded, under --quiet: the lines are not
// listed, and the summary is not printed, but the count is.
func (cfg *Config) InvalidNote(invalid int64) {
	if cfg.Quiet && invalid > 0 {
		_, _ = fmt.Fprintf(cfg.Err, "synthient: %s%s\n",
			render.Plural(invalid, "line is not an IP address", "lines are not IP addresses"), cfg.InvalidWhere())
	}
}

// InvalidWhere says where the invalid lines are listed: above, on stderr,
// unless --quiet kept them off: then --dry-run, which costs nothing,
// lists them.
func (cfg *Config) InvalidWhere() string {
	if cfg.Quiet {
		return " (lookup ips --dry-run lists them, without a charge)"
	}
	return " (listed above)"
}
