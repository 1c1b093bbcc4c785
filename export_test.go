package synthient_test

// Tests of export.go: ListExports, AllExports and ExportMeta, and the
// fuzz target of the export id validator. The downloads are in
// download_test.go.

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// ---------------------------------------------------------------------
// ListExports
// ---------------------------------------------------------------------

// listingExample is the export listing example of api-v4.md §7.
const listingExample = `{
  "stream": "proxies",
  "feeds": [
    {"kind": "hourly", "date": "2026-06-10", "hour": 14, "id": "2026-06-10/14",
     "size_bytes": 18734512, "row_count": 412907,
     "checksum": "9f2c6a0d5b1e47c8a3f0e2d4b6c8a0e1f3d5b7c9e1a3c5e7f9b1d3f5a7c9e1b3",
     "created_at": 1781103600, "download_path": "/api/v4/feeds/proxies/export/2026-06-10/14"},
    {"kind": "hourly", "date": "2026-06-10", "hour": 13, "id": "2026-06-10/13",
     "size_bytes": 18120044, "row_count": 398112,
     "checksum": "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
     "created_at": 1781100000, "download_path": "/api/v4/feeds/proxies/export/2026-06-10/13"},
    {"kind": "daily", "date": "2026-06-09", "id": "2026-06-09",
     "size_bytes": 402118230, "row_count": 9120554,
     "checksum": "5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a1908f7e",
     "created_at": 1781052600, "download_path": "/api/v4/feeds/proxies/export/2026-06-09"}
  ],
  "next_cursor": "eyJiZWZvcmUiOiIyMDI2LTA2LTA5In0"
}`

// listingPage returns a listing page of daily exports with the given ids;
// next is appended raw after the feeds array (`,"next_cursor":"c1"`, or
// "" for none).
func listingPage(next string, ids ...string) string {
	items := make([]string, len(ids))
	for i, id := range ids {
		items[i] = fmt.Sprintf(`{"kind":"daily","date":%q,"id":%q,"size_bytes":100,"row_count":10,`+
			`"checksum":"%s","created_at":1781052600,"download_path":"/api/v4/feeds/proxies/export/%s"}`,
			id[:10], id, strings.Repeat("ab", 32), id)
	}
	return `{"stream":"proxies","feeds":[` + strings.Join(items, ",") + `]` + next + `}`
}

// fixedJSONServer answers every request 200 with the JSON body.
func fixedJSONServer(t *testing.T, body string) *apiServer {
	return newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, body) })
}

func TestListExportsPathForEveryFeed(t *testing.T) {
	t.Parallel()
	srv := fixedJSONServer(t, listingPage(""))
	c := newClient(t, srv.Base)
	for i, f := range feedSegments {
		_, err := c.ListExports(callCtx(t), f.feed, nil)
		require.NoError(t, err, "ListExports(%s)", f.feed)
		reqs := srv.Requests()
		require.Len(t, reqs, i+1, "ListExports(%s): requests in all", f.feed)
		r := reqs[i]
		assert.Equal(t, http.MethodGet, r.Method, "ListExports(%s)", f.feed)
		assert.Equal(t, "/api/v4/feeds/"+f.seg+"/export", r.Path, "ListExports(%s)", f.feed)
		assert.Empty(t, r.RawQuery, "ListExports(%s, nil) sent a query", f.feed)
		assert.Equal(t, testKey, r.Header.Get("X-Api-Key"), "ListExports(%s) sent no API key", f.feed)
	}
}

func TestListExportsQuery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		p          *synthient.ListExportsParams
		limit, cur string // "" = absent
	}{
		{"nil params", nil, "", ""},
		{"zero params", &synthient.ListExportsParams{}, "", ""},
		{"limit 3", &synthient.ListExportsParams{Limit: 3}, "3", ""},
		{"limit 1", &synthient.ListExportsParams{Limit: 1}, "1", ""},
		{"limit 500", &synthient.ListExportsParams{Limit: 500}, "500", ""},
		{"cursor", &synthient.ListExportsParams{Cursor: "eyJiZWZvcmUiOiIyMDI2LTA2LTA5In0"}, "", "eyJiZWZvcmUiOiIyMDI2LTA2LTA5In0"},
		{"limit and a cursor to escape", &synthient.ListExportsParams{Limit: 2, Cursor: "a+b/c=&d e"}, "2", "a+b/c=&d e"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fixedJSONServer(t, listingPage(""))
			_, err := newClient(t, srv.Base).ListExports(callCtx(t), synthient.FeedProxies, tc.p)
			require.NoError(t, err)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, "/api/v4/feeds/proxies/export", reqs[0].Path)
			// The parameters present, their values, and nothing else.
			want := url.Values{}
			if tc.limit != "" {
				want.Set("limit", tc.limit)
			}
			if tc.cur != "" {
				want.Set("cursor", tc.cur)
			}
			assert.Equal(t, want, reqs[0].Query, "query of %+v", tc.p)
		})
	}
}

