package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// Exit codes.
const (
	exitOK         = 0
	exitFailure    = 1 // anything not classified below
	exitUsage      = 2 // usage and invalid arguments
	exitAPI        = 3 // the API answered with an error (or addresses of lookup ips were not looked up)
	exitConnection = 4 // connection and timeout errors
	exitInterrupt  = 130
)

// env is what the command reads from and writes to, so tests can run it
// in-process.
type env struct {
	stdin            io.Reader
	stdout, stderr   io.Writer
	getenv           func(string) string
	stderrIsTerminal func() bool
	stdoutIsTerminal func() bool // nil: not a terminal
}

// app holds the global flags and what they build.
type app struct {
	env *env

	apiKey      string
	apiKeyFile  string
	baseURL     string
	fake        bool
	maxRetries  int
	timeout     time.Duration
	openTimeout time.Duration
	output      string
	jq          string
	template    string
	verbose     bool
	trace       bool // --trace: print each call's tree on stderr (trace.go)
	quiet       bool // no progress, per-line reports or summaries on stderr
	noProgress  bool
	version     bool // the root's --version

	key       string    // the key resolveKey chose
	secrets   *redactor // never printed
	progress  io.Writer // the raw stderr, for progress bars, which draw with \r
	rawStdout io.Writer // the raw stdout, for an export's bytes (--out -)

	shape         shape // --jq or --template, compiled; nil for neither
	shapeFailures int64 // documents --jq or --template failed on (app.tolerate)
	fakeSrv       *synthienttest.Server
	client        *synthient.Client
}

