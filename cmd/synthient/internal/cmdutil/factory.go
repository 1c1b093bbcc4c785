// Package cmdutil is what the commands share: the Factory that carries
// the streams, the global flags and the client to each command, and the
// helpers their cobra definitions use.
package cmdutil

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/trace"
	"github.com/synthient-go/synthient/synthienttest"
)

// Factory is what a command is built with: each command copies the parts
// it needs into its options. The root command binds Flags and sets
// Printer before a command runs. It is used by one run of the command
// line at a time.
type Factory struct {
	IO      *iostreams.IOStreams
	Secrets *redact.Redactor
	Getenv  func(string) string
	Flags   GlobalFlags
	// Printer prints results in the format of the global flags; set
	// before a command runs.
	Printer *output.Printer
	// Keychain keeps the keys of auth login (config.SystemKeychain).
	Keychain config.Keychain
	// WorkDir is where .env is looked for.
	WorkDir string
	// ReadPassword reads a line from the terminal without echoing it;
	// nil when there is no terminal to read.
	ReadPassword func(ctx context.Context) ([]byte, error)
	// Settings are where the settings came from (LoadConfig, ResolveKey).
	Settings Settings

	key             string // the key ResolveKey chose
	profileBase     string // the base URL of config.toml for the profile
	profileBaseFrom string // where in config.toml it is
	client          *synthient.Client
	fakeSrv         *synthienttest.Server
}

// GlobalFlags are the flags every command takes.
type GlobalFlags struct {
	APIKey, APIKeyFile, BaseURL string
	Fake                        bool
	MaxRetries                  int
	Timeout, OpenTimeout        time.Duration
	Output, JQ, Template        string
	Format                      string // --format, -f: the official CLI's name of --output
	Profile                     string
	Verbose, Trace              bool
	Quiet, NoProgress           bool
	Silent                      bool // --silent, -s: the official CLI's name of --quiet
	NoColor                     bool
}

// Client returns the client of the global flags, built once, starting the
// fake API first with --fake. With no key it returns a usage error.
func (f *Factory) Client(opts ...synthient.Option) (*synthient.Client, error) {
	if f.client != nil {
		return f.client, nil
	}
	fl := &f.Flags
	key, base := f.key, f.BaseURL()
	if fl.Fake {
		f.fakeSrv = synthienttest.NewServer()
		key, base = f.fakeSrv.APIKey, f.fakeSrv.URL
	}
	switch {
	case key == "" && f.Settings.KeyRefused != nil:
		return nil, f.Settings.KeyRefused
	case key == "":
		return nil, clierr.Usagef("no API key: run '%s', set SYNTHIENT_API_KEY (or put it in .env), pass --api-key or --api-key-file, or use --fake", f.LoginCommand())
	}
	if fl.MaxRetries > 16 {
		return nil, clierr.Usagef("--max-retries must be 0 to 16, not %d", fl.MaxRetries)
	}
	all := []synthient.Option{
		synthient.WithMaxRetries(fl.MaxRetries),
		synthient.WithTimeout(fl.Timeout),
		synthient.WithOpenTimeout(fl.OpenTimeout),
		synthient.WithUserAgent("synthient-cli"),
	}
	if base != "" {
		all = append(all, synthient.WithBaseURL(base))
	}
	if fl.Verbose {
		all = append(all, synthient.WithLogger(slog.New(trace.NewDecisionHandler(f.IO.ErrOut, slog.LevelDebug))))
	}
	if fl.Trace {
		all = append(all, synthient.WithObserver(trace.New(f.IO.ErrOut)))
	}
	c, err := synthient.NewClient(key, append(all, opts...)...)
	if err != nil {
		return nil, err
	}
	f.client = c
	return c, nil
}

// Close closes the client and stops the fake API, if they were started.
func (f *Factory) Close() {
	if f.client != nil {
		f.client.Close()
	}
	if f.fakeSrv != nil {
		f.fakeSrv.Close()
	}
}

// HasKey reports whether a key was found (ResolveKey), or --fake needs
// none.
func (f *Factory) HasKey() bool { return f.key != "" || f.Flags.Fake }

// SetKey sets the key a command that needs none sends anyway (health).
func (f *Factory) SetKey(key string) {
	if f.key == "" {
		f.key = key
	}
}

// BaseURL is the base URL the command was given: --base-url, else
// SYNTHIENT_BASE_URL, else config.toml's for the profile; "" for the
// SDK's default.
func (f *Factory) BaseURL() string {
	switch {
	case f.Flags.BaseURL != "":
		return f.Flags.BaseURL
	case f.Getenv("SYNTHIENT_BASE_URL") != "":
		return f.Getenv("SYNTHIENT_BASE_URL")
	}
	return f.profileBase
}

// BaseURLFrom returns the base URL in use, the SDK's default included,
// and where it came from: "--base-url", "SYNTHIENT_BASE_URL", where in
// config.toml (config.File.BaseURL), or "built in".
func (f *Factory) BaseURLFrom() (url, from string) {
	switch {
	case f.Flags.BaseURL != "":
		return f.Flags.BaseURL, "--base-url"
	case f.Getenv("SYNTHIENT_BASE_URL") != "":
		return f.Getenv("SYNTHIENT_BASE_URL"), "SYNTHIENT_BASE_URL"
	case f.profileBase != "":
		return f.profileBase, f.profileBaseFrom
	}
	return synthient.DefaultBaseURL, "built in"
}

// Describe renders an error as the one line the command prints.
func (f *Factory) Describe(err error) string {
	d := clierr.Describer{Secrets: f.Secrets, BaseURL: f.BaseURL}
	return d.Describe(err)
}

// ShowProgress reports whether to draw a progress bar: when stdout and
// stderr are both terminals, as gh does, unless --no-progress or
// --quiet. With stdout piped (| cat, | jq) the bar could not keep a line
// of its own among the lines the reader of the pipe prints on the same
// screen.
func (f *Factory) ShowProgress() bool {
	return !f.Flags.Quiet && !f.Flags.NoProgress && f.IO.StdoutIsTerminal() && f.IO.StderrIsTerminal()
}

// Context returns cmd's context, or the background one when it has none
// (a completion function).
func Context(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
