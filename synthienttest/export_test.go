package synthienttest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// wantIDs are the export ids at testNow with the default 3 days, newest
// first.
func wantIDs() []string {
	var ids []string
	for h := 13; h >= 0; h-- {
		ids = append(ids, fmt.Sprintf("2026-06-10/%02d", h))
	}
	return append(ids, "2026-06-09", "2026-06-08", "2026-06-07")
}

func TestListExports(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	for _, feed := range synthient.Feeds {
		page, err := c.ListExports(ctx, feed, nil)
		must(t, err, "ListExports "+string(feed))
		eq(t, page.Stream, string(feed), "stream")
		eq(t, page.NextCursor, "", "next cursor of a single page")
		var ids []string
		for _, e := range page.Exports {
			ids = append(ids, e.ID)
			check(t, len(e.Checksum) == 64 && strings.ToLower(e.Checksum) == e.Checksum, "checksum %q", e.Checksum)
			check(t, e.SizeBytes >= 8 && e.RowCount > 0, "%s: size %d rows %d", e.ID, e.SizeBytes, e.RowCount)
			seg := strings.Replace(string(feed), "honeypot_", "helio/", 1)
			eq(t, e.DownloadPath, "/api/v4/feeds/"+seg+"/export/"+e.ID, "download path")
			eq(t, e.Date, e.ID[:10], "date")
			if e.Kind == "hourly" {
				h, _ := strconv.Atoi(e.ID[11:])
				check(t, e.Hour != nil && *e.Hour == h, "%s: hour %v", e.ID, e.Hour)
				eq(t, e.CreatedAt, time.Date(2026, 6, 10, h+1, 0, 0, 0, time.UTC).Unix(), "hourly created_at")
			} else {
				eq(t, e.Kind, "daily", "kind")
				check(t, e.Hour == nil, "%s: daily export with an hour", e.ID)
				day, _ := time.Parse(time.DateOnly, e.ID)
				eq(t, e.CreatedAt, day.Add(24*time.Hour+30*time.Minute).Unix(), "daily created_at")
			}
		}
		check(t, slices.Equal(ids, wantIDs()), "%s: ids %v", feed, ids)
	}

	// The last page has no next_cursor member at all.
	r := do(t, rawClient(t), "GET", srv.URL+"/feeds/proxies/export", srv.APIKey, "")
	var members map[string]json.RawMessage
	must(t, json.Unmarshal(r.Body, &members), "decoding")
	_, has := members["next_cursor"]
	check(t, !has, "the last page has a next_cursor")
	check(t, r.Header.Get("RateLimit-Limit") == "60", "RateLimit-Limit %q", r.Header.Get("RateLimit-Limit"))
}

