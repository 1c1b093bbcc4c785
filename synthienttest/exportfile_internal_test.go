package synthienttest

// Tests of exportfile.go that need its internals: the rows a file was
// made of are the rows read back from it.

import (
	"bytes"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

// roundTrip returns a check that the rows of a feed's file, as the fake
// makes them, are the rows package exports reads from the file's bytes.
func roundTrip[T any](read func(*exports.File) iter.Seq2[T, error]) func(t *testing.T, fr fileRows) {
	return func(t *testing.T, fr fileRows) {
		src := rowSources[fr.file.feed].(*rowSource[T])
		want := slices.Collect(src.rows(fr))
		var buf bytes.Buffer
		require.NoError(t, src.write(&buf, fr), "writing")
		f, err := exports.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err, "opening")
		var got []T
		for r, err := range read(f) {
			require.NoError(t, err, "reading")
			got = append(got, r)
		}
		require.Len(t, got, int(fr.rows), "rows")
		assert.Equal(t, want, got, "rows read back")
	}
}

func TestExportRowsRoundTrip(t *testing.T) {
	t.Parallel()
	checks := map[synthient.Feed]func(t *testing.T, fr fileRows){
		synthient.FeedProxies:       roundTrip((*exports.File).Proxies),
		synthient.FeedAnonymizers:   roundTrip((*exports.File).Anonymizers),
		synthient.FeedTorrents:      roundTrip((*exports.File).Torrents),
		synthient.FeedHoneypotHTTP:  roundTrip((*exports.File).HoneypotHTTP),
		synthient.FeedHoneypotHTTPS: roundTrip((*exports.File).HoneypotHTTPS),
		synthient.FeedHoneypotDNS:   roundTrip((*exports.File).HoneypotDNS),
		synthient.FeedHoneypotADB:   roundTrip((*exports.File).HoneypotADB),
		synthient.FeedJA4T:          roundTrip((*exports.File).JA4T),
	}
	require.Len(t, checks, len(rowSources), "a feed without a round trip")
	day := time.Date(2026, 6, 9, 0, 0, 0, 0, time.UTC)
	for feed, check := range checks {
		t.Run(string(feed), func(t *testing.T) {
			t.Parallel()
			// More rows than the pool holds, so that they wrap around it.
			check(t, fileRows{file: exportFile{feed: feed, id: "2026-06-09"}, rows: poolSize + 1000, start: day, span: 24 * time.Hour})
		})
	}
}

// A file's rows are dated evenly over its hour or day, in order.
func TestExportRowTimes(t *testing.T) {
	t.Parallel()
	start, span := snapshotSpan("2026-06-10/13")
	assert.Equal(t, time.Date(2026, 6, 10, 13, 0, 0, 0, time.UTC), start, "start of an hourly export")
	assert.Equal(t, time.Hour, span, "span of an hourly export")
	fr := fileRows{file: exportFile{feed: synthient.FeedProxies, id: "2026-06-10/13"}, rows: 7200, start: start, span: span}
	assert.Equal(t, start, fr.at(0).now, "first row")
	assert.Equal(t, start.Add(time.Hour-500*time.Millisecond), fr.at(7199).now, "last row")
	start, span = snapshotSpan("2026-06-09")
	assert.Equal(t, time.Date(2026, 6, 9, 0, 0, 0, 0, time.UTC), start, "start of a daily export")
	assert.Equal(t, 24*time.Hour, span, "span of a daily export")
}
