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

// IPOptions are the options of lookup ip.
type IPOptions struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
	Addr    string
}

// NewCmdIP returns lookup ip. runF, when not nil, runs in place of the
// command's own run function (for tests of its flags).
func NewCmdIP(f *cmdutil.Factory, runF func(context.Context, *IPOptions) error) *cobra.Command {
	opts := &IPOptions{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "ip ADDR",
		Short: "Look up one IP address (1 credit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Addr = f.Printer, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return ipRun(cmd.Context(), opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient lookup ip 8.8.8.8", "synthient lookup ip 2001:4860:4860::8888 -o json", "synthient lookup ip 8.8.8.8 --jq .network.asn")
	return cmd
}

func ipRun(ctx context.Context, opts *IPOptions) error {
	ip, err := netip.ParseAddr(strings.TrimSpace(opts.Addr))
	if err != nil {
		return clierr.Usagef("%q is not an IP address", opts.Addr)
	}
	c, err := opts.Client()
	if err != nil {
		return err
	}
	r, err := c.LookupIP(ctx, ip)
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
