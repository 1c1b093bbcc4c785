package exports_test

// Tests of rows.go: each feed's typed sequence reads the fake's files as
// parquet-go's own generic reader does.

import (
	"encoding/json"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

// sameAsLibrary returns a check that the typed sequence seq of a file
// yields the rows, and the number of rows, that parquet-go's generic
// reader finds in its bytes.
func sameAsLibrary[T any](seq func(*exports.File) iter.Seq2[T, error]) func(t *testing.T, got fetched) {
	return func(t *testing.T, got fetched) {
		f, err := exports.Open(got.path)
		require.NoError(t, err)
		defer f.Close()
		rows, err := collect(seq(f))
		require.NoError(t, err)
		assert.Len(t, rows, int(got.meta.Rows), "rows against the meta")
		assert.Equal(t, genericRows[T](t, got.data), rows, "rows against parquet-go's reader")
	}
}

var feedReaders = []struct {
	feed  synthient.Feed
	check func(t *testing.T, got fetched)
}{
	{synthient.FeedProxies, sameAsLibrary((*exports.File).Proxies)},
	{synthient.FeedAnonymizers, sameAsLibrary((*exports.File).Anonymizers)},
	{synthient.FeedTorrents, sameAsLibrary((*exports.File).Torrents)},
	{synthient.FeedHoneypotHTTP, sameAsLibrary((*exports.File).HoneypotHTTP)},
	{synthient.FeedHoneypotHTTPS, sameAsLibrary((*exports.File).HoneypotHTTPS)},
	{synthient.FeedHoneypotDNS, sameAsLibrary((*exports.File).HoneypotDNS)},
	{synthient.FeedHoneypotADB, sameAsLibrary((*exports.File).HoneypotADB)},
	{synthient.FeedJA4T, sameAsLibrary((*exports.File).JA4T)},
}

func TestTypedRowsOfEachFeed(t *testing.T) {
	t.Parallel()
	require.Len(t, feedReaders, len(synthient.Feeds), "a feed without a test")
	for _, tc := range feedReaders {
		t.Run(string(tc.feed), func(t *testing.T) {
			t.Parallel()
			tc.check(t, fetch(t, tc.feed, "latest", 0))
		})
	}
}

// A file of several row groups reads whole and in order.
func TestTypedRowsAcrossRowGroups(t *testing.T) {
	t.Parallel()
	got := fetch(t, synthient.FeedHoneypotDNS, "2026-06-09", 2<<20)
	f := openBytes(t, got.data)
	require.Greater(t, f.NumRowGroups(), 1, "row groups")
	sameAsLibrary((*exports.File).HoneypotDNS)(t, got)
}

// The rows of the fake are what its streams and lookups say: a sample of
// fields the generators fill.
func TestTypedRowsHoldTheFeedsData(t *testing.T) {
	t.Parallel()
	got := fetch(t, synthient.FeedHoneypotHTTPS, "2026-06-10/03", 0)
	rows, err := collect(openBytes(t, got.data).HoneypotHTTPS())
	require.NoError(t, err)
	start := testNow.Truncate(24 * time.Hour).Add(3 * time.Hour).UnixMilli()
	var captured int
	for i, r := range rows {
		assert.True(t, r.Timestamp >= start && r.Timestamp < start+3600_000, "row %d at %d, outside the hour", i, r.Timestamp)
		assert.True(t, json.Valid([]byte(r.Details)), "row %d: details are not JSON: %q", i, r.Details)
		if r.Raw != nil {
			captured++
			assert.Equal(t, []byte{0x16, 0x03, 0x01}, r.Raw[:3], "row %d: not a TLS record", i)
		}
	}
	assert.True(t, captured > 0 && captured < len(rows), "%d of %d rows with a captured handshake: the nulls are lost", captured, len(rows))
}