// exitError carries an exit code with the error to print; hint asks for
// the pointer to --help (a command-line mistake).
type exitError struct {
	code int
	err  error
	hint bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// run executes the command line args and returns the exit code. The
// command writes to e's stdout and stderr through safeWriters (see
// sanitize.go), which escape control characters and redact secrets: the
// configured key and every argument shaped like one.
func run(ctx context.Context, args []string, e *env) int {
	secrets := &redactor{}
	secrets.addKeyShapes(args...)
	secrets.add(e.getenv("SYNTHIENT_API_KEY"))
	addKeyFlags(secrets, args)
	stdout, stderr := newSafeWriter(e.stdout, secrets), newSafeWriter(e.stderr, secrets)
	a := &app{
		env: &env{
			stdin:            e.stdin,
			stdout:           stdout,
			stderr:           stderr,
			getenv:           e.getenv,
			stderrIsTerminal: e.stderrIsTerminal,
			stdoutIsTerminal: e.stdoutIsTerminal,
		},
		secrets:   secrets,
		progress:  e.stderr,
		rawStdout: e.stdout,
	}
	code := a.execute(ctx, args)
	if err := stdout.Flush(); err != nil && code == exitOK {
		// The command did not see it fail (cobra's help, the demo's
		// narration, fake-server's notice do not check their writes),
		// or the final line failed.
		fmt.Fprintln(stderr, "synthient: writing the output: "+oneLine(err.Error()))
		code = exitFailure
	}
	stderr.Flush()
	return code
}

// execute runs the command and reports its error on stderr.
func (a *app) execute(ctx context.Context, args []string) int {
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(a.env.stdin)
	root.SetOut(a.env.stdout)
	root.SetErr(a.env.stderr)
	err := root.ExecuteContext(ctx)
	a.close()
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if code == exitInterrupt {
		fmt.Fprintln(a.env.stderr, "synthient: interrupted")
		return code
	}
	line := "synthient: " + a.describe(err)
	if code == exitUsage && wantsHelpHint(err) {
		line += " (see 'synthient --help')"
	}
	fmt.Fprintln(a.env.stderr, line)
	return code
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "synthient",
		Short: "Query the Synthient API: lookups, account, exports and streams",
		Long: `synthient queries the Synthient API v4: IP and domain lookups, the account,
Parquet exports and real-time NDJSON streams.

It takes the API key from --api-key, else --api-key-file (a file holding the
key, or - for stdin: the key then stays out of the process list), else
SYNTHIENT_API_KEY; --api-key and --api-key-file cannot be combined. With --fake
it runs against an in-process fake API instead, and needs no key. Start with:

  synthient demo

Control characters in what the server sends are printed as visible escapes
(\x1b, \u009b), never sent to the terminal, and an argument that looks like an
API key is printed as [redacted]. See docs/cli.md.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		// --version is the root's own flag, not cobra's: it runs after the
		// global flags were checked, so it honours --output, --jq and
		// --template as the version command does.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !a.version {
				return cmd.Help()
			}
			if err := refuseFlags(cmd, unusedFlags["version"], "--version"); err != nil {
				return err
			}
			return a.writeVersion(a.env.stdout)
		},
	}
	root.Flags().BoolVar(&a.version, "version", false, "print the version (as the version command does)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: err, hint: true}
	})
	a.addGlobalFlags(root)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		for _, check := range []func(*cobra.Command) error{checkUnusedFlags, a.checkOutputFlag, a.checkFakeFlags, a.checkKeyFlags} {
			if err := check(cmd); err != nil {
				return err
			}
		}
		return a.resolveKey(cmd.Context())
	}
	root.AddCommand(
		a.demoCommand(),
		a.lookupCommand(),
		a.accountCommand(),
		a.healthCommand(),
		a.exportsCommand(),
		takesFeed(a.streamCommand()),
		a.fakeServerCommand(),
		a.versionCommand(),
	)
	refuseUnknownShells(root)
	hideUnusedFlags(root)
	addExamples(root)
	return root
}

// hideUnusedFlags leaves out of a command's help the global flags it
// refuses (unusedFlags).
func hideUnusedFlags(root *cobra.Command) {
	help := root.HelpFunc()
	root.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		var hidden []*pflag.Flag
		if words := strings.Fields(cmd.CommandPath()); len(words) >= 2 {
			for _, name := range unusedFlags[words[1]] {
				if f := root.PersistentFlags().Lookup(name); f != nil && !f.Hidden {
					f.Hidden = true
					hidden = append(hidden, f)
				}
			}
		}
		help(cmd, args)
		for _, f := range hidden {
			f.Hidden = false
		}
	})
}

// addGlobalFlags adds to root the persistent flags, which every command
// takes, bound to a's fields.
func (a *app) addGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&a.apiKey, "api-key", "", "API key (default $SYNTHIENT_API_KEY)")
	f.StringVar(&a.apiKeyFile, "api-key-file", "", "read the API key from this file (- for stdin); not with --api-key")
	f.StringVar(&a.baseURL, "base-url", "", "API base URL including /api/v4 (default $SYNTHIENT_BASE_URL, else "+synthient.DefaultBaseURL+")")
	f.BoolVar(&a.fake, "fake", false, "run against an in-process fake API (no key needed)")
	f.IntVar(&a.maxRetries, "max-retries", synthient.DefaultMaxRetries, "retries after the first attempt, where the retry class allows (0 to 16)")
	f.DurationVar(&a.timeout, "timeout", synthient.DefaultTimeout, "bound on each wait for a read or write")
	f.DurationVar(&a.openTimeout, "open-timeout", synthient.DefaultOpenTimeout, "bound on each connect")
	f.StringVarP(&a.output, "output", "o", "text", "output format: text, json (NDJSON for batches and streams) or csv (lookups, export listings and rows)")
	f.StringVar(&a.jq, "jq", "", "print what this jq expression makes of each JSON result (strings raw, one value per line)")
	f.StringVar(&a.template, "template", "", "print each JSON result through this Go template (text/template)")
	f.BoolVarP(&a.verbose, "verbose", "v", false, "log every retry decision on stderr")
	f.BoolVar(&a.trace, "trace", false, "print the tree of each call on stderr: attempts, waits, holds, stop reasons, durations")
	f.BoolVarP(&a.quiet, "quiet", "q", false, "print nothing on stderr but the final error (and what -v or --trace ask for): no progress bar, invalid lines, reports or summary")
	f.BoolVar(&a.noProgress, "no-progress", false, "draw no progress bar, also on a terminal")
	// Only fails for a flag that does not exist.
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"text", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
}

// unusedFlags are the global flags a command has no use for, by the first
// word of its path below the root: given, they are refused rather than
// silently ignored (fake-server --api-key K would not serve K).
var unusedFlags = map[string][]string{
	"demo":        {"api-key", "api-key-file", "base-url", "fake", "timeout", "open-timeout", "jq", "template", "trace"},
	"fake-server": {"api-key", "api-key-file", "base-url", "fake", "max-retries", "timeout", "open-timeout", "verbose", "trace"},
	"completion":  {"api-key", "api-key-file", "base-url", "fake", "max-retries", "timeout", "open-timeout", "verbose", "output", "jq", "template", "trace"},
	"version":     {"api-key", "api-key-file", "base-url", "fake", "max-retries", "timeout", "open-timeout", "verbose", "trace"},
}

// checkUnusedFlags refuses a global flag that cmd would ignore.
func checkUnusedFlags(cmd *cobra.Command) error {
	words := strings.Fields(cmd.CommandPath())
	if len(words) < 2 {
		return nil
	}
	return refuseFlags(cmd, unusedFlags[words[1]], words[1])
}

// refuseFlags refuses the first of the flags names that was given to cmd,
// as not applying to what.
func refuseFlags(cmd *cobra.Command, names []string, what string) error {
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			return usageError("--%s does not apply to %s", name, what)
		}
	}
	return nil
}

// checkFakeFlags refuses --fake with a base URL or a key, which it would
// ignore.
func (a *app) checkFakeFlags(cmd *cobra.Command) error {
	if !a.fake {
		return nil
	}
	for _, name := range []string{"base-url", "api-key", "api-key-file"} {
		if cmd.Flags().Changed(name) {
			return usageError("--fake runs against an in-process fake API: it cannot be combined with --%s", name)
		}
	}
	return nil
}

// newClient builds the client from the global flags, starting the fake
// API first with --fake.
func (a *app) newClient(opts ...synthient.Option) (*synthient.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	key, base := a.key, a.baseURL
	if base == "" {
		base = a.env.getenv("SYNTHIENT_BASE_URL")
	}
	if a.fake {
		a.fakeSrv = synthienttest.NewServer()
		key, base = a.fakeSrv.APIKey, a.fakeSrv.URL
	}
	if key == "" {
		return nil, usageError("no API key: set SYNTHIENT_API_KEY, pass --api-key or --api-key-file, or use --fake")
	}
	all := []synthient.Option{
		synthient.WithMaxRetries(a.maxRetries),
		synthient.WithTimeout(a.timeout),
		synthient.WithOpenTimeout(a.openTimeout),
		synthient.WithUserAgent("synthient-cli"),
	}
	if a.maxRetries > 16 {
		return nil, usageError("--max-retries must be 0 to 16, not %d", a.maxRetries)
	}
	if base != "" {
		all = append(all, synthient.WithBaseURL(base))
	}
	if a.verbose {
		all = append(all, synthient.WithLogger(slog.New(newDecisionHandler(a.env.stderr, slog.LevelDebug))))
	}
	if a.trace {
		all = append(all, synthient.WithObserver(newTracer(a.env.stderr)))
	}
	all = append(all, opts...)
	c, err := synthient.NewClient(key, all...)
	if err != nil {
		return nil, err
	}
	a.client = c
	return c, nil
}

func (a *app) close() {
	if a.client != nil {
		a.client.Close()
	}
	if a.fakeSrv != nil {
		a.fakeSrv.Close()
	}
}

// json reports whether the command prints JSON documents: --output
// json, or --jq or --template, which reshape them.
func (a *app) json() bool { return a.output == "json" || a.shape != nil }

// csv reports whether the command prints CSV.
func (a *app) csv() bool { return a.output == "csv" }

// groupCommand returns a command that only holds subcommands: run with
// an argument that names none, it is a usage error, not a help page.
func groupCommand(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &exitError{code: exitUsage, hint: true,
					err: fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

// interruptible returns what f returns, unless ctx is done first or by
// then: it then returns ctx's error (exit 130), and f's result, when f
// returns, goes to drop (nil: dropped as it is). It is for what may block
// for ever and cannot be cancelled, such as opening a named pipe or
// reading a terminal: f runs in a goroutine of its own, which outlives the
// call until f returns.
func interruptible[T any](ctx context.Context, f func() (T, error), drop func(T)) (T, error) {
	type result struct {
		v   T
		err error
	}
	release := func(r result) {
		if drop != nil && r.err == nil {
			drop(r.v)
		}
	}
	done := make(chan result) // unbuffered: f's goroutine knows whether its result was taken
	go func() {
		v, err := f()
		select {
		case done <- result{v, err}:
		case <-ctx.Done():
			release(result{v, err})
		}
	}()
	var zero T
	select {
	case r := <-done:
		if ctx.Err() == nil {
			return r.v, r.err
		}
		release(r) // interrupted meanwhile: stop all the same
	case <-ctx.Done():
	}
	return zero, ctx.Err()
}

// exitCode classifies an error.
func exitCode(err error) int {
	var ee *exitError
	var apiErr *synthient.APIError
	var connErr *synthient.ConnectionError
	var decErr *synthient.DecodeError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled):
		return exitInterrupt
	case errors.Is(err, synthient.ErrInvalidArgument), isCobraUsage(err), unusableFile(err):
		return exitUsage
	case errors.As(err, &apiErr), errors.As(err, &decErr), errors.Is(err, synthient.ErrChecksumMismatch),
		errors.Is(err, synthient.ErrSizeMismatch), errors.Is(err, synthient.ErrSizeUnknown):
		return exitAPI
	case errors.As(err, &connErr), errors.Is(err, context.DeadlineExceeded):
		return exitConnection
	}
	return exitFailure
}

// unusableFile reports a file argument that cannot be used, found before
// anything was sent: --out over an existing file, in a missing directory,
// without permission, or where the SDK could not create its temporary file
// (not a directory, a loop of links, a read-only file system). A file
// error after a request was sent (no space left, or a file that appeared
// at --out during the download) is not a usage error.
func unusableFile(err error) bool {
	var base *synthient.Error
	fromSDK := errors.As(err, &base)
	if fromSDK && base.Attempts > 0 {
		return false
	}
	var pathErr *fs.PathError
	return fromSDK && errors.As(err, &pathErr) ||
		errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

// wantsHelpHint reports a command-line mistake, as opposed to bad data.
func wantsHelpHint(err error) bool {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.hint
	}
	return isCobraUsage(err)
}

// isCobraUsage recognises cobra's argument and command errors, which it
// returns as plain errors; never an error of a request (a TLS failure's
// text can say "received").
func isCobraUsage(err error) bool {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code == exitUsage
	}
	var base *synthient.Error
	if errors.As(err, &base) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// describe renders an error as one line, without the "synthient: " prefix
// of the SDK's messages: for an API error its status, title or detail,
// field errors and notes (see errorNotes). The detail is cut to 300 bytes
// after the secrets in it were redacted: a secret cut in two would no
// longer be found by the safeWriter.
func (a *app) describe(err error) string {
	var apiErr *synthient.APIError
	if !errors.As(err, &apiErr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return a.inCLITerms(err, strings.TrimPrefix(oneLine(err.Error()), "synthient: "))
	}
	var b strings.Builder
	b.WriteString(apiErr.Error())
	if text := problemText(apiErr); text != "" {
		b.WriteString(": ")
		b.WriteString(oneLine(truncate(a.secrets.redactString(text), 300)))
	}
	for field, msgs := range apiErr.Errors {
		fmt.Fprintf(&b, "; %s: %s", oneLine(field), oneLine(strings.Join(msgs, ", ")))
	}
	notes := errorNotes(err, apiErr)
	if base := a.baseURLValue(); apiErr.Status == http.StatusNotFound && base != "" && !strings.HasSuffix(strings.TrimRight(base, "/"), "/api/v4") {
		notes = append(notes, "the base URL "+strconv.Quote(base)+" does not end in /api/v4")
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	return b.String()
}

// problemText is what an API error says beyond its status: its detail,
// else its title. A text body may repeat the status line ("401
// Unauthorized: malformed API key"): the status is printed once.
func problemText(apiErr *synthient.APIError) string {
	text := apiErr.Detail
	if text == "" {
		text = apiErr.Title
	}
	if rest, ok := strings.CutPrefix(text, apiErr.Error()); ok {
		text = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
	}
	return text
}

// errorNotes are what describe adds in parentheses to an API error: its
// request id, its Retry-After and, when the SDK stopped retrying, the
// attempts it made and why it stopped.
func errorNotes(err error, apiErr *synthient.APIError) []string {
	var notes []string
	if apiErr.RequestID != "" {
		notes = append(notes, "request id "+oneLine(apiErr.RequestID))
	}
	if apiErr.RetryAfter != nil {
		notes = append(notes, "retry after "+apiErr.RetryAfter.String())
	}
	var base *synthient.Error
	if errors.As(err, &base) && base.StopReason != "" {
		notes = append(notes, fmt.Sprintf("%d attempt(s), %s", base.Attempts, base.StopReason))
	}
	return notes
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n bytes, at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// refuseUnknownShells makes `completion SHELL` for a shell cobra has no
// script for a usage error (exit 2: unknown command), where cobra would
// print the help and exit 0: the completion command becomes runnable
// (printing its help), so that cobra checks its arguments.
func refuseUnknownShells(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
}

// sdkMethod matches the SDK method name that opens the SDK's messages
// ("LookupDomain: domain holds '/'"), an exported Go name and a colon: a
// CLI user typed a command, not a method.
var sdkMethod = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*: `)

// inCLITerms rewords msg, the text of err, in the command line's terms: no
// "invalid argument" or SDK method name, and the value or flag that fixes
// it where there is one.
func (a *app) inCLITerms(err error, msg string) string {
	msg = sdkMethod.ReplaceAllString(strings.TrimPrefix(msg, "invalid argument: "), "")
	switch {
	case errors.Is(err, fs.ErrExist):
		msg += " (--force replaces it)"
	case strings.HasPrefix(msg, "base URL"):
		msg = fmt.Sprintf("%s: %q (--base-url or SYNTHIENT_BASE_URL: an absolute http(s) URL ending in /api/v4, such as %s)",
			msg, a.baseURLValue(), synthient.DefaultBaseURL)
	}
	return msg
}

// baseURLValue is the base URL the command was given: --base-url, else
// SYNTHIENT_BASE_URL.
func (a *app) baseURLValue() string {
	if a.baseURL != "" {
		return a.baseURL
	}
	return a.env.getenv("SYNTHIENT_BASE_URL")
}

// showProgress reports whether to draw a progress bar: on a terminal,
// unless --no-progress or --quiet.
func (a *app) showProgress() bool {
	return !a.quiet && !a.noProgress && a.env.stderrIsTerminal()
}
