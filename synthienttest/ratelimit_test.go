package synthienttest_test

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

func rateHeaders(r response) (limit, remaining, reset string) {
	return r.Header.Get("RateLimit-Limit"), r.Header.Get("RateLimit-Remaining"), r.Header.Get("RateLimit-Reset")
}

func TestRateLimitHeaders(t *testing.T) {
	srv, _ := newServer(t)
	hc := rawClient(t)
	for _, tc := range []struct {
		path, limit, remaining, reset string
	}{
		{"/account/me", "10", "9", "1"},
		{"/lookup/ip/8.8.8.8", "200", "199", "1"},
		{"/lookup/domain/example.org", "200", "199", "1"},
		{"/feeds/proxies/export", "60", "59", "1"},
		{"/feeds/proxies/export/latest/meta", "60", "58", "1"},
		{"/feeds/proxies/export/latest", "120", "119", "10"},
		{"/feeds/proxies/stream?x", "20", "19", "2"},
	} {
		if strings.HasSuffix(tc.path, "stream?x") {
			resp, _ := openRaw(t, hc, srv, "proxies")
			resp.Body.Close()
			l, rem, reset := resp.Header.Get("RateLimit-Limit"), resp.Header.Get("RateLimit-Remaining"), resp.Header.Get("RateLimit-Reset")
			eq(t, l+"/"+rem+"/"+reset, tc.limit+"/"+tc.remaining+"/"+tc.reset, "stream RateLimit headers")
			continue
		}
		r := do(t, hc, "GET", srv.URL+tc.path, srv.APIKey, "")
		l, rem, reset := rateHeaders(r)
		eq(t, l+"/"+rem+"/"+reset, tc.limit+"/"+tc.remaining+"/"+tc.reset, tc.path+" RateLimit headers")
	}
	// /lookup/ip and /lookup/ips share their bucket; the export listing and
	// meta share theirs.
	r := do(t, hc, "POST", srv.URL+"/lookup/ips", srv.APIKey, `{"ips":["8.8.8.8"]}`)
	_, rem, _ := rateHeaders(r)
	eq(t, rem, "198", "lookup bucket after two lookups")
	r = do(t, hc, "GET", srv.URL+"/feeds/anonymizers/export/2026-06-09/meta", srv.APIKey, "")
	_, rem, _ = rateHeaders(r)
	eq(t, rem, "57", "export bucket after three export requests")

	// Errors after authentication carry them too; /health and 401s do not.
	r = do(t, hc, "GET", srv.URL+"/lookup/ip/nope", srv.APIKey, "")
	eq(t, r.Status, 422, "status")
	l, _, _ := rateHeaders(r)
	eq(t, l, "200", "RateLimit-Limit on a 422")
	l, _, _ = rateHeaders(do(t, hc, "GET", srv.URL+"/account/me", "c23f3dab-5c04-4416-af21-c6b879bb90b9", ""))
	eq(t, l, "", "RateLimit-Limit on a 401")

	// The SDK's response hook sees them parsed.
	var mu sync.Mutex
	var seen []*synthient.RateLimit
	c := newClient(t, srv, synthient.WithResponseHook(func(ri *synthient.ResponseInfo) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, ri.RateLimit)
		return nil
	}))
	_, err := c.Account(context.Background())
	must(t, err, "Account")
	_, err = c.Health(context.Background())
	must(t, err, "Health")
	if len(seen) != 2 || seen[0] == nil {
		t.Fatalf("hook saw %v", seen)
	}
	eq(t, *seen[0], synthient.RateLimit{Limit: 10, Remaining: 8, Reset: time.Second}, "account rate limit")
	check(t, seen[1] == nil, "/health carries a rate limit: %+v", seen[1])
}