//nolint:tparallel // the subtests share one fake, whose requests are counted after them
func TestListExportsInvalidArguments(t *testing.T) {
	t.Parallel()
	srv := fixedJSONServer(t, listingPage(""))
	c := newClient(t, srv.Base)
	cases := []struct {
		name string
		feed synthient.Feed
		p    *synthient.ListExportsParams
	}{
		{"limit -1", synthient.FeedProxies, &synthient.ListExportsParams{Limit: -1}},
		{"limit 501", synthient.FeedProxies, &synthient.ListExportsParams{Limit: 501}},
		{"unknown feed", synthient.Feed("nope"), nil},
		{"empty feed", synthient.Feed(""), nil},
		{"URL segment instead of feed name", synthient.Feed("helio/http"), nil},
		{"feed with traversal", synthient.Feed("../account/me"), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page, err := c.ListExports(callCtx(t), tc.feed, tc.p)
			requireInvalid(t, err)
			assert.Nil(t, page)
		})
	}
	assert.Zero(t, srv.Arrivals(), "requests sent for invalid arguments")
}

func TestListExportsDecodesTheListingExample(t *testing.T) {
	t.Parallel()
	srv := fixedJSONServer(t, listingExample)
	c := newClient(t, srv.Base)
	page, err := c.ListExports(callCtx(t), synthient.FeedProxies, &synthient.ListExportsParams{Limit: 3})
	require.NoError(t, err)
	want := &synthient.ExportPage{
		Stream: "proxies",
		Exports: []synthient.Export{
			{ID: "2026-06-10/14", Kind: "hourly", Date: "2026-06-10", Hour: ptr(14), SizeBytes: 18734512, RowCount: 412907,
				Checksum: "9f2c6a0d5b1e47c8a3f0e2d4b6c8a0e1f3d5b7c9e1a3c5e7f9b1d3f5a7c9e1b3", CreatedAt: 1781103600,
				DownloadPath: "/api/v4/feeds/proxies/export/2026-06-10/14"},
			{ID: "2026-06-10/13", Kind: "hourly", Date: "2026-06-10", Hour: ptr(13), SizeBytes: 18120044, RowCount: 398112,
				Checksum: "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9", CreatedAt: 1781100000,
				DownloadPath: "/api/v4/feeds/proxies/export/2026-06-10/13"},
			{ID: "2026-06-09", Kind: "daily", Date: "2026-06-09", Hour: nil, SizeBytes: 402118230, RowCount: 9120554,
				Checksum: "5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a1908f7e", CreatedAt: 1781052600,
				DownloadPath: "/api/v4/feeds/proxies/export/2026-06-09"},
		},
		NextCursor: "eyJiZWZvcmUiOiIyMDI2LTA2LTA5In0",
	}
	assert.Equal(t, want, page)
	assert.Nil(t, page.Exports[2].Hour, "Hour of a daily export")

	// The last page: next_cursor absent, null or empty all give "".
	for _, next := range []string{``, `,"next_cursor":null`, `,"next_cursor":""`} {
		t.Run("last page "+next, func(t *testing.T) {
			t.Parallel()
			srv := fixedJSONServer(t, listingPage(next, "2026-06-08"))
			page, err := newClient(t, srv.Base).ListExports(callCtx(t), synthient.FeedProxies, nil)
			require.NoError(t, err)
			assert.Empty(t, page.NextCursor)
			assert.Equal(t, []string{"2026-06-08"}, exportIDs(page.Exports))
		})
	}
}

