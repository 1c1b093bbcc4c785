package auth

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// StatusOptions are the options of auth status.
type StatusOptions struct {
	Printer  *output.Printer
	Settings *cmdutil.Settings
	// BaseURL is the base URL in use, and BaseURLFrom where it came from.
	BaseURL, BaseURLFrom string
	// LoginCommand is this command line's auth login, for hints.
	LoginCommand string
	HasKey       func() bool
	Client       func(...synthient.Option) (*synthient.Client, error)
	Describe     func(error) string
}

// NewCmdStatus returns auth status.
func NewCmdStatus(f *cmdutil.Factory) *cobra.Command {
	opts := &StatusOptions{HasKey: f.HasKey, Client: f.Client, Describe: f.Describe}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the profile, the base URL and where the key comes from, and check the key",
		Long: `Show the profile in use and what chose it, config.toml, the base URL and where it
comes from, and where the API key comes from (never the key), then check the
key with the API (a free request of the account). Exit code 0 when the key
works, 1 without a key, 3 when the API refuses it, 4 when the API cannot be
reached.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer, opts.Settings = f.Printer, &f.Settings
			opts.BaseURL, opts.BaseURLFrom = f.BaseURLFrom()
			opts.LoginCommand = f.LoginCommand()
			return statusRun(cmd.Context(), opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient auth status", "synthient auth status -o json")
	return cmd
}

// status is what auth status says, as JSON.
type status struct {
	Profile     string         `json:"profile"`
	ProfileFrom string         `json:"profile_from"`
	Config      string         `json:"config,omitempty"`
	Profiles    []string       `json:"profiles"`
	BaseURL     string         `json:"base_url"`
	BaseURLFrom string         `json:"base_url_from"`
	KeyFrom     string         `json:"key_from,omitempty"`
	KeyHost     string         `json:"key_host,omitempty"`
	KeyRefused  string         `json:"key_refused,omitempty"`
	Ignored     []string       `json:"config_ignored,omitempty"`
	Account     *statusAccount `json:"account,omitempty"`
	Error       string         `json:"error,omitempty"`
	err         error          // the check's
	acct        *synthient.Account
}

type statusAccount struct {
	Email   string `json:"email"`
	Name    string `json:"name"`
	Credits int64  `json:"credits"`
}

func statusRun(ctx context.Context, o *StatusOptions) error {
	s := o.Settings
	st := status{Profile: s.Profile, ProfileFrom: s.ProfileFrom, Config: s.Config.Path, Profiles: s.Config.Names(),
		BaseURL: o.BaseURL, BaseURLFrom: o.BaseURLFrom, KeyFrom: s.KeyFrom, KeyHost: s.Kept.Host, Ignored: s.Config.Ignored}
	if s.KeyRefused != nil {
		st.KeyRefused = s.KeyRefused.Error()
	}
	if st.ProfileFrom == "" {
		st.ProfileFrom = "built in"
	}
	if o.HasKey() {
		st.check(ctx, o)
	}
	if err := o.print(&st); err != nil {
		return err
	}
	switch {
	case !o.HasKey() && s.KeyRefused != nil:
		return clierr.New(clierr.Failure, s.KeyRefused)
	case !o.HasKey():
		return clierr.New(clierr.Failure, fmt.Errorf("not logged in: run '%s' (or set SYNTHIENT_API_KEY)", o.LoginCommand))
	case st.err != nil:
		return st.err
	}
	return nil
}

// check asks the account with the key.
func (st *status) check(ctx context.Context, o *StatusOptions) {
	c, err := o.Client()
	if err == nil {
		st.acct, err = c.Account(ctx)
	}
	if err != nil {
		st.err, st.Error = err, o.Describe(err)
		return
	}
	st.Account = &statusAccount{Email: st.acct.Email, Name: strings.TrimSpace(st.acct.FirstName + " " + st.acct.LastName), Credits: st.acct.LookupQuota.Credits}
}

// print prints the status: a table, or one JSON document.
func (o *StatusOptions) print(st *status) error {
	p := o.Printer
	if p.JSON() {
		return p.Emit(st)
	}
	t := render.NewTable(p.Out)
	t.Row("Profile", st.Profile+fromNote(st.ProfileFrom))
	config := "none"
	switch {
	case len(st.Profiles) > 0 || o.Settings.Config.Exists:
		config = st.Config + " (profiles: " + render.List(st.Profiles) + ")"
	case st.Config != "":
		config = "none (" + st.Config + " would be read)"
	}
	if len(st.Ignored) > 0 {
		config += "; not read here: " + render.List(st.Ignored)
	}
	t.Row("Config", config)
	t.Row("Base URL", st.BaseURL+fromNote(st.BaseURLFrom))
	t.Row("API key", o.keyRow(st))
	switch {
	case st.Account != nil:
		t.Row("Account", fmt.Sprintf("%s <%s>, %s credits: the key works", st.Account.Name, st.Account.Email, strconv.FormatInt(st.Account.Credits, 10)))
	case st.err != nil:
		t.Row("Account", "the check failed: "+st.Error)
	}
	return t.Flush()
}

// keyRow is the API key row of the table: where the key comes from, and
// the host a kept key is bound to.
func (o *StatusOptions) keyRow(st *status) string {
	bound := ""
	if st.KeyHost != "" {
		bound = ", bound to " + st.KeyHost
		switch {
		case o.Settings.Kept.Official:
			bound += " (the official Synthient CLI's key names no host)"
		case o.Settings.Kept.Unbound:
			bound += " (kept before keys were bound to a host)"
		}
	}
	switch {
	case st.KeyRefused != "":
		return "not used, from " + st.KeyFrom + bound + ": the base URL is on another host (" + o.LoginCommand + " keeps a key for it)"
	case st.KeyFrom == "":
		return "none: run '" + o.LoginCommand + "'"
	}
	return "set (not shown), from " + st.KeyFrom + bound
}

// fromNote is the parenthesis after a setting naming its source.
func fromNote(source string) string {
	if source == "built in" {
		return " (built in)"
	}
	return " (from " + source + ")"
}
