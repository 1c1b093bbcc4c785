package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) accountCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "account",
		Short: "Show the account, its scopes and lookup credits",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.newClient()
			if err != nil {
				return err
			}
			acct, err := c.Account(cmd.Context())
			if err != nil {
				return err
			}
			if a.json() {
				return writeJSON(a.env.stdout, acct)
			}
			t := newTable(a.env.stdout)
			t.row("Name", strings.TrimSpace(acct.FirstName+" "+acct.LastName))
			t.row("Email", acct.Email)
			t.row("Organization", fmt.Sprintf("%s (%s, %s)", acct.Organization.Name, orDash(acct.Organization.Relation), orDash(acct.Organization.ID)))
			t.row("Scopes", list(acct.Scopes))
			t.row("Credits", strconv.FormatInt(acct.LookupQuota.Credits, 10))
			t.row("Credits reset in", acct.LookupQuota.ResetsInDuration().String())
			if k := acct.APIKey; k != nil {
				t.row("API key", fmt.Sprintf("%s (%s, created %s)", k.Name, k.ID, k.CreatedAt.UTC().Format(time.DateOnly)))
			}
			return t.flush()
		},
	}
}

func (a *app) healthCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Check the API's health (no key needed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.key == "" && !a.fake {
				a.key = "health-needs-no-key" // /health is sent without a key
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			h, err := c.Health(cmd.Context())
			if err != nil {
				return err
			}
			if a.json() {
				return writeJSON(a.env.stdout, h)
			}
			_, err = fmt.Fprintln(a.env.stdout, escapeCell(h.Status)) // one line, whatever the server sent
			return err
		},
	}
}
