package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// makeFIFO creates a named pipe at path.
func makeFIFO(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// makeSocket creates a Unix socket at path, listening until the test ends.
func makeSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

// makeLinkToFIFO creates a named pipe beside path and a symbolic link to
// it at path.
func makeLinkToFIFO(t *testing.T, path string) {
	t.Helper()
	makeFIFO(t, path+".fifo")
	if err := os.Symlink(path+".fifo", path); err != nil {
		t.Fatal(err)
	}
}

// exports download to an --out that exists and is not a regular file is
// refused with exit 2 before any request, also with --force, and the file
// is left as it was (today's rename would turn a device or a FIFO into a
// regular file).
func TestDownloadRefusesSpecialOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		kind string
	}{
		{"FIFO", makeFIFO, "a named pipe (FIFO)"},
		{"socket", makeSocket, "a socket"},
		{"symbolic link to a FIFO", makeLinkToFIFO, "a named pipe (FIFO)"},
	}
	for _, tt := range tests {
		for _, force := range []bool{false, true} {
			name := tt.name
			if force {
				name += " --force"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				srv := newServer(t)
				// A short directory: a socket's path is limited to about 100 bytes.
				dir, err := os.MkdirTemp("", "out")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) })
				out := filepath.Join(dir, "f")
				tt.make(t, out)
				before, err := os.Lstat(out)
				if err != nil {
					t.Fatal(err)
				}
				args := []string{"exports", "download", "proxies", "latest", "--out", out}
				if force {
					args = append(args, "--force")
				}
				r := runSrv(t, srv, args...)
				wantCode(t, r, exitUsage, args...)
				if want := "--out " + out + " is " + tt.kind + ", not a regular file"; !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not hold %q:\n%s", want, r.stderr)
				}
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("%d requests sent for an --out that is not a regular file", n)
				}
				after, err := os.Lstat(out)
				if err != nil || after.Mode() != before.Mode() {
					t.Errorf("--out changed from %v to %v (%v)", before.Mode(), after.Mode(), err)
				}
				if _, err := os.Lstat(out + ".part"); err == nil {
					t.Error("a .part file was left")
				}
			})
		}
	}
}

// checkOutFile only looks at the path (it is safe to point at /dev/null):
// a device, a directory are refused; a regular file, a link to one and a
// path that does not exist yet are the SDK's to judge.
func TestCheckOutFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string // in the error; "" for none
	}{
		{os.DevNull, "is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
		{regular, ""},
		{link, ""},
		{filepath.Join(dir, "missing"), ""},
		{filepath.Join(dir, "missing", "f"), ""},
	}
	for _, tt := range tests {
		err := checkOutFile(tt.path)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkOutFile(%s) = %v, want nil", tt.path, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("checkOutFile(%s) = %v, want an error holding %q", tt.path, err, tt.want)
		case err != nil && exitCode(err) != exitUsage:
			t.Errorf("checkOutFile(%s): exit code %d, want %d", tt.path, exitCode(err), exitUsage)
		}
	}
}