func TestListExportsRetriesA503(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			writeProblem(w, 503, "Retry-After", "0")
			return
		}
		writeJSON(w, 200, listingPage("", "2026-06-09"))
	})
	page, err := newClient(t, srv.Base).ListExports(callCtx(t), synthient.FeedProxies, nil)
	require.NoError(t, err)
	assert.Len(t, page.Exports, 1)
	assert.Equal(t, 2, srv.Arrivals(), "arrivals: 503 then 200, standard class")
}

func TestListExportsDoesNotRetryA404(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeProblem(w, 404) })
	_, err := newClient(t, srv.Base).ListExports(callCtx(t), synthient.FeedProxies, nil)
	_ = requireAPIErr(t, err, 404)
	assert.Equal(t, 1, srv.Arrivals())
}

// ---------------------------------------------------------------------
// AllExports
// ---------------------------------------------------------------------

// pagedServer answers a listing for each cursor in pages ("" is the
// first page); an unknown cursor is a 400. From the 50th request on it
// answers 410, to end a client that would loop for ever.
func pagedServer(t *testing.T, pages map[string]string) *apiServer {
	return newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Query().Get("cursor")]
		if n >= 50 {
			writeProblem(w, 410)
			return
		}
		if !ok {
			writeProblem(w, 400)
			return
		}
		writeJSON(w, 200, body)
	})
}

// exportIDs returns the ID of each export.
func exportIDs(exports []synthient.Export) []string {
	var ids []string
	for _, e := range exports {
		ids = append(ids, e.ID)
	}
	return ids
}

// drainExportIDs ranges over seq and returns the ids yielded, the errors
// yielded, and whether an item came after an error.
func drainExportIDs(seq iter.Seq2[synthient.Export, error]) (ids []string, errs []error, itemAfterErr bool) {
	exports, errs, itemAfterErr := drain(seq, 0)
	return exportIDs(exports), errs, itemAfterErr
}

// cursorsRequested returns the cursor of every request of s, in arrival
// order ("" for none).
func cursorsRequested(s *apiServer) []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Query.Get("cursor"))
	}
	return out
}

func TestAllExportsIsLazy(t *testing.T) {
	t.Parallel()
	srv := pagedServer(t, map[string]string{"": listingPage("", "2026-06-09")})
	seq := newClient(t, srv.Base).AllExports(callCtx(t), synthient.FeedProxies, nil)
	require.Zero(t, srv.Arrivals(), "requests sent before the loop started")
	ids, errs, _ := drainExportIDs(seq)
	require.Empty(t, errs)
	require.Equal(t, []string{"2026-06-09"}, ids)
	assert.Equal(t, 1, srv.Arrivals())
}

func TestAllExportsFollowsCursorsToTheEnd(t *testing.T) {
	t.Parallel()
	ends := map[string]string{
		"next_cursor absent": ``,
		"next_cursor empty":  `,"next_cursor":""`,
		"next_cursor null":   `,"next_cursor":null`,
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := pagedServer(t, map[string]string{
				"":   listingPage(`,"next_cursor":"c1"`, "2026-06-10/14", "2026-06-10/13"),
				"c1": listingPage(`,"next_cursor":"c2"`, "2026-06-09"),
				"c2": listingPage(end, "2026-06-08", "2026-06-07"),
			})
			c := newClient(t, srv.Base)
			ids, errs, _ := drainExportIDs(c.AllExports(callCtx(t), synthient.FeedProxies, &synthient.ListExportsParams{Limit: 2}))
			require.Empty(t, errs)
			assert.Equal(t, []string{"2026-06-10/14", "2026-06-10/13", "2026-06-09", "2026-06-08", "2026-06-07"}, ids)
			assert.Equal(t, []string{"", "c1", "c2"}, cursorsRequested(srv), "cursors requested (nothing after the last page)")
			for i, r := range srv.Requests() {
				assert.Equal(t, "2", r.Query.Get("limit"), "request %d: %s?%s, want the limit on every page", i+1, r.Path, r.RawQuery)
				assert.Equal(t, "/api/v4/feeds/proxies/export", r.Path, "request %d", i+1)
			}
		})
	}
}

