package iostreams_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// screen is a terminal that stdout and stderr share.
func screen(env map[string]string) (*iostreams.IOStreams, *strings.Builder) {
	var b strings.Builder
	return iostreams.New(iostreams.System{
		Stdout: &b, Stderr: &b, Getenv: func(k string) string { return env[k] },
		StdoutIsTerminal: func() bool { return true }, StderrIsTerminal: func() bool { return true },
	}, &redact.Redactor{}), &b
}

// printf writes to w, as the commands do, and fails the test on an error.
func printf(t *testing.T, w io.Writer, format string, args ...any) {
	t.Helper()
	_, err := fmt.Fprintf(w, format, args...)
	require.NoError(t, err)
}

// On a terminal the progress bar never shares a line with what is
// written to stdout or stderr: it is erased before each line and drawn
// again after it, and erased for good at its end.
func TestTerminalKeepsTheBarApart(t *testing.T) {
	t.Parallel()
	s, b := screen(nil)
	for i := range 5 {
		printf(t, s.Progress, "\rworking %d%% |###   |", 20*i)
		printf(t, s.Out, "row %d\n", i)
		printf(t, s.ErrOut, "synthient: note %d\n", i)
		printf(t, s.Progress, "\x1b[2K\r") // a bar clearing itself
	}
	printf(t, s.Progress, "\rworking 100%% |######|")
	lines := clitest.Screen(b.String())
	require.NotEmpty(t, lines)
	assert.Equal(t, "working 100% |######|", lines[len(lines)-1], "the bar, last, on a line of its own")
	printf(t, s.Progress, "\n") // the end of the bar
	printf(t, s.ErrOut, "synthient: summary\n")
	lines = clitest.Screen(b.String())
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("row %d", i), fmt.Sprintf("synthient: note %d", i))
	}
	assert.Equal(t, append(want, "synthient: summary"), lines, "the lines, and no bar left")
	for _, l := range lines {
		assert.False(t, strings.Contains(l, "working") && (strings.Contains(l, "row") || strings.Contains(l, "synthient")), "a line shares the bar: %q", l)
	}
}

// Colour shows on a stream that is a terminal, unless --no-color
// (SetColor(false)), NO_COLOR or TERM=dumb say no; elsewhere the marks
// are removed.
func TestColor(t *testing.T) {
	t.Parallel()
	green := textsafe.Paint(textsafe.Green, "ok")
	tests := []struct {
		name  string
		env   map[string]string
		on    bool
		color bool
	}{
		{"on a terminal", nil, true, true},
		{"--no-color", nil, false, false},
		{"NO_COLOR", map[string]string{"NO_COLOR": "1"}, true, false},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, b := screen(tt.env)
			s.SetColor(tt.on)
			printf(t, s.Out, "%s\n", green)
			want := "ok\n"
			if tt.color {
				want = "\x1b[32mok\x1b[0m\n"
			}
			assert.Equal(t, want, b.String())
		})
	}
	var out, errOut strings.Builder
	s := iostreams.New(iostreams.System{Stdout: &out, Stderr: &errOut, StderrIsTerminal: func() bool { return true }}, &redact.Redactor{})
	s.SetColor(true)
	printf(t, s.Out, "%s\n", green)
	printf(t, s.ErrOut, "%s\n", green)
	assert.Equal(t, "ok\n", out.String(), "stdout to a file: no colour")
	assert.Equal(t, "\x1b[32mok\x1b[0m\n", errOut.String(), "stderr on a terminal")
}

// A server's text cannot forge a colour: a mark it could send lacks the
// process's nonce, and an escape sequence it sends stays escaped.
func TestColorCannotBeForged(t *testing.T) {
	t.Parallel()
	s, b := screen(nil)
	s.SetColor(true)
	printf(t, s.Out, "%s\n", "\uE000000000000000000"+"3\uE001evil \x1b[31mred")
	assert.Equal(t, "\uE000000000000000000"+"3\uE001evil \\x1b[31mred\n", b.String())
}
