package exports_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	exportscmd "github.com/synthient-go/synthient/cmd/synthient/internal/cmd/exports"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of download.go: exports download.

// makeSocket creates a Unix socket at path, listening until the test ends.
func makeSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() }) // nothing was accepted: its error says nothing
}

// makeLinkToFIFO creates a named pipe beside path and a symbolic link to
// it at path.
func makeLinkToFIFO(t *testing.T, path string) {
	t.Helper()
	clitest.MakeFIFO(t, path+".fifo")
	require.NoError(t, os.Symlink(path+".fifo", path))
}

// makeLinkToFile creates a regular file beside path and a symbolic link
// to it at path.
func makeLinkToFile(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path+".file", []byte("precious"), 0o600))
	require.NoError(t, os.Symlink(path+".file", path))
}

// The download's one-line report.
func TestGoldenDownload(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "proxies.parquet")
	r := clitest.RunSrv(t, srv, "exports", "download", "proxies", "2026-06-09", "--out", out, "--verify")
	clitest.RequireCode(t, r, 0)
	clitest.Golden(t, "exports_download", strings.ReplaceAll(r.Stdout, dir, "<DIR>"))
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
		{"FIFO", clitest.MakeFIFO, "is not a regular file"},
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
				srv := clitest.NewServer(t)
				// A short directory: a socket's path is limited to about 100 bytes.
				dir, err := os.MkdirTemp("", "out")
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, os.RemoveAll(dir)) })
				out := filepath.Join(dir, "f")
				tt.make(t, out)
				before, err := os.Lstat(out)
				require.NoError(t, err)
				entriesBefore, _ := os.ReadDir(dir)
				args := []string{"exports", "download", "proxies", "latest", "--out", out}
				if force {
					args = append(args, "--force")
				}
				r := clitest.RunSrv(t, srv, args...)
				clitest.RequireCode(t, r, clierr.Usage, args...)
				assert.Contains(t, r.Stderr, "--out "+out+" "+tt.what, "stderr")
				assert.Contains(t, r.Stderr, "--out -", "stderr")
				assert.Empty(t, srv.Requests(), "requests sent for an --out that is not a regular file")
				after, err := os.Lstat(out)
				if assert.NoError(t, err, "--out") {
					assert.Equal(t, before.Mode(), after.Mode(), "--out changed")
				}
				entries, _ := os.ReadDir(dir)
				assert.Len(t, entries, len(entriesBefore), "entries of %s: want the ones it held (no temporary file left)", dir)
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
	require.NoError(t, os.WriteFile(regular, nil, 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(regular, link))
	tests := []struct {
		name string
		path string
		want string // in the error; "" for none
	}{
		{"device", os.DevNull, "is not a regular file (a device, a named pipe or a socket): refusing to replace it (--out - writes to stdout"},
		{"directory", dir, "is a directory, not a regular file"},
		{"regular file", regular, ""},
		{"symbolic link", link, "is a symbolic link: refusing to replace it (name the file it points to; --out - writes to stdout"},
		{"name too long", filepath.Join(dir, strings.Repeat("a", 300)), "file name too long"},
		{"missing", filepath.Join(dir, "missing"), ""},
		{"in a missing directory", filepath.Join(dir, "missing", "f"), ""},
	}
	if fi, err := os.Lstat("/dev/stdout"); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		tests = append(tests, struct{ name, path, want string }{"link at dev stdout", "/dev/stdout", "/dev/stdout is a symbolic link: refusing to replace it (name the file it points to; --out - writes to stdout"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := exportscmd.CheckOutFile(tt.path)
			if tt.want == "" {
				assert.NoError(t, err, "exportscmd.CheckOutFile(%s)", tt.path)
				return
			}
			if assert.Error(t, err, "exportscmd.CheckOutFile(%s)", tt.path) {
				assert.Contains(t, err.Error(), tt.want, "exportscmd.CheckOutFile(%s)", tt.path)
				assert.Equal(t, clierr.Usage, clierr.ExitCode(err), "exit code of %v", err)
			}
		})
	}
}

// exports download --out - writes the export's exact bytes to stdout, and
// nothing else: the summary goes to stderr, no file named "-" is created,
// and no byte is escaped as terminal text would be.
func TestDownloadToStdout(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t, synthienttest.WithExportSize(4096))
	var m synthient.ExportMeta
	meta := clitest.RunSrv(t, srv, "-o", "json", "exports", "meta", "proxies", "latest")
	clitest.RequireCode(t, meta, clierr.OK)
	require.NoError(t, json.Unmarshal([]byte(meta.Stdout), &m), "meta")
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			args := []string{"-o", format, "exports", "download", "proxies", "latest", "--out", "-", "--verify"}
			r := clitest.RunSrv(t, srv, args...)
			clitest.RequireCode(t, r, clierr.OK, args...)
			sum := sha256.Sum256([]byte(r.Stdout))
			assert.Equal(t, m.Size, int64(len(r.Stdout)), "bytes on stdout")
			assert.Equal(t, m.Checksum, hex.EncodeToString(sum[:]), "SHA-256 of stdout")
			assert.Contains(t, r.Stderr, m.ID, "stderr: want the summary of the download")
			assert.Contains(t, r.Stderr, "verified", "stderr: want the summary of the download")
		})
	}
	t.Cleanup(func() {
		_, err := os.Lstat("-")
		assert.Error(t, err, `a file named "-" was created`)
	})
}