func TestExportPagination(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	var ids []string
	cursor := ""
	pages := 0
	for {
		page, err := c.ListExports(ctx, synthient.FeedHoneypotHTTPS, &synthient.ListExportsParams{Limit: 5, Cursor: cursor})
		must(t, err, "ListExports")
		pages++
		check(t, len(page.Exports) <= 5, "page of %d", len(page.Exports))
		for _, e := range page.Exports {
			ids = append(ids, e.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	eq(t, pages, 4, "pages of 5")
	check(t, slices.Equal(ids, wantIDs()), "paged ids %v", ids)

	// AllExports walks the same list lazily.
	var all []string
	for e, err := range c.AllExports(ctx, synthient.FeedHoneypotHTTPS, &synthient.ListExportsParams{Limit: 4}) {
		must(t, err, "AllExports")
		all = append(all, e.ID)
	}
	check(t, slices.Equal(all, wantIDs()), "AllExports ids %v", all)
	srv.Reset()
	for range c.AllExports(ctx, synthient.FeedTorrents, &synthient.ListExportsParams{Limit: 2}) {
		break
	}
	eq(t, srv.Arrivals(synthienttest.RouteExports), 1, "requests for one element")

	// Bad cursors and limits: 400.
	hc := rawClient(t)
	page, err := c.ListExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 2})
	must(t, err, "ListExports")
	for _, q := range []string{
		"cursor=garbage", "cursor=", "cursor=" + url.QueryEscape(page.NextCursor+"x"),
		"limit=0", "limit=-1", "limit=abc", "limit=1.5",
	} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+"/feeds/proxies/export?"+q, srv.APIKey, ""), 400)
		check(t, p.Detail != "", "%s: no detail", q)
	}
	// A cursor is bound to its feed and to its server.
	problemOf(t, do(t, hc, "GET", srv.URL+"/feeds/anonymizers/export?cursor="+url.QueryEscape(page.NextCursor), srv.APIKey, ""), 400)
	other, _ := newServer(t)
	problemOf(t, do(t, hc, "GET", other.URL+"/feeds/proxies/export?cursor="+url.QueryEscape(page.NextCursor), other.APIKey, ""), 400)
	_, err = c.ListExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Cursor: "garbage"})
	eq(t, asAPIError(t, err).Status, 400, "SDK status for a bad cursor")

	// Limits above 500 are clamped.
	big, _ := newServer(t, synthienttest.WithExportDays(600), synthienttest.WithExportSize(64))
	r := do(t, hc, "GET", big.URL+"/feeds/ja4t/export?limit=1000", big.APIKey, "")
	eq(t, r.Status, 200, "status with limit=1000")
	var p synthient.ExportPage
	must(t, json.Unmarshal(r.Body, &p), "decoding")
	eq(t, len(p.Exports), 500, "page size with limit=1000")
	check(t, p.NextCursor != "", "no next cursor after 500 of 614")
	r = do(t, hc, "GET", big.URL+"/feeds/ja4t/export?limit=500&cursor="+url.QueryEscape(p.NextCursor), big.APIKey, "")
	var p2 synthient.ExportPage
	must(t, json.Unmarshal(r.Body, &p2), "decoding")
	eq(t, len(p2.Exports), 114, "second page")
	eq(t, p2.Exports[len(p2.Exports)-1].ID, testNow.AddDate(0, 0, -600).Format(time.DateOnly), "oldest export")
	eq(t, p2.NextCursor, "", "next cursor of the last page")
	r = do(t, hc, "GET", big.URL+"/feeds/ja4t/export", big.APIKey, "")
	must(t, json.Unmarshal(r.Body, &p), "decoding")
	eq(t, len(p.Exports), 100, "default page size")
}

