package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// LoginOptions are the options of auth login.
type LoginOptions struct {
	IO      *iostreams.IOStreams
	Printer *output.Printer
	Secrets *redact.Redactor
	Store   *config.Store
	Profile string
	// Host is the host of the base URL the key is checked with: the key
	// is kept bound to it.
	Host string
	// KeyFlag is the global flag that gives the key: --api-key-file or
	// --api-key; "" for none. Given returns the key it gives.
	KeyFlag string
	Given   func(ctx context.Context) (key string, err error)
	// LoginCommand is this command line's auth login, for hints.
	LoginCommand string
	// ReadPassword reads the key from the terminal without echo; nil
	// without a terminal.
	ReadPassword func(ctx context.Context) ([]byte, error)
	// Client returns a client that sends key, to check it.
	Client   func(key string) (*synthient.Client, error)
	Describe func(error) string

	WithToken bool
}

// NewCmdLogin returns auth login. runF, when not nil, runs in place of
// the command's own run function, given the options once they are parsed
// and checked: the host the key is bound to, and the flag that gives it.
func NewCmdLogin(f *cmdutil.Factory, runF func(context.Context, *LoginOptions) error) *cobra.Command {
	opts := &LoginOptions{Secrets: f.Secrets, Describe: f.Describe}
	cmd := &cobra.Command{
		Use:   "login [--with-token]",
		Short: "Check an API key with the API and keep it for the profile",
		Long: `Ask for the API key on the terminal, without echoing it, or read it from stdin
with --with-token, as gh does, or take the one --api-key-file or --api-key
gives; check it with the API (a free request of the account); and keep it for
the profile (--profile, SYNTHIENT_PROFILE, else default): in the system
keychain, else in credentials.toml (mode 0600) of the configuration directory
($XDG_CONFIG_HOME/synthient, else ~/.config/synthient). A key the API refuses
is not kept. The key is bound to the host of the base URL it was checked with
(--base-url, SYNTHIENT_BASE_URL, the profile's): it is never sent to another.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.IO, opts.Printer, opts.Store, opts.Profile = f.IO, f.Printer, f.Store(), f.Settings.Profile
			opts.ReadPassword, opts.LoginCommand = f.ReadPassword, f.LoginCommand()
			host, err := config.HostOf(f.BaseURL())
			if err != nil {
				return clierr.New(clierr.Usage, err)
			}
			opts.Host = host
			opts.KeyFlag, opts.Given = givenKey(f)
			if opts.WithToken && opts.KeyFlag != "" {
				return clierr.Usagef("--with-token and %s both give the key: give one", opts.KeyFlag)
			}
			opts.Client = func(key string) (*synthient.Client, error) {
				f.SetKey(key)
				return f.Client()
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return loginRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.WithToken, "with-token", false, "read the key from stdin (synthient auth login --with-token < key.txt)")
	cmdutil.SetExamples(cmd, "synthient auth login", "synthient auth login --with-token < key.txt", "synthient auth login --profile staging")
	return cmd
}

// givenKey returns the global flag of f that gives the key
// (--api-key-file, else --api-key; "" for none) and the function that
// reads the key it gives ("" for none).
func givenKey(f *cmdutil.Factory) (flag string, key func(context.Context) (string, error)) {
	switch {
	case f.Flags.APIKeyFile != "":
		return "--api-key-file", func(ctx context.Context) (string, error) {
			return config.ReadKeyFile(ctx, f.Flags.APIKeyFile, f.IO.In)
		}
	case f.Flags.APIKey != "":
		return "--api-key", func(context.Context) (string, error) { return f.Flags.APIKey, nil }
	}
	return "", func(context.Context) (string, error) { return "", nil }
}

func loginRun(ctx context.Context, o *LoginOptions) error {
	key, err := o.readKey(ctx)
	if err != nil {
		return err
	}
	o.Secrets.Add(key)
	c, err := o.Client(key)
	if err != nil {
		return err
	}
	acct, err := c.Account(ctx)
	if err != nil {
		return clierr.New(clierr.ExitCode(err), fmt.Errorf("the key was not kept: checking it with the API: %s", o.Describe(err)))
	}
	where, keychainErr, err := o.Store.Set(o.Profile, config.Kept{Key: key, Host: o.Host})
	var fe *config.FileError
	if errors.As(err, &fe) {
		return clierr.New(clierr.Usage, err)
	}
	if err != nil {
		return err
	}
	return o.report(acct, where, keychainErr)
}

// readKey reads the key: the one the global flags give, else from stdin
// with --with-token, else from the terminal, with a prompt on stderr.
func (o *LoginOptions) readKey(ctx context.Context) (string, error) {
	key, err := o.Given(ctx)
	switch {
	case err != nil:
		return "", err
	case key != "":
		return key, nil
	case o.WithToken:
		return config.ReadKey(ctx, o.IO.In, "--with-token", "stdin")
	case o.ReadPassword == nil || !o.IO.StdinIsTerminal():
		return "", clierr.Usagef("auth login asks for the key on a terminal, and stdin is not one: give it on stdin with --with-token (%s --with-token < key.txt)", o.LoginCommand)
	}
	// The prompt is on stderr: a failure to write it has nowhere to be
	// reported, and the read that follows goes on without it.
	_, _ = fmt.Fprint(o.IO.ErrOut, "Paste your Synthient API key (it is not shown): ")
	flushLine(o.IO.ErrOut)
	b, err := o.ReadPassword(ctx)
	_, _ = fmt.Fprintln(o.IO.ErrOut)
	if err != nil {
		return "", err
	}
	return config.ReadKey(ctx, strings.NewReader(string(b)), "auth login", "the key typed")
}

// flushLine writes what w holds back of an unfinished line: the prompt,
// before the terminal waits for the key.
func flushLine(w io.Writer) {
	if f, ok := w.(interface{ Flush() error }); ok {
		_ = f.Flush() // stderr, as above
	}
}

// report says who logged in and where the key is kept: on stderr in
// text, as one JSON document on stdout otherwise.
func (o *LoginOptions) report(acct *synthient.Account, where config.Where, keychainErr error) error {
	p := o.Printer
	if p.JSON() {
		return p.Emit(map[string]any{"profile": o.Profile, "stored_in": where.String(), "keychain": where.Keychain, "host": o.Host,
			"account": map[string]any{"email": acct.Email, "name": strings.TrimSpace(acct.FirstName + " " + acct.LastName), "credits": acct.LookupQuota.Credits}})
	}
	name := strings.TrimSpace(acct.FirstName + " " + acct.LastName)
	stored := "in " + where.String()
	if !where.Keychain {
		stored = fmt.Sprintf("in %s (mode 0600): no system keychain here (%v)", where.Path, keychainErr)
	}
	_, err := fmt.Fprintf(o.IO.ErrOut, "synthient: logged in as %s <%s> (%s), profile %s; the key is kept %s, bound to %s\n",
		name, acct.Email, acct.Organization.Name, o.Profile, stored, o.Host)
	return err
}
