package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lookup ips with --failed naming the input file (by the same path,
// another path to it, a hard link, a symbolic link, or the file stdin
// comes from with --file -) exits 2 before the input is read or anything
// is sent, and leaves the input as it was: creating --failed would empty
// it first.
func TestBatchFailedIsInput(t *testing.T) {
	t.Parallel()
	const input = "1.1.1.1\n8.8.8.8\n"
	tests := []struct {
		name   string
		failed func(t *testing.T, in string) string // the --failed path for the input file in
		stdin  bool                                 // --file - with stdin from the input file
	}{
		{name: "same path", failed: func(_ *testing.T, in string) string { return in }},
		{name: "another path", failed: func(_ *testing.T, in string) string {
			return filepath.Dir(in) + "/./sub/../" + filepath.Base(in) // not cleaned
		}},
		{name: "hard link", failed: func(t *testing.T, in string) string {
			link := in + ".hard"
			if err := os.Link(in, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{name: "symbolic link", failed: func(t *testing.T, in string) string {
			link := in + ".sym"
			if err := os.Symlink(in, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{name: "stdin from the file", stdin: true, failed: func(_ *testing.T, in string) string { return in }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, "in.txt")
			if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
				t.Fatal(err)
			}
			failed := tt.failed(t, in)
			c := against(srv, "lookup", "ips", "--file", in, "--failed", failed)
			if tt.stdin {
				f, err := os.Open(in)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				c = against(srv, "lookup", "ips", "--file", "-", "--failed", failed)
				c.stdin = f
			}
			r := c.run(t)
			wantCode(t, r, exitUsage, c.args...)
			if want := "--failed " + failed + " is the input file"; !strings.Contains(r.stderr, want) {
				t.Errorf("stderr does not hold %q:\n%s", want, r.stderr)
			}
			if b, err := os.ReadFile(in); err != nil || string(b) != input {
				t.Errorf("the input now holds %q (%v), want %q", b, err, input)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
			if r.stdout != "" {
				t.Errorf("stdout: %q", r.stdout)
			}
		})
	}
}

// A line of a lookup ips file that is not an address is shown cut to 80
// bytes after the keys in it were redacted: the configured key, in any
// case, and anything shaped like a key, also where the cut falls inside
// it (at byte 80 of a line, or of a line too long to read).
func TestBatchInvalidLineEchoesKey(t *testing.T) {
	t.Parallel()
	const key = "123e4567-e89b-12d3-a456-426614174000"
	const pasted = "3f2a9c1e-7b4d-4e8f-9a6b-1c2d3e4f5a6b"
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
			wantCode(t, r, exitUsage, c.args...)
			if strings.Contains(strings.ToLower(r.stderr), tt.secret[:8]) {
				t.Errorf("stderr shows part of the key:\n%.400s", r.stderr)
			}
			if !strings.Contains(r.stderr, "line 1: ") || !strings.Contains(r.stderr, "[redac") {
				t.Errorf("stderr does not report line 1 redacted:\n%.400s", r.stderr)
			}
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
	wantCode(t, r, exitInterrupt, c.args...)
	if r.stderr != "synthient: interrupted\n" || r.stdout != "" {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
