package config_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// Tests of keyfile.go: --api-key-file.

// --api-key-file reads the key from a file or stdin, trimmed of the
// newline and spaces around it, over SYNTHIENT_API_KEY; a file that is
// missing, empty, too big or holds more than a key, and a combination
// that cannot mean one key, are usage errors (exit 2) that send nothing
// and never show what the file holds.
func TestAPIKeyFile(t *testing.T) {
	t.Parallel()
	const secretLine = "second-line-secret"
	tests := []struct {
		name    string
		content string // the key file's; KEY is the fake's key
		args    []string
		stdin   string
		envKey  string // SYNTHIENT_API_KEY
		code    int
		stderr  string // in stderr, for a failure
	}{
		{name: "key and newline", content: "KEY\n", args: []string{"--api-key-file", "FILE", "account"}},
		{name: "spaces and CRLF", content: "  KEY \r\n", args: []string{"--api-key-file", "FILE", "account"}},
		{name: "no newline", content: "KEY", args: []string{"--api-key-file", "FILE", "account"}},
		{name: "stdin", args: []string{"--api-key-file", "-", "account"}, stdin: "KEY\n"},
		{name: "over SYNTHIENT_API_KEY", content: "KEY\n", args: []string{"--api-key-file", "FILE", "account"},
			envKey: clitest.UnknownKey},
		{name: "health", content: "KEY\n", args: []string{"--api-key-file", "FILE", "health"}},
		{name: "empty file", content: "", args: []string{"--api-key-file", "FILE", "account"},
			code: clierr.Usage, stderr: "--api-key-file: FILE is empty"},
		{name: "white space only", content: " \n\t\n", args: []string{"--api-key-file", "FILE", "account"},
			code: clierr.Usage, stderr: "--api-key-file: FILE is empty"},
		{name: "empty stdin", args: []string{"--api-key-file", "-", "account"},
			code: clierr.Usage, stderr: "--api-key-file: stdin is empty"},
		{name: "two lines", content: "KEY\n" + secretLine + "\n", args: []string{"--api-key-file", "FILE", "account"},
			code: clierr.Usage, stderr: "FILE holds more than one word"},
		{name: "too large", content: strings.Repeat(secretLine, 300), args: []string{"--api-key-file", "FILE", "account"},
			code: clierr.Usage, stderr: "FILE is larger than 4096 bytes"},
		{name: "missing file", args: []string{"--api-key-file", "MISSING", "account"},
			code: clierr.Usage, stderr: "no such file or directory"},
		{name: "a directory", args: []string{"--api-key-file", "DIR", "account"},
			code: clierr.Usage, stderr: "--api-key-file: DIR is not a regular file, a pipe or a terminal (a directory): refused"},
		{name: "with --api-key", content: "KEY\n", args: []string{"--api-key-file", "FILE", "--api-key", "KEY", "account"},
			code: clierr.Usage, stderr: "--api-key and --api-key-file cannot be combined"},
		{name: "with --fake", content: "KEY\n", args: []string{"--fake", "--api-key-file", "FILE", "account"},
			code: clierr.Usage, stderr: "cannot be combined with --api-key-file"},
		{name: "stdin twice", args: []string{"--api-key-file", "-", "lookup", "ips", "--file", "-"}, stdin: "KEY\n",
			code: clierr.Usage, stderr: "--api-key-file - and --file - cannot both read stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "key")
			require.NoError(t, os.WriteFile(file, []byte(strings.ReplaceAll(tt.content, "KEY", srv.APIKey)), 0o600))
			paths := strings.NewReplacer("FILE", file, "MISSING", filepath.Join(dir, "missing"), "DIR", dir, "KEY", srv.APIKey)
			var args []string
			if tt.args[0] != "--fake" {
				args = []string{"--base-url", srv.URL}
			}
			for _, a := range tt.args {
				args = append(args, paths.Replace(a))
			}
			c := clitest.Call{Args: args, Env: map[string]string{"SYNTHIENT_API_KEY": tt.envKey},
				Stdin: strings.NewReader(strings.ReplaceAll(tt.stdin, "KEY", srv.APIKey))}
			r := c.Run(t)
			clitest.RequireCode(t, r, tt.code, args...)
			if tt.code == clierr.OK {
				assert.Empty(t, r.Stderr, "stderr")
				return
			}
			assert.Contains(t, r.Stderr, paths.Replace(tt.stderr), "stderr")
			for _, s := range []string{srv.APIKey, secretLine} {
				assert.NotContains(t, r.Stdout+r.Stderr, s, "the output shows what the key file holds")
			}
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}

// Ctrl-C (the context cancelled) stops a command that waits for its key:
// stdin or a named pipe that sent part of it and stays open, or a named
// pipe nothing has opened for writing yet. The command exits 130 and
// sends nothing; the read it abandons ends when the other end closes.
func TestAPIKeyFileInterrupted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fifo     bool // the key file is a named pipe; else stdin, a pipe
		sendPart bool // part of the key is sent before the interrupt
	}{
		{"stdin mid-key", false, true},
		{"named pipe mid-key", true, true},
		{"named pipe not opened", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := clitest.Call{Args: []string{"--base-url", srv.URL, "--api-key-file", "-", "account"}, Ctx: ctx}
			// open returns the key file's other end, once the command
			// opened the key file.
			var open func() io.WriteCloser
			if tt.fifo {
				fifo := filepath.Join(t.TempDir(), "key")
				clitest.MakeFIFO(t, fifo)
				c.Args[3] = fifo
				open = func() io.WriteCloser {
					w, err := os.OpenFile(fifo, os.O_WRONLY, 0) //nolint:gosec // the test's named pipe
					require.NoError(t, err)
					return w
				}
			} else {
				pr, pw := io.Pipe()
				c.Stdin = pr
				open = func() io.WriteCloser { return pw }
			}
			done := make(chan clitest.Result, 1)
			go func() { done <- c.Run(t) }()
			var w io.WriteCloser
			if tt.sendPart {
				w = open()
				// On io.Pipe, Write returns once the command read it.
				_, err := w.Write([]byte("3f2a9c1e"))
				require.NoError(t, err)
			}
			cancel()
			r := <-done // before the fix: blocked until the key file ends
			if w == nil {
				w = open() // meets the open the command abandoned
			}
			require.NoError(t, w.Close()) // the abandoned read ends
			clitest.RequireCode(t, r, clierr.Interrupt)
			assert.Equal(t, "synthient: interrupted\n", r.Stderr, "stderr")
			assert.Empty(t, r.Stdout, "stdout")
			assert.Empty(t, srv.Requests(), "requests sent")
		})
	}
}