// --out - never writes a binary export to a terminal: refused before any
// request.
func TestDownloadToStdoutRefusesATerminal(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	args := []string{"exports", "download", "proxies", "latest", "--out", "-"}
	r := clitest.Call{Args: args, Env: map[string]string{"SYNTHIENT_API_KEY": srv.APIKey, "SYNTHIENT_BASE_URL": srv.URL}, TTYOut: true}.Run(t)
	clitest.RequireCode(t, r, clierr.Usage, args...)
	assert.Empty(t, r.Stdout, "stdout")
	assert.Contains(t, r.Stderr, "terminal", "stderr: want the reason")
	assert.Empty(t, srv.Requests(), "requests sent")
}

// --out - --verify on bytes that do not match the meta's checksum: the
// bytes are already on stdout, so the exit code (3) and stderr say to
// discard them.
func TestDownloadToStdoutVerifyFails(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	c, err := srv.NewClient()
	require.NoError(t, err)
	defer c.Close()
	m, err := c.ExportMeta(context.Background(), synthient.FeedProxies, "latest")
	require.NoError(t, err)
	size := int(m.Size)
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Status: 200, Body: strings.Repeat("x", size), ContentType: "application/octet-stream"})
	args := []string{"exports", "download", "proxies", "latest", "--out", "-", "--verify"}
	r := clitest.RunSrv(t, srv, args...)
	clitest.RequireCode(t, r, clierr.API, args...)
	assert.Equal(t, strings.Repeat("x", size), r.Stdout, "stdout: want the bytes received")
	assert.Contains(t, r.Stderr, "checksum mismatch", "stderr")
	assert.Contains(t, r.Stderr, "discard", "stderr: want the advice to discard the output")
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
			require.NoError(t, os.WriteFile(filepath.Join(dir, "reg"), nil, 0o600))
			return filepath.Join(dir, "reg", "f.parquet")
		}, "not a directory"},
		{"through a loop of links", func(t *testing.T, dir string) string {
			require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
			return filepath.Join(dir, "loop", "f.parquet")
		}, "too many levels of symbolic links"},
		{"a name of 300 bytes", func(_ *testing.T, dir string) string {
			return filepath.Join(dir, strings.Repeat("a", 300))
		}, "file name too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			dir := t.TempDir()
			out := tt.out(t, dir)
			entries, _ := os.ReadDir(dir)
			args := []string{"exports", "download", "proxies", "latest", "--out", out}
			r := clitest.RunSrv(t, srv, args...)
			clitest.RequireCode(t, r, clierr.Usage, args...)
			if ls := clitest.Lines(r.Stderr); assert.Len(t, ls, 1, "stderr lines") {
				assert.Contains(t, ls[0], tt.want, "stderr")
			}
			assert.Empty(t, srv.Requests(), "requests sent")
			after, _ := os.ReadDir(dir)
			assert.Len(t, after, len(entries), "entries of %s", dir)
		})
	}
}

// An --out that cannot be created exits 2 before anything is sent; bytes
// that are not the export (here, fewer than the meta's size, caught
// before --verify) exit 3; neither leaves a file.
func TestDownloadFailuresExitCodes(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	for _, out := range []string{filepath.Join(dir, "missing", "f.parquet"), dir} {
		r := clitest.RunSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--force")
		clitest.RequireCode(t, r, clierr.Usage)
		assert.Len(t, clitest.Lines(r.Stderr), 1, "--out %s: stderr lines", out)
		assert.Contains(t, r.Stderr, out, "--out %s: stderr", out)
	}
	assert.Empty(t, srv.Requests(), "requests sent for unusable --out paths")

	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Status: 200, Body: "not the export", ContentType: "application/octet-stream"})
	out := filepath.Join(dir, "f.parquet")
	r := clitest.RunSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--verify")
	clitest.RequireCode(t, r, clierr.API)
	assert.Contains(t, r.Stderr, "size mismatch", "stderr")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "%s holds entries after failed downloads", dir)
}

