package exports_test

import (
	"os"
	"path/filepath"
	"regexp"
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
		// The export the file's name holds, not the latest.
		{[]string{"proxies-2026-06-08.parquet"}, "proxies-2026-06-08.parquet", "proxies 2026-06-08"},
		{[]string{"proxies", "p-2026-06-10-07.parquet"}, "p-2026-06-10-07.parquet", "proxies 2026-06-10/07"},
		{[]string{"torrents", "2026-06-10/07", "torrents-v2-2026-06-10-07-x.parquet"}, "torrents-v2-2026-06-10-07-x.parquet", "torrents 2026-06-10/07"},
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

	// A second run of the same export is said, and downloads nothing; so
	// is one of a file whose name holds the export it holds.
	before := srv.Arrivals(synthienttest.RouteStorage)
	r := clitest.RunSrv(t, srv, "download", filepath.Join(dir, "proxies.parquet"), "--date", "2026-06-09")
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "already holds proxies 2026-06-09")
	r = clitest.RunSrv(t, srv, "download", filepath.Join(dir, "proxies-2026-06-08.parquet"))
	clitest.RequireCode(t, r, clierr.OK)
	assert.Contains(t, r.Stdout, "already holds proxies 2026-06-08")
	assert.Equal(t, before, srv.Arrivals(synthienttest.RouteStorage), "downloads")
}

// A file whose name holds an export (proxies-2026-06-08.parquet) never
// gets another: an ID or --date that differs is refused before anything
// is sent, with the command that downloads the one it names, and no
// --force is offered over it.
func TestDownloadNameHoldsTheExport(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	t.Cleanup(func() { assert.Empty(t, srv.Requests(), "requests sent") })
	dir := t.TempDir()
	held := filepath.Join(dir, "proxies-2026-06-08.parquet")
	require.NoError(t, os.WriteFile(held, []byte("the export of 2026-06-08"), 0o600))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"download", held, "--date", "2026-06-09"}, held + " names the export 2026-06-08, not 2026-06-09: to download the one it names: synthient download proxies " + held + "; "},
		{[]string{"download", "proxies", "latest", held}, held + " names the export 2026-06-08, not latest: to download the one it names: synthient download proxies " + held + "; "},
		{[]string{"download", "proxies", "2026-06-08/03", held}, "names the export 2026-06-08, not 2026-06-08/03"},
		{[]string{"exports", "download", "proxies", "latest", "--out", held}, held + " names the export 2026-06-08, not latest: to download the one it names: synthient exports download proxies --out " + held + "; "},
		{[]string{"download", filepath.Join(dir, "proxies-2026-06-08-2026-06-09.parquet")}, "names two exports (2026-06-08, 2026-06-09)"},
		{[]string{"download", filepath.Join(dir, "proxies-2026-13-45.parquet")}, "holds 2026-13-45, which is not the date (and hour) of an export"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := clitest.RunSrv(t, srv, tt.args...)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Contains(t, r.Stderr, tt.want)
			assert.NotContains(t, r.Stderr, "--force")
		})
	}
	// exports download --out takes the export the name holds too: a file
	// there that is not it may be replaced by it (--force), nothing else.
	other := clitest.NewServer(t)
	r := clitest.RunSrv(t, other, "exports", "download", "proxies", "--out", held)
	clitest.RequireCode(t, r, clierr.Usage)
	assert.Contains(t, r.Stderr, held+" exists and is not proxies 2026-06-08: it has 24 bytes")
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
		{[]string{"proxies.parquet", "extra"}, `"extra" is not a FILE.parquet: download takes [FEED [ID]] FILE.parquet, FILE last (see`},
		{[]string{"nosuch", "latest", "x"}, `"x" is not a FILE.parquet: download takes [FEED [ID]] FILE.parquet, FILE last (see`},
		{[]string{"proxies", "2026-06-09"}, `"2026-06-09" is an export, and no FILE.parquet follows it: to download it to proxies-<id>.parquet: synthient exports download proxies 2026-06-09 (see`},
		{[]string{"proxies", "2026-06-09", "x", "-d", "2026-06-09"}, `"x" is not a FILE.parquet: download takes [FEED [ID]] FILE.parquet, FILE last (see`},
		{[]string{"-o", "o.parquet", "torrents"}, "-o (--output) is the output format here (text, json or csv), not the file: download writes the file its last argument names, o.parquet: synthient download torrents o.parquet (see"},
		{[]string{"proxies", "p.parquet", "--out", "q.parquet"}, "unknown flag: --out: download writes the file its last argument names (download [FEED [ID]] FILE.parquet)"},
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

// suggestionRe finds a command an error suggests: "synthient " and the
// words of a download, up to the end of the suggestion.
var suggestionRe = regexp.MustCompile(`: synthient ((?:exports )?download [^;()']*?)(?: \(see|;|\)|\n)`)

// Every command download's errors suggest runs: each is run as printed,
// in the directory of the mistaken one, and succeeds. Its own errors name
// its own arguments and point to a command that writes stdout, never to
// an --out it does not take.
func TestOfficialDownloadSuggestionsRun(t *testing.T) {
	srv := clitest.NewServer(t)
	t.Chdir(t.TempDir()) // not parallel: the commands that name no file write to the current directory
	require.NoError(t, os.Symlink("elsewhere.parquet", "link.parquet"))
	for _, tt := range []struct {
		mistake []string
		suggest bool // whether a command is suggested
	}{
		{[]string{"proxies.parquet", "extra"}, false},
		{[]string{"proxies", "2026-06-09"}, true},
		{[]string{"proxies", "2026-06-09", "x"}, true},
		{[]string{"proxies"}, true},
		{[]string{"proxies", "-d", "2026-06-09"}, true},
		{[]string{"ja4t", "2026-06-10/12", "j.csv", "--verify"}, true},
		{[]string{"feed.parquet", "--date", "2026-06-09"}, true},
		{[]string{"-o", "o.parquet", "torrents"}, true},
		{[]string{"proxies-2026-06-09.parquet", "--date", "2026-06-08"}, true},
		{[]string{"proxies", "latest", "proxies-2026-06-09.parquet"}, true},
		{[]string{"proxies", "link.parquet"}, true},
		{[]string{"nosuch", "2026-06-09", "x"}, false},
	} {
		args := append([]string{"download"}, tt.mistake...)
		r := clitest.RunSrv(t, srv, args...)
		require.Equal(t, clierr.Usage, r.Code, "%v: %s", args, r.Stderr)
		m := suggestionRe.FindStringSubmatch(r.Stderr)
		if !tt.suggest {
			assert.Nil(t, m, "%v suggests a command: %s", args, r.Stderr)
			assert.NotRegexp(t, `--out\b`, r.Stderr, "%v: download has no --out", args)
			continue
		}
		if !assert.NotNil(t, m, "%v suggests no command: %s", args, r.Stderr) {
			continue
		}
		assert.NotRegexp(t, `--out\b`, strings.Replace(r.Stderr, m[1], "", 1), "%v: download has no --out", args)
		run := clitest.RunSrv(t, srv, strings.Fields(m[1])...)
		assert.Equal(t, clierr.OK, run.Code, "%v suggests synthient %s, which fails: %s", args, m[1], run.Stderr)
	}
}
