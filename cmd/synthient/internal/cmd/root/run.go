// Package root is the synthient command: its global flags, the tree of
// its commands, and Run, which executes one command line and reports its
// error.
package root

import (
	"context"
	"fmt"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/config"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// Env is what a run of the command is given beside its arguments.
type Env struct {
	iostreams.System
	// Keychain keeps the keys of auth login; nil for the system's
	// (config.SystemKeychain).
	Keychain config.Keychain
	// Dir is the working directory, where .env is read; "" for the
	// process's.
	Dir string
	// ReadPassword reads a line from the terminal on stdin without
	// echoing it (auth login); nil when there is none.
	ReadPassword func(ctx context.Context) ([]byte, error)
}

// Run executes the command line args and returns the exit code. The
// command writes to env's stdout and stderr through textsafe.Writers,
// which escape control characters and redact secrets: the configured key
// and every argument shaped like one.
func Run(ctx context.Context, args []string, env Env) int {
	secrets := &redact.Redactor{}
	secrets.AddKeyShapes(args...)
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	secrets.Add(getenv("SYNTHIENT_API_KEY"))
	addKeyFlags(secrets, args) //nolint:contextcheck // an interrupt must not keep a key from being redacted; a regular file does not block
	io := iostreams.New(env.System, secrets)
	kc := env.Keychain
	if kc == nil {
		kc = config.SystemKeychain{}
	}
	f := &cmdutil.Factory{IO: io, Secrets: secrets, Getenv: getenv, Keychain: kc, WorkDir: env.Dir, ReadPassword: env.ReadPassword}
	code := execute(ctx, f, args)
	if err := io.Flush(); err != nil && code == clierr.OK && io.StdoutClosed(err) {
		code = clierr.BrokenPipe // quiet: see execute
	} else if err != nil && code == clierr.OK {
		// The command did not see it fail (cobra's help, the demo's
		// narration, fake-server's notice do not check their writes),
		// or the final line failed.
		_, _ = fmt.Fprintln(io.ErrOut, "synthient: writing the output: "+render.OneLine(err.Error())) // see below
		code = clierr.Failure
	}
	// Flush again for the line above. Its error is stdout's, reported
	// above, or stderr's, which has nowhere to be reported: the messages
	// on stderr (here and in execute) are written without checking.
	_ = io.Flush()
	return code
}

// execute runs the command and reports its error on stderr.
func execute(ctx context.Context, f *cmdutil.Factory, args []string) int {
	root := NewCmdRoot(f) //nolint:contextcheck // its commands take ctx from cobra: ExecuteContextC below
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	f.Close()
	if err == nil {
		return clierr.OK
	}
	code := clierr.ExitCode(err)
	if f.IO.StdoutClosed(err) {
		// The reader of stdout is gone (a pipe into head): the command
		// stopped, and ends quietly, as a standard tool that SIGPIPE ends.
		return clierr.BrokenPipe
	}
	if code == clierr.Interrupt {
		_, _ = fmt.Fprintln(f.IO.ErrOut, "synthient: interrupted") // stderr: see Run
		return code
	}
	line := "synthient: " + f.Describe(err)
	if code == clierr.Usage && clierr.WantsHelpHint(err) {
		line += fmt.Sprintf(" (see '%s --help', %s)", cmd.CommandPath(), docsLink(cmd))
	}
	_, _ = fmt.Fprintln(f.IO.ErrOut, line) // stderr: see Run
	return code
}
