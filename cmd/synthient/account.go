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
				return a.emit(acct)
			}
			t := newTable(a.env.stdout)
			t.row("Name", strings.TrimSpace(acct.FirstName+" "+acct.LastName))
			t.row("Email", acct.Email)
			t.row("Organization", fmt.Sprintf("%s (%s, %s)", acct.Organization.Name, orDash(acct.Organization.Relation), orDash(acct.Organization.ID)))
			t.row("Scopes", list(acct.Scopes))
			t.row("Credits", strconv.FormatInt(acct.LookupQuota.Credits, 10))
			t.row("Credits reset in", humanDuration(acct.LookupQuota.ResetsInDuration()))
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
				return a.emit(h)
			}
			_, err = fmt.Fprintln(a.env.stdout, escapeCell(h.Status)) // one line, whatever the server sent
			return err
		},
	}
}

// humanDuration renders d as a person reads a wait, in its two largest
// units, rounded down: "30 days 10 hours", "5 hours", "1 minute 3
// seconds"; "now" under a second.
func humanDuration(d time.Duration) string {
	units := []struct {
		name string
		size time.Duration
	}{{"day", 24 * time.Hour}, {"hour", time.Hour}, {"minute", time.Minute}, {"second", time.Second}}
	for i, u := range units {
		if d < u.size {
			continue
		}
		n := d / u.size
		out := plural(int64(n), u.name, u.name+"s")
		if i+1 < len(units) {
			next := units[i+1]
			if m := (d - n*u.size) / next.size; m > 0 {
				out += " " + plural(int64(m), next.name, next.name+"s")
			}
		}
		return out
	}
	return "now"
}
