package lookup

import (
	"context"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// IPOptions are the options of lookup ip with one address and none of the
// bulk flags.
type IPOptions struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
	Addr    netip.Addr
	// MaxCredits is --max-credits: the lookup's credit budget.
	MaxCredits cmdutil.MaxCredits
}

// NewCmdIP returns lookup ip: one address, looked up alone (a detailed
// view), or many, looked up as lookup ips does. runF and bulkF, when not
// nil, run in place of the command's own run functions, given the
// options once they are parsed and checked.
func NewCmdIP(f *cmdutil.Factory, runF func(context.Context, *IPOptions) error, bulkF func(context.Context, *BulkOptions) error) *cobra.Command {
	ip := newIPRunner(f, "lookup ip", runF, bulkF)
	cmd := &cobra.Command{
		Use:   "ip [ADDR... | -]",
		Short: "Look up IP addresses (1 credit each; 0.9 in batches)",
		Long: `Look up IP addresses. One address, and none of the flags of a bulk lookup,
is looked up alone and printed in full; any other is a bulk lookup, as
lookup ips makes it.

` + bulkHelp,
		Args: cobra.ArbitraryArgs,
		RunE: ip.run,
	}
	addBulkFlags(cmd.Flags(), ip.bulk)
	cmdutil.SetExamples(cmd, "synthient lookup ip 8.8.8.8", "synthient lookup ip 2001:4860:4860::8888 -o json",
		"synthient lookup ip 8.8.8.8 --jq .network.asn", "synthient lookup ip 1.1.1.1 8.8.8.8 9.9.9.9")
	return cmd
}

// ipRunner runs lookup ip, and the lookup group given addresses, which
// acts as lookup ip: one address alone, many (or stdin) as a bulk lookup.
type ipRunner struct {
	f     *cmdutil.Factory
	opts  *IPOptions
	bulk  *BulkOptions
	usage string // the arguments, for the error of a command without any
	runF  func(context.Context, *IPOptions) error
	bulkF func(context.Context, *BulkOptions) error
}

// newIPRunner returns the runner of command ("lookup ip"), whose own run
// functions runF and bulkF replace when not nil.
func newIPRunner(f *cmdutil.Factory, command string, runF func(context.Context, *IPOptions) error, bulkF func(context.Context, *BulkOptions) error) *ipRunner {
	return &ipRunner{f: f, opts: &IPOptions{Client: f.Client}, bulk: newBulkOptions(f, command),
		usage: "ADDR... or - (stdin)", runF: runF, bulkF: bulkF}
}

// run runs the command line cmd was given, args its arguments; cmd holds
// the bulk flags.
func (r *ipRunner) run(cmd *cobra.Command, args []string) error {
	if len(args) == 1 && args[0] != "-" && !anyChanged(cmd, bulkFlags) {
		ip, err := parseAddr(args[0])
		if err != nil {
			return err
		}
		r.opts.Printer, r.opts.Addr, r.opts.MaxCredits = r.f.Printer, ip, r.bulk.MaxCredits
		if r.runF != nil {
			return r.runF(cmd.Context(), r.opts)
		}
		return ipRun(cmd.Context(), r.opts)
	}
	bulk := r.bulk
	bulk.ready(r.f)
	if err := bulk.setInput(args, r.usage); err != nil {
		return err
	}
	if err := bulk.check(); err != nil {
		return err
	}
	if r.bulkF != nil {
		return r.bulkF(cmd.Context(), bulk)
	}
	return bulkRun(cmd.Context(), bulk)
}

// anyChanged reports whether any of the flags names was given to cmd.
func anyChanged(cmd *cobra.Command, names []string) bool {
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

// parseAddr parses the address of lookup ip ADDR; one that is not an IP
// address is a usage error, which points to --file when it names a file.
func parseAddr(arg string) (netip.Addr, error) {
	ip, err := netip.ParseAddr(strings.TrimSpace(arg))
	switch {
	case err == nil:
		return ip, nil
	case isFile(arg):
		return netip.Addr{}, fileArg("lookup ip", arg)
	}
	return netip.Addr{}, clierr.Usagef("%q is not an IP address", arg)
}

func ipRun(ctx context.Context, opts *IPOptions) error {
	c, err := opts.Client(opts.MaxCredits.Options()...)
	if err != nil {
		return err
	}
	r, err := c.LookupIP(ctx, opts.Addr)
	if err != nil {
		return err
	}
	p := opts.Printer
	switch {
	case p.JSON():
		return p.Emit(r)
	case p.CSV():
		return render.WriteCSV(p.Out, render.IPCSVHeader, render.IPCSVRow(r))
	}
	return render.WriteIPLookup(p.Out, r)
}
