package synthienttest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
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
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	for _, feed := range synthient.Feeds {
		page, err := c.ListExports(ctx, feed, nil)
		require.NoError(t, err, "ListExports "+string(feed))
		assert.Equal(t, string(feed), page.Stream, "stream")
		assert.Empty(t, page.NextCursor, "next cursor of a single page")
		var ids []string
		for _, e := range page.Exports {
			ids = append(ids, e.ID)
			assert.Regexp(t, "^[0-9a-f]{64}$", e.Checksum)
			assert.GreaterOrEqual(t, e.SizeBytes, int64(8), e.ID)
			assert.Positive(t, e.RowCount, e.ID)
			seg := strings.Replace(string(feed), "honeypot_", "helio/", 1)
			assert.Equal(t, "/api/v4/feeds/"+seg+"/export/"+e.ID, e.DownloadPath, "download path")
			assert.Equal(t, e.ID[:10], e.Date, "date")
			if e.Kind == "hourly" {
				h, _ := strconv.Atoi(e.ID[11:])
				assert.Equal(t, &h, e.Hour, e.ID)
				assert.Equal(t, time.Date(2026, 6, 10, h+1, 0, 0, 0, time.UTC).Unix(), e.CreatedAt, "hourly created_at")
			} else {
				assert.Equal(t, "daily", e.Kind, "kind")
				assert.Nil(t, e.Hour, "%s: a daily export's hour", e.ID)
				day, _ := time.Parse(time.DateOnly, e.ID)
				assert.Equal(t, day.Add(24*time.Hour+30*time.Minute).Unix(), e.CreatedAt, "daily created_at")
			}
		}
		assert.Equal(t, wantIDs(), ids, feed)
	}

	// The last page has no next_cursor member at all.
	r := do(t, rawClient(t), "GET", srv.URL+"/feeds/proxies/export", srv.APIKey, "")
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Body, &members), "decoding")
	_, has := members["next_cursor"]
	assert.False(t, has, "the last page has a next_cursor")
	assert.Equal(t, "60", r.Header.Get("RateLimit-Limit"))
}

func TestExportPagination(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	var ids []string
	cursor := ""
	pages := 0
	for {
		page, err := c.ListExports(ctx, synthient.FeedHoneypotHTTPS, &synthient.ListExportsParams{Limit: 5, Cursor: cursor})
		require.NoError(t, err, "ListExports")
		pages++
		assert.LessOrEqual(t, len(page.Exports), 5, "page size")
		for _, e := range page.Exports {
			ids = append(ids, e.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	assert.Equal(t, 4, pages, "pages of 5")
	assert.Equal(t, wantIDs(), ids, "paged ids")

	// AllExports walks the same list lazily.
	var all []string
	for e, err := range c.AllExports(ctx, synthient.FeedHoneypotHTTPS, &synthient.ListExportsParams{Limit: 4}) {
		require.NoError(t, err, "AllExports")
		all = append(all, e.ID)
	}
	assert.Equal(t, wantIDs(), all, "AllExports ids")
	srv.Reset()
	for _, err := range c.AllExports(ctx, synthient.FeedTorrents, &synthient.ListExportsParams{Limit: 2}) {
		require.NoError(t, err)
		break
	}
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteExports), "requests for one element")

	// Bad cursors and limits: 400.
	hc := rawClient(t)
	page, err := c.ListExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 2})
	require.NoError(t, err, "ListExports")
	for _, q := range []string{
		"cursor=garbage", "cursor=", "cursor=" + url.QueryEscape(page.NextCursor+"x"),
		"limit=0", "limit=-1", "limit=abc", "limit=1.5",
	} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+"/feeds/proxies/export?"+q, srv.APIKey, ""), 400)
		assert.NotEmpty(t, p.Detail, q)
	}
	// A cursor is bound to its feed and to its server.
	problemOf(t, do(t, hc, "GET", srv.URL+"/feeds/anonymizers/export?cursor="+url.QueryEscape(page.NextCursor), srv.APIKey, ""), 400)
	other, _ := newServer(t)
	problemOf(t, do(t, hc, "GET", other.URL+"/feeds/proxies/export?cursor="+url.QueryEscape(page.NextCursor), other.APIKey, ""), 400)
	_, err = c.ListExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Cursor: "garbage"})
	assert.Equal(t, 400, errAs[*synthient.APIError](t, err).Status, "SDK status for a bad cursor")

	// Limits above 500 are clamped.
	big, _ := newServer(t, synthienttest.WithExportDays(600), synthienttest.WithExportSize(64))
	r := do(t, hc, "GET", big.URL+"/feeds/ja4t/export?limit=1000", big.APIKey, "")
	assert.Equal(t, 200, r.Status, "status with limit=1000")
	var p synthient.ExportPage
	require.NoError(t, json.Unmarshal(r.Body, &p), "decoding")
	assert.Len(t, p.Exports, 500, "page size with limit=1000")
	assert.NotEmpty(t, p.NextCursor, "no next cursor after 500 of 614")
	r = do(t, hc, "GET", big.URL+"/feeds/ja4t/export?limit=500&cursor="+url.QueryEscape(p.NextCursor), big.APIKey, "")
	var p2 synthient.ExportPage
	require.NoError(t, json.Unmarshal(r.Body, &p2), "decoding")
	assert.Len(t, p2.Exports, 114, "second page")
	assert.Equal(t, testNow.AddDate(0, 0, -600).Format(time.DateOnly), p2.Exports[len(p2.Exports)-1].ID, "oldest export")
	assert.Empty(t, p2.NextCursor, "next cursor of the last page")
	r = do(t, hc, "GET", big.URL+"/feeds/ja4t/export", big.APIKey, "")
	require.NoError(t, json.Unmarshal(r.Body, &p), "decoding")
	assert.Len(t, p.Exports, 100, "default page size")
}

