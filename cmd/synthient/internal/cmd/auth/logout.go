package auth

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
)

// LogoutOptions are the options of auth logout.
type LogoutOptions struct {
	Err     io.Writer // stderr: what was removed
	Store   *config.Store
	Profile string
	Getenv  func(string) string
}

// NewCmdLogout returns auth logout.
func NewCmdLogout(f *cmdutil.Factory) *cobra.Command {
	opts := &LogoutOptions{Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "Remove the profile's stored key, from the keychain and from the file",
		Args:  cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			opts.Err, opts.Store, opts.Profile = f.IO.ErrOut, f.Store(), f.Settings.Profile
			return logoutRun(opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient auth logout", "synthient auth logout --profile staging")
	return cmd
}

func logoutRun(o *LogoutOptions) error {
	was, err := o.Store.Delete(o.Profile)
	if err != nil {
		return err
	}
	if len(was) == 0 {
		return clierr.New(clierr.Failure, fmt.Errorf("no key stored for profile %s: nothing to log out of%s", o.Profile, o.officialNote()))
	}
	names := make([]string, len(was))
	for i, w := range was {
		names[i] = w.String()
	}
	msg := fmt.Sprintf("synthient: logged out of profile %s: its key is removed from %s", o.Profile, strings.Join(names, " and "))
	if o.Getenv("SYNTHIENT_API_KEY") != "" {
		msg += " (SYNTHIENT_API_KEY still gives a key)"
	}
	_, err = fmt.Fprintln(o.Err, msg+o.officialNote())
	return err
}

// officialNote says, when it is so, that the official Synthient CLI's key
// still gives the profile a key: logout leaves that CLI's key alone.
func (o *LogoutOptions) officialNote() string {
	kept, where, err := o.Store.Get(o.Profile)
	if err != nil || !kept.Official {
		return ""
	}
	return "; " + where.String() + " still gives profile " + o.Profile + " a key: it is that CLI's, and stays"
}
