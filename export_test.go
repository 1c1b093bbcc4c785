package synthient_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// ---------------------------------------------------------------------
// Helpers shared by export_test.go, download_test.go, stream_test.go and
// linereader_fuzz_test.go. Their names start with fx to stay clear of the
// helpers of the other test files of the package.
// ---------------------------------------------------------------------

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

// fxJSON answers status with a JSON body.
func fxJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
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

// ---------------------------------------------------------------------
// ListExports
// ---------------------------------------------------------------------

// fxListingExample is the export listing example of api-v4.md §7.
const fxListingExample = `{
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

// fxListing returns a listing page of daily exports with the given ids;
// next is appended raw after the feeds array (`,"next_cursor":"c1"`, or
// "" for none).
func fxListing(next string, ids ...string) string {
	items := make([]string, len(ids))
	for i, id := range ids {
		items[i] = fmt.Sprintf(`{"kind":"daily","date":%q,"id":%q,"size_bytes":100,"row_count":10,`+
			`"checksum":"%s","created_at":1781052600,"download_path":"/api/v4/feeds/proxies/export/%s"}`,
			id[:10], id, strings.Repeat("ab", 32), id)
	}
	return `{"stream":"proxies","feeds":[` + strings.Join(items, ",") + `]` + next + `}`
}

func TestListExportsPathForEveryFeed(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		fxJSON(w, 200, fxListing(""))
	})
	c := newClient(t, srv.Base)
	for i, f := range fxSegments {
		if _, err := c.ListExports(context.Background(), f.feed, nil); err != nil {
			t.Fatalf("ListExports(%s): %v", f.feed, err)
		}
		reqs := srv.Reqs()
		if len(reqs) != i+1 {
			t.Fatalf("ListExports(%s): %d requests in all, want %d", f.feed, len(reqs), i+1)
		}
		r := reqs[i]
		if want := "/api/v4/feeds/" + f.seg + "/export"; r.Method != http.MethodGet || r.Path != want {
			t.Errorf("ListExports(%s) sent %s %s, want GET %s", f.feed, r.Method, r.Path, want)
		}
		if r.RawQuery != "" {
			t.Errorf("ListExports(%s, nil) sent query %q, want none", f.feed, r.RawQuery)
		}
		if got := r.Header.Get("X-Api-Key"); got != testKey {
			t.Errorf("ListExports(%s) sent X-Api-Key %q, want the key", f.feed, got)
		}
	}
}

func TestListExportsQuery(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		fxJSON(w, 200, fxListing(""))
	})
	c := newClient(t, srv.Base)
	cases := []struct {
		p          *synthient.ListExportsParams
		limit, cur string // "" = absent
	}{
		{nil, "", ""},
		{&synthient.ListExportsParams{}, "", ""},
		{&synthient.ListExportsParams{Limit: 3}, "3", ""},
		{&synthient.ListExportsParams{Limit: 1}, "1", ""},
		{&synthient.ListExportsParams{Limit: 500}, "500", ""},
		{&synthient.ListExportsParams{Cursor: "eyJiZWZvcmUiOiIyMDI2LTA2LTA5In0"}, "", "eyJiZWZvcmUiOiIyMDI2LTA2LTA5In0"},
		{&synthient.ListExportsParams{Limit: 2, Cursor: "a+b/c=&d e"}, "2", "a+b/c=&d e"},
	}
	for i, tc := range cases {
		if _, err := c.ListExports(context.Background(), synthient.FeedProxies, tc.p); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		r := srv.Reqs()[i]
		if r.Path != "/api/v4/feeds/proxies/export" {
			t.Errorf("case %d: path %q", i, r.Path)
		}
		q := r.Query
		if _, ok := q["limit"]; ok != (tc.limit != "") || q.Get("limit") != tc.limit {
			t.Errorf("case %d (%+v): limit = %q (present %v), want %q", i, tc.p, q.Get("limit"), ok, tc.limit)
		}
		if _, ok := q["cursor"]; ok != (tc.cur != "") || q.Get("cursor") != tc.cur {
			t.Errorf("case %d (%+v): cursor = %q (present %v), want %q", i, tc.p, q.Get("cursor"), ok, tc.cur)
		}
		for k := range q {
			if k != "limit" && k != "cursor" {
				t.Errorf("case %d: unexpected query parameter %q", i, k)
			}
		}
	}
}

func TestListExportsInvalidArguments(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		fxJSON(w, 200, fxListing(""))
	})
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
			page, err := c.ListExports(context.Background(), tc.feed, tc.p)
			fxCheckInvalid(t, err)
			if page != nil {
				t.Errorf("page = %+v, want nil", page)
			}
		})
	}
	if n := srv.Arrivals(); n != 0 {
		t.Errorf("%d requests sent for invalid arguments, want 0", n)
	}
}

func TestListExportsDecodesTheListingExample(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		fxJSON(w, 200, fxListingExample)
	})
	c := newClient(t, srv.Base)
	page, err := c.ListExports(context.Background(), synthient.FeedProxies, &synthient.ListExportsParams{Limit: 3})
	if err != nil {
		t.Fatalf("ListExports: %v", err)
	}
	h14, h13 := 14, 13
	want := &synthient.ExportPage{
		Stream: "proxies",
		Exports: []synthient.Export{
			{ID: "2026-06-10/14", Kind: "hourly", Date: "2026-06-10", Hour: &h14, SizeBytes: 18734512, RowCount: 412907,
				Checksum: "9f2c6a0d5b1e47c8a3f0e2d4b6c8a0e1f3d5b7c9e1a3c5e7f9b1d3f5a7c9e1b3", CreatedAt: 1781103600,
				DownloadPath: "/api/v4/feeds/proxies/export/2026-06-10/14"},
			{ID: "2026-06-10/13", Kind: "hourly", Date: "2026-06-10", Hour: &h13, SizeBytes: 18120044, RowCount: 398112,
				Checksum: "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9", CreatedAt: 1781100000,
				DownloadPath: "/api/v4/feeds/proxies/export/2026-06-10/13"},
			{ID: "2026-06-09", Kind: "daily", Date: "2026-06-09", Hour: nil, SizeBytes: 402118230, RowCount: 9120554,
				Checksum: "5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a1908f7e", CreatedAt: 1781052600,
				DownloadPath: "/api/v4/feeds/proxies/export/2026-06-09"},
		},
		NextCursor: "eyJiZWZvcmUiOiIyMDI2LTA2LTA5In0",
	}
	if !reflect.DeepEqual(page, want) {
		t.Errorf("page =\n%+v\nwant\n%+v", page, want)
	}
	if page.Exports[2].Hour != nil {
		t.Errorf("daily export has Hour %d, want nil", *page.Exports[2].Hour)
	}

	// The last page: next_cursor absent, null or empty all give "".
	for _, next := range []string{``, `,"next_cursor":null`, `,"next_cursor":""`} {
		body := fxListing(next, "2026-06-08")
		srv2 := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { fxJSON(w, 200, body) })
		page, err := newClient(t, srv2.Base).ListExports(context.Background(), synthient.FeedProxies, nil)
		if err != nil {
			t.Fatalf("last page %q: %v", next, err)
		}
		if page.NextCursor != "" || len(page.Exports) != 1 || page.Exports[0].ID != "2026-06-08" {
			t.Errorf("last page %q: got %+v", next, page)
		}
	}
}

func TestListExportsRetriesA503(t *testing.T) {
	srv := newFXServer(t, false, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			fxProblem(w, 503, "Retry-After", "0")
			return
		}
		fxJSON(w, 200, fxListing("", "2026-06-09"))
	})
	c := newClient(t, srv.Base)
	page, err := c.ListExports(context.Background(), synthient.FeedProxies, nil)
	if err != nil {
		t.Fatalf("ListExports: %v", err)
	}
	if len(page.Exports) != 1 {
		t.Errorf("page = %+v", page)
	}
	if n := srv.Arrivals(); n != 2 {
		t.Errorf("%d arrivals, want 2 (503 then 200, standard class)", n)
	}
}

func TestListExportsDoesNotRetryA404(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { fxProblem(w, 404) })
	c := newClient(t, srv.Base)
	_, err := c.ListExports(context.Background(), synthient.FeedProxies, nil)
	var ae *synthient.APIError
	if !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("err = %v, want an *APIError 404", err)
	}
	if n := srv.Arrivals(); n != 1 {
		t.Errorf("%d arrivals, want 1", n)
	}
}

// ---------------------------------------------------------------------
// AllExports
// ---------------------------------------------------------------------

// fxPagedServer answers a listing for each cursor in pages ("" is the
// first page); an unknown cursor is a 400. From the 50th request on it
// answers 410, to end a client that would loop for ever.
func fxPagedServer(t *testing.T, pages map[string]string) *fxServer {
	return newFXServer(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Query().Get("cursor")]
		if n >= 50 {
			fxProblem(w, 410)
			return
		}
		if !ok {
			fxProblem(w, 400)
			return
		}
		fxJSON(w, 200, body)
	})
}

// fxDrain ranges over seq and returns the ids yielded, the errors yielded,
// and whether an item came after an error.
func fxDrain(seq func(func(synthient.Export, error) bool)) (ids []string, errs []error, itemAfterErr bool) {
	for e, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(errs) > 0 {
			itemAfterErr = true
		}
		ids = append(ids, e.ID)
	}
	return ids, errs, itemAfterErr
}

func fxCursors(s *fxServer) []string {
	var out []string
	for _, r := range s.Reqs() {
		out = append(out, r.Query.Get("cursor"))
	}
	return out
}

func TestAllExportsIsLazy(t *testing.T) {
	srv := fxPagedServer(t, map[string]string{"": fxListing("", "2026-06-09")})
	c := newClient(t, srv.Base)
	seq := c.AllExports(context.Background(), synthient.FeedProxies, nil)
	if n := srv.Arrivals(); n != 0 {
		t.Fatalf("%d requests sent before the loop started, want 0", n)
	}
	ids, errs, _ := fxDrain(seq)
	if len(errs) != 0 || !reflect.DeepEqual(ids, []string{"2026-06-09"}) {
		t.Fatalf("ids %v, errors %v", ids, errs)
	}
	if n := srv.Arrivals(); n != 1 {
		t.Errorf("%d arrivals, want 1", n)
	}
}

func TestAllExportsFollowsCursorsToTheEnd(t *testing.T) {
	ends := map[string]string{
		"next_cursor absent": ``,
		"next_cursor empty":  `,"next_cursor":""`,
		"next_cursor null":   `,"next_cursor":null`,
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			srv := fxPagedServer(t, map[string]string{
				"":   fxListing(`,"next_cursor":"c1"`, "2026-06-10/14", "2026-06-10/13"),
				"c1": fxListing(`,"next_cursor":"c2"`, "2026-06-09"),
				"c2": fxListing(end, "2026-06-08", "2026-06-07"),
			})
			c := newClient(t, srv.Base)
			ids, errs, _ := fxDrain(c.AllExports(context.Background(), synthient.FeedProxies, &synthient.ListExportsParams{Limit: 2}))
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			want := []string{"2026-06-10/14", "2026-06-10/13", "2026-06-09", "2026-06-08", "2026-06-07"}
			if !reflect.DeepEqual(ids, want) {
				t.Errorf("ids = %v, want %v", ids, want)
			}
			if got := fxCursors(srv); !reflect.DeepEqual(got, []string{"", "c1", "c2"}) {
				t.Errorf("cursors requested = %q, want [\"\" c1 c2] (and nothing after the last page)", got)
			}
			for i, r := range srv.Reqs() {
				if r.Query.Get("limit") != "2" || r.Path != "/api/v4/feeds/proxies/export" {
					t.Errorf("request %d: %s?%s, want the limit on every page", i+1, r.Path, r.RawQuery)
				}
			}
		})
	}
}

func TestAllExportsStopsOnARepeatedCursor(t *testing.T) {
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
				"":   fxListing(`,"next_cursor":"c1"`, "2026-06-10"),
				"c1": fxListing(`,"next_cursor":"c1"`, "2026-06-09"),
			},
			wantIDs: []string{"2026-06-10", "2026-06-09"}, requests: 2,
		},
		{
			name: "repeats an earlier cursor",
			pages: map[string]string{
				"":   fxListing(`,"next_cursor":"c1"`, "2026-06-10"),
				"c1": fxListing(`,"next_cursor":"c2"`, "2026-06-09"),
				"c2": fxListing(`,"next_cursor":"c1"`, "2026-06-08"),
			},
			wantIDs: []string{"2026-06-10", "2026-06-09", "2026-06-08"}, requests: 3,
		},
		{
			name:   "repeats the cursor of the params",
			params: &synthient.ListExportsParams{Cursor: "p0"},
			pages: map[string]string{
				"p0": fxListing(`,"next_cursor":"p1"`, "2026-06-10"),
				"p1": fxListing(`,"next_cursor":"p0"`, "2026-06-09"),
			},
			wantIDs: []string{"2026-06-10", "2026-06-09"}, requests: 2,
		},
		{
			name:   "the first page repeats the params cursor",
			params: &synthient.ListExportsParams{Cursor: "p0"},
			pages: map[string]string{
				"p0": fxListing(`,"next_cursor":"p0"`, "2026-06-10"),
			},
			wantIDs: []string{"2026-06-10"}, requests: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fxPagedServer(t, tc.pages)
			c := newClient(t, srv.Base)
			ids, errs, after := fxDrain(c.AllExports(context.Background(), synthient.FeedProxies, tc.params))
			if !reflect.DeepEqual(ids, tc.wantIDs) {
				t.Errorf("ids = %v, want %v", ids, tc.wantIDs)
			}
			if len(errs) != 1 {
				t.Fatalf("%d errors (%v), want exactly 1", len(errs), errs)
			}
			if after {
				t.Error("an export was yielded after the error")
			}
			var base *synthient.Error
			if !errors.As(errs[0], &base) {
				t.Errorf("err = %v (%T), want an *Error", errs[0], errs[0])
			} else if base.Attempts != 1 || base.StopReason != retry.NotRetryable {
				// The page whose answer repeated the cursor: one request.
				t.Errorf("Attempts %d, StopReason %q; want 1, %q", base.Attempts, base.StopReason, retry.NotRetryable)
			}
			var ae *synthient.APIError
			if errors.As(errs[0], &ae) {
				t.Errorf("err = %v matches *APIError, want a plain *Error", errs[0])
			}
			if n := srv.Arrivals(); n != tc.requests {
				t.Errorf("%d requests, want %d (nothing after the repeated cursor)", n, tc.requests)
			}
		})
	}
}

// fxLiveHeap returns the bytes of live heap objects, after a collection.
func fxLiveHeap() uint64 {
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
	// A rawServer keeps nothing of the requests it reads.
	srv := newRawServer(t, func(rc *rawConn) {
		for {
			req, _, _, err := rc.ReadRequest()
			if err != nil {
				return
			}
			k := 0
			if _, c, ok := strings.Cut(req.URL.RawQuery, "cursor="); ok && len(c) >= 4 {
				k, _ = strconv.Atoi(c[:4])
			}
			next := ""
			if k+1 < pages {
				next = `,"next_cursor":"` + cursor(k+1) + `"`
			}
			if rc.WriteResponse(http.StatusOK, "application/json", fxListing(next, "2026-06-10")) != nil {
				return
			}
		}
	})
	c := newClient(t, srv.URL)
	var start, end uint64
	n := 0
	for _, err := range c.AllExports(context.Background(), synthient.FeedProxies, nil) {
		if err != nil {
			t.Fatalf("page %d: %v", n+1, err)
		}
		n++
		switch n {
		case first:
			start = fxLiveHeap()
		case pages:
			end = fxLiveHeap()
		}
	}
	if n != pages {
		t.Fatalf("%d pages, want %d", n, pages)
	}
	// The cursors requested in between add up to 5 MiB.
	const bound = 2 << 20
	t.Logf("live heap %d KiB after page %d, %d KiB after page %d", start>>10, first, end>>10, pages)
	if end > start && end-start > bound {
		t.Errorf("the live heap grew by %d KiB over %d pages of %d KiB cursors, want less than %d KiB",
			(end-start)>>10, pages-first, cursorLen>>10, bound>>10)
	}
}

func TestAllExportsStopsOnAFailingPage(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("cursor") {
		case "":
			fxJSON(w, 200, fxListing(`,"next_cursor":"c1"`, "2026-06-10", "2026-06-09"))
		case "c1":
			fxProblem(w, 404)
		default:
			fxJSON(w, 200, fxListing("", "2026-06-01"))
		}
	})
	c := newClient(t, srv.Base)
	ids, errs, after := fxDrain(c.AllExports(context.Background(), synthient.FeedProxies, nil))
	if !reflect.DeepEqual(ids, []string{"2026-06-10", "2026-06-09"}) {
		t.Errorf("ids = %v", ids)
	}
	if len(errs) != 1 || after {
		t.Fatalf("errors %v (item after error: %v), want exactly 1 at the end", errs, after)
	}
	var ae *synthient.APIError
	if !errors.As(errs[0], &ae) || ae.Status != 404 {
		t.Errorf("err = %v, want an *APIError 404", errs[0])
	}
	if n := srv.Arrivals(); n != 2 {
		t.Errorf("%d requests, want 2 (the 404 is not retried and ends the sequence)", n)
	}
}

func TestAllExportsBreakStopsFetching(t *testing.T) {
	for _, first := range [][]string{{"2026-06-10"}, {"2026-06-10", "2026-06-09", "2026-06-08"}} {
		srv := fxPagedServer(t, map[string]string{
			"":   fxListing(`,"next_cursor":"c1"`, first...),
			"c1": fxListing("", "2026-06-01"),
		})
		c := newClient(t, srv.Base)
		var got []string
		for e, err := range c.AllExports(context.Background(), synthient.FeedProxies, nil) {
			if err != nil {
				t.Fatalf("err: %v", err)
			}
			got = append(got, e.ID)
			break
		}
		if !reflect.DeepEqual(got, []string{"2026-06-10"}) {
			t.Errorf("got %v", got)
		}
		if n := srv.Arrivals(); n != 1 {
			t.Errorf("first page of %d: %d requests after a break on the first item, want 1", len(first), n)
		}
	}
}

func TestAllExportsDoesNotModifyParams(t *testing.T) {
	srv := fxPagedServer(t, map[string]string{
		"p0": fxListing(`,"next_cursor":"c1"`, "2026-06-10"),
		"c1": fxListing(`,"next_cursor":"c2"`, "2026-06-09"),
		"c2": fxListing("", "2026-06-08"),
	})
	c := newClient(t, srv.Base)
	p := &synthient.ListExportsParams{Limit: 7, Cursor: "p0"}
	seq := c.AllExports(context.Background(), synthient.FeedProxies, p)
	ids, errs, _ := fxDrain(seq)
	if len(errs) != 0 || len(ids) != 3 {
		t.Fatalf("ids %v, errors %v", ids, errs)
	}
	if *p != (synthient.ListExportsParams{Limit: 7, Cursor: "p0"}) {
		t.Errorf("params after the loop = %+v, want them unchanged", *p)
	}
	// Nor after a break in the middle of the listing.
	for range c.AllExports(context.Background(), synthient.FeedProxies, p) {
		break
	}
	if *p != (synthient.ListExportsParams{Limit: 7, Cursor: "p0"}) {
		t.Errorf("params after a break = %+v, want them unchanged", *p)
	}
}

// A sequence that does not document itself as single-use walks the whole
// listing each time it is ranged over.
func TestAllExportsCanBeRangedTwice(t *testing.T) {
	srv := fxPagedServer(t, map[string]string{
		"":   fxListing(`,"next_cursor":"c1"`, "2026-06-10"),
		"c1": fxListing("", "2026-06-09"),
	})
	c := newClient(t, srv.Base)
	seq := c.AllExports(context.Background(), synthient.FeedProxies, nil)
	ids1, errs1, _ := fxDrain(seq)
	ids2, errs2, _ := fxDrain(seq)
	want := []string{"2026-06-10", "2026-06-09"}
	if len(errs1) != 0 || !reflect.DeepEqual(ids1, want) {
		t.Fatalf("first range: ids %v, errors %v", ids1, errs1)
	}
	if len(errs2) != 0 || !reflect.DeepEqual(ids2, want) {
		t.Errorf("second range: ids %v, errors %v, want %v again from the first page", ids2, errs2, want)
	}
	if got := fxCursors(srv); !reflect.DeepEqual(got, []string{"", "c1", "", "c1"}) {
		t.Errorf("cursors requested = %q, want [\"\" c1 \"\" c1]", got)
	}
}

func TestAllExportsInvalidArguments(t *testing.T) {
	srv := fxPagedServer(t, map[string]string{"": fxListing("", "2026-06-10")})
	c := newClient(t, srv.Base)
	for _, tc := range []struct {
		feed synthient.Feed
		p    *synthient.ListExportsParams
	}{
		{synthient.Feed("nope"), nil},
		{synthient.FeedProxies, &synthient.ListExportsParams{Limit: 501}},
		{synthient.FeedProxies, &synthient.ListExportsParams{Limit: -1}},
	} {
		ids, errs, _ := fxDrain(c.AllExports(context.Background(), tc.feed, tc.p))
		if len(ids) != 0 || len(errs) != 1 {
			t.Fatalf("%s %+v: ids %v, errors %v, want one error", tc.feed, tc.p, ids, errs)
		}
		fxCheckInvalid(t, errs[0])
	}
	if n := srv.Arrivals(); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}

// ---------------------------------------------------------------------
// ExportMeta
// ---------------------------------------------------------------------

// fxMetaExample is the export meta example of api-v4.md §7.
const fxMetaExample = `{"stream": "proxies", "kind": "daily", "id": "2026-06-09", "format": "parquet", "date": 1780963200,
 "created_at": 1781052600, "size": 402118230, "rows": 9120554,
 "checksum": "5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a1908f7e",
 "schema": {"fields": [{"name": "ip", "type": "string"}, {"name": "provider", "type": "string"},
                       {"name": "type", "type": "string"}, {"name": "timestamp", "type": "int64"},
                       {"name": "country_code", "type": "string"}, {"name": "asn", "type": "int32"}]}}`

func TestExportMetaPaths(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		fxJSON(w, 200, fxMetaExample)
	})
	c := newClient(t, srv.Base)
	ids := []struct{ id, path string }{
		{"latest", "latest"},
		{"2026-06-10", "2026-06-10"},
		{"2026-06-10/14", "2026-06-10/14"},
		{"2026-06-10/5", "2026-06-10/5"},
		{"2026-06-10/0", "2026-06-10/0"},
		{"2026-06-10/23", "2026-06-10/23"},
		{"2024-02-29", "2024-02-29"},
	}
	n := 0
	for _, f := range fxSegments {
		for _, id := range ids {
			if _, err := c.ExportMeta(context.Background(), f.feed, id.id); err != nil {
				t.Fatalf("ExportMeta(%s, %q): %v", f.feed, id.id, err)
			}
			n++
			r := srv.Reqs()[n-1]
			want := "/api/v4/feeds/" + f.seg + "/export/" + id.path + "/meta"
			if r.Method != http.MethodGet || r.Path != want || r.RawQuery != "" {
				t.Errorf("ExportMeta(%s, %q) sent %s %s?%s, want GET %s", f.feed, id.id, r.Method, r.Path, r.RawQuery, want)
			}
			if r.Header.Get("X-Api-Key") != testKey {
				t.Errorf("ExportMeta(%s, %q) sent no API key", f.feed, id.id)
			}
		}
	}
	if got := srv.Arrivals(); got != n {
		t.Errorf("%d arrivals, want %d", got, n)
	}
}

func TestExportMetaInvalidIDs(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		fxJSON(w, 200, fxMetaExample)
	})
	c := newClient(t, srv.Base)
	bad := []string{
		"", "2026-6-10", "2026-02-30", "2026-06-10/24", "2026-06-10/-1", "2026-06-10/", "latest/3",
		"2026-06-10/14/x", "../x", "2026-06-10/+1", "2026-06-10/1a", "2026-06-10/100", " 2026-06-10",
		"2026-06-10 ", "2026-13-01", "20260610", "LATEST", "2026-06-10/14/meta", "2026-06-10?x=1",
		"2026-06-10#x", "/2026-06-10", "2026-06-10//14",
	}
	for _, id := range bad {
		m, err := c.ExportMeta(context.Background(), synthient.FeedProxies, id)
		if !errors.Is(err, synthient.ErrInvalidArgument) {
			t.Errorf("ExportMeta(%q): err = %v, want one matching ErrInvalidArgument", id, err)
		}
		if m != nil {
			t.Errorf("ExportMeta(%q) = %+v, want nil", id, m)
		}
	}
	_, err := c.ExportMeta(context.Background(), synthient.Feed("nope"), "latest")
	fxCheckInvalid(t, err)
	if n := srv.Arrivals(); n != 0 {
		t.Errorf("%d requests sent for invalid ids, want 0; paths %v", n, srv.Paths())
	}
}

func TestExportMetaDecodesTheMetaExample(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/14/meta") {
			fxJSON(w, 200, `{"stream":"proxies","kind":"hourly","id":"2026-06-10/14","format":"parquet","date":1781049600,"hour":14,`+
				`"created_at":1781103600,"size":18734512,"rows":412907,"checksum":"9f2c6a0d5b1e47c8a3f0e2d4b6c8a0e1f3d5b7c9e1a3c5e7f9b1d3f5a7c9e1b3",`+
				`"schema":{"fields":[{"name":"ip","type":"string"}]}}`)
			return
		}
		fxJSON(w, 200, fxMetaExample)
	})
	c := newClient(t, srv.Base)
	m, err := c.ExportMeta(context.Background(), synthient.FeedProxies, "2026-06-09")
	if err != nil {
		t.Fatalf("ExportMeta: %v", err)
	}
	want := &synthient.ExportMeta{
		Stream: "proxies", Kind: "daily", ID: "2026-06-09", Date: 1780963200, Hour: nil, Format: "parquet",
		CreatedAt: 1781052600, Size: 402118230, Rows: 9120554,
		Checksum: "5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a1908f7e",
		Schema: synthient.ExportSchema{Fields: []synthient.SchemaField{
			{Name: "ip", Type: "string"}, {Name: "provider", Type: "string"}, {Name: "type", Type: "string"},
			{Name: "timestamp", Type: "int64"}, {Name: "country_code", Type: "string"}, {Name: "asn", Type: "int32"},
		}},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("meta =\n%+v\nwant\n%+v", m, want)
	}
	if srv.Reqs()[0].Path != "/api/v4/feeds/proxies/export/2026-06-09/meta" {
		t.Errorf("path %q", srv.Reqs()[0].Path)
	}

	h, err := c.ExportMeta(context.Background(), synthient.FeedProxies, "2026-06-10/14")
	if err != nil {
		t.Fatalf("ExportMeta hourly: %v", err)
	}
	if h.Hour == nil || *h.Hour != 14 || h.ID != "2026-06-10/14" || h.Kind != "hourly" || h.Size != 18734512 {
		t.Errorf("hourly meta = %+v", h)
	}
}

func TestExportMetaRetriesA503(t *testing.T) {
	srv := newFXServer(t, false, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			fxProblem(w, 503)
			return
		}
		fxJSON(w, 200, fxMetaExample)
	})
	c := newClient(t, srv.Base)
	if _, err := c.ExportMeta(context.Background(), synthient.FeedJA4T, "latest"); err != nil {
		t.Fatalf("ExportMeta: %v", err)
	}
	if n := srv.Arrivals(); n != 2 {
		t.Errorf("%d arrivals, want 2", n)
	}
}
