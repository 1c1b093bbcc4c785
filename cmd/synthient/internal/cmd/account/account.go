// Package account is the account command: the account, its scopes and
// lookup credits.
package account

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	t := render.NewTable(p.Out)
	t.Row("Name", strings.TrimSpace(acct.FirstName+" "+acct.LastName))
	t.Row("Email", acct.Email)
	t.Row("Organization", fmt.Sprintf("%s (%s, %s)", acct.Organization.Name, render.OrDash(acct.Organization.Relation), render.OrDash(acct.Organization.ID)))
	t.Row("Scopes", render.List(acct.Scopes))
	t.Row("Credits", strconv.FormatInt(acct.LookupQuota.Credits, 10))
	t.Row("Credits reset in", render.HumanDuration(acct.LookupQuota.ResetsInDuration()))
	if k := acct.APIKey; k != nil {
		t.Row("API key", fmt.Sprintf("%s (%s, created %s)", k.Name, k.ID, k.CreatedAt.UTC().Format(time.DateOnly)))
	}
	return t.Flush()
}
