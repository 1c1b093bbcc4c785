// Package health is the health command: the API's health, which needs no
// key.
package health

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// Options are the options of health.
type Options struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
}

// NewCmdHealth returns health.
func NewCmdHealth(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Check the API's health (no key needed)",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer = f.Printer
			f.SetKey("health-needs-no-key") // /health is sent without a key
			return run(cmd.Context(), opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient health")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	h, err := c.Health(ctx)
	if err != nil {
		return err
	}
	p := opts.Printer
	if p.JSON() {
		return p.Emit(h)
	}
	_, err = fmt.Fprintln(p.Out, textsafe.EscapeCell(h.Status)) // one line, whatever the server sent
	return err
}
