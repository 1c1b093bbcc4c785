package main

// Tests of main.go on a real terminal (a pty): the progress bar and the
// output never share a line, and colour shows unless NO_COLOR.

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// onPTY runs the command with stdout and stderr on a pty, and returns
// what the terminal received and the lines it shows.
func onPTY(t *testing.T, env []string, args ...string) (raw string, screen []string) {
	t.Helper()
	return onPTYOut(t, env, nil, args...)
}

// onPTYOut runs the command with stderr on a pty, and stdout there too,
// or to stdout when it is not nil (a pipe: | cat), and returns what the
// terminal received and the lines it shows.
func onPTYOut(t *testing.T, env []string, stdout io.Writer, args ...string) (raw string, screen []string) {
	t.Helper()
	srv := clitest.NewServer(t)
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close() //nolint:errcheck // read to its end below: closing it loses nothing
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200}))
	cmd := process(t, srv, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = tty, tty
	if stdout != nil {
		cmd.Stdout = stdout
	}
	require.NoError(t, cmd.Start())
	require.NoError(t, tty.Close()) // the child holds it
	var out bytes.Buffer
	_, _ = io.Copy(&out, ptmx) // ends with EIO once the child closed the pty
	require.NoError(t, cmd.Wait(), "the command failed:\n%s", out.String())
	return out.String(), clitest.Screen(out.String())
}

// A bulk lookup on a terminal: the bar is drawn, never on a line with a
// row or a message, and gone at the end; the rows line up under one
// header; the summary is the last line; risk scores and counts are in
// colour, and with NO_COLOR nothing is.
func TestTerminalOutput(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "in.txt")
	in := clitest.Addrs(400)
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(in, "\n")+"\nnope\n"), 0o600))
	bar := regexp.MustCompile(`looking up +\d+%`)

	raw, screen := onPTY(t, []string{"TERM=xterm"}, "lookup", "ips", "--file", file, "--batch-size", "20", "--concurrency", "2")
	require.Regexp(t, bar, raw, "the bar was drawn")
	var rows []string
	for _, l := range screen {
		assert.NotRegexp(t, bar, l, "a line the terminal shows holds the bar")
		if !strings.HasPrefix(l, "synthient: ") {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, 401, "the header and a row per address")
	col := strings.Index(rows[0], "ASN")
	for _, r := range rows[1:] {
		assert.Equal(t, "AS", r[col:col+2], "%q does not line up with the header", r)
	}
	assert.Regexp(t, `^synthient: 401 addresses read: 400 looked up`, screen[len(screen)-1])
	assert.Regexp(t, "\x1b\\[3[123]m\\d+\x1b\\[0m", raw, "a risk score in colour")
	assert.Contains(t, raw, "\x1b[32m400 looked up\x1b[0m")

	raw, _ = onPTY(t, []string{"TERM=xterm", "NO_COLOR=1"}, "lookup", "ips", "--file", file, "--no-progress")
	assert.NotRegexp(t, "\x1b\\[[0-9;]*m", raw, "NO_COLOR: no colour")
	assert.NotRegexp(t, bar, raw, "--no-progress: no bar")
}

// With stdout piped (lookup ip A B -o json | cat) and stderr on the
// terminal, no bar is drawn, as gh does: the terminal gets the summary
// alone, never a bar that the lines cat prints would run into.
func TestTerminalStdoutPiped(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	args := append([]string{"-o", "json", "lookup", "ip"}, clitest.Addrs(300)...)
	raw, screen := onPTYOut(t, []string{"TERM=xterm"}, &out, args...)
	assert.NotContains(t, raw, "looking up", "a bar on the terminal")
	assert.NotContains(t, raw, "\r\x1b[K", "a line erased on the terminal")
	require.Len(t, screen, 1, "the terminal's lines")
	assert.Regexp(t, `^synthient: 300 addresses read: 300 looked up`, screen[0])
	assert.Len(t, clitest.Lines(out.String()), 300, "the results on stdout")
}