func TestExportMeta(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	page, err := c.ListExports(ctx, synthient.FeedProxies, nil)
	require.NoError(t, err, "ListExports")
	for _, e := range page.Exports {
		m, err := c.ExportMeta(ctx, synthient.FeedProxies, e.ID)
		require.NoError(t, err, "ExportMeta "+e.ID)
		assert.Equal(t, e.ID, m.ID, "id")
		assert.Equal(t, "proxies", m.Stream, "stream")
		assert.Equal(t, e.Kind, m.Kind, "kind")
		assert.Equal(t, "parquet", m.Format, "format")
		assert.Equal(t, e.SizeBytes, m.Size, "size")
		assert.Equal(t, e.RowCount, m.Rows, "rows")
		assert.Equal(t, e.Checksum, m.Checksum, "checksum")
		assert.Equal(t, e.CreatedAt, m.CreatedAt, "created_at")
		day, _ := time.Parse(time.DateOnly, e.Date)
		assert.Equal(t, day.Unix(), m.Date, "date as Unix seconds")
		assert.Equal(t, e.Hour, m.Hour, "hour")
	}
	latest, err := c.ExportMeta(ctx, synthient.FeedProxies, "latest")
	require.NoError(t, err, "ExportMeta latest")
	assert.Equal(t, "2026-06-10/13", latest.ID, "latest id")
	var names []string
	for _, f := range latest.Schema.Fields {
		names = append(names, f.Name+":"+f.Type)
	}
	assert.Equal(t, "ip:string,provider:string,type:string,timestamp:int64,country_code:string,asn:int32", strings.Join(names, ","), "proxies schema")
	for _, feed := range synthient.Feeds {
		m, err := c.ExportMeta(ctx, feed, "2026-06-08")
		require.NoError(t, err, "ExportMeta "+string(feed))
		assert.GreaterOrEqual(t, len(m.Schema.Fields), 4, "%s schema", feed)
	}

	hc := rawClient(t)
	// The hour takes one or two digits.
	r := do(t, hc, "GET", srv.URL+"/feeds/helio/dns/export/2026-06-10/5/meta", srv.APIKey, "")
	assert.Equal(t, 200, r.Status, "one-digit hour")
	var m synthient.ExportMeta
	require.NoError(t, json.Unmarshal(r.Body, &m), "decoding")
	assert.Equal(t, "2026-06-10/05", m.ID, "id")
	for _, tc := range []struct {
		id     string
		status int
		detail string
	}{
		{"2026-06-10/14/meta", 404, "No export"},   // the current hour is not complete
		{"2026-06-10/meta", 404, "No export"},      // today has no daily export yet
		{"2026-06-06/meta", 404, "No export"},      // before the window
		{"2026-06-11/meta", 404, "No export"},      // the future
		{"2026-06-09/05/meta", 400, "rolled into"}, // rolled into the daily export
		{"2026-06-09/05", 400, "rolled into"},
		{"2026-06-10/24/meta", 400, "hour"},
		{"2026-06-10/123/meta", 400, "hour"},
		{"2026-06-10/-1/meta", 400, "hour"},
		{"2026-13-01/meta", 400, "date"},
		{"20260610/meta", 400, "date"},
		{"latest/3/meta", 400, "latest takes no hour"},
		{"2026-06-06", 404, "No export"},
	} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+"/feeds/proxies/export/"+tc.id, srv.APIKey, ""), tc.status)
		assert.Contains(t, p.Detail, tc.detail, tc.id)
	}
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "2026-01-01")
	assert.Equal(t, 404, errAs[*synthient.APIError](t, err).Status, "SDK status for an unknown date")
}

