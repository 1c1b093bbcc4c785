package synthienttest_test

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// rateHeaders are an answer's RateLimit-Limit, -Remaining and -Reset,
// joined by slashes.
func rateHeaders(h interface{ Get(string) string }) string {
	return h.Get("RateLimit-Limit") + "/" + h.Get("RateLimit-Remaining") + "/" + h.Get("RateLimit-Reset")
}

// Each bucket has its published burst; routes share the bucket of their
// kind.
func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	hc := rawClient(t)
	for _, tc := range []struct {
		method, path, body, want string
	}{
		{"GET", "/account/me", "", "10/9/1"},
		{"GET", "/lookup/ip/8.8.8.8", "", "200/199/1"},
		{"GET", "/lookup/domain/example.org", "", "200/199/1"},
		{"GET", "/feeds/proxies/export", "", "60/59/1"},
		{"GET", "/feeds/proxies/export/latest/meta", "", "60/58/1"},
		{"GET", "/feeds/proxies/export/latest", "", "120/119/10"},
		// /lookup/ip and /lookup/ips share their bucket; the export listing
		// and meta share theirs.
		{"POST", "/lookup/ips", `{"ips":["8.8.8.8"]}`, "200/198/1"},
		{"GET", "/feeds/anonymizers/export/2026-06-09/meta", "", "60/57/2"},
		// Errors after authentication carry them too.
		{"GET", "/lookup/ip/nope", "", "200/197/1"},
	} {
		r := do(t, hc, tc.method, srv.URL+tc.path, srv.APIKey, tc.body)
		assert.Equal(t, tc.want, rateHeaders(r.Header), "%s %s", tc.method, tc.path)
	}
	resp, _ := openRaw(t, hc, srv, "proxies")
	_ = resp.Body.Close() // a stream, cut off: its error says nothing
	assert.Equal(t, "20/19/2", rateHeaders(resp.Header), "stream")

	// 401s carry none (nor does /health, see TestHealth).
	for _, key := range []string{"", unknownKey} {
		r := do(t, hc, "GET", srv.URL+"/account/me", key, "")
		assert.Equal(t, 401, r.Status)
		assert.Empty(t, r.Header.Values("RateLimit-Limit"), "RateLimit-Limit on a 401")
	}

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
	require.NoError(t, err)
	_, err = c.Health(context.Background())
	require.NoError(t, err)
	require.Len(t, seen, 2)
	assert.Equal(t, &synthient.RateLimit{Limit: 10, Remaining: 8, Reset: time.Second}, seen[0], "account rate limit")
	assert.Nil(t, seen[1], "/health's rate limit")
}

func TestRateLimitRefusesAndRefills(t *testing.T) {
	t.Parallel()
	srv, clk := newServer(t, synthienttest.WithRateLimit(synthienttest.BucketAccount, 1, 2))
	hc := rawClient(t)
	get := func() response { return do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "") }
	for _, want := range []string{"2/1/1", "2/0/2"} {
		r := get()
		assert.Equal(t, 200, r.Status)
		assert.Equal(t, want, rateHeaders(r.Header))
	}
	r := get()
	p := problemOf(t, r, 429)
	assert.Equal(t, "1", r.Header.Get("Retry-After"))
	assert.Equal(t, "2/0/2", rateHeaders(r.Header), "RateLimit headers on a 429")
	assert.Contains(t, p.Detail, "retry after 1 seconds")
	assert.Equal(t, "https://docs.synthient.com/errors/rate-limited", p.Type)

	clk.Advance(500 * time.Millisecond)
	assert.Equal(t, 429, get().Status, "half a token later")
	clk.Advance(500 * time.Millisecond)
	assert.Equal(t, 200, get().Status, "a token later")
	clk.Advance(time.Hour)
	assert.Equal(t, "2/1/1", rateHeaders(get().Header), "a full bucket holds the burst only")

	// Other keys have their own buckets.
	other := srv.AddKey([]string{"BASIC"}, 0)
	assert.Equal(t, 200, do(t, hc, "GET", srv.URL+"/account/me", other, "").Status, "another key")
}

// Slow buckets wait whole seconds: downloads refill every 10 s.
func TestRateLimitRetryAfterOfASlowBucket(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithRateLimit(synthienttest.BucketDownload, 0.1, 1))
	hc := rawClient(t)
	assert.Equal(t, 307, do(t, hc, "GET", srv.URL+"/feeds/proxies/export/latest", srv.APIKey, "").Status, "first download")
	r := do(t, hc, "GET", srv.URL+"/feeds/proxies/export/latest", srv.APIKey, "")
	problemOf(t, r, 429)
	assert.Equal(t, "10", r.Header.Get("Retry-After"))
}

func TestRateLimitThroughSDK(t *testing.T) {
	t.Parallel()
	srv, clk := newServer(t,
		synthienttest.WithRateLimit(synthienttest.BucketLookup, 1, 1),
		synthienttest.WithRateLimit(synthienttest.BucketAccount, 0.25, 1))
	c := newClient(t, srv, synthient.WithMaxRetryAfter(500*time.Millisecond))
	ctx := context.Background()
	_, err := c.LookupIP(ctx, testIP)
	require.NoError(t, err)
	// The bucket is empty: a 429 whose Retry-After (1 s) is longer than
	// the client waits returns at once.
	_, err = c.LookupIPs(ctx, []netip.Addr{testIP})
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 429, apiErr.Status)
	require.NotNil(t, apiErr.RetryAfter)
	assert.Equal(t, time.Second, *apiErr.RetryAfter)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "arrivals")
	assert.Equal(t, int64(synthienttest.DefaultCredits-1), srv.Credits(srv.APIKey), "a refused lookup costs nothing")
	// The domain bucket is separate.
	_, err = c.LookupDomain(ctx, "example.org", nil)
	require.NoError(t, err)

	_, err = c.Account(ctx)
	require.NoError(t, err)
	_, err = c.Account(ctx)
	apiErr = errAs[*synthient.APIError](t, err)
	require.NotNil(t, apiErr.RetryAfter)
	assert.Equal(t, 4*time.Second, *apiErr.RetryAfter)
	clk.Advance(4 * time.Second)
	_, err = c.Account(ctx)
	require.NoError(t, err, "Account after the wait")
}

func TestWithoutRateLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []synthienttest.Option
	}{
		{"alone", []synthienttest.Option{synthienttest.WithoutRateLimits()}},
		{"before a WithRateLimit", []synthienttest.Option{synthienttest.WithoutRateLimits(), synthienttest.WithRateLimit(synthienttest.BucketAccount, 1, 1)}},
		{"after a WithRateLimit", []synthienttest.Option{synthienttest.WithRateLimit(synthienttest.BucketAccount, 1, 1), synthienttest.WithoutRateLimits()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, tc.opts...)
			hc := rawClient(t)
			for range 30 {
				r := do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "")
				require.Equal(t, 200, r.Status)
				require.Empty(t, r.Header.Values("RateLimit-Limit"), "RateLimit-Limit without rate limits")
			}
		})
	}
}
