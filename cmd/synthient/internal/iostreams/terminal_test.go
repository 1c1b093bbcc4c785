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

// On a terminal the progress bar never shares a line with what is
// written to stdout or stderr: it is erased before each line and drawn
// again after it, and erased for good at its end.
func TestTerminalKeepsTheBarApart(t *testing.T) {
	t.Parallel()
	s, b := screen(nil)
	for i := range 5 {
		fmt.Fprintf(s.Progress, "\rworking %d%% |###   |", 20*i)
		fmt.Fprintf(s.Out, "row %d\n", i)
		fmt.Fprintf(s.ErrOut, "synthient: note %d\n", i)
		io.WriteString(s.Progress, "\x1b[2K\r") // a bar clearing itself
	}
	fmt.Fprintf(s.Progress, "\rworking 100%% |######|")
	lines := clitest.Screen(b.String())
	require.NotEmpty(t, lines)
	assert.Equal(t, "working 100% |######|", lines[len(lines)-1], "the bar, last, on a line of its own")
	io.WriteString(s.Progress, "\n") // the end of the bar
	fmt.Fprintln(s.ErrOut, "synthient: summary")
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
			fmt.Fprintln(s.Out, green)
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
	fmt.Fprintln(s.Out, green)
	fmt.Fprintln(s.ErrOut, green)
	assert.Equal(t, "ok\n", out.String(), "stdout to a file: no colour")
	assert.Equal(t, "\x1b[32mok\x1b[0m\n", errOut.String(), "stderr on a terminal")
}

// A server's text cannot forge a colour: a mark it could send lacks the
// process's nonce, and an escape sequence it sends stays escaped.
func TestColorCannotBeForged(t *testing.T) {
	t.Parallel()
	s, b := screen(nil)
	s.SetColor(true)
	fmt.Fprintln(s.Out, "\uE000000000000000000"+"3\uE001evil \x1b[31mred")
	assert.Equal(t, "\uE000000000000000000"+"3\uE001evil \\x1b[31mred\n", b.String())
}
