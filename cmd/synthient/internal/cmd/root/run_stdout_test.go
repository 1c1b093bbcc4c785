package root_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// Tests of run.go, on a stdout that fails: a write error (exit 1 and one
// line), a reader that is gone (141, quiet).

// A command whose stdout cannot be written exits 1 with one line on
// stderr; one whose stdout's reader is gone (EPIPE: a pipe into head)
// ends quietly with 141, the status SIGPIPE gives a standard tool (main
// then ends the process with SIGPIPE itself). Both also when the command
// does not check its writes (cobra's help, the demo's narration) or its
// last line fails (health), and fake-server does not serve when it
// cannot say where.
func TestStdoutFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		args        []string
		interrupted bool // run already interrupted: fake-server serves until then
	}{
		{"lookup ip", []string{"--fake", "lookup", "ip", "1.1.1.1"}, false},
		{"health", []string{"--fake", "health"}, false},
		{"--help", []string{"--help"}, false},
		{"help account", []string{"help", "account"}, false},
		{"demo", []string{"demo"}, false},
		{"fake-server", []string{"fake-server", "--listen", "127.0.0.1:0"}, true},
	}
	for _, tt := range tests {
		run := func(t *testing.T, stdout io.Writer) clitest.Result {
			t.Helper()
			c := clitest.Call{Args: tt.args, StdoutTo: stdout}
			if tt.interrupted {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				c.Ctx = ctx
			}
			return c.Run(t)
		}
		t.Run(tt.name+": a write error", func(t *testing.T) {
			t.Parallel()
			r := run(t, clitest.FailWriter{Err: clitest.ErrNoSpace})
			clitest.RequireCode(t, r, clierr.Failure, tt.args...)
			ls := clitest.Lines(r.Stderr)
			require.Len(t, ls, 1, "stderr lines: want one with the write error")
			assert.Contains(t, ls[0], clitest.ErrNoSpace.Error(), "stderr")
		})
		t.Run(tt.name+": a closed pipe", func(t *testing.T) {
			t.Parallel()
			r := run(t, clitest.ClosedPipe(t))
			clitest.RequireCode(t, r, clierr.BrokenPipe, tt.args...)
			assert.Empty(t, r.Stderr, "stderr")
		})
	}
}