func TestExportRollup(t *testing.T) {
	t.Parallel()
	srv, clk := newServer(t)
	clk.Set(time.Date(2026, 6, 10, 0, 10, 0, 0, time.UTC))
	c := newClient(t, srv)
	ctx := context.Background()
	latest, err := c.ExportMeta(ctx, synthient.FeedAnonymizers, "latest")
	require.NoError(t, err, "ExportMeta latest")
	assert.Equal(t, "2026-06-09/23", latest.ID, "latest before the first hour is complete")
	_, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09/07")
	require.NoError(t, err, "an hour of yesterday before the rollup")
	r := do(t, rawClient(t), "GET", srv.URL+"/feeds/anonymizers/export/2026-06-09/meta", srv.APIKey, "")
	p := problemOf(t, r, 404)
	assert.Equal(t, "1200", r.Header.Get("Retry-After"), "Retry-After until 00:30")
	assert.Contains(t, p.Detail, "assembled")

	_, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09")
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 404, apiErr.Status, "SDK status during the rollup")
	require.NotNil(t, apiErr.RetryAfter)
	assert.Equal(t, 20*time.Minute, *apiErr.RetryAfter)
	assert.Equal(t, 4, srv.Arrivals(synthienttest.RouteExportMeta), "arrivals: a 404 is not retried")

	page, err := c.ListExports(ctx, synthient.FeedAnonymizers, nil)
	require.NoError(t, err, "ListExports")
	assert.Len(t, page.Exports, 24+2, "exports before the rollup")

	clk.Set(time.Date(2026, 6, 10, 0, 45, 0, 0, time.UTC))
	m, err := c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09")
	require.NoError(t, err, "the daily export after the rollup")
	assert.Equal(t, "daily", m.Kind, "kind")
	clk.Set(time.Date(2026, 6, 10, 1, 0, 0, 0, time.UTC))
	_, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "2026-06-09/07")
	assert.Equal(t, 400, errAs[*synthient.APIError](t, err).Status, "an hour of yesterday after the rollup")
	latest, err = c.ExportMeta(ctx, synthient.FeedAnonymizers, "latest")
	require.NoError(t, err, "ExportMeta latest")
	assert.Equal(t, "2026-06-10/00", latest.ID, "latest")
}