func TestAllExportsStopsOnARepeatedCursor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		params   *synthient.ListExportsParams
		pages    map[string]string
		wantIDs  []string
		requests int
	}{
		{
			name: "repeats itself",
			pages: map[string]string{
				"":   listingPage(`,"next_cursor":"c1"`, "2026-06-10"),
				"c1": listingPage(`,"next_cursor":"c1"`, "2026-06-09"),
			},
			wantIDs: []string{"2026-06-10", "2026-06-09"}, requests: 2,
		},
		{
			name: "repeats an earlier cursor",
			pages: map[string]string{
				"":   listingPage(`,"next_cursor":"c1"`, "2026-06-10"),
				"c1": listingPage(`,"next_cursor":"c2"`, "2026-06-09"),
				"c2": listingPage(`,"next_cursor":"c1"`, "2026-06-08"),
			},
			wantIDs: []string{"2026-06-10", "2026-06-09", "2026-06-08"}, requests: 3,
		},
		{
			name:   "repeats the cursor of the params",
			params: &synthient.ListExportsParams{Cursor: "p0"},
			pages: map[string]string{
				"p0": listingPage(`,"next_cursor":"p1"`, "2026-06-10"),
				"p1": listingPage(`,"next_cursor":"p0"`, "2026-06-09"),
			},
			wantIDs: []string{"2026-06-10", "2026-06-09"}, requests: 2,
		},
		{
			name:   "the first page repeats the params cursor",
			params: &synthient.ListExportsParams{Cursor: "p0"},
			pages: map[string]string{
				"p0": listingPage(`,"next_cursor":"p0"`, "2026-06-10"),
			},
			wantIDs: []string{"2026-06-10"}, requests: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := pagedServer(t, tc.pages)
			c := newClient(t, srv.Base)
			ids, errs, after := drainExportIDs(c.AllExports(callCtx(t), synthient.FeedProxies, tc.params))
			assert.Equal(t, tc.wantIDs, ids)
			require.Len(t, errs, 1)
			assert.False(t, after, "an export was yielded after the error")
			// The error counts the attempts of every page: the loop is one
			// call, as the observer's CallEnd counts it.
			_ = requirePlainError(t, errs[0])
			_ = requireStop(t, errs[0], tc.requests, retry.NotRetryable)
			assert.Equal(t, tc.requests, srv.Arrivals(), "requests (nothing after the repeated cursor)")
		})
	}
}

// liveHeap returns the bytes of live heap objects, after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A server whose cursors are 256 KiB long, all different: the loop keeps a
// fixed-size digest of each cursor it requested, so its memory does not
// grow with the cursors (keeping them made it hold every one).
//
//nolint:paralleltest // it measures the live heap: a parallel test would add to it
func TestAllExportsKeepsADigestOfEachCursor(t *testing.T) {
	const pages, first, cursorLen = 24, 4, 256 << 10
	cursor := func(k int) string { return fmt.Sprintf("%04d", k) + strings.Repeat("c", cursorLen-4) }
	// Without a log: the cursors it would keep are what this test measures.
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		k := 0
		if _, c, ok := strings.Cut(r.URL.RawQuery, "cursor="); ok && len(c) >= 4 {
			k, _ = strconv.Atoi(c[:4])
		}
		next := ""
		if k+1 < pages {
			next = `,"next_cursor":"` + cursor(k+1) + `"`
		}
		writeJSON(w, http.StatusOK, listingPage(next, "2026-06-10"))
	}, withoutLog())
	c := newClient(t, srv.Base)
	var start, end uint64
	n := 0
	for _, err := range c.AllExports(callCtx(t), synthient.FeedProxies, nil) {
		require.NoError(t, err, "page %d", n+1)
		n++
		switch n {
		case first:
			start = liveHeap()
		case pages:
			end = liveHeap()
		}
	}
	require.Equal(t, pages, n, "pages")
	// The cursors requested in between add up to 5 MiB.
	const bound = 2 << 20
	t.Logf("live heap %d KiB after page %d, %d KiB after page %d", start>>10, first, end>>10, pages)
	if end > start {
		assert.LessOrEqual(t, end-start, uint64(bound), "the live heap grew by %d KiB over %d pages of %d KiB cursors, want less than %d KiB",
			(end-start)>>10, pages-first, cursorLen>>10, bound>>10)
	}
}

