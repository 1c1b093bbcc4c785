package clitest

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
)

// Factory returns the Factory of a command built alone, as cli/cli's
// tests build one with a runF that captures its options: on sys's
// streams (a nil stream reads or writes nothing; a nil func reports no
// terminal), an empty environment and keychain, and the text format.
// Parse runs the command on its arguments.
func Factory(sys iostreams.System) *cmdutil.Factory {
	if sys.Stdin == nil {
		sys.Stdin = strings.NewReader("")
	}
	if sys.Stdout == nil {
		sys.Stdout = io.Discard
	}
	if sys.Stderr == nil {
		sys.Stderr = io.Discard
	}
	if sys.Getenv == nil {
		sys.Getenv = func(string) string { return "" }
	}
	secrets := &redact.Redactor{}
	ios := iostreams.New(sys, secrets)
	return &cmdutil.Factory{IO: ios, Secrets: secrets, Getenv: sys.Getenv, Keychain: &Keychain{},
		Printer: &output.Printer{Format: output.Text, Out: ios.Out, Err: ios.ErrOut}}
}

// Parse runs cmd, built alone (see Factory), on args: cobra parses its
// flags and checks its arguments, and its RunE runs up to the runF the
// test gave it, which captures the options and runs nothing. It returns
// the command's error.
func Parse(t testing.TB, cmd *cobra.Command, args ...string) error {
	t.Helper()
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd.ExecuteContext(t.Context())
}

// Seam is a command's runF that captures the options it is given, and
// runs nothing.
type Seam[O any] struct {
	Got *O // the options the command's run was given; nil for none
}

// RunF is the runF to build the command with.
func (s *Seam[O]) RunF(_ context.Context, o *O) error {
	s.Got = o
	return nil
}

// Parsed checks what Parse returned, err, and what s captured: with want
// "", that the command line parsed and its options reached the run; else
// a usage error that holds want, with no options given to the run. It
// reports whether there are options for the test to check.
func (s *Seam[O]) Parsed(t testing.TB, err error, want string) bool {
	t.Helper()
	if want != "" {
		require.ErrorContains(t, err, want)
		assert.Equal(t, clierr.Usage, clierr.ExitCode(err), "a usage error")
		assert.Nil(t, s.Got, "the run was given options")
		return false
	}
	require.NoError(t, err)
	require.NotNil(t, s.Got, "the run was not given the options")
	return true
}
