package lookup

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// DomainOptions are the options of lookup domain.
type DomainOptions struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
	Domain  string
	Limit   int
	// MaxCredits is --max-credits: the lookup's credit budget.
	MaxCredits cmdutil.MaxCredits
}

// NewCmdDomain returns lookup domain.
func NewCmdDomain(f *cmdutil.Factory) *cobra.Command {
	opts := &DomainOptions{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "domain NAME",
		Short: "Look up a domain's honeypot intelligence (1 credit)",
		Args:  cmdutil.ExactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Domain = f.Printer, args[0]
			if err := cmdutil.CheckLimit(cmd, opts.Limit, 1000); err != nil {
				return err
			}
			return domainRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "recent events to return, 1 to 1000 (default: the API's, 50)")
	cmdutil.AddMaxCredits(cmd.Flags(), &opts.MaxCredits)
	cmdutil.SetExamples(cmd, "synthient lookup domain example.com", "synthient lookup domain example.com --limit 10 -o json")
	return cmd
}

func domainRun(ctx context.Context, opts *DomainOptions) error {
	c, err := opts.Client(opts.MaxCredits.Options()...)
	if err != nil {
		return err
	}
	r, err := c.LookupDomain(ctx, opts.Domain, &synthient.DomainLookupParams{Limit: opts.Limit})
	if err != nil {
		return err
	}
	p := opts.Printer
	switch {
	case p.JSON():
		return p.Emit(r)
	case p.CSV():
		return render.WriteCSV(p.Out, render.DomainCSVHeader, render.DomainCSVRow(r))
	}
	return render.WriteDomain(p.Out, r)
}