func TestAllExportsStopsOnAFailingPage(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("cursor") {
		case "":
			writeJSON(w, 200, listingPage(`,"next_cursor":"c1"`, "2026-06-10", "2026-06-09"))
		case "c1":
			writeProblem(w, 404)
		default:
			writeJSON(w, 200, listingPage("", "2026-06-01"))
		}
	})
	c := newClient(t, srv.Base)
	ids, errs, after := drainExportIDs(c.AllExports(callCtx(t), synthient.FeedProxies, nil))
	assert.Equal(t, []string{"2026-06-10", "2026-06-09"}, ids)
	require.Len(t, errs, 1)
	require.False(t, after, "an export was yielded after the error")
	_ = requireAPIErr(t, errs[0], 404)
	assert.Equal(t, 2, srv.Arrivals(), "requests (the 404 is not retried and ends the sequence)")
}

func TestAllExportsBreakStopsFetching(t *testing.T) {
	t.Parallel()
	for _, first := range [][]string{{"2026-06-10"}, {"2026-06-10", "2026-06-09", "2026-06-08"}} {
		t.Run(fmt.Sprintf("first page of %d", len(first)), func(t *testing.T) {
			t.Parallel()
			srv := pagedServer(t, map[string]string{
				"":   listingPage(`,"next_cursor":"c1"`, first...),
				"c1": listingPage("", "2026-06-01"),
			})
			c := newClient(t, srv.Base)
			var got []string
			for e, err := range c.AllExports(callCtx(t), synthient.FeedProxies, nil) {
				require.NoError(t, err)
				got = append(got, e.ID)
				break
			}
			assert.Equal(t, []string{"2026-06-10"}, got)
			assert.Equal(t, 1, srv.Arrivals(), "requests after a break on the first item")
		})
	}
}

func TestAllExportsDoesNotModifyParams(t *testing.T) {
	t.Parallel()
	srv := pagedServer(t, map[string]string{
		"p0": listingPage(`,"next_cursor":"c1"`, "2026-06-10"),
		"c1": listingPage(`,"next_cursor":"c2"`, "2026-06-09"),
		"c2": listingPage("", "2026-06-08"),
	})
	c := newClient(t, srv.Base)
	p := &synthient.ListExportsParams{Limit: 7, Cursor: "p0"}
	ids, errs, _ := drainExportIDs(c.AllExports(callCtx(t), synthient.FeedProxies, p))
	require.Empty(t, errs)
	require.Len(t, ids, 3)
	assert.Equal(t, synthient.ListExportsParams{Limit: 7, Cursor: "p0"}, *p, "params after the loop")
	// Nor after a break in the middle of the listing.
	for range c.AllExports(callCtx(t), synthient.FeedProxies, p) { //nolint:errcheck // the loop breaks at once: its items are not this test's
		break
	}
	assert.Equal(t, synthient.ListExportsParams{Limit: 7, Cursor: "p0"}, *p, "params after a break")
}

// A sequence that does not document itself as single-use walks the whole
// listing each time it is ranged over.
func TestAllExportsCanBeRangedTwice(t *testing.T) {
	t.Parallel()
	srv := pagedServer(t, map[string]string{
		"":   listingPage(`,"next_cursor":"c1"`, "2026-06-10"),
		"c1": listingPage("", "2026-06-09"),
	})
	seq := newClient(t, srv.Base).AllExports(callCtx(t), synthient.FeedProxies, nil)
	want := []string{"2026-06-10", "2026-06-09"}
	ids, errs, _ := drainExportIDs(seq)
	require.Empty(t, errs, "first range")
	require.Equal(t, want, ids, "first range")
	ids, errs, _ = drainExportIDs(seq)
	assert.Empty(t, errs, "second range")
	assert.Equal(t, want, ids, "second range: again from the first page")
	assert.Equal(t, []string{"", "c1", "", "c1"}, cursorsRequested(srv))
}

//nolint:tparallel // the subtests share one fake, whose requests are counted after them
func TestAllExportsInvalidArguments(t *testing.T) {
	t.Parallel()
	srv := pagedServer(t, map[string]string{"": listingPage("", "2026-06-10")})
	c := newClient(t, srv.Base)
	for _, tc := range []struct {
		name string
		feed synthient.Feed
		p    *synthient.ListExportsParams
	}{
		{"unknown feed", synthient.Feed("nope"), nil},
		{"limit 501", synthient.FeedProxies, &synthient.ListExportsParams{Limit: 501}},
		{"limit -1", synthient.FeedProxies, &synthient.ListExportsParams{Limit: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, errs, _ := drainExportIDs(c.AllExports(callCtx(t), tc.feed, tc.p))
			require.Empty(t, ids)
			require.Len(t, errs, 1)
			requireInvalid(t, errs[0])
		})
	}
	assert.Zero(t, srv.Arrivals(), "requests sent")
}

