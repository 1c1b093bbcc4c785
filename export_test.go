package synthient_test

// Tests of export.go: ListExports, AllExports and ExportMeta. The
// downloads are in download_test.go.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// feedURLSegments maps every feed to its URL path segment.
var feedURLSegments = []struct {
	feed synthient.Feed
	seg  string
}{
	{synthient.FeedProxies, "proxies"},
	{synthient.FeedAnonymizers, "anonymizers"},
	{synthient.FeedTorrents, "torrents"},
	{synthient.FeedHoneypotHTTP, "helio/http"},
	{synthient.FeedHoneypotHTTPS, "helio/https"},
	{synthient.FeedHoneypotDNS, "helio/dns"},
	{synthient.FeedHoneypotADB, "helio/adb"},
	{synthient.FeedJA4T, "ja4t"},
}

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
	for i, f := range feedURLSegments {
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
	requireAPIErr(t, err, 404)
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
			// The page whose answer repeated the cursor: one request.
			requireStop(t, errs[0], 1, retry.NotRetryable)
			var ae *synthient.APIError
			assert.False(t, errors.As(errs[0], &ae), "err = %v matches *APIError, want a plain *Error", errs[0])
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
// grow with the cursors (keeping them made it hold every one). Not
// parallel: it measures the live heap.
func TestAllExportsKeepsADigestOfEachCursor(t *testing.T) {
	const pages, first, cursorLen = 24, 4, 256 << 10
	cursor := func(k int) string { return fmt.Sprintf("%04d", k) + strings.Repeat("c", cursorLen-4) }
	// A plain httptest server: apiServer and rawServer record every
	// request, and the cursors they would keep are what this test measures.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := 0
		if _, c, ok := strings.Cut(r.URL.RawQuery, "cursor="); ok && len(c) >= 4 {
			k, _ = strconv.Atoi(c[:4])
		}
		next := ""
		if k+1 < pages {
			next = `,"next_cursor":"` + cursor(k+1) + `"`
		}
		writeJSON(w, http.StatusOK, listingPage(next, "2026-06-10"))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/api/v4")
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
	requireAPIErr(t, errs[0], 404)
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
	for range c.AllExports(callCtx(t), synthient.FeedProxies, p) {
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
	for _, f := range feedURLSegments {
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
// Deprecated harness: remove once no file uses it.
// ---------------------------------------------------------------------
// stream_test.go and linereader_fuzz_test.go still use these; they are
// moved here unchanged. New tests use apiServer, rawServer, writeProblem,
// requireInvalid and feedURLSegments instead.

// fxReq is what an fxServer recorded of one request.
type fxReq struct {
	Method   string
	Path     string // r.URL.Path, unescaped
	RawQuery string
	Query    url.Values
	Header   http.Header
}

// fxServer is a loopback httptest server (http or https) that records every
// request and answers through h, which gets the request's 1-based arrival
// number. The request's context ends when the client goes away or the test
// ends: a handler that waits must watch it.
type fxServer struct {
	*httptest.Server
	// Base is the API base URL: URL + "/api/v4".
	Base string
	// Quit is closed when the test ends.
	Quit chan struct{}

	h    func(n int, w http.ResponseWriter, r *http.Request)
	mu   sync.Mutex
	reqs []fxReq
	n    atomic.Int64
}

func newFXServer(t testing.TB, tlsOn bool, h func(n int, w http.ResponseWriter, r *http.Request)) *fxServer {
	t.Helper()
	s := &fxServer{h: h, Quit: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	s.Base = s.URL + "/api/v4"
	t.Cleanup(func() {
		close(s.Quit)
		s.Server.Close()
	})
	return s
}

func (s *fxServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, fxReq{
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		Query:    r.URL.Query(),
		Header:   r.Header.Clone(),
	})
	s.mu.Unlock()
	n := int(s.n.Add(1))
	// The request's context also ends when the test ends, so that a
	// handler waiting on it never keeps Close waiting.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.Quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	if s.h != nil {
		s.h(n, w, r.WithContext(ctx))
	}
}

// Arrivals is the number of requests the server received so far.
func (s *fxServer) Arrivals() int { return int(s.n.Load()) }

// Reqs returns a copy of the recorded requests.
func (s *fxServer) Reqs() []fxReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]fxReq(nil), s.reqs...)
}

// Paths returns the path of every recorded request, in arrival order.
func (s *fxServer) Paths() []string {
	var out []string
	for _, r := range s.Reqs() {
		out = append(out, r.Path)
	}
	return out
}

// fxProblem answers status with an RFC 9457 problem body; kv are extra
// header pairs.
func fxProblem(w http.ResponseWriter, status int, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		w.Header().Set(kv[i], kv[i+1])
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"https://docs.synthient.com/errors/x","title":%q,"status":%d,"detail":"detail of %d"}`,
		http.StatusText(status), status, status)
}

// fxRaw is a rawServer that reads one HTTP request per connection and
// hands the connection to serve, for what net/http's server cannot do:
// resets and truncated bodies. The connection is closed when serve returns
// (if serve did not close it already); quit is closed when the test ends.
type fxRaw struct {
	*rawServer
	// URL is http://Addr, without the API prefix.
	URL string

	mu   sync.Mutex
	reqs []*http.Request
}

func newFXRaw(t testing.TB, serve func(c *net.TCPConn, req *http.Request, quit <-chan struct{})) *fxRaw {
	t.Helper()
	s := &fxRaw{}
	s.rawServer = newRawServer(t, func(rc *rawConn) {
		req, _, _, err := rc.ReadRequest()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		serve(rc.Conn.(*net.TCPConn), req, rc.srv.Done())
	})
	s.URL = "http://" + s.Addr
	return s
}

// Reqs returns the requests read so far.
func (s *fxRaw) Reqs() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// fxReset closes c with an RST instead of a FIN.
func fxReset(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}

// fxWait blocks until ch is closed or the server quits; it reports
// whether ch was closed.
func fxWait(ch <-chan struct{}, quit <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-quit:
		return false
	}
}

// fxCheckInvalid checks that err matches ErrInvalidArgument.
func fxCheckInvalid(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, synthient.ErrInvalidArgument) {
		t.Fatalf("err = %v (%T), want one matching ErrInvalidArgument", err, err)
	}
}

// fxSegments maps every feed to its URL path segment.
var fxSegments = []struct {
	feed synthient.Feed
	seg  string
}{
	{synthient.FeedProxies, "proxies"},
	{synthient.FeedAnonymizers, "anonymizers"},
	{synthient.FeedTorrents, "torrents"},
	{synthient.FeedHoneypotHTTP, "helio/http"},
	{synthient.FeedHoneypotHTTPS, "helio/https"},
	{synthient.FeedHoneypotDNS, "helio/dns"},
	{synthient.FeedHoneypotADB, "helio/adb"},
	{synthient.FeedJA4T, "ja4t"},
}
