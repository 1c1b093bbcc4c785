package feedindex_test

import (
	"compress/gzip"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/feedindex"
)

// expected is testdata/duckdb/expected.json.gz: what DuckDB says of the
// fixtures (scripts/fixtures/gen-feedindex.mjs).
type expected struct {
	Reader string `json:"reader"`
	Files  map[string]struct {
		Rows    int64 `json:"rows"`
		Skipped int64 `json:"skipped"`
	} `json:"files"`
	Probes []struct {
		IP   string `json:"ip"`
		Hits []struct {
			Feed        string `json:"feed"`
			Provider    string `json:"provider"`
			Type        string `json:"type"`
			CountryCode string `json:"country_code"`
			ASN         int    `json:"asn"`
			LastSeen    int64  `json:"last_seen"`
		} `json:"hits"`
	} `json:"probes"`
}

func readExpected(t *testing.T) expected {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "duckdb", "expected.json.gz"))
	require.NoError(t, err)
	defer func() { _ = f.Close() }() // read-only
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var e expected
	require.NoError(t, json.NewDecoder(zr).Decode(&e))
	require.NotEmpty(t, e.Probes)
	return e
}

// TestAnswersAsDuckDB builds an index of the DuckDB fixtures, in memory
// and through a saved file, and looks every probe up: each answer is
// DuckDB's, and so are the rows read and skipped.
func TestAnswersAsDuckDB(t *testing.T) {
	t.Parallel()
	want := readExpected(t)
	ix, err := feedindex.New()
	require.NoError(t, err)
	defer ix.Close()
	for _, feed := range feedindex.Feeds {
		xf := openExport(t, filepath.Join("testdata", "duckdb", string(feed)+".parquet"))
		detected, ok := feedindex.DetectFeed(xf)
		require.True(t, ok)
		require.Equal(t, feed, detected)
		a, err := ix.AddFile(feed, "", xf)
		require.NoError(t, err)
		assert.Equal(t, want.Files[string(feed)].Rows, a.Rows, "%s: rows", feed)
		assert.Equal(t, want.Files[string(feed)].Skipped, a.Skipped, "%s: rows skipped", feed)
	}
	path := filepath.Join(t.TempDir(), "duckdb.synidx")
	require.NoError(t, ix.Save(path))
	opened, err := feedindex.Open(path)
	require.NoError(t, err)
	defer opened.Close()
	hits := 0
	for _, p := range want.Probes {
		var w []feedindex.Hit
		for _, h := range p.Hits {
			w = append(w, feedindex.Hit{Feed: synthient.Feed(h.Feed), Provider: h.Provider, Type: h.Type, CountryCode: h.CountryCode,
				ASN: h.ASN, LastSeen: time.Unix(h.LastSeen, 0).UTC()})
		}
		a := netip.MustParseAddr(p.IP)
		assert.Equal(t, w, ix.Lookup(nil, a), "%s (%s)", p.IP, want.Reader)
		assert.Equal(t, w, opened.Lookup(nil, a), "%s, from the file", p.IP)
		hits += len(w)
	}
	assert.Greater(t, hits, 3000, "the probes are mostly hits")
}
