package exports_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of download.go: the export named as the official CLI names it
// (--date, --hour), and the file name a download takes without --out.

// Without --out a download goes to <feed>-<id>.parquet in the current
// directory, never over a file that holds another export; --date (or -d)
// and --hour name the export, as ID does.
func TestDownloadDateHourAndDefaultName(t *testing.T) {
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	t.Chdir(dir) // not parallel: the default file goes to the current directory
	tests := []struct {
		args []string
		file string
		id   string // in the report
	}{
		{[]string{"proxies"}, "proxies-2026-06-10-13.parquet", "proxies 2026-06-10/13"},
		{[]string{"anonymizers", "--date", "2026-06-09"}, "anonymizers-2026-06-09.parquet", "anonymizers 2026-06-09"},
		{[]string{"proxies", "-d", "2026-06-10", "--hour", "7"}, "proxies-2026-06-10-07.parquet", "proxies 2026-06-10/07"},
		{[]string{"torrents", "2026-06-10/13"}, "torrents-2026-06-10-13.parquet", "torrents 2026-06-10/13"},
		{[]string{"proxies", "--date", "latest", "--out", "proxies-2026-06-10-07.parquet"}, "", ""}, // names another export: refused
	}
	for _, tt := range tests {
		args := append([]string{"exports", "download"}, tt.args...)
		r := clitest.RunSrv(t, srv, args...)
		if tt.id == "" {
			clitest.RequireCode(t, r, clierr.Usage, args...)
			assert.Contains(t, r.Stderr, "proxies-2026-06-10-07.parquet names the export 2026-06-10/07, not latest: ")
			assert.NotContains(t, r.Stderr, "--force", "no --force over another export than the one asked for")
			continue
		}
		clitest.RequireCode(t, r, clierr.OK, args...)
		assert.Contains(t, r.Stdout, "wrote "+tt.file+": "+tt.id+", ", "the report")
		b, err := os.ReadFile(filepath.Join(dir, tt.file)) //nolint:gosec // a file of the test's temporary directory
		require.NoError(t, err)
		assert.Equal(t, "PAR1", string(b[:4]), "%s is Parquet", tt.file)
	}
	assert.Equal(t, 4, srv.Arrivals(synthienttest.RouteStorage), "downloads")
}

// -f and --format are --output; -s and --silent are --quiet.
func TestOfficialFlagNames(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	for _, args := range [][]string{{"-f", "json"}, {"--format", "json"}, {"--format=json", "-o", "json"}} {
		r := clitest.RunSrv(t, srv, append(args, "lookup", "ip", "1.1.1.1", "8.8.8.8", "-s")...)
		clitest.RequireCode(t, r, clierr.OK, args...)
		assert.Equal(t, []string{"1.1.1.1", "8.8.8.8"}, clitest.NDJSONIPs(t, r.Stdout), "%v: JSON", args)
		assert.Empty(t, r.Stderr, "%v -s: no summary", args)
	}
	r := clitest.RunSrv(t, srv, "--silent", "-f", "csv", "exports", "list", "proxies", "--limit", "2")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Len(t, clitest.Lines(r.Stdout), 3, "CSV: a header and two rows")
	assert.Empty(t, r.Stderr, "--silent: no more: hint")
}

// Without --out a download is named after the export it resolved to, so
// the next hour's run writes a new file; a run that finds the file already
// holding that export (its size and SHA-256 those of the meta) says so and
// downloads nothing; a file that differs is kept unless --force; a failed
// download leaves nothing under the final name.
func TestDownloadNamesTheResolvedExport(t *testing.T) {
	clk := synthienttest.NewManualClock(clitest.TestNow)
	srv := clitest.NewServer(t, synthienttest.WithClock(clk.Now))
	dir := t.TempDir()
	t.Chdir(dir) // not parallel: the default file goes to the current directory
	run := func(code int, args ...string) clitest.Result {
		t.Helper()
		args = append([]string{"exports", "download"}, args...)
		r := clitest.RunSrv(t, srv, args...)
		clitest.RequireCode(t, r, code, args...)
		return r
	}
	downloads := func() int { return srv.Arrivals(synthienttest.RouteStorage) }
	const first = "proxies-2026-06-10-13.parquet"

	r := run(clierr.OK, "proxies")
	assert.Equal(t, "wrote "+first+": proxies 2026-06-10/13, 60.0 KiB\n", r.Stdout)
	require.FileExists(t, filepath.Join(dir, first))
	assert.NoFileExists(t, filepath.Join(dir, "proxies-latest.parquet"))
	whole, err := os.ReadFile(filepath.Join(dir, first)) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)

	for _, args := range [][]string{{"proxies"}, {"proxies", "2026-06-10/13", "--verify"}, {"proxies", "-d", "2026-06-10", "--hour", "13", "--out", first}} {
		r = run(clierr.OK, args...)
		assert.Equal(t, first+" already holds proxies 2026-06-10/13 (its size and SHA-256): nothing downloaded\n", r.Stdout, "%v", args)
	}
	r = run(clierr.OK, "-o", "json", "proxies")
	assert.Contains(t, r.Stdout, `"downloaded":false`)
	assert.Equal(t, 1, downloads(), "downloads: the same export is not fetched again")

	clk.Advance(time.Hour)
	r = run(clierr.OK, "proxies")
	assert.Equal(t, "wrote proxies-2026-06-10-14.parquet: proxies 2026-06-10/14, 62.7 KiB\n", r.Stdout)
	assert.Equal(t, 2, downloads(), "downloads: the next hour's export")

	// The same size, other bytes: kept without --force, replaced with it.
	changed := append([]byte{}, whole...)
	changed[len(changed)/2] ^= 1
	firstPath := filepath.Join(dir, first)
	require.NoError(t, os.WriteFile(firstPath, changed, 0o600)) //nolint:gosec // a file of the test's temporary directory
	r = run(clierr.Usage, "proxies", "2026-06-10/13")
	assert.Contains(t, r.Stderr, first+" exists and is not proxies 2026-06-10/13: its SHA-256 differs from the meta's (--force replaces it)")
	require.NoError(t, os.WriteFile(firstPath, []byte("PAR1"), 0o600))
	r = run(clierr.Usage, "proxies", "2026-06-10/13")
	assert.Contains(t, r.Stderr, first+" exists and is not proxies 2026-06-10/13: it has 4 bytes, the export 61434 (--force replaces it)")
	b, err := os.ReadFile(firstPath) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	assert.Equal(t, "PAR1", string(b), "the file refused is kept")
	assert.Equal(t, 2, downloads(), "downloads: nothing fetched for a file refused")
	run(clierr.OK, "proxies", "2026-06-10/13", "--force")
	b, err = os.ReadFile(firstPath) //nolint:gosec // as above
	require.NoError(t, err)
	assert.Equal(t, whole, b, "--force: replaced by the export")

	// A download cut short leaves no file under the final name.
	clk.Advance(time.Hour)
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	r = clitest.RunSrv(t, srv, "exports", "download", "proxies")
	assert.NotEqual(t, clierr.OK, r.Code, "a download cut short")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{first, "proxies-2026-06-10-14.parquet"}, names, "files in the directory")
}
