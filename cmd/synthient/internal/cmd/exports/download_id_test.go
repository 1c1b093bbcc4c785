package exports_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of download.go: the export named as the official CLI names it
// (--date, --hour), and the file name a download takes without --out.

// Without --out a download goes to <feed>-<id>.parquet in the current
// directory, never over an existing file; --date (or -d) and --hour name
// the export, as ID does.
func TestDownloadDateHourAndDefaultName(t *testing.T) {
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	t.Chdir(dir) // not parallel: the default file goes to the current directory
	tests := []struct {
		args []string
		file string
		id   string // in the report
	}{
		{[]string{"proxies"}, "proxies-latest.parquet", "proxies 2026-06-10/13"},
		{[]string{"anonymizers", "--date", "2026-06-09"}, "anonymizers-2026-06-09.parquet", "anonymizers 2026-06-09"},
		{[]string{"proxies", "-d", "2026-06-10", "--hour", "7"}, "proxies-2026-06-10-07.parquet", "proxies 2026-06-10/07"},
		{[]string{"torrents", "2026-06-10/13"}, "torrents-2026-06-10-13.parquet", "torrents 2026-06-10/13"},
		{[]string{"proxies", "--date", "latest"}, "proxies-latest.parquet", ""}, // exists: refused
	}
	for _, tt := range tests {
		args := append([]string{"exports", "download"}, tt.args...)
		r := clitest.RunSrv(t, srv, args...)
		if tt.id == "" {
			clitest.RequireCode(t, r, clierr.Usage, args...)
			assert.Contains(t, r.Stderr, "proxies-latest.parquet: file already exists (--force replaces it)")
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