func TestExportMeta(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	page, err := c.ListExports(ctx, synthient.FeedProxies, nil)
	must(t, err, "ListExports")
	for _, e := range page.Exports {
		m, err := c.ExportMeta(ctx, synthient.FeedProxies, e.ID)
		must(t, err, "ExportMeta "+e.ID)
		eq(t, m.ID, e.ID, "id")
		eq(t, m.Stream, "proxies", "stream")
		eq(t, m.Kind, e.Kind, "kind")
		eq(t, m.Format, "parquet", "format")
		eq(t, m.Size, e.SizeBytes, "size")
		eq(t, m.Rows, e.RowCount, "rows")
		eq(t, m.Checksum, e.Checksum, "checksum")
		eq(t, m.CreatedAt, e.CreatedAt, "created_at")
		day, _ := time.Parse(time.DateOnly, e.Date)
		eq(t, m.Date, day.Unix(), "date as Unix seconds")
		check(t, (m.Hour == nil) == (e.Hour == nil) && (m.Hour == nil || *m.Hour == *e.Hour), "%s: hour %v", e.ID, m.Hour)
	}
	latest, err := c.ExportMeta(ctx, synthient.FeedProxies, "latest")
	must(t, err, "ExportMeta latest")
	eq(t, latest.ID, "2026-06-10/13", "latest id")
	var names []string
	for _, f := range latest.Schema.Fields {
		names = append(names, f.Name+":"+f.Type)
	}
	eq(t, strings.Join(names, ","), "ip:string,provider:string,type:string,timestamp:int64,country_code:string,asn:int32", "proxies schema")
	for _, feed := range synthient.Feeds {
		m, err := c.ExportMeta(ctx, feed, "2026-06-08")
		must(t, err, "ExportMeta "+string(feed))
		check(t, len(m.Schema.Fields) >= 4, "%s schema %v", feed, m.Schema.Fields)
	}

	hc := rawClient(t)
	// The hour takes one or two digits.
	r := do(t, hc, "GET", srv.URL+"/feeds/helio/dns/export/2026-06-10/5/meta", srv.APIKey, "")
	eq(t, r.Status, 200, "one-digit hour")
	var m synthient.ExportMeta
	must(t, json.Unmarshal(r.Body, &m), "decoding")
	eq(t, m.ID, "2026-06-10/05", "id")
	for path, status := range map[string]int{
		"/feeds/proxies/export/2026-06-10/14/meta":  404, // the current hour is not complete
		"/feeds/proxies/export/2026-06-10/meta":     404, // today has no daily export yet
		"/feeds/proxies/export/2026-06-06/meta":     404, // before the window
		"/feeds/proxies/export/2026-06-11/meta":     404, // the future
		"/feeds/proxies/export/2026-06-09/05/meta":  400, // rolled into the daily export
		"/feeds/proxies/export/2026-06-10/24/meta":  400,
		"/feeds/proxies/export/2026-06-10/123/meta": 400,
		"/feeds/proxies/export/2026-06-10/-1/meta":  400,
		"/feeds/proxies/export/2026-13-01/meta":     400,
		"/feeds/proxies/export/20260610/meta":       400,
		"/feeds/proxies/export/latest/3/meta":       400,
		"/feeds/proxies/export/2026-06-09/05":       400,
		"/feeds/proxies/export/2026-06-06":          404,
	} {
		problemOf(t, do(t, hc, "GET", srv.URL+path, srv.APIKey, ""), status)
	}
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "2026-01-01")
	eq(t, asAPIError(t, err).Status, 404, "SDK status for an unknown date")
}

func TestExportRollup(t *testing.T) {
	srv, clk := newServer(t)
	clk.Set(time.Date(2026, 6, 10, 0, 10, 0, 0, time.UTC))
	c := newClient(t, srv)
	ctx := context.Background()
	latest, err := c.ExportMeta(ctx, synthient.FeedAnonymizers, "latest")
	must(t, err, "ExportMeta latest")
	eq(t, latest.ID, "2026-06-09/23", "latest before the first hour is complete")
	_, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09/07")
	must(t, err, "an hour of yesterday before the rollup")
	r := do(t, rawClient(t), "GET", srv.URL+"/feeds/anonymizers/export/2026-06-09/meta", srv.APIKey, "")
	p := problemOf(t, r, 404)
	eq(t, r.Header.Get("Retry-After"), "1200", "Retry-After until 00:30")
	check(t, strings.Contains(p.Detail, "assembled"), "detail %q", p.Detail)

	_, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09")
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 404, "SDK status during the rollup")
	check(t, apiErr.RetryAfter != nil && *apiErr.RetryAfter == 20*time.Minute, "RetryAfter %v", apiErr.RetryAfter)
	eq(t, srv.Arrivals(synthienttest.RouteExportMeta), 4, "arrivals: a 404 is not retried")

	page, err := c.ListExports(ctx, synthient.FeedAnonymizers, nil)
	must(t, err, "ListExports")
	eq(t, len(page.Exports), 24+2, "exports before the rollup")

	clk.Set(time.Date(2026, 6, 10, 0, 45, 0, 0, time.UTC))
	m, err := c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09")
	must(t, err, "the daily export after the rollup")
	eq(t, m.Kind, "daily", "kind")
	clk.Set(time.Date(2026, 6, 10, 1, 0, 0, 0, time.UTC))
	_, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09/07")
	eq(t, asAPIError(t, err).Status, 400, "an hour of yesterday after the rollup")
	latest, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "latest")
	must(t, err, "ExportMeta latest")
	eq(t, latest.ID, "2026-06-10/00", "latest")
}

