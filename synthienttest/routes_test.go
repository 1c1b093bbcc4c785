package synthienttest_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/synthienttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares the blocks of got (a line and the indented lines after
// it) with those of testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o750))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o600))
		return
	}
	b, err := os.ReadFile(path) //nolint:gosec // this test's golden file
	require.NoError(t, err, "run 'go test ./synthienttest -update' to create it")
	want, have := blocks(string(b)), blocks(got)
	for i := range min(len(want), len(have)) {
		assert.Equal(t, want[i], have[i], "block %d of %s (run with -update if the change is intended)", i+1, path)
	}
	assert.Len(t, have, len(want), "blocks in %s", path)
}

// blocks splits s before each line that is not indented.
func blocks(s string) []string {
	var out []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if line == "" {
			continue
		}
		if len(out) == 0 || !strings.HasPrefix(line, "\t") {
			out = append(out, "")
		}
		out[len(out)-1] += line
	}
	return out
}

// exchange is one request of the golden conversation. A path of
// "{location}" is the Location of the last redirect; key is a name of
// goldenKeys.
type exchange struct {
	method, path, key, body string
}

// The requests of TestRoutesGolden, in order: every route and method, the
// paths next to them that match none, every answer before the handler
// (401, 403, 404 for an unknown feed, 405), and a few bodies of each
// handler.
var goldenExchanges = []exchange{
	{"GET", "/api/v4/health", "", ""},
	{"HEAD", "/api/v4/health", "", ""},
	{"POST", "/api/v4/health", "all", "{}"},
	{"PUT", "/api/v4/health", "", ""},
	{"GET", "/api/v4/health/", "", ""},
	{"GET", "/api/v4", "all", ""},
	{"GET", "/api/v4/", "all", ""},
	{"GET", "/api/v3/account/me", "all", ""},
	{"GET", "/api/v4x/health", "", ""},
	{"GET", "/nope", "", ""},
	{"GET", "/api/v4/account/me", "all", ""},
	{"HEAD", "/api/v4/account/me", "all", ""},
	{"POST", "/api/v4/account/me", "all", "{}"},
	{"DELETE", "/api/v4/account/me", "", ""},
	{"GET", "/api/v4/account/me", "", ""},
	{"GET", "/api/v4/account/me", "malformed", ""},
	{"GET", "/api/v4/account/me", "unknown", ""},
	{"GET", "/api/v4/account/me", "none", ""},
	{"GET", "/api/v4/account/me", "basic", ""},
	{"GET", "/api/v4/account/me/", "all", ""},
	{"GET", "/api/v4/account", "all", ""},
	{"GET", "/api/v4/account/you", "all", ""},
	{"GET", "/api/v4/lookup", "all", ""},
	{"GET", "/api/v4/lookup/ip", "all", ""},
	{"GET", "/api/v4/lookup/ip/", "all", ""},
	{"GET", "/api/v4/lookup/ip/8.8.8.8", "all", ""},
	{"HEAD", "/api/v4/lookup/ip/8.8.8.8", "all", ""},
	{"POST", "/api/v4/lookup/ip/8.8.8.8", "all", "{}"},
	{"GET", "/api/v4/lookup/ip/81.2.69.142", "basic", ""},
	{"GET", "/api/v4/lookup/ip/203.0.113.7", "all", ""},
	{"GET", "/api/v4/lookup/ip/2001%3Adb8%3A%3A1", "all", ""},
	{"GET", "/api/v4/lookup/ip/2a01:4f8::1", "all", ""},
	{"GET", "/api/v4/lookup/ip/10.0.0.1", "all", ""},
	{"GET", "/api/v4/lookup/ip/not-an-ip", "all", ""},
	{"GET", "/api/v4/lookup/ip/fe80::1%25eth0", "all", ""},
	{"GET", "/api/v4/lookup/ip/8.8.8.8/x", "all", ""},
	{"GET", "/api/v4/lookup/ip/8.8.8.8", "none", ""},
	{"GET", "/api/v4/lookup/ip/8.8.8.8", "broke", ""},
	{"POST", "/api/v4/lookup/ips", "all", `{"ips": ["203.0.113.7", "2001:db8::1", "203.0.113.7", "not-an-ip", 7, "2001:DB8::1"]}`},
	{"POST", "/api/v4/lookup/ips", "all", `{"ips": ["81.2.69.142", " 8.8.4.4 "]}`},
	{"POST", "/api/v4/lookup/ips", "all", `{}`},
	{"POST", "/api/v4/lookup/ips", "all", `{"ips": []}`},
	{"POST", "/api/v4/lookup/ips", "all", `{"ips": ["nope", 1, null]}`},
	{"POST", "/api/v4/lookup/ips", "all", `{"ips": "8.8.8.8"}`},
	{"POST", "/api/v4/lookup/ips", "all", `[1, 2]`},
	{"POST", "/api/v4/lookup/ips", "all", `{"ips": [`},
	{"POST", "/api/v4/lookup/ips", "all", ""},
	{"POST", "/api/v4/lookup/ips", "broke", `{"ips": ["81.2.69.1"]}`},
	{"POST", "/api/v4/lookup/ips", "none", `{"ips": ["81.2.69.1"]}`},
	{"GET", "/api/v4/lookup/ips", "all", ""},
	{"HEAD", "/api/v4/lookup/ips", "all", ""},
	{"PUT", "/api/v4/lookup/ips", "all", "{}"},
	{"POST", "/api/v4/lookup/ips/", "all", "{}"},
	{"GET", "/api/v4/lookup/domain/example.com", "all", ""},
	{"GET", "/api/v4/lookup/domain/example.com?limit=3", "all", ""},
	{"GET", "/api/v4/lookup/domain/Quiet-Example.ORG.?limit=1000", "all", ""},
	{"GET", "/api/v4/lookup/domain/xn--bcher-kva.example?limit=2", "all", ""},
	{"GET", "/api/v4/lookup/domain/example.com?limit=0", "all", ""},
	{"GET", "/api/v4/lookup/domain/example.com?limit=x&limit=3", "all", ""},
	{"GET", "/api/v4/lookup/domain/localhost?limit=-1", "all", ""},
	{"GET", "/api/v4/lookup/domain/-bad-.com", "all", ""},
	{"GET", "/api/v4/lookup/domain/a..b", "all", ""},
	{"GET", "/api/v4/lookup/domain/exa_mple.com", "all", ""},
	{"GET", "/api/v4/lookup/domain/exa!mple.com", "all", ""},
	{"GET", "/api/v4/lookup/domain/" + strings.Repeat("a", 64) + ".com", "all", ""},
	{"GET", "/api/v4/lookup/domain/" + strings.Repeat("abcdefghi.", 26) + "com", "all", ""},
	{"GET", "/api/v4/lookup/domain/", "all", ""},
	{"GET", "/api/v4/lookup/domain/example.com", "broke", ""},
	{"POST", "/api/v4/lookup/domain/example.com", "all", "{}"},
	{"GET", "/api/v4/lookup/other/x", "all", ""},
	{"GET", "/api/v4/feeds", "all", ""},
	{"GET", "/api/v4/feeds/proxies", "all", ""},
	{"GET", "/api/v4/feeds/proxies/stream", "all", ""},
	{"HEAD", "/api/v4/feeds/torrents/stream", "all", ""},
	{"POST", "/api/v4/feeds/proxies/stream", "all", "{}"},
	{"GET", "/api/v4/feeds/helio/http/stream", "all", ""},
	{"GET", "/api/v4/feeds/helio/ftp/stream", "all", ""},
	{"GET", "/api/v4/feeds/helio/ftp/stream", "basic", ""},
	{"GET", "/api/v4/feeds/ja4t/stream", "basic", ""},
	{"GET", "/api/v4/feeds/proxies/stream/", "all", ""},
	{"GET", "/api/v4/feeds//stream", "all", ""},
	{"GET", "/api/v4/feeds/helio/stream", "all", ""},
	{"GET", "/api/v4/feeds/helio//stream", "all", ""},
	{"GET", "/api/v4/feeds/helio/http/x/stream", "all", ""},
	{"GET", "/api/v4/feeds/helio/export/latest", "all", ""},
	{"GET", "/api/v4/feeds/helio/http/export/2026-06-10/meta/meta", "all", ""},
	{"GET", "/api/v4/feeds/helio/http/export/latest/meta/x", "all", ""},
	{"GET", "/api/v4/feeds/stream", "all", ""},
	{"GET", "/api/v4/health?x=1", "", ""},
	{"GET", "/api/v4/lookup/ip/%38.8.8.8", "all", ""},
	{"GET", "/api/v4/lookup/domain/example%2Ecom", "all", ""},
	{"GET", "/api/v4/account/me%2F", "all", ""},
	{"GET", "/api/v4/account%2Fme", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export", "all", ""},
	{"HEAD", "/api/v4/feeds/proxies/export", "all", ""},
	{"POST", "/api/v4/feeds/proxies/export", "all", "{}"},
	{"GET", "/api/v4/feeds/helio/export", "all", ""},
	{"GET", "/api/v4/feeds/helio/dns/export", "all", ""},
	{"GET", "/api/v4/feeds/helio%2Fdns/export", "all", ""},
	{"GET", "/api/v4/feeds/nope/export", "", ""},
	{"GET", "/api/v4/feeds/nope/export", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export", "basic", ""},
	{"GET", "/api/v4/feeds/proxies/export?limit=0", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export?cursor=garbage", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/latest", "all", ""},
	{"GET", "{location}", "", ""},
	{"HEAD", "{location}", "", ""},
	{"POST", "{location}", "", ""},
	{"GET", "{location}&x=1", "", ""},
	{"GET", "/synthient-exports/proxies/2026-06-09.parquet", "", ""},
	{"GET", "/api/v4/feeds/proxies/export/latest/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/latest/3", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/latest/3/meta", "all", ""},
	{"GET", "/api/v4/feeds/torrents/export/2026-06-09", "all", ""},
	{"GET", "{location}", "", ""},
	{"HEAD", "/api/v4/feeds/torrents/export/2026-06-09", "all", ""},
	{"POST", "/api/v4/feeds/torrents/export/2026-06-09", "all", "{}"},
	{"GET", "/api/v4/feeds/torrents/export/2026-06-09/meta", "all", ""},
	{"POST", "/api/v4/feeds/torrents/export/2026-06-09/meta", "all", "{}"},
	{"GET", "/api/v4/feeds/torrents/export/2026-06-09/meta", "basic", ""},
	{"GET", "/api/v4/feeds/helio/adb/export/2026-06-10/07", "all", ""},
	{"GET", "/api/v4/feeds/helio/adb/export/2026-06-10/7/meta", "all", ""},
	{"GET", "/api/v4/feeds/helio/https/export/2026-06-10/13/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/14/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-06/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-09/05/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/24/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/123/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/-1/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/+1/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-13-01/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/20260610/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026%2D06%2D09/meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-06", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10//meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export//meta", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/07/meta/x", "all", ""},
	{"GET", "/api/v4/feeds/proxies/export/2026-06-10/07/x", "all", ""},
	{"GET", "/api/v4/feeds/proxies/exports", "all", ""},
	{"GET", "/api/v4/feeds/helio/http/export/latest/meta", "all", ""},
	{"GET", "/api/v4/feeds/helio/ftp/export/latest/meta", "all", ""},
	{"GET", "/api/v4/feeds/helio/http/export/latest/meta", "none", ""},
}

// goldenKeys are the keys of the golden conversation by name; "" sends
// none.
func goldenKeys(srv *synthienttest.Server) map[string]string {
	return map[string]string{
		"all":       srv.APIKey,
		"basic":     srv.AddKey([]string{synthienttest.ScopeBasic}, 100),
		"none":      srv.AddKey(nil, 100),
		"broke":     srv.AddKey([]string{synthienttest.ScopeBasic}, 0),
		"malformed": "not-a-uuid-key",
		"unknown":   "c23f3dab-5c04-4416-af21-c6b879bb90b9",
	}
}

// goldenHeaders are the answer headers the golden file shows.
var goldenHeaders = []string{
	"Allow", "Content-Type", "Content-Length", "Cache-Control", "Location", "Retry-After",
	"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "X-Content-Type-Options",
}

var signatureRE = regexp.MustCompile(`X-Amz-Signature=[0-9a-f]+`)

// TestRoutesGolden sends every route, method and answer before the
// handlers, and a few of each handler's, to a fake on a fixed clock, and
// compares the answers (status, the route the log names, the headers that
// matter and the body) with testdata/routes.golden.
func TestRoutesGolden(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithMaxEvents(3), synthienttest.WithEventInterval(time.Millisecond))
	keys := goldenKeys(srv)
	origin := strings.TrimSuffix(srv.URL, "/api/v4")
	hc := rawClient(t)
	var out strings.Builder
	location := ""
	for _, ex := range goldenExchanges {
		u := origin + ex.path
		shown := ex.path
		if rest, ok := strings.CutPrefix(ex.path, "{location}"); ok {
			require.NotEmpty(t, location, "no redirect before %s", ex.path)
			u = location + rest
			shown = signatureRE.ReplaceAllString(strings.TrimPrefix(u, srv.StorageURL), "X-Amz-Signature=SIG") + " (storage)"
		} else if strings.HasPrefix(ex.path, "/synthient-exports/") {
			u = srv.StorageURL + ex.path
			shown += " (storage)"
		}
		r := do(t, hc, ex.method, u, keys[ex.key], ex.body)
		if loc := r.Header.Get("Location"); loc != "" {
			location = loc
		}
		log := srv.Requests()
		require.NotEmpty(t, log)
		last := log[len(log)-1]
		fmt.Fprintf(&out, "%s %s key=%q body=%q\n", ex.method, shown, ex.key, ex.body)
		fmt.Fprintf(&out, "\t%d route=%q logged=%d\n", r.Status, last.Route, last.Status)
		for _, h := range goldenHeaders {
			if v := r.Header.Values(h); len(v) > 0 {
				v := strings.ReplaceAll(strings.Join(v, ", "), srv.StorageURL, "{storage}")
				fmt.Fprintf(&out, "\t%s: %s\n", h, signatureRE.ReplaceAllString(v, "X-Amz-Signature=SIG"))
			}
		}
		fmt.Fprintf(&out, "\tbody: %s\n", shortBody(r.Body))
	}
	golden(t, "routes.golden", out.String())
}

// shortBody shows a short body as it is and a long one by its length and
// hash.
func shortBody(b []byte) string {
	if len(b) <= 400 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%d bytes, sha256 %x", len(b), sha256.Sum256(b))
}

// Paths the fake does not know answer 404 before any other check; a known
// path with another method answers 405 with Allow; a feed the fake does
// not know answers 404 once the key passed. The log names each route.
//
//nolint:tparallel // each subtest resets one server's counters and reads them
func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	origin := strings.TrimSuffix(srv.URL, "/api/v4")
	for _, tc := range []struct {
		method, path, key string
		status            int
		route, allow      string
	}{
		{"GET", "/api/v4/nope", "", 404, "", ""},
		{"GET", "/api/v3/account/me", "", 404, "", ""},
		{"GET", "/api/v4/feeds/helio/ftp/stream", "", 401, synthienttest.RouteStream, ""},
		{"GET", "/api/v4/feeds/helio/ftp/stream", srv.APIKey, 404, synthienttest.RouteStream, ""},
		{"POST", "/api/v4/account/me", "", 405, synthienttest.RouteAccount, "GET, HEAD"},
		{"GET", "/api/v4/lookup/ips", "", 405, synthienttest.RouteLookupIPs, "POST"},
		{"DELETE", "/api/v4/feeds/proxies/export/latest", srv.APIKey, 405, synthienttest.RouteDownload, "GET, HEAD"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			srv.Reset()
			r := do(t, rawClient(t), tc.method, origin+tc.path, tc.key, "")
			problemOf(t, r, tc.status)
			assert.Equal(t, tc.allow, r.Header.Get("Allow"))
			assert.Equal(t, 1, srv.Arrivals(tc.route), "arrivals at %q", tc.route)
		})
	}
}
