package lookup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/batch"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
)

// BulkOptions are the options of a bulk lookup: lookup ips, and lookup ip
// with many addresses.
type BulkOptions struct {
	IO     *iostreams.IOStreams
	Batch  *batch.Config
	Client func(...synthient.Option) (*synthient.Client, error)
	// HasKey reports whether a key is configured, for the dry run's
	// credits left.
	HasKey func() bool

	Command string // "lookup ips" or "lookup ip", for messages
	// KeyFromStdin reports --api-key-file -: stdin holds the key, and
	// cannot hold the addresses too.
	KeyFromStdin bool
	Addrs        []string // the addresses given as arguments, in place of File
	File         string   // a file of addresses; "-" for stdin

	Failed, Unknown, Journal string
	Concurrency, BatchSize   int
	KeepDuplicates, DryRun   bool
	ResendUnknown            bool
	// NeedsAddress refuses an input with no address line at all (empty,
	// or only comments) as a usage error, where lookup ip and lookup ips
	// succeed: synthient lookup, which acts on whatever is piped in.
	NeedsAddress bool
	// MaxCredits is --max-credits: the run's credit budget.
	MaxCredits cmdutil.MaxCredits
}

// addBulkFlags adds the flags of a bulk lookup to fs, bound to o.
func addBulkFlags(fs *pflag.FlagSet, o *BulkOptions) {
	fs.IntVar(&o.Concurrency, "concurrency", synthient.DefaultBulkConcurrency,
		fmt.Sprintf("requests in flight at once, 1 to %d", synthient.MaxBulkConcurrency))
	fs.IntVar(&o.BatchSize, "batch-size", synthient.MaxBatchSize,
		fmt.Sprintf("addresses per request, 1 to %d", synthient.MaxBatchSize))
	fs.BoolVar(&o.KeepDuplicates, "keep-duplicates", false, "send and print every occurrence of a repeated address (each is charged)")
	fs.StringVar(&o.Failed, "failed", "", "write the addresses safe to send again (not sent or rejected) to this file")
	fs.StringVar(&o.Unknown, "unknown", "", "write the addresses that may have been processed and charged to this file")
	fs.StringVar(&o.Journal, "journal", "", "record the run in this file, and resume from it: what it holds as looked up is not sent again")
	fs.BoolVar(&o.ResendUnknown, "resend-unknown", false, "with --journal: send again the addresses it holds as possibly charged")
	fs.BoolVar(&o.DryRun, "dry-run", false, "check the input and print the requests and credits it would take; look nothing up")
	cmdutil.AddMaxCredits(fs, &o.MaxCredits)
}

// bulkFlags are the names of the flags addBulkFlags adds.
var bulkFlags = []string{"concurrency", "batch-size", "keep-duplicates", "failed", "unknown", "journal", "resend-unknown", "dry-run"}

// setInput takes the arguments of a bulk lookup: addresses, "-" alone for
// stdin, or none, which reads stdin when it is not a terminal.
func (o *BulkOptions) setInput(args []string, usage string) error {
	o.Addrs = args
	switch {
	case len(args) == 1 && args[0] == "-":
		o.File, o.Addrs = "-", nil
	case slices.Contains(args, "-"):
		return clierr.Usagef("- reads the addresses from stdin: give it alone, not with addresses")
	case len(args) == 0 && o.File == "" && o.IO.StdinIsTerminal():
		return &clierr.Error{Code: clierr.Usage, Hint: true, Err: fmt.Errorf("%s needs addresses: %s, or pipe them in", o.Command, usage)}
	case len(args) == 0 && o.File == "":
		o.File = "-"
	}
	if o.KeyFromStdin && o.File == "-" {
		return clierr.Usagef("--api-key-file - and the addresses cannot both come from stdin")
	}
	return nil
}