// ---------------------------------------------------------------------
// ExportMeta
// ---------------------------------------------------------------------

// metaExample is the export meta example of api-v4.md §7.
const metaExample = `{"stream": "proxies", "kind": "daily", "id": "2026-06-09", "format": "parquet", "date": 1780963200,
 "created_at": 1781052600, "size": 402118230, "rows": 9120554,
 "checksum": "5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a1908f7e",
 "schema": {"fields": [{"name": "ip", "type": "string"}, {"name": "provider", "type": "string"},
                       {"name": "type", "type": "string"}, {"name": "timestamp", "type": "int64"},
                       {"name": "country_code", "type": "string"}, {"name": "asn", "type": "int32"}]}}`

func TestExportMetaPaths(t *testing.T) {
	t.Parallel()
	srv := fixedJSONServer(t, metaExample)
	c := newClient(t, srv.Base)
	ids := []string{"latest", "2026-06-10", "2026-06-10/14", "2026-06-10/5", "2026-06-10/0", "2026-06-10/23", "2024-02-29"}
	n := 0
	for _, f := range feedSegments {
		for _, id := range ids {
			_, err := c.ExportMeta(callCtx(t), f.feed, id)
			require.NoError(t, err, "ExportMeta(%s, %q)", f.feed, id)
			n++
			reqs := srv.Requests()
			require.Len(t, reqs, n, "requests in all")
			r := reqs[n-1]
			assert.Equal(t, http.MethodGet, r.Method, "ExportMeta(%s, %q)", f.feed, id)
			assert.Equal(t, "/api/v4/feeds/"+f.seg+"/export/"+id+"/meta", r.Path, "ExportMeta(%s, %q)", f.feed, id)
			assert.Empty(t, r.RawQuery, "ExportMeta(%s, %q) sent a query", f.feed, id)
			assert.Equal(t, testKey, r.Header.Get("X-Api-Key"), "ExportMeta(%s, %q) sent no API key", f.feed, id)
		}
	}
	assert.Equal(t, n, srv.Arrivals())
}

//nolint:tparallel // the subtests share one fake, whose requests are counted after them
func TestExportMetaInvalidIDs(t *testing.T) {
	t.Parallel()
	srv := fixedJSONServer(t, metaExample)
	c := newClient(t, srv.Base)
	bad := []string{
		"", "2026-6-10", "2026-02-30", "2026-06-10/24", "2026-06-10/-1", "2026-06-10/", "latest/3",
		"2026-06-10/14/x", "../x", "2026-06-10/+1", "2026-06-10/1a", "2026-06-10/100", " 2026-06-10",
		"2026-06-10 ", "2026-13-01", "20260610", "LATEST", "2026-06-10/14/meta", "2026-06-10?x=1",
		"2026-06-10#x", "/2026-06-10", "2026-06-10//14",
	}
	for _, id := range bad {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			m, err := c.ExportMeta(callCtx(t), synthient.FeedProxies, id)
			requireInvalid(t, err)
			assert.Nil(t, m)
		})
	}
	t.Run("unknown feed", func(t *testing.T) {
		_, err := c.ExportMeta(callCtx(t), synthient.Feed("nope"), "latest")
		requireInvalid(t, err)
	})
	assert.Zero(t, srv.Arrivals(), "requests sent for invalid ids; paths %v", srv.Paths())
}

