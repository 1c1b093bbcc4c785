package exports_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	exportscmd "github.com/synthient-go/synthient/cmd/synthient/internal/cmd/exports"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of official.go: download, the official Synthient CLI's form.

// download FILE.parquet takes the feed from the file's name, and FEED
// FILE and FEED ID FILE name it, as the official CLI does; --date (-d)
// and --hour pick the export.
func TestOfficialDownload(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	dir := t.TempDir()
	tests := []struct {
		args   []string
		file   string
		report string
	}{
		{[]string{"proxies.parquet", "--date", "2026-06-09"}, "proxies.parquet", "proxies 2026-06-09"},
		{[]string{"proxy.parquet", "-d", "2026-06-10", "--hour", "7"}, "proxy.parquet", "proxies 2026-06-10/07"},
		{[]string{"anonymizers-2026-06-09.parquet", "--date", "2026-06-09"}, "anonymizers-2026-06-09.parquet", "anonymizers 2026-06-09"},
		{[]string{"torrents", "t.parquet"}, "t.parquet", "torrents 2026-06-10/13"},
		{[]string{"ja4t", "2026-06-10/12", "j.parquet", "--verify"}, "j.parquet", "ja4t 2026-06-10/12"},
	}
	for _, tt := range tests {
		args := append([]string{"download"}, tt.args...)
		file := filepath.Join(dir, tt.file)
		for i, a := range args {
			if a == tt.file {
				args[i] = file
			}
		}
		r := clitest.RunSrv(t, srv, args...)
		clitest.RequireCode(t, r, clierr.OK, args...)
		assert.True(t, strings.HasPrefix(r.Stdout, "wrote "+file+": "+tt.report+", "), "%v: stdout %q", tt.args, r.Stdout)
		b, err := os.ReadFile(file) //nolint:gosec // a file of the test's temporary directory
		require.NoError(t, err)
		assert.Equal(t, "PAR1", string(b[:4]), "%s is Parquet", tt.file)
	}

	// A second run of the same export is said, and downloads nothing.
	before := srv.Arrivals(synthienttest.RouteStorage)
	r := clitest.RunSrv(t, srv, "download", filepath.Join(dir, "proxies.parquet"), "--date", "2026-06-09")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "already holds proxies 2026-06-09")
	assert.Equal(t, before, srv.Arrivals(synthienttest.RouteStorage), "downloads")
}

// What download cannot take is refused before anything is sent, with
// the command that does it.
func TestOfficialDownloadRefuses(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	t.Cleanup(func() { assert.Empty(t, srv.Requests(), "requests sent") })
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "synthient exports download FEED [ID | --date D [--hour H]] [--out FILE]"},
		{[]string{"feed.parquet", "--date", "2026-12-06"}, `"feed.parquet" names no feed: to download the anonymizers feed there, as the official CLI does: synthient download anonymizers feed.parquet --date 2026-12-06`},
		{[]string{"proxies"}, `"proxies" is not a FILE.parquet: to download the proxies feed's latest export to proxies-<id>.parquet: synthient exports download proxies`},
		{[]string{"proxies", "-d", "2026-12-06"}, "synthient exports download proxies --date 2026-12-06"},
		{[]string{"proxies", "p.csv"}, `"p.csv" is not a FILE.parquet: synthient exports download proxies --out p.csv`},
		{[]string{"proxies", "latest", "p.csv", "--force"}, `synthient exports download proxies latest --force --out p.csv`},
		{[]string{"nosuch", "n.parquet"}, `unknown feed "nosuch"`},
		{[]string{"a", "b", "c", "d.parquet"}, "too many arguments (4)"},
		{[]string{"proxies", "2026-06-10/13", "p.parquet", "--date", "2026-06-10"}, "give the export as ID or as --date (and --hour), not both"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"download"}, tt.args...)
			clitest.RequireFails(t, clitest.RunSrv(t, srv, args...), clierr.Usage, tt.want, args...)
		})
	}
}

// download parses the official CLI's forms into the options of exports
// download before anything is sent (its runF seam): the feed from FILE's
// name, or FEED (FEED ID) before it; what it cannot take is a usage
// error.
func TestOfficialDownloadParse(t *testing.T) {
	t.Parallel()
	checkDownloadParse(t, exportscmd.NewCmdOfficialDownload, []downloadParse{
		{args: []string{"proxies.parquet"}, feed: "proxies", id: "latest", out: "proxies.parquet"},
		{args: []string{"dir/proxy.parquet", "-d", "2026-06-10", "--hour", "7"}, feed: "proxies", id: "2026-06-10/07", out: "dir/proxy.parquet"},
		{args: []string{"anonymizers-2026-06-09.parquet", "--date", "2026-06-09", "--force"}, feed: "anonymizers", id: "2026-06-09", out: "anonymizers-2026-06-09.parquet", force: true},
		{args: []string{"torrents", "t.parquet", "--no-preflight"}, feed: "torrents", id: "latest", out: "t.parquet"},
		{args: []string{"ja4t", "2026-06-10/12", "j.parquet", "--verify"}, feed: "ja4t", id: "2026-06-10/12", out: "j.parquet", verify: true},
		{args: []string{"feed.parquet"}, want: `"feed.parquet" names no feed`},
		{args: []string{"proxies"}, want: `"proxies" is not a FILE.parquet`},
		{args: []string{"nosuch", "n.parquet"}, want: `unknown feed "nosuch"`},
		{args: []string{"proxies", "latest", "p.parquet", "--date", "2026-06-10"}, want: "give the export as ID or as --date (and --hour), not both"},
		{args: []string{"a", "b", "c", "d.parquet"}, want: "too many arguments (4)"},
	})
}
