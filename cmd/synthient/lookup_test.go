package main

import (
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
