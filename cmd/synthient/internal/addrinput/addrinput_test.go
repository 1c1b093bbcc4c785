package addrinput_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// An interrupt while the addresses are still being read (an interactive
// stdin, a pipe that has not ended) stops the batch: exit 130, promptly,
// with the addresses read accounted for.
func TestBatchInterruptWhileReading(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	pr, pw := io.Pipe()
	defer pw.Close() //nolint:errcheck // an io.PipeWriter's Close returns nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed, _, files := clitest.OutFiles(t)
	c := clitest.BatchCall(srv, "", files...)
	c.Stdin, c.Ctx = pr, ctx
	done := make(chan clitest.Result, 1)
	go func() { done <- c.Run(t) }()
	_, err := io.WriteString(pw, "1.1.1.1\n8.8.8.8\n")
	require.NoError(t, err)
	cancel()
	select {
	case r := <-done:
		clitest.RequireCode(t, r, clierr.Interrupt)
		s := clitest.ParseSummary(t, r.Stderr)
		assert.Equal(t, s.Read, s.NotSent, "the addresses read are not sent")
		assert.Len(t, clitest.FileLines(t, failed), int(s.NotSent), "--failed")
	case <-time.After(2 * time.Minute):
		_ = pw.Close() // let the command end, so the test does not leak it
		r := <-done
		assert.Fail(t, "lookup ips --file - did not return within 2 minutes of the interrupt while stdin was open",
			"it returned only once stdin ended (exit %d)", r.Code)
	}
}

// A line too long to read must not make the addresses around it vanish:
// each is looked up, and the long line is reported with its number and
// counted as invalid.
func TestBatchOverlongLine(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	input := "1.1.1.1\n8.8.8.8\n" + strings.Repeat("x", 2<<20) + "\n9.9.9.9\n"
	r := clitest.BatchCall(srv, input).Run(t)
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stderr, "line 3", "stderr does not name line 3")
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8", "9.9.9.9"}, clitest.NDJSONIPs(t, r.Stdout), "results")
	assert.Equal(t, int64(1), clitest.ParseSummary(t, r.Stderr).Invalid, "invalid")
}

// A line of a lookup ips file that is not an address is shown cut to 80
// bytes after the keys in it were redacted: the configured key, in any
// case, and anything shaped like a key, also where the cut falls inside
// it (at byte 80 of a line, or of a line too long to read).
func TestBatchInvalidLineEchoesKey(t *testing.T) {
	t.Parallel()
	const key, pasted = clitest.ConfiguredKey, clitest.PastedKey
	pad := strings.Repeat("x", 70) + " " // a key after it straddles byte 80
	tests := []struct {
		name, line, secret string
	}{
		{"configured key cut", pad + key, key},
		{"configured key in upper case", "key " + strings.ToUpper(key), key},
		{"key shape cut", pad + pasted, pasted},
		{"key shape in a header", "x-api-key: " + strings.ToUpper(pasted), pasted},
		{"overlong line", pad + pasted + strings.Repeat("y", addrinput.MaxLine), pasted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			c := clitest.Call{Args: []string{"--base-url", srv.URL, "lookup", "ips", "--file", "-"},
				Env: map[string]string{"SYNTHIENT_API_KEY": key}, Stdin: strings.NewReader(tt.line + "\n")}
			r := c.Run(t)
			clitest.RequireCode(t, r, clierr.Usage, c.Args...)
			assert.NotContains(t, strings.ToLower(r.Stderr), tt.secret[:8], "stderr shows part of the key")
			assert.Contains(t, r.Stderr, "line 1: ", "stderr does not report line 1")
			assert.Contains(t, r.Stderr, "[redac", "stderr does not report line 1 redacted")
		})
	}
}

// Ctrl-C (the context cancelled) stops lookup ips while it opens a
// --file that is a named pipe, which blocks until a writer opens it. The
// command exits 130 and sends nothing; the open it abandons ends when the
// test opens the pipe for writing. (A --failed named pipe does not block:
// os.Create opens it for reading and writing.)
func TestBatchOpenInterrupted(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	clitest.MakeFIFO(t, fifo)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // before the open: the open cannot complete before the command returns
	c := clitest.Against(srv, "lookup", "ips", "--file", fifo)
	c.Ctx = ctx
	r := c.Run(t) // before the fix: blocked in the open for ever
	// Meets the open the command abandoned, so that it ends.
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0) //nolint:gosec // the test's named pipe
	if err == nil {
		_ = f.Close() // opened only for the meeting: nothing written
	}
	clitest.RequireCode(t, r, clierr.Interrupt, c.Args...)
	assert.Equal(t, "synthient: interrupted\n", r.Stderr, "stderr")
	assert.Empty(t, r.Stdout, "stdout")
	assert.Empty(t, srv.Requests(), "requests sent")
}