func TestDownloadExport(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	for _, feed := range []synthient.Feed{synthient.FeedProxies, synthient.FeedHoneypotADB} {
		for _, id := range []string{"2026-06-09", "2026-06-10/3", "latest"} {
			srv.Reset()
			m, err := c.ExportMeta(ctx, feed, id)
			must(t, err, "ExportMeta")
			var buf bytes.Buffer
			n, err := c.DownloadExport(ctx, feed, id, &buf)
			must(t, err, "DownloadExport "+id)
			eq(t, n, m.Size, "bytes written")
			eq(t, int64(buf.Len()), m.Size, "bytes")
			sum := sha256.Sum256(buf.Bytes())
			eq(t, hex.EncodeToString(sum[:]), m.Checksum, "SHA-256")
			check(t, bytes.HasPrefix(buf.Bytes(), []byte("PAR1")) && bytes.HasSuffix(buf.Bytes(), []byte("PAR1")), "not PAR1-framed")
			eq(t, srv.Arrivals(synthienttest.RouteDownload), 1, "API arrivals")
			eq(t, srv.Arrivals(synthienttest.RouteStorage), 1, "storage arrivals")
			for _, r := range srv.Requests() {
				if r.Route != synthienttest.RouteStorage {
					continue
				}
				check(t, !r.APIKey && !r.Authorization && !r.Cookie, "storage received credentials: %+v", r)
				eq(t, r.Status, 200, "storage status")
				check(t, strings.HasPrefix(r.Header.Get("User-Agent"), "synthient-go/"), "storage User-Agent %q", r.Header.Get("User-Agent"))
				check(t, strings.Contains(r.Query, "X-Amz-Signature=REDACTED"), "query %q", r.Query)
			}
		}
	}

	// To a file, verified; latest resolved through the meta.
	dir := t.TempDir()
	path := filepath.Join(dir, "proxies.parquet")
	var progress int64
	m, err := c.DownloadExportFile(ctx, synthient.FeedProxies, "latest", path, &synthient.DownloadParams{
		Verify: true, Progress: func(done, total int64) { progress = done },
	})
	must(t, err, "DownloadExportFile")
	eq(t, m.ID, "2026-06-10/13", "meta id")
	b, err := os.ReadFile(path)
	must(t, err, "reading the file")
	sum := sha256.Sum256(b)
	eq(t, hex.EncodeToString(sum[:]), m.Checksum, "file SHA-256")
	eq(t, progress, m.Size, "progress")
	_, err = c.DownloadExportFile(ctx, synthient.FeedProxies, "latest", path, nil)
	check(t, errors.Is(err, os.ErrExist), "second download to the same path: %v", err)
	entries, _ := os.ReadDir(dir)
	eq(t, len(entries), 1, "files in the directory")

	// Unknown export: a 404 from the API, storage untouched.
	srv.Reset()
	_, err = c.DownloadExport(ctx, synthient.FeedProxies, "2020-01-01", io.Discard)
	eq(t, asAPIError(t, err).Status, 404, "status")
	eq(t, srv.Arrivals(synthienttest.RouteStorage), 0, "storage arrivals")
}