func TestExportMetaDecodesTheMetaExample(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/14/meta") {
			writeJSON(w, 200, `{"stream":"proxies","kind":"hourly","id":"2026-06-10/14","format":"parquet","date":1781049600,"hour":14,`+
				`"created_at":1781103600,"size":18734512,"rows":412907,"checksum":"9f2c6a0d5b1e47c8a3f0e2d4b6c8a0e1f3d5b7c9e1a3c5e7f9b1d3f5a7c9e1b3",`+
				`"schema":{"fields":[{"name":"ip","type":"string"}]}}`)
			return
		}
		writeJSON(w, 200, metaExample)
	})
	c := newClient(t, srv.Base)
	m, err := c.ExportMeta(callCtx(t), synthient.FeedProxies, "2026-06-09")
	require.NoError(t, err)
	want := &synthient.ExportMeta{
		Stream: "proxies", Kind: "daily", ID: "2026-06-09", Date: 1780963200, Hour: nil, Format: "parquet",
		CreatedAt: 1781052600, Size: 402118230, Rows: 9120554,
		Checksum: "5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a1908f7e",
		Schema: synthient.ExportSchema{Fields: []synthient.SchemaField{
			{Name: "ip", Type: "string"}, {Name: "provider", Type: "string"}, {Name: "type", Type: "string"},
			{Name: "timestamp", Type: "int64"}, {Name: "country_code", Type: "string"}, {Name: "asn", Type: "int32"},
		}},
	}
	assert.Equal(t, want, m)
	assert.Equal(t, []string{"/api/v4/feeds/proxies/export/2026-06-09/meta"}, srv.Paths())

	h, err := c.ExportMeta(callCtx(t), synthient.FeedProxies, "2026-06-10/14")
	require.NoError(t, err, "hourly")
	if assert.NotNil(t, h.Hour, "hourly meta %+v", h) {
		assert.Equal(t, 14, *h.Hour)
	}
	assert.Equal(t, "2026-06-10/14", h.ID)
	assert.Equal(t, "hourly", h.Kind)
	assert.EqualValues(t, 18734512, h.Size)
}

