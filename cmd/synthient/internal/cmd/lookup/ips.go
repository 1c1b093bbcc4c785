package lookup

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/batch"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// IPsOptions are the options of lookup ips.
type IPsOptions struct {
	IO     *iostreams.IOStreams
	Batch  *batch.Config
	Client func(...synthient.Option) (*synthient.Client, error)
	// HasKey reports whether a key is configured, for the dry run's
	// credits left.
	HasKey func() bool

	File, Failed, Unknown  string
	Addrs                  []string // the addresses given as arguments, in place of --file
	Concurrency, BatchSize int
	KeepDuplicates, DryRun bool
}

// NewCmdIPs returns lookup ips. runF, when not nil, runs in place of the
// command's own run function.
func NewCmdIPs(f *cmdutil.Factory, runF func(context.Context, *IPsOptions) error) *cobra.Command {
	opts := &IPsOptions{Client: f.Client, HasKey: f.HasKey}
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
			opts.IO, opts.Addrs, opts.Batch = f.IO, args, batchConfig(f)
			if err := opts.check(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return ipsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.File, "file", "", `file of addresses, one per line ("-" for stdin)`)
	fl.IntVar(&opts.Concurrency, "concurrency", synthient.DefaultBulkConcurrency,
		fmt.Sprintf("requests in flight at once, 1 to %d", synthient.MaxBulkConcurrency))
	fl.IntVar(&opts.BatchSize, "batch-size", synthient.MaxBatchSize,
		fmt.Sprintf("addresses per request, 1 to %d", synthient.MaxBatchSize))
	fl.BoolVar(&opts.KeepDuplicates, "keep-duplicates", false, "send and print every occurrence of a repeated address (each is charged)")
	fl.StringVar(&opts.Failed, "failed", "", "write the addresses safe to send again (not sent or rejected) to this file")
	fl.StringVar(&opts.Unknown, "unknown", "", "write the addresses that may have been processed and charged to this file")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "check the input and print the requests and credits it would take; look nothing up")
	cmdutil.SetExamples(cmd, "synthient lookup ips 1.1.1.1 8.8.8.8", "synthient lookup ips --file addresses.txt --dry-run",
		"synthient lookup ips --file addresses.txt -o json --failed resend.txt --unknown check.txt", "synthient lookup ips --file addresses.txt -o csv")
	return cmd
}

// batchConfig is how a bulk lookup of f's command line prints.
func batchConfig(f *cmdutil.Factory) *batch.Config {
	cfg := &batch.Config{Printer: f.Printer, Err: f.IO.ErrOut, Quiet: f.Flags.Quiet, Describe: f.Describe, Secrets: f.Secrets}
	if f.ShowProgress() {
		cfg.Bar = f.IO.Progress
	}
	return cfg
}

// check refuses neither --file nor addresses (or both), a --concurrency
// or --batch-size out of range, and --failed and --unknown naming the same
// file.
func (o *IPsOptions) check() error {
	switch {
	case o.File == "" && len(o.Addrs) == 0:
		return clierr.Usagef("lookup ips needs addresses, or --file (use - for stdin)")
	case o.File != "" && len(o.Addrs) > 0:
		return clierr.Usagef("lookup ips takes addresses or --file, not both")
	case slices.ContainsFunc(o.Addrs, func(s string) bool { return strings.ContainsAny(s, "\r\n") }):
		return clierr.Usagef("an address argument holds a line break: give one address per argument")
	case o.Concurrency < 1 || o.Concurrency > synthient.MaxBulkConcurrency:
		return clierr.Usagef("--concurrency must be 1 to %d, not %d", synthient.MaxBulkConcurrency, o.Concurrency)
	case o.BatchSize < 1 || o.BatchSize > synthient.MaxBatchSize:
		return clierr.Usagef("--batch-size must be 1 to %d, not %d", synthient.MaxBatchSize, o.BatchSize)
	case o.Failed != "" && o.Unknown != "" && batch.SameFile(o.Failed, o.Unknown):
		return clierr.Usagef("--failed %s and --unknown %s are the same file: name two files", o.Failed, o.Unknown)
	}
	return nil
}

// params are the SDK's parameters for the flags.
func (o *IPsOptions) params() *synthient.BulkParams {
	return &synthient.BulkParams{Concurrency: o.Concurrency, BatchSize: o.BatchSize, KeepDuplicates: o.KeepDuplicates}
}

// ipsRun runs lookup ips in its steps: open the input, refuse an output
// file that is the input, then either plan the run (--dry-run) or run it.
func ipsRun(ctx context.Context, o *IPsOptions) error {
	in, closeIn, err := openInput(ctx, o)
	if err != nil {
		return err
	}
	defer closeIn()
	for _, out := range []struct{ flag, name string }{{"--failed", o.Failed}, {"--unknown", o.Unknown}} {
		if err := batch.CheckNotInput(out.flag, out.name, in); err != nil {
			return err
		}
	}
	if o.DryRun {
		return planRun(ctx, o, in)
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	total, err := countForBar(in, o.Batch.Bar != nil)
	if err != nil {
		return err
	}
	failed, unknown, err := batch.CreateLists(o.Failed, o.Unknown)
	if err != nil {
		return err
	}
	return o.Batch.Run(ctx, c, batch.Input{R: in, Total: total}, o.params(), failed, unknown)
}

// openInput opens the input of lookup ips: the addresses given as
// arguments, one per line; stdin for --file -; else the file, which the
// returned func closes (for the others it does nothing).
func openInput(ctx context.Context, o *IPsOptions) (io.Reader, func(), error) {
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
	return f, func() { f.Close() }, nil
}

// countForBar returns the number of address lines of the input, for the
// progress bar (bar), when the input is a regular file (see
// addrinput.Count); else -1, unknown.
func countForBar(in io.Reader, bar bool) (int64, error) {
	f, ok := in.(*os.File)
	if !ok || !bar {
		return -1, nil
	}
	return addrinput.Count(f)
}

// openInterruptible opens the file name for reading, which blocks for a
// named pipe until a writer opens it, unless ctx is done first. A file
// that cannot be opened is a usage error.
func openInterruptible(ctx context.Context, name string) (*os.File, error) {
	return interrupt.Do(ctx, func() (*os.File, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, clierr.Usagef("%v", err)
		}
		return f, nil
	}, func(f *os.File) { f.Close() })
}