func TestDownloadExportFileVerifyAndOverwrite(t *testing.T) {
	// A size function that answers differently each time makes the file
	// served differ from the meta: the download fails on the size, before
	// a byte is written.
	var calls atomic.Int64
	srv, _ := newServer(t, synthienttest.WithExportSizeFunc(func(synthient.Feed, string) int64 {
		return 1000 + calls.Add(1)
	}))
	c := newClient(t, srv)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.parquet")
	_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-09", path, &synthient.DownloadParams{Verify: true})
	check(t, errors.Is(err, synthient.ErrSizeMismatch), "error %v", err)
	entries, _ := os.ReadDir(dir)
	eq(t, len(entries), 0, "files left after a mismatch")

	// Overwrite replaces an existing file.
	must(t, os.WriteFile(path, []byte("old"), 0o644), "writing")
	stable, _ := newServer(t)
	m, err := newClient(t, stable).DownloadExportFile(ctx, synthient.FeedJA4T, "2026-06-10/02", path, &synthient.DownloadParams{Overwrite: true, Verify: true})
	must(t, err, "DownloadExportFile with Overwrite")
	b, err := os.ReadFile(path)
	must(t, err, "reading")
	eq(t, int64(len(b)), m.Size, "size of the replaced file")
	entries, _ = os.ReadDir(dir)
	eq(t, len(entries), 1, "files")
}

func TestPresignedURLs(t *testing.T) {
	srv, clk := newServer(t, synthienttest.WithPresignExpiry(time.Hour))
	hc := rawClient(t)
	r := do(t, hc, "GET", srv.URL+"/feeds/helio/https/export/2026-06-08", srv.APIKey, "")
	eq(t, r.Status, 307, "status")
	eq(t, len(r.Body), 0, "307 body")
	check(t, r.Header.Get("RateLimit-Limit") == "120", "RateLimit-Limit %q", r.Header.Get("RateLimit-Limit"))
	loc := r.Header.Get("Location")
	check(t, strings.HasPrefix(loc, srv.StorageURL+"/synthient-exports/honeypot_https/2026-06-08.parquet?"), "Location %q", loc)
	u, err := url.Parse(loc)
	must(t, err, "parsing Location")
	q := u.Query()
	eq(t, q.Get("X-Amz-Expires"), "3600", "X-Amz-Expires")
	eq(t, q.Get("X-Amz-Date"), "20260610T142000Z", "X-Amz-Date")
	sig := q.Get("X-Amz-Signature")
	_, herr := hex.DecodeString(sig)
	check(t, len(sig) == 64 && herr == nil, "signature %q", sig)
	hourly := do(t, hc, "GET", srv.URL+"/feeds/proxies/export/2026-06-10/7", srv.APIKey, "").Header.Get("Location")
	check(t, strings.Contains(hourly, "/synthient-exports/proxies/2026-06-10/07.parquet?"), "hourly Location %q", hourly)

	// Storage needs no key and serves the bytes.
	got := do(t, hc, "GET", loc, "", "")
	eq(t, got.Status, 200, "storage status")
	eq(t, got.Header.Get("Content-Length"), strconv.Itoa(len(got.Body)), "Content-Length")
	check(t, got.Header.Get("X-Request-Id") != "", "storage answer without X-Request-Id")

	denied := func(what, u string) {
		t.Helper()
		r := do(t, hc, "GET", u, "", "")
		eq(t, r.Status, 403, what+": status")
		eq(t, r.Header.Get("Content-Type"), "application/xml", what+": Content-Type")
		check(t, strings.Contains(string(r.Body), "<Code>AccessDenied</Code>"), "%s: body %s", what, r.Body)
	}
	flip := []byte(sig)
	flip[0] = "01"[strings.IndexByte("01", flip[0])&1^1] // any other hex digit
	if flip[0] == sig[0] {
		flip[0] = 'f'
	}
	tampered := strings.Replace(loc, sig, string(flip), 1)
	denied("tampered signature", tampered)
	denied("another object", strings.Replace(loc, "2026-06-08.parquet", "2026-06-07.parquet", 1))
	denied("longer expiry", strings.Replace(loc, "X-Amz-Expires=3600", "X-Amz-Expires=86400", 1))
	denied("no signature", strings.Split(loc, "?")[0])
	other, _ := newServer(t)
	denied("another server's URL", strings.Replace(loc, srv.StorageURL, other.StorageURL, 1))

	clk.Advance(time.Hour)
	eq(t, do(t, hc, "GET", loc, "", "").Status, 200, "status at the expiry")
	clk.Advance(time.Second)
	denied("expired", loc)
	check(t, strings.Contains(string(do(t, hc, "GET", loc, "", "").Body), "expired"), "no expiry message")

	// Through the SDK: an expired URL is a 403 *APIError from storage,
	// not retried. The fake mints URLs at its clock's time, so make the
	// clock jump between the redirect and the storage request.
	c := newClient(t, srv, synthient.WithResponseHook(func(ri *synthient.ResponseInfo) error {
		if ri.Status == 307 {
			clk.Advance(2 * time.Hour)
		}
		return nil
	}))
	srv.Reset()
	_, err = c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-09", io.Discard)
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 403, "SDK status for an expired URL")
	eq(t, srv.Arrivals(synthienttest.RouteStorage), 1, "storage arrivals")
	check(t, !strings.Contains(err.Error(), "X-Amz"), "the error holds the presigned query: %v", err)
}