func TestRateLimitRefusesAndRefills(t *testing.T) {
	srv, clk := newServer(t, synthienttest.WithRateLimit(synthienttest.BucketAccount, 1, 2))
	hc := rawClient(t)
	get := func() response { return do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "") }
	for i, want := range []string{"1", "0"} {
		r := get()
		eq(t, r.Status, 200, "status")
		_, rem, _ := rateHeaders(r)
		eq(t, rem, want, "remaining after "+strconv.Itoa(i+1))
	}
	r := get()
	p := problemOf(t, r, 429)
	eq(t, r.Header.Get("Retry-After"), "1", "Retry-After")
	l, rem, reset := rateHeaders(r)
	eq(t, l+"/"+rem+"/"+reset, "2/0/2", "RateLimit headers on a 429")
	check(t, strings.Contains(p.Detail, "retry after 1 seconds"), "detail %q", p.Detail)
	eq(t, p.Type, "https://docs.synthient.com/errors/rate-limited", "type")

	clk.Advance(500 * time.Millisecond)
	eq(t, get().Status, 429, "half a token later")
	clk.Advance(500 * time.Millisecond)
	eq(t, get().Status, 200, "a token later")
	clk.Advance(time.Hour)
	r = get()
	_, rem, _ = rateHeaders(r)
	eq(t, rem, "1", "a full bucket holds the burst only")

	// Other keys have their own buckets.
	other := srv.AddKey([]string{"BASIC"}, 0)
	eq(t, do(t, hc, "GET", srv.URL+"/account/me", other, "").Status, 200, "another key")

	// Slow buckets wait whole seconds: downloads refill every 10 s.
	slow, _ := newServer(t, synthienttest.WithRateLimit(synthienttest.BucketDownload, 0.1, 1))
	eq(t, do(t, hc, "GET", slow.URL+"/feeds/proxies/export/latest", slow.APIKey, "").Status, 307, "first download")
	r = do(t, hc, "GET", slow.URL+"/feeds/proxies/export/latest", slow.APIKey, "")
	problemOf(t, r, 429)
	eq(t, r.Header.Get("Retry-After"), "10", "download Retry-After")
}

func TestRateLimitThroughSDK(t *testing.T) {
	srv, clk := newServer(t,
		synthienttest.WithRateLimit(synthienttest.BucketLookup, 1, 1),
		synthienttest.WithRateLimit(synthienttest.BucketAccount, 0.25, 1))
	c := newClient(t, srv, synthient.WithMaxRetryAfter(500*time.Millisecond))
	ctx := context.Background()
	ip := netip.MustParseAddr("81.2.69.142")
	_, err := c.LookupIP(ctx, ip)
	must(t, err, "LookupIP")
	// The bucket is empty: a 429 whose Retry-After (1 s) is longer than
	// the client waits returns at once.
	_, err = c.LookupIPs(ctx, []netip.Addr{ip})
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 429, "status")
	check(t, apiErr.RetryAfter != nil && *apiErr.RetryAfter == time.Second, "RetryAfter %v", apiErr.RetryAfter)
	eq(t, srv.Arrivals(synthienttest.RouteLookupIPs), 1, "arrivals")
	eq(t, srv.Credits(srv.APIKey), int64(synthienttest.DefaultCredits-1), "a refused lookup costs nothing")
	// The domain bucket is separate.
	_, err = c.LookupDomain(ctx, "example.org", nil)
	must(t, err, "LookupDomain")

	_, err = c.Account(ctx)
	must(t, err, "Account")
	_, err = c.Account(ctx)
	apiErr = asAPIError(t, err)
	check(t, apiErr.RetryAfter != nil && *apiErr.RetryAfter == 4*time.Second, "RetryAfter %v", apiErr.RetryAfter)
	clk.Advance(4 * time.Second)
	_, err = c.Account(ctx)
	must(t, err, "Account after the wait")
}

func TestWithoutRateLimits(t *testing.T) {
	for name, opts := range map[string][]synthienttest.Option{
		"alone":                  {synthienttest.WithoutRateLimits()},
		"before a WithRateLimit": {synthienttest.WithoutRateLimits(), synthienttest.WithRateLimit(synthienttest.BucketAccount, 1, 1)},
		"after a WithRateLimit":  {synthienttest.WithRateLimit(synthienttest.BucketAccount, 1, 1), synthienttest.WithoutRateLimits()},
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := newServer(t, opts...)
			hc := rawClient(t)
			for range 30 {
				r := do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "")
				eq(t, r.Status, 200, "status")
				l, _, _ := rateHeaders(r)
				eq(t, l, "", "RateLimit-Limit without rate limits")
			}
		})
	}
}
