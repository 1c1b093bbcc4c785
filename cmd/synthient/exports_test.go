package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
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

// makeLinkToFile creates a regular file beside path and a symbolic link
// to it at path.
func makeLinkToFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path+".file", []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path+".file", path); err != nil {
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
		what string // what the message says the path is
	}{
		{"FIFO", makeFIFO, "is not a regular file"},
		{"socket", makeSocket, "is not a regular file"},
		{"symbolic link to a FIFO", makeLinkToFIFO, "is a symbolic link: refusing to replace it"},
		{"symbolic link to a regular file", makeLinkToFile, "is a symbolic link: refusing to replace it"},
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
				entriesBefore, _ := os.ReadDir(dir)
				args := []string{"exports", "download", "proxies", "latest", "--out", out}
				if force {
					args = append(args, "--force")
				}
				r := runSrv(t, srv, args...)
				wantCode(t, r, exitUsage, args...)
				want := "--out " + out + " " + tt.what
				if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "--out -") {
					t.Errorf("stderr does not hold %q:\n%s", want, r.stderr)
				}
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("%d requests sent for an --out that is not a regular file", n)
				}
				after, err := os.Lstat(out)
				if err != nil || after.Mode() != before.Mode() {
					t.Errorf("--out changed from %v to %v (%v)", before.Mode(), after.Mode(), err)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != len(entriesBefore) {
					t.Errorf("%s holds %d entries, want the %d it held (no temporary file left)", dir, len(entries), len(entriesBefore))
				}
			})
		}
	}
}

// checkOutFile only looks at the path (it is safe to point at /dev/null):
// a device, a directory, a symbolic link (also to a regular file) and a
// name too long for the file system are refused, the first three pointing
// to --out -; a regular file and a path that does not exist yet are the
// SDK's to judge.
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
		{os.DevNull, "is not a regular file (a device, a named pipe or a socket): refusing to replace it (--out - writes to stdout"},
		{dir, "is a directory, not a regular file"},
		{regular, ""},
		{link, "is a symbolic link: refusing to replace it (name the file it points to; --out - writes to stdout"},
		{filepath.Join(dir, strings.Repeat("a", 300)), "file name too long"},
		{filepath.Join(dir, "missing"), ""},
		{filepath.Join(dir, "missing", "f"), ""},
	}
	if fi, err := os.Lstat("/dev/stdout"); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		tests = append(tests, struct{ path, want string }{"/dev/stdout", "/dev/stdout is a symbolic link: refusing to replace it (name the file it points to; --out - writes to stdout"})
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

// exports download --out - writes the export's exact bytes to stdout, and
// nothing else: the summary goes to stderr, no file named "-" is created,
// and no byte is escaped as terminal text would be.
func TestDownloadToStdout(t *testing.T) {
	t.Parallel()
	srv := newServer(t, synthienttest.WithExportSize(4096))
	var m synthient.ExportMeta
	meta := runSrv(t, srv, "-o", "json", "exports", "meta", "proxies", "latest")
	wantCode(t, meta, exitOK)
	if err := json.Unmarshal([]byte(meta.stdout), &m); err != nil {
		t.Fatalf("meta: %v", err)
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			args := []string{"-o", format, "exports", "download", "proxies", "latest", "--out", "-", "--verify"}
			r := runSrv(t, srv, args...)
			wantCode(t, r, exitOK, args...)
			sum := sha256.Sum256([]byte(r.stdout))
			if int64(len(r.stdout)) != m.Size || hex.EncodeToString(sum[:]) != m.Checksum {
				t.Errorf("stdout holds %d bytes hashing to %x, want the export: %d bytes, %s", len(r.stdout), sum, m.Size, m.Checksum)
			}
			if !strings.Contains(r.stderr, m.ID) || !strings.Contains(r.stderr, "verified") {
				t.Errorf("stderr %q: want the summary of the download", r.stderr)
			}
		})
	}
	if _, err := os.Lstat("-"); err == nil {
		t.Error(`a file named "-" was created`)
	}
}

// --out - never writes a binary export to a terminal: refused before any
// request.
func TestDownloadToStdoutRefusesATerminal(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	args := []string{"exports", "download", "proxies", "latest", "--out", "-"}
	r := call{args: args, env: map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": srv.URL}, ttyOut: true}.run(t)
	wantCode(t, r, exitUsage, args...)
	if r.stdout != "" || !strings.Contains(r.stderr, "terminal") {
		t.Errorf("stdout %q, stderr %q: want nothing on stdout and the reason on stderr", r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// --out - --verify on bytes that do not match the meta's checksum: the
// bytes are already on stdout, so the exit code (3) and stderr say to
// discard them.
func TestDownloadToStdoutVerifyFails(t *testing.T) {
	t.Parallel()
	const size = 2048
	srv := newServer(t, synthienttest.WithExportSize(size))
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Status: 200, Body: strings.Repeat("x", size), ContentType: "application/octet-stream"})
	args := []string{"exports", "download", "proxies", "latest", "--out", "-", "--verify"}
	r := runSrv(t, srv, args...)
	wantCode(t, r, exitAPI, args...)
	if r.stdout != strings.Repeat("x", size) {
		t.Errorf("stdout holds %d bytes, want the %d received", len(r.stdout), size)
	}
	if !strings.Contains(r.stderr, "checksum mismatch") || !strings.Contains(r.stderr, "discard") {
		t.Errorf("stderr %q: want the mismatch and the advice to discard the output", r.stderr)
	}
}

// An --out that cannot be created (under a regular file, through a loop
// of symbolic links, a name longer than a file system takes) exits 2, as
// a missing directory does, with one line, before anything is sent, and
// leaves no file.
func TestDownloadOutCannotBeCreated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		out  func(t *testing.T, dir string) string
		want string
	}{
		{"under a regular file", func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, "reg"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "reg", "f.parquet")
		}, "not a directory"},
		{"through a loop of links", func(t *testing.T, dir string) string {
			if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "loop", "f.parquet")
		}, "too many levels of symbolic links"},
		{"a name of 300 bytes", func(_ *testing.T, dir string) string {
			return filepath.Join(dir, strings.Repeat("a", 300))
		}, "file name too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			dir := t.TempDir()
			out := tt.out(t, dir)
			entries, _ := os.ReadDir(dir)
			args := []string{"exports", "download", "proxies", "latest", "--out", out}
			r := runSrv(t, srv, args...)
			wantCode(t, r, exitUsage, args...)
			if ls := lines(r.stderr); len(ls) != 1 || !strings.Contains(ls[0], tt.want) {
				t.Errorf("stderr %q, want one line holding %q", r.stderr, tt.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
			if after, _ := os.ReadDir(dir); len(after) != len(entries) {
				t.Errorf("%s holds %d entries, want %d", dir, len(after), len(entries))
			}
		})
	}
}