func TestExportFilesAreDeterministic(t *testing.T) {
	a, _ := newServer(t)
	b, _ := newServer(t)
	ca, cb := newClient(t, a), newClient(t, b)
	ctx := context.Background()
	ma, err := ca.ExportMeta(ctx, synthient.FeedTorrents, "2026-06-08")
	must(t, err, "ExportMeta")
	mb, err := cb.ExportMeta(ctx, synthient.FeedTorrents, "2026-06-08")
	must(t, err, "ExportMeta")
	eq(t, ma.Checksum, mb.Checksum, "checksum on two servers")
	mc, err := ca.ExportMeta(ctx, synthient.FeedTorrents, "2026-06-07")
	must(t, err, "ExportMeta")
	check(t, mc.Checksum != ma.Checksum, "two exports with one checksum")

	// Sizes are configurable per file, and the bytes read in any chunk
	// size hash to the checksum.
	sized, _ := newServer(t, synthienttest.WithExportSizeFunc(func(feed synthient.Feed, id string) int64 {
		if id == "2026-06-09" {
			return 3<<20 + 5
		}
		return 1
	}))
	cs := newClient(t, sized)
	m, err := cs.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09")
	must(t, err, "ExportMeta")
	eq(t, m.Size, int64(3<<20+5), "configured size")
	small, err := cs.ExportMeta(ctx, synthient.FeedProxies, "2026-06-08")
	must(t, err, "ExportMeta")
	eq(t, small.Size, int64(8), "sizes below 8 read as 8")
	var buf bytes.Buffer
	_, err = cs.DownloadExport(ctx, synthient.FeedProxies, "2026-06-08", &buf)
	must(t, err, "DownloadExport")
	eq(t, buf.String(), "PAR1PAR1", "an 8-byte file")
	h := sha256.New()
	w := &chunkWriter{w: h, max: 7}
	n, err := cs.DownloadExport(ctx, synthient.FeedProxies, "2026-06-09", w)
	must(t, err, "DownloadExport")
	eq(t, n, m.Size, "bytes")
	eq(t, hex.EncodeToString(h.Sum(nil)), m.Checksum, "SHA-256")
}

// chunkWriter writes through in pieces of at most max bytes.
type chunkWriter struct {
	w   io.Writer
	max int
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), c.max)
		m, err := c.w.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// BenchmarkDownload256MiB downloads a 256 MiB export through the SDK; the
// fake generates it as it sends it.
func BenchmarkDownload256MiB(b *testing.B) {
	srv, _ := newServer(b, synthienttest.WithoutRateLimits(), synthienttest.WithExportSizeFunc(func(_ synthient.Feed, id string) int64 {
		if id == "2026-06-09" {
			return 256 << 20
		}
		return 64 << 10
	}))
	c := newClient(b, srv)
	ctx := context.Background()
	m, err := c.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09") // computes the checksum once
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(m.Size)
	b.ResetTimer()
	for range b.N {
		if _, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-09", io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