// check refuses addresses with --file, an address argument that holds a
// line break, a --concurrency or --batch-size out of range, two of
// --failed, --unknown and --journal naming the same file, and the flags
// that do not go with --journal.
func (o *BulkOptions) check() error {
	for _, check := range []func() error{o.checkInput, o.checkSizes, o.checkJournal, o.checkFiles} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkInput refuses addresses with --file, and an address argument that
// holds a line break or names a file.
func (o *BulkOptions) checkInput() error {
	switch {
	case o.File != "" && len(o.Addrs) > 0:
		return clierr.Usagef("%s takes addresses or --file, not both", o.Command)
	case slices.ContainsFunc(o.Addrs, func(s string) bool { return strings.ContainsAny(s, "\r\n") }):
		return clierr.Usagef("an address argument holds a line break: give one address per argument")
	case slices.ContainsFunc(o.Addrs, isFile):
		return fileArg(o.Command, o.Addrs[slices.IndexFunc(o.Addrs, isFile)])
	}
	return nil
}

// checkSizes refuses a --concurrency or a --batch-size out of range.
func (o *BulkOptions) checkSizes() error {
	switch {
	case o.Concurrency < 1 || o.Concurrency > synthient.MaxBulkConcurrency:
		return clierr.Usagef("--concurrency must be 1 to %d, not %d", synthient.MaxBulkConcurrency, o.Concurrency)
	case o.BatchSize < 1 || o.BatchSize > synthient.MaxBatchSize:
		return clierr.Usagef("--batch-size must be 1 to %d, not %d", synthient.MaxBatchSize, o.BatchSize)
	}
	return nil
}

// checkJournal refuses --resend-unknown without --journal, and
// --journal with --keep-duplicates.
func (o *BulkOptions) checkJournal() error {
	switch {
	case o.ResendUnknown && o.Journal == "":
		return clierr.Usagef("--resend-unknown sends again what --journal holds as possibly charged: give --journal FILE")
	case o.Journal != "" && o.KeepDuplicates:
		return clierr.Usagef("--journal records each address once: it cannot be combined with --keep-duplicates")
	}
	return nil
}

// checkFiles refuses two of --failed, --unknown and --journal that name
// the same file.
func (o *BulkOptions) checkFiles() error {
	files := []struct{ flag, name string }{{"--failed", o.Failed}, {"--unknown", o.Unknown}, {"--journal", o.Journal}}
	for i, a := range files {
		for _, b := range files[i+1:] {
			if a.name != "" && b.name != "" && batch.SameFile(a.name, b.name) {
				return clierr.Usagef("%s %s and %s %s are the same file: name two files", a.flag, a.name, b.flag, b.name)
			}
		}
	}
	return nil
}

// params are the SDK's parameters for the flags.
func (o *BulkOptions) params() *synthient.BulkParams {
	return &synthient.BulkParams{Concurrency: o.Concurrency, BatchSize: o.BatchSize, KeepDuplicates: o.KeepDuplicates}
}

// bulkRun runs a bulk lookup in its steps: open the input, refuse an
// output file that is the input or stdout's file, open the journal, then
// either plan the run (--dry-run) or run it.
func bulkRun(ctx context.Context, o *BulkOptions) error {
	in, closeIn, err := openInput(ctx, o)
	if err != nil {
		return err
	}
	defer closeIn()
	if err := o.checkOutputs(in); err != nil {
		return err
	}
	if o.DryRun {
		o.terminalNote()
		return planRun(ctx, o, in)
	}
	c, err := o.Client(o.MaxCredits.Options()...)
	if err != nil {
		return err
	}
	total, err := countForBar(in, o.Batch.Bar != nil)
	if err != nil {
		return err
	}
	if o.Batch.Journal, err = openJournal(o.Journal); err != nil {
		return err
	}
	failed, unknown, err := batch.CreateLists(ctx, o.Failed, o.Unknown)
	if err != nil {
		if o.Batch.Journal != nil {
			// Nothing was written to it but what Open wrote and synced:
			// the lists' error is the one to report.
			_ = o.Batch.Journal.Close()
		}
		return err
	}
	o.Batch.ResendUnknown = o.ResendUnknown
	o.terminalNote()
	return o.Batch.Run(ctx, c, batch.Input{R: in, Total: total}, o.params(), failed, unknown)
}

// terminalNote says, before the addresses are read from stdin on a
// terminal (lookup ip -), that they are read until the end of the input,
// which a terminal gives with Ctrl-D: until then the command waits for
// more (a request takes up to --batch-size of them), and says nothing.
func (o *BulkOptions) terminalNote() {
	if o.File == "-" && o.IO.StdinIsTerminal() && !o.Batch.Quiet {
		_, _ = fmt.Fprintln(o.Batch.Err, "synthient: reading addresses from the terminal until the end of the input: "+
			"type them, one or more a line, then Ctrl-D (Ctrl-C stops)") // stderr: a failed write has nowhere to be reported
	}
}

// checkOutputs refuses an output file (--failed, --unknown, --journal)
// that is the input (in), or the file stdout or stderr writes to.
func (o *BulkOptions) checkOutputs(in io.Reader) error {
	for _, out := range []struct{ flag, name string }{{"--failed", o.Failed}, {"--unknown", o.Unknown}, {"--journal", o.Journal}} {
		err := batch.CheckNotInput(out.flag, out.name, in)
		if err == nil {
			err = batch.CheckNotStdStreams(out.flag, out.name, o.IO.RawOut, o.IO.RawErr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// openJournal opens the journal path for a run (nil for ""). A journal
// that cannot be used is a usage error.
func openJournal(path string) (*journal.Journal, error) {
	if path == "" {
		return nil, nil
	}
	return journalUsage(journal.Open(path))
}

// readJournal reads the journal path for a dry run, which changes
// nothing on disk: nil for "" or a journal that does not exist.
func readJournal(path string) (*journal.Journal, error) {
	if path == "" {
		return nil, nil
	}
	j, err := journal.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return journalUsage(j, err)
}

// journalUsage returns j, or err as a usage error: a journal that cannot
// be used.
func journalUsage(j *journal.Journal, err error) (*journal.Journal, error) {
	if err == nil {
		return j, nil
	}
	var je *journal.Error
	if errors.As(err, &je) {
		return nil, clierr.New(clierr.Usage, err)
	}
	return nil, clierr.Usagef("--journal: %v", err)
}

// openInput opens the input of a bulk lookup: the addresses given as
// arguments, one per line; stdin for "-"; else the file, which the
// returned func closes (for the others it does nothing).
func openInput(ctx context.Context, o *BulkOptions) (io.Reader, func(), error) {
	switch {
	case len(o.Addrs) > 0:
		return strings.NewReader(strings.Join(o.Addrs, "\n") + "\n"), func() {}, nil
	case o.File == "-":
		return o.IO.In, func() {}, nil
	}
	f, err := openInterruptible(ctx, o.File)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { _ = f.Close() }, nil // opened read-only: closing it loses nothing
}

// countForBar returns the number of addresses of the input, for the
// progress bar (bar), when the input can be read twice: the addresses
// given as arguments, or a regular file (see addrinput.Count); else -1,
// unknown.
func countForBar(in io.Reader, bar bool) (int64, error) {
	rs, ok := in.(io.ReadSeeker)
	if !ok || !bar {
		return -1, nil
	}
	return addrinput.Count(rs)
}

// openInterruptible opens the file name for reading, which blocks for a
// named pipe until a writer opens it, unless ctx is done first. A file
// that cannot be opened is a usage error.
func openInterruptible(ctx context.Context, name string) (*os.File, error) {
	return interrupt.Do(ctx, func() (*os.File, error) {
		f, err := os.Open(name) //nolint:gosec // the input the user named (--file): reading it is the point
		if err != nil {
			return nil, clierr.Usagef("%v", err)
		}
		return f, nil
	}, func(f *os.File) { _ = f.Close() }) // opened read-only, and abandoned: closing it loses nothing
}

// newBulkOptions returns the options of a bulk lookup of f's command line.
func newBulkOptions(f *cmdutil.Factory, command string) *BulkOptions {
	return &BulkOptions{Client: f.Client, HasKey: f.HasKey, Command: command}
}

// ready sets what the options take from f once the flags are parsed.
func (o *BulkOptions) ready(f *cmdutil.Factory) {
	o.IO, o.Batch, o.KeyFromStdin = f.IO, batchConfig(f), f.Flags.APIKeyFile == "-"
	if o.NeedsAddress {
		o.Batch.NoAddress = &clierr.Error{Code: clierr.Usage, Hint: true, Err: fmt.Errorf(
			"synthient %s read no address: give addresses (synthient %s 8.8.8.8 1.1.1.1), or pipe them in", o.Command, o.Command)}
	}
}

// batchConfig is how a bulk lookup of f's command line prints.
func batchConfig(f *cmdutil.Factory) *batch.Config {
	cfg := &batch.Config{Printer: f.Printer, Err: f.IO.ErrOut, Quiet: f.Flags.Quiet, Describe: f.Describe, Secrets: f.Secrets, Stdout: f.IO.RawOut}
	if f.ShowProgress() {
		cfg.Bar = f.IO.Progress
	}
	return cfg
}

// isFile reports whether the argument arg, given for an address, is not
// one and names a file: the user meant --file.
func isFile(arg string) bool {
	if _, err := netip.ParseAddr(strings.TrimSpace(arg)); err == nil {
		return false
	}
	fi, err := os.Stat(arg)
	return err == nil && !fi.IsDir()
}

// fileArg is the usage error for the argument name of command, a file
// given where addresses go.
func fileArg(command, name string) error {
	return clierr.Usagef("%q is a file, not an IP address: read it with synthient lookup ips --file %s (or synthient %s - < %s)",
		name, name, command, name)
}
