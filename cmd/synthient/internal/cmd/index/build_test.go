package index_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// TestBuildFromFilesAndFeeds builds one index from the feeds' newest
// exports and one from the same files read as they are: their stats
// agree, and the feeds read from files are told by their columns.
func TestBuildFromFilesAndFeeds(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dir := t.TempDir()
	fromFeeds := filepath.Join(dir, "feeds.synidx")
	r := clitest.RunSrv(t, srv, "index", "build", "proxies", "ja4t", "anonymizers", "--out", fromFeeds)
	clitest.RequireCode(t, r, 0, "index build FEED...")
	// The newest daily export and the 14 hourly ones of 2026-06-10.
	assert.Len(t, clitest.Lines(r.Stdout), 3*15)

	var files []string
	for _, feed := range []synthient.Feed{synthient.FeedProxies, synthient.FeedJA4T, synthient.FeedAnonymizers} {
		files = append(files, download(t, srv, feed, "2026-06-09"))
		for h := range 14 {
			files = append(files, download(t, srv, feed, "2026-06-10/"+[]string{"00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13"}[h]))
		}
	}
	fromFiles := filepath.Join(dir, "files.synidx")
	r = clitest.RunSrv(t, srv, append([]string{"index", "build", "--out", fromFiles}, files...)...)
	clitest.RequireCode(t, r, 0, "index build FILE...")

	stats := func(path string) []map[string]any {
		r := clitest.RunSrv(t, srv, "index", "stats", path, "-o", "json")
		clitest.RequireCode(t, r, 0, "index stats")
		var doc struct {
			Feeds []map[string]any `json:"feeds"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
		for _, f := range doc.Feeds {
			delete(f, "exports") // ids from feeds, none from files
		}
		return doc.Feeds
	}
	a, b := stats(fromFeeds), stats(fromFiles)
	assert.Equal(t, a, b)
	for _, f := range a {
		assert.Positive(t, f["ipv4"], f["feed"])
	}
	assert.Equal(t, int64(synthienttest.DefaultCredits), srv.Credits(srv.APIKey), "no credit spent")
}

func TestBuildRefuses(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.synidx")
	clitest.RequireCode(t, clitest.RunSrv(t, srv, "index", "build", "proxies", "--latest", "--out", out), 0)
	for _, tt := range []struct {
		name string
		args []string
		says string
	}{
		{"no --out", []string{"proxies"}, "--out FILE is required"},
		{"an existing --out", []string{"proxies", "--out", out}, "give --force"},
		{"a feed of no addresses", []string{"torrents", "--out", filepath.Join(dir, "t")}, "names no addresses"},
		{"neither feed nor file", []string{"nope.parquet", "--out", filepath.Join(dir, "n")}, "neither a feed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.RunSrv(t, srv, append([]string{"index", "build"}, tt.args...)...)
			clitest.RequireCode(t, r, clierr.Usage, tt.args...)
			assert.Contains(t, r.Stderr, tt.says)
		})
	}
}