func TestDownloadExport(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	for _, feed := range []synthient.Feed{synthient.FeedProxies, synthient.FeedHoneypotADB} {
		for _, id := range []string{"2026-06-09", "2026-06-10/3", "latest"} {
			srv.Reset()
			m, err := c.ExportMeta(ctx, feed, id)
			require.NoError(t, err, "ExportMeta")
			var buf bytes.Buffer
			n, err := c.DownloadExport(ctx, feed, id, &buf)
			require.NoError(t, err, "DownloadExport "+id)
			assert.Equal(t, m.Size, n, "bytes written")
			assert.Equal(t, m.Size, int64(buf.Len()), "bytes")
			sum := sha256.Sum256(buf.Bytes())
			assert.Equal(t, m.Checksum, hex.EncodeToString(sum[:]), "SHA-256")
			assert.Equal(t, "PAR1", buf.String()[:4], "PAR1-framed")
			assert.Equal(t, "PAR1", buf.String()[buf.Len()-4:], "PAR1-framed")
			assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteDownload), "API arrivals")
			assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStorage), "storage arrivals")
			for _, r := range srv.Requests() {
				if r.Route != synthienttest.RouteStorage {
					continue
				}
				assert.False(t, r.APIKey || r.Authorization || r.Cookie, "storage received credentials: %+v", r)
				assert.Equal(t, 200, r.Status, "storage status")
				assert.Regexp(t, "^synthient-go/", r.Header.Get("User-Agent"), "storage User-Agent")
				assert.Contains(t, r.Query, "X-Amz-Signature=REDACTED")
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
	require.NoError(t, err, "DownloadExportFile")
	assert.Equal(t, "2026-06-10/13", m.ID, "meta id")
	b, err := os.ReadFile(path) //nolint:gosec // a file this test wrote
	require.NoError(t, err, "reading the file")
	sum := sha256.Sum256(b)
	assert.Equal(t, m.Checksum, hex.EncodeToString(sum[:]), "file SHA-256")
	assert.Equal(t, m.Size, progress, "progress")
	_, err = c.DownloadExportFile(ctx, synthient.FeedProxies, "latest", path, nil)
	require.ErrorIs(t, err, os.ErrExist)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "files in the directory")

	// Unknown export: a 404 from the API, storage untouched.
	srv.Reset()
	_, err = c.DownloadExport(ctx, synthient.FeedProxies, "2020-01-01", io.Discard)
	assert.Equal(t, 404, errAs[*synthient.APIError](t, err).Status, "status")
	assert.Zero(t, srv.Arrivals(synthienttest.RouteStorage), "storage arrivals")
}

func TestDownloadExportFileVerifyAndOverwrite(t *testing.T) {
	t.Parallel()
	// A size function that answers differently each time makes the file
	// served differ from the meta: the download fails on the size, before
	// a byte is written.
	var calls atomic.Int64
	srv, _ := newServer(t, synthienttest.WithExportSizeFunc(func(synthient.Feed, string) int64 {
		return calls.Add(1) * 64 << 10
	}))
	c := newClient(t, srv)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.parquet")
	_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-09", path, &synthient.DownloadParams{Verify: true})
	require.ErrorIs(t, err, synthient.ErrSizeMismatch)
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "files left after a mismatch")

	// Overwrite replaces an existing file.
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600), "writing")
	stable, _ := newServer(t)
	m, err := newClient(t, stable).DownloadExportFile(ctx, synthient.FeedJA4T, "2026-06-10/02", path, &synthient.DownloadParams{Overwrite: true, Verify: true})
	require.NoError(t, err, "DownloadExportFile with Overwrite")
	b, err := os.ReadFile(path) //nolint:gosec // a file this test wrote
	require.NoError(t, err, "reading")
	assert.Equal(t, m.Size, int64(len(b)), "size of the replaced file")
	entries, _ = os.ReadDir(dir)
	assert.Len(t, entries, 1, "files")
}