// A meta needs a size or a checksum to be a meta: one of them is enough
// (a meta without a checksum can still be downloaded, unverified); a JSON
// object with neither is a *DecodeError.
func TestExportMetaNeedsASizeOrAChecksum(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		ok         bool
	}{
		{"size alone", `{"id":"2026-06-09","size":10}`, true},
		{"checksum alone", `{"id":"2026-06-09","checksum":"ab"}`, true},
		{"neither", `{"id":"2026-06-09","rows":3}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, tc.body) })
			m, err := newClient(t, srv.Base).ExportMeta(callCtx(t), synthient.FeedProxies, "2026-06-09")
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, "2026-06-09", m.ID)
				return
			}
			var de *synthient.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Nil(t, m)
		})
	}
}

func TestExportMetaRetriesA503(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			writeProblem(w, 503)
			return
		}
		writeJSON(w, 200, metaExample)
	})
	_, err := newClient(t, srv.Base).ExportMeta(callCtx(t), synthient.FeedJA4T, "latest")
	require.NoError(t, err)
	assert.Equal(t, 2, srv.Arrivals())
}

// ---------------------------------------------------------------------
// The export id validator, fuzzed through ExportMeta on a mockAPI that
// answers a minimal meta, so nothing leaves the process.
// ---------------------------------------------------------------------

// referenceExportID is an independent reference of the export id rules:
// it reports whether id is "latest", "YYYY-MM-DD" with a real (proleptic
// Gregorian) date, or "YYYY-MM-DD/H" or "YYYY-MM-DD/HH" with an hour of 0
// to 23, and returns its date and hour (-1 for none).
func referenceExportID(id string) (date string, hour int, ok bool) {
	if id == "latest" {
		return "latest", -1, true
	}
	date, rest, hourly := strings.Cut(id, "/")
	if len(date) != 10 || date[4] != '-' || date[7] != '-' {
		return "", 0, false
	}
	num := func(s string) (int, bool) {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, len(s) > 0
	}
	y, okY := num(date[0:4])
	m, okM := num(date[5:7])
	d, okD := num(date[8:10])
	if !okY || !okM || !okD || m < 1 || m > 12 || d < 1 {
		return "", 0, false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	if d > days {
		return "", 0, false
	}
	if !hourly {
		return date, -1, true
	}
	if len(rest) < 1 || len(rest) > 2 {
		return "", 0, false
	}
	h, okH := num(rest)
	if !okH || h > 23 {
		return "", 0, false
	}
	return date, h, true
}

// sentMetaPath matches the path of a request for an export's metadata.
var sentMetaPath = regexp.MustCompile(`^/api/v4/feeds/proxies/export/(latest|([0-9]{4})-([0-9]{2})-([0-9]{2})(?:/([0-9]{1,2}))?)/meta$`)

// FuzzExportID fuzzes the export id validator through ExportMeta: an id
// the reference rejects is an invalid argument and sends nothing; one it
// accepts sends one request to /feeds/proxies/export/{id}/meta with the
// id's own date and hour, a real date and an hour of 0 to 23.
func FuzzExportID(f *testing.F) {
	for _, id := range []string{
		"latest", "Latest", "LATEST", "latest/", "latest/1", " latest", "latest\x00", "",
		"2026-06-10", "2026-06-10/0", "2026-06-10/00", "2026-06-10/7", "2026-06-10/07",
		"2026-06-10/23", "2026-06-10/24", "2026-06-10/99", "2026-06-10/007", "2026-06-10/100",
		"2026-06-10/", "2026-06-10//1", "2026-06-10/1/", "2026-06-10/1/meta", "2026-06-10/01/02",
		"2026-06-10/+1", "2026-06-10/-0", "2026-06-10/ 1", "2026-06-10/1 ", "2026-06-10/0x1",
		"2026-06-10/1_0", "2026-06-10/\u0661", "2026-06-10/\uff11", "2026-06-10/1e1",
		"2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2100-02-29", "2400-02-29",
		"0000-01-01", "0000-02-29", "9999-12-31", "2026-01-31", "2026-04-31", "2026-06-31",
		"2026-13-01", "2026-00-10", "2026-06-00", "2026-06-32", "2026-6-10", "2026-06-1",
		"26-06-10", "20260-06-10", "2026/06/10", "2026-06-10T00", "2026-06-10 ", " 2026-06-10",
		"+026-06-10", "-026-06-10", "2026-+6-10", "2026-06-+1", "2026--6-10", "2026-06-1x",
		"\uff12\uff10\uff12\uff16-06-10", "2026-06-10\n", "2026-06-10\x00", "../2026-06-10",
		"2026-06-10/../../account/me", "2026-06-10?x=1", "2026-06-10#x", "2026-06-10%2F1",
		"2026-06-10%00", "2026-06-10;1", "2026-06-10\\1", "2026-06-10/1?", "2026-06-10/1#",
	} {
		f.Add(id)
	}
	rt := newMockAPI(f, answerJSON(http.StatusOK, `{"stream":"proxies","id":"2026-06-10","size":1,"checksum":"00"}`))
	c := rt.Client(f)

	f.Fuzz(func(t *testing.T, id string) {
		_, err := c.ExportMeta(context.Background(), synthient.FeedProxies, id)
		r := acceptedRequest(t, strconv.Quote(id), err, rt.Take())

		date, hour, ok := referenceExportID(id)
		switch {
		case !ok && r != nil:
			t.Fatalf("ExportMeta(%q) sent %s; the reference rejects the id", id, r.URL.EscapedPath())
		case ok && r == nil:
			t.Fatalf("ExportMeta(%q) = %v; the reference accepts the id", id, err)
		case r == nil:
			return
		}
		require.Empty(t, r.URL.RawQuery, "ExportMeta(%q) sent a query", id)
		require.Empty(t, r.URL.Fragment, "ExportMeta(%q) sent a fragment", id)
		escaped := r.URL.EscapedPath()
		m := sentMetaPath.FindStringSubmatch(escaped)
		require.NotNil(t, m, "ExportMeta(%q) sent path %q, not /api/v4/feeds/proxies/export/(latest|YYYY-MM-DD|YYYY-MM-DD/H{1,2})/meta", id, escaped)
		if m[1] == "latest" {
			require.Equal(t, "latest", date, "ExportMeta(%q) sent %q", id, escaped)
			return
		}
		sentDate := m[2] + "-" + m[3] + "-" + m[4]
		_, _, real := referenceExportID(sentDate)
		require.True(t, real, "ExportMeta(%q) sent %q: %s is not a real date", id, escaped, sentDate)
		require.Equal(t, date, sentDate, "ExportMeta(%q) sent the date", id)
		sentHour := -1
		if m[5] != "" {
			sentHour, _ = strconv.Atoi(m[5])
			require.LessOrEqual(t, sentHour, 23, "ExportMeta(%q) sent %q: the hour is outside 0 to 23", id, escaped)
		}
		require.Equal(t, hour, sentHour, "ExportMeta(%q) sent %q: the hour (-1: none)", id, escaped)
	})
}