// exports download onto an existing file that is not the export, without
// --force, exits 2, leaves the file alone and downloads nothing (the meta
// it was compared with is a free call); with --force it overwrites it.
func TestDownloadExistingFile(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	out := filepath.Join(t.TempDir(), "proxies.parquet")
	require.NoError(t, os.WriteFile(out, []byte("precious"), 0o600))
	r := clitest.RunSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--verify")
	clitest.RequireCode(t, r, clierr.Usage)
	if ls := clitest.Lines(r.Stderr); assert.NotEmpty(t, ls, "stderr") {
		assert.Contains(t, ls[0], out, "stderr")
		assert.Contains(t, ls[0], "exists", "stderr")
	}
	b, _ := os.ReadFile(out) //nolint:gosec // a file of the test's temporary directory
	assert.Equal(t, "precious", string(b), "the file was changed")
	assert.Zero(t, srv.Arrivals(synthienttest.RouteDownload), "downloads")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteExportMeta), "metas")
	parts, _ := filepath.Glob(out + "*.part")
	assert.Empty(t, parts, "temporary files were left")

	r = clitest.RunSrv(t, srv, "exports", "download", "proxies", "latest", "--out", out, "--verify", "--force")
	clitest.RequireCode(t, r, 0)
	b, err := os.ReadFile(out) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "PAR1") && strings.HasSuffix(string(b), "PAR1"),
		"the file is not the export (%d bytes, starts %q)", len(b), b[:min(8, len(b))])
}

// With stdout and stderr on a terminal, a download draws a progress bar
// on stderr, and stdout is as without one; with stdout piped, no bar is
// drawn.
func TestDownloadProgressOnTerminal(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	out := filepath.Join(t.TempDir(), "f.parquet")
	c := clitest.Against(srv, "exports", "download", "proxies", "latest", "--out", out)
	c.Terminal, c.TTYOut = true, true
	r := c.Run(t)
	clitest.RequireCode(t, r, 0)
	assert.Contains(t, r.Stderr, "downloading", "no progress bar on stderr")
	assert.True(t, strings.HasPrefix(r.Stdout, "wrote "), "stdout: %q", r.Stdout)

	c = clitest.Against(srv, "exports", "download", "proxies", "latest", "--out", out, "--force")
	c.Terminal = true
	r = c.Run(t)
	clitest.RequireCode(t, r, 0)
	assert.NotContains(t, r.Stderr, "downloading", "a progress bar with stdout piped")
}

// downloadParse is what a download command line parses to, its runF
// seam's options, or its error.
type downloadParse struct {
	args                []string
	feed, id, out, want string // the options' Feed, ID and Out; else want, the error
	verify, force       bool
}

// checkDownloadParse builds a download command with newCmd, a runF that
// captures its options, and checks what each of tests parses to: the
// options, or a usage error before the run.
func checkDownloadParse(t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *exportscmd.DownloadOptions) error) *cobra.Command, tests []downloadParse) {
	t.Helper()
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var seam clitest.Seam[exportscmd.DownloadOptions]
			err := clitest.Parse(t, newCmd(clitest.Factory(iostreams.System{}), seam.RunF), tt.args...)
			if !seam.Parsed(t, err, tt.want) {
				return
			}
			got := seam.Got
			assert.Equal(t, []string{tt.feed, tt.id, tt.out}, []string{got.Feed, got.ID, got.Out}, "feed, ID, out")
			assert.Equal(t, []bool{tt.verify, tt.force}, []bool{got.Verify, got.Force}, "--verify, --force")
		})
	}
}

// exports download parses its arguments and flags before anything is
// sent (its runF seam): the export's ID from ID, or --date and --hour,
// else latest; a feed that is none, an ID with --date, an --hour without
// --date or out of range are usage errors.
func TestDownloadParse(t *testing.T) {
	t.Parallel()
	checkDownloadParse(t, exportscmd.NewCmdDownload, []downloadParse{
		{args: []string{"proxies"}, feed: "proxies", id: "latest"},
		{args: []string{"proxies", "2026-06-10/13", "--out", "p.parquet", "--verify"}, feed: "proxies", id: "2026-06-10/13", out: "p.parquet", verify: true},
		{args: []string{"anonymizers", "--date", "2026-06-09", "--force"}, feed: "anonymizers", id: "2026-06-09", force: true},
		{args: []string{"proxies", "-d", "2026-06-10", "--hour", "7", "--out", "-"}, feed: "proxies", id: "2026-06-10/07", out: "-"},
		{args: []string{"proxies", "--date", "latest"}, feed: "proxies", id: "latest"},
		{args: []string{"nosuch"}, want: `unknown feed "nosuch"`},
		{args: []string{"proxies", "latest", "--date", "2026-06-09"}, want: "give the export as ID or as --date (and --hour), not both"},
		{args: []string{"proxies", "--hour", "3"}, want: "--hour 3 needs --date YYYY-MM-DD"},
		{args: []string{"proxies", "--date", "latest", "--hour", "3"}, want: "--hour 3 needs --date YYYY-MM-DD"},
		{args: []string{"proxies", "--date", "2026-06-10", "--hour", "24"}, want: "--hour must be 0 to 23, not 24"},
		{args: []string{}, want: "missing FEED"},
	})
}