func TestPresignedURLs(t *testing.T) {
	t.Parallel()
	srv, clk := newServer(t, synthienttest.WithPresignExpiry(time.Hour))
	hc := rawClient(t)
	r := do(t, hc, "GET", srv.URL+"/feeds/helio/https/export/2026-06-08", srv.APIKey, "")
	assert.Equal(t, 307, r.Status, "status")
	assert.Empty(t, r.Body, "307 body")
	assert.Equal(t, "120", r.Header.Get("RateLimit-Limit"))
	loc := r.Header.Get("Location")
	assert.True(t, strings.HasPrefix(loc, srv.StorageURL+"/synthient-exports/honeypot_https/2026-06-08.parquet?"), "Location %q", loc)
	u, err := url.Parse(loc)
	require.NoError(t, err, "parsing Location")
	q := u.Query()
	assert.Equal(t, "3600", q.Get("X-Amz-Expires"), "X-Amz-Expires")
	assert.Equal(t, "20260610T142000Z", q.Get("X-Amz-Date"), "X-Amz-Date")
	sig := q.Get("X-Amz-Signature")
	assert.Regexp(t, "^[0-9a-f]{64}$", sig)
	hourly := do(t, hc, "GET", srv.URL+"/feeds/proxies/export/2026-06-10/7", srv.APIKey, "").Header.Get("Location")
	assert.Contains(t, hourly, "/synthient-exports/proxies/2026-06-10/07.parquet?")

	// Storage needs no key and serves the bytes.
	got := do(t, hc, "GET", loc, "", "")
	assert.Equal(t, 200, got.Status, "storage status")
	assert.Equal(t, strconv.Itoa(len(got.Body)), got.Header.Get("Content-Length"), "Content-Length")
	assert.Regexp(t, uuidRE, got.Header.Get("X-Request-Id"), "storage X-Request-Id")
	assert.Regexp(t, "^[0-9A-F]{16}$", got.Header.Get("X-Amz-Request-Id"))

	denied := func(what, u string) {
		t.Helper()
		r := do(t, hc, "GET", u, "", "")
		assert.Equal(t, 403, r.Status, what)
		assert.Equal(t, "application/xml", r.Header.Get("Content-Type"), what)
		assert.Contains(t, string(r.Body), "<Code>AccessDenied</Code>", what)
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
	assert.Equal(t, 200, do(t, hc, "GET", loc, "", "").Status, "status at the expiry")
	clk.Advance(time.Second)
	denied("expired", loc)
	assert.Contains(t, string(do(t, hc, "GET", loc, "", "").Body), "expired")

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
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 403, apiErr.Status, "SDK status for an expired URL")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStorage), "storage arrivals")
	assert.NotContains(t, err.Error(), "X-Amz", "the error holds the presigned query")
}

func TestExportFilesAreDeterministic(t *testing.T) {
	t.Parallel()
	a, _ := newServer(t)
	b, _ := newServer(t)
	ca, cb := newClient(t, a), newClient(t, b)
	ctx := context.Background()
	// The meta's sums come from a cache of the process: hash the bytes
	// each server writes as it serves them.
	sa, sb := downloadSum(t, ca, synthient.FeedTorrents, "2026-06-08"), downloadSum(t, cb, synthient.FeedTorrents, "2026-06-08")
	assert.Equal(t, sa, sb, "the bytes of two servers")
	assert.NotEqual(t, sa, downloadSum(t, ca, synthient.FeedTorrents, "2026-06-07"), "two exports with the same bytes")

	// The same bytes from run to run, and on another clock (the pinned
	// sum changes with parquet-go's encoder, or the generators: see
	// events_test.go).
	lateSrv, clk := newServer(t, synthienttest.WithExportDays(30))
	clk.Advance(240 * time.Hour)
	late := newClient(t, lateSrv)
	for _, c := range []*synthient.Client{ca, late} {
		assert.Equal(t, "0eb4f2b6fe97", downloadSum(t, c, synthient.FeedProxies, "2026-06-09")[:12], "the pinned SHA-256 of proxies 2026-06-09")
	}

	// The bytes read in any chunk size hash to the checksum.
	m, err := ca.ExportMeta(ctx, synthient.FeedHoneypotHTTPS, "2026-06-09")
	require.NoError(t, err, "ExportMeta")
	h := sha256.New()
	w := &chunkWriter{w: h, max: 7}
	n, err := ca.DownloadExport(ctx, synthient.FeedHoneypotHTTPS, "2026-06-09", w)
	require.NoError(t, err, "DownloadExport")
	assert.Equal(t, m.Size, n, "bytes")
	assert.Equal(t, m.Checksum, hex.EncodeToString(h.Sum(nil)), "SHA-256")
}

