// Package account is the account command: the account, its scopes and
// lookup credits.
package account

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// Options are the options of account.
type Options struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
}

// NewCmdAccount returns account.
func NewCmdAccount(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "account",
		Short: "Show the account, its scopes and lookup credits",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer = f.Printer
			return run(cmd.Context(), opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient account", "synthient account --jq .lookup_quota.credits")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	acct, err := c.Account(ctx)
	if err != nil {
		return err
	}
	p := opts.Printer
	if p.JSON() {
		return p.Emit(acct)
	}
	return render.WriteAccount(p.Out, acct)
}
