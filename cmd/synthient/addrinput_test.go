package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An interrupt while the addresses are still being read (an interactive
// stdin, a pipe that has not ended) stops the batch: exit 130, promptly,
// with the addresses read accounted for.
func TestBatchInterruptWhileReading(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed, _, files := outFiles(t)
	c := batchCall(srv, "", files...)
	c.stdin, c.ctx = pr, ctx
	done := make(chan result, 1)
	go func() { done <- c.run(t) }()
	_, err := io.WriteString(pw, "1.1.1.1\n8.8.8.8\n")
	require.NoError(t, err)
	cancel()
	select {
	case r := <-done:
		requireCode(t, r, exitInterrupt)
		s := parseSummary(t, r.stderr)
		assert.Equal(t, s.read, s.notSent, "the addresses read are not sent")
		assert.Len(t, fileLines(t, failed), int(s.notSent), "--failed")
	case <-time.After(2 * time.Second):
		pw.Close() // let the command end, so the test does not leak it
		r := <-done
		assert.Fail(t, "lookup ips --file - did not return within 2s of the interrupt while stdin was open",
			"it returned only once stdin ended (exit %d)", r.code)
	}
}

// A line too long to read must not make the addresses around it vanish:
// each is looked up, and the long line is reported with its number and
// counted as invalid.
func TestBatchOverlongLine(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	input := "1.1.1.1\n8.8.8.8\n" + strings.Repeat("x", 2<<20) + "\n9.9.9.9\n"
	r := batchCall(srv, input).run(t)
	requireCode(t, r, exitOK)
	assert.Contains(t, r.stderr, "line 3", "stderr does not name line 3")
	assert.Equal(t, []string{"1.1.1.1", "8.8.8.8", "9.9.9.9"}, ndjsonIPs(t, r.stdout), "results")
	assert.Equal(t, int64(1), parseSummary(t, r.stderr).invalid, "invalid")
}

// A line of a lookup ips file that is not an address is shown cut to 80
// bytes after the keys in it were redacted: the configured key, in any
// case, and anything shaped like a key, also where the cut falls inside
// it (at byte 80 of a line, or of a line too long to read).
func TestBatchInvalidLineEchoesKey(t *testing.T) {
	t.Parallel()
	const key, pasted = configuredKey, pastedKey
	pad := strings.Repeat("x", 70) + " " // a key after it straddles byte 80
	tests := []struct {
		name, line, secret string
	}{
		{"configured key cut", pad + key, key},
		{"configured key in upper case", "key " + strings.ToUpper(key), key},
		{"key shape cut", pad + pasted, pasted},
		{"key shape in a header", "x-api-key: " + strings.ToUpper(pasted), pasted},
		{"overlong line", pad + pasted + strings.Repeat("y", maxInputLine), pasted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := call{args: []string{"--base-url", srv.URL, "lookup", "ips", "--file", "-"},
				env: map[string]string{"SYNTHIENT_API_KEY": key}, stdin: strings.NewReader(tt.line + "\n")}
			r := c.run(t)
			requireCode(t, r, exitUsage, c.args...)
			assert.NotContains(t, strings.ToLower(r.stderr), tt.secret[:8], "stderr shows part of the key")
			assert.Contains(t, r.stderr, "line 1: ", "stderr does not report line 1")
			assert.Contains(t, r.stderr, "[redac", "stderr does not report line 1 redacted")
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
	srv := newServer(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	makeFIFO(t, fifo)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // before the open: the open cannot complete before the command returns
	c := against(srv, "lookup", "ips", "--file", fifo)
	c.ctx = ctx
	r := c.run(t) // before the fix: blocked in the open for ever
	if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
		f.Close()
	}
	requireCode(t, r, exitInterrupt, c.args...)
	assert.Equal(t, "synthient: interrupted\n", r.stderr, "stderr")
	assert.Empty(t, r.stdout, "stdout")
	assert.Empty(t, srv.Requests(), "requests sent")
}

// An invalid line's key shapes are redacted where the line is printed, and
// never join the secrets every later line of output is searched for: a file
// of key-shaped lines must not make each line slower to print than the
// last.
func TestBatchInvalidLinesDoNotGrowTheSecrets(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	a := &app{env: &env{stderr: &stderr}, secrets: &redactor{}}
	for i := range 100 {
		key := fmt.Sprintf("%08x-aaaa-bbbb-cccc-%012x", i, i)
		a.reportInvalid(int64(i+1), "token "+key+key[:20])
		assert.NotContains(t, stderr.String(), key, "line %d printed its key", i+1)
	}
	assert.Empty(t, a.secrets.secrets, "secrets added by invalid lines")
	assert.Equal(t, 100, strings.Count(stderr.String(), redacted), "redacted keys")
}