// downloadSum returns the SHA-256, in hex, of the bytes of an export as
// c downloads it.
func downloadSum(t *testing.T, c *synthient.Client, feed synthient.Feed, id string) string {
	t.Helper()
	h := sha256.New()
	_, err := c.DownloadExport(context.Background(), feed, id, h)
	require.NoError(t, err, "DownloadExport")
	return hex.EncodeToString(h.Sum(nil))
}

// WithExportSize and WithExportSizeFunc ask for an approximate size: a
// file of 64 KiB or more comes out within 25% of it, with the rows that
// take; the smallest file has one row.
func TestExportSizes(t *testing.T) {
	t.Parallel()
	sizes := map[string]int64{"2026-06-09": 3 << 20, "2026-06-08": 64 << 10, "2026-06-07": 1}
	srv, _ := newServer(t, synthienttest.WithExportSizeFunc(func(_ synthient.Feed, id string) int64 { return sizes[id] }))
	c := newClient(t, srv)
	for _, feed := range synthient.Feeds {
		for id, asked := range sizes {
			t.Run(string(feed)+"/"+id, func(t *testing.T) {
				t.Parallel()
				m, err := c.ExportMeta(context.Background(), feed, id)
				require.NoError(t, err, "ExportMeta")
				if asked == 1 {
					assert.Equal(t, int64(1), m.Rows, "rows of the smallest file")
					assert.Less(t, m.Size, int64(8<<10), "size of the smallest file")
					return
				}
				assert.InEpsilon(t, asked, m.Size, 0.25, "size asked %d, got %d", asked, m.Size)
			})
		}
	}
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

// BenchmarkDownload256MiB measures the fake's write speed: it downloads a
// 256 MiB export of each feed named through the SDK, which the fake writes
// as it sends it (its size and SHA-256, found on first use, are found
// before the timer starts). It reports the rows written a second and the
// peak heap in use, sampled every 4 MiB: the file is never held whole.
func BenchmarkDownload256MiB(b *testing.B) {
	for _, feed := range []synthient.Feed{synthient.FeedProxies, synthient.FeedHoneypotHTTPS} {
		b.Run("feed="+string(feed), func(b *testing.B) {
			srv, _ := newServer(b, synthienttest.WithoutRateLimits(), synthienttest.WithExportSizeFunc(func(_ synthient.Feed, id string) int64 {
				if id == "2026-06-09" {
					return 256 << 20
				}
				return 64 << 10
			}))
			c := newClient(b, srv)
			ctx := context.Background()
			m, err := c.ExportMeta(ctx, feed, "2026-06-09") // writes the file once
			require.NoError(b, err)
			b.SetBytes(m.Size)
			w := &heapWriter{}
			runtime.GC()
			start := time.Now()
			for b.Loop() {
				_, err := c.DownloadExport(ctx, feed, "2026-06-09", w)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(m.Rows)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
			b.ReportMetric(float64(w.peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// heapWriter discards what it is given, sampling the heap in use every
// 4 MiB.
type heapWriter struct {
	n, peak uint64
}

func (w *heapWriter) Write(p []byte) (int, error) {
	if w.n/(4<<20) != (w.n+uint64(len(p)))/(4<<20) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.peak = max(w.peak, ms.HeapInuse)
	}
	w.n += uint64(len(p))
	return len(p), nil
}

// Every feed's files are Parquet with the columns, types and row count
// of their meta, as parquet-go and package exports read them, in row
// groups of at most 122,880 rows.
func TestExportFilesAreParquet(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithExportSizeFunc(func(_ synthient.Feed, id string) int64 {
		if id == "2026-06-09" {
			return 3 << 20 // several row groups of the smaller rows
		}
		return 64 << 10
	}))
	c := newClient(t, srv)
	for _, feed := range synthient.Feeds {
		for _, id := range []string{"latest", "2026-06-09"} {
			t.Run(string(feed)+"/"+id, func(t *testing.T) {
				t.Parallel()
				var buf bytes.Buffer
				m, err := c.DownloadExportTo(context.Background(), feed, id, &buf, &synthient.DownloadParams{Verify: true})
				require.NoError(t, err, "download")
				pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
				require.NoError(t, err, "parquet-go opens the file")
				assert.Equal(t, m.Rows, pf.NumRows(), "rows")
				var names []string
				for _, f := range pf.Schema().Fields() {
					names = append(names, f.Name())
				}
				var want []string
				for _, f := range m.Schema.Fields {
					want = append(want, f.Name)
				}
				assert.Equal(t, want, names, "columns")
				for _, rg := range pf.RowGroups() {
					assert.LessOrEqual(t, rg.NumRows(), int64(122_880), "rows of a row group")
				}

				f, err := exports.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
				require.NoError(t, err, "exports opens the file")
				var types []synthient.SchemaField
				for _, col := range f.Columns() {
					types = append(types, synthient.SchemaField{Name: col.Name, Type: col.Type})
				}
				assert.Equal(t, m.Schema.Fields, types, "columns and their types")
				n := int64(0)
				for _, err := range f.Rows() {
					require.NoError(t, err, "reading")
					n++
				}
				assert.Equal(t, m.Rows, n, "rows read")
			})
		}
	}
}

// The files open with a Parquet reader of another implementation: DuckDB's
// or pyarrow's, whichever the machine has.
func TestExportFilesOpenWithAnotherReader(t *testing.T) {
	t.Parallel()
	count := otherReader(t)
	srv, _ := newServer(t)
	c := newClient(t, srv)
	for _, feed := range synthient.Feeds {
		path := filepath.Join(t.TempDir(), string(feed)+".parquet")
		m, err := c.DownloadExportFile(context.Background(), feed, "latest", path, &synthient.DownloadParams{Verify: true})
		require.NoError(t, err, "download")
		rows, columns := count(t, path)
		assert.Equal(t, m.Rows, rows, "%s: rows", feed)
		var want []string
		for _, f := range m.Schema.Fields {
			want = append(want, f.Name)
		}
		assert.Equal(t, want, columns, "%s: columns", feed)
	}
}

// otherReader returns a function that reads the row count and column
// names of a Parquet file with DuckDB's command line or pyarrow, or skips
// the test when the machine has neither.
func otherReader(t *testing.T) func(t *testing.T, path string) (int64, []string) {
	if duckdb, err := exec.LookPath("duckdb"); err == nil {
		return func(t *testing.T, path string) (int64, []string) {
			return readerOutput(t, duckdb, "-noheader", "-list", "-c",
				"SELECT count(*) FROM read_parquet('"+path+"'); SELECT name FROM parquet_schema('"+path+"') WHERE num_children IS NULL;")
		}
	}
	const script = "import sys, pyarrow.parquet as pq; f = pq.ParquetFile(sys.argv[1]); print(f.metadata.num_rows); print('\\n'.join(f.schema_arrow.names))"
	if python, err := exec.LookPath("python3"); err == nil && exec.CommandContext(t.Context(), python, "-c", "import pyarrow.parquet").Run() == nil { //nolint:gosec // python3 from PATH, an optional cross-check
		return func(t *testing.T, path string) (int64, []string) {
			return readerOutput(t, python, "-c", script, path)
		}
	}
	t.Skip("no independent Parquet reader on this machine: neither duckdb nor python3 with pyarrow is installed")
	return nil
}

// readerOutput runs a reader that prints a row count, then a column name
// a line.
func readerOutput(t *testing.T, name string, args ...string) (int64, []string) {
	out, err := exec.CommandContext(t.Context(), name, args...).Output() //nolint:gosec // a reader from PATH, an optional cross-check
	require.NoError(t, err, "%s: %s", name, out)
	lines := strings.Fields(string(out))
	require.NotEmpty(t, lines, "%s printed nothing", name)
	n, err := strconv.ParseInt(lines[0], 10, 64)
	require.NoError(t, err, "%s: row count %q", name, lines[0])
	return n, lines[1:]
}
