package synthienttest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// unknownKey is well-formed and belongs to no server.
const unknownKey = "c23f3dab-5c04-4416-af21-c6b879bb90b9"

// Each route answers a key by its scopes: 401 without a known key, 403
// without the route's scope.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	basic := srv.AddKey([]string{synthienttest.ScopeBasic}, 10)
	none := srv.AddKey(nil, 10)
	helioHTTP := srv.AddKey([]string{synthienttest.ExportScope(synthient.FeedHoneypotHTTP)}, 0)
	assert.Regexp(t, uuidRE, basic, "AddKey's key")
	hc := rawClient(t)
	for _, tc := range []struct {
		name, path, key string
		status          int
		detail          string // in the problem's detail
	}{
		{"no key", "/lookup/ip/8.8.8.8", "", 401, "Missing API Key"},
		{"unknown key", "/account/me", unknownKey, 401, "Invalid API Key"},
		{"BASIC: account", "/account/me", basic, 200, ""},
		{"BASIC: export listing", "/feeds/proxies/export", basic, 403, "PROXY_FEEDS"},
		{"BASIC: proxies stream", "/feeds/proxies/stream", basic, 403, "PROXY_FIREHOSE"},
		{"BASIC: meta", "/feeds/helio/dns/export/latest/meta", basic, 403, "HONEYPOT_DNS_FEED"},
		{"BASIC: download", "/feeds/torrents/export/2026-06-09", basic, 403, "TORRENTS_FEED"},
		{"BASIC: ja4t stream", "/feeds/ja4t/stream", basic, 403, "JA4T_STREAM"},
		{"no scope: account", "/account/me", none, 403, "BASIC"},
		{"no scope: lookup", "/lookup/ip/8.8.8.8", none, 403, "BASIC"},
		{"no scope: health", "/health", none, 200, ""},
		{"feed scope: its listing", "/feeds/helio/http/export", helioHTTP, 200, ""},
		{"feed scope: its stream", "/feeds/helio/http/stream", helioHTTP, 403, "HONEYPOT_HTTP_STREAM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := do(t, hc, "GET", srv.URL+tc.path, tc.key, "")
			if tc.status == 200 {
				assert.Equal(t, 200, r.Status)
				return
			}
			p := problemOf(t, r, tc.status)
			assert.Contains(t, p.Detail, tc.detail)
			assert.Equal(t, "https://docs.synthient.com/errors/"+map[int]string{401: "unauthorized", 403: "forbidden"}[tc.status], p.Type)
		})
	}
}

// A key that is not UUID-shaped gets the edge's text/plain 401, before
// any rate limit.
func TestMalformedKey(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	for _, key := range []string{"not-a-uuid-key", srv.APIKey + "0"} {
		r := do(t, rawClient(t), "GET", srv.URL+"/account/me", key, "")
		assert.Equal(t, 401, r.Status)
		assert.Equal(t, "text/plain; charset=utf-8", r.Header.Get("Content-Type"))
		assert.Equal(t, "401 Unauthorized: malformed API key\n", string(r.Body))
		assert.Regexp(t, uuidRE, r.Header.Get("X-Request-Id"))
		assert.Empty(t, r.Header.Get("RateLimit-Limit"), "RateLimit-Limit before authentication")
	}
}

// The SDK returns a 401 or a 403 as an *APIError, sent once, that never
// holds the key.
func TestAuthenticationThroughSDK(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	ctx := context.Background()
	for _, key := range []string{"test-key-6f1d2c3b-secret", unknownKey} {
		srv.Reset()
		_, err := newClientKey(t, srv, key).Account(ctx)
		apiErr := errAs[*synthient.APIError](t, err)
		assert.Equal(t, 401, apiErr.Status)
		assert.NotEmpty(t, apiErr.Detail)
		assert.Regexp(t, uuidRE, apiErr.RequestID)
		assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteAccount), "arrivals")
		assert.NotContains(t, err.Error(), key)
	}

	srv.Reset()
	basic := srv.AddKey([]string{synthienttest.ScopeBasic}, 10)
	_, err := newClientKey(t, srv, basic).ListExports(ctx, synthient.FeedJA4T, nil)
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 403, apiErr.Status)
	assert.Contains(t, apiErr.Detail, "JA4T_FEED")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteExports), "arrivals: a 403 is not retried")
}

func TestAddKeyAndCredits(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	k := srv.AddKey(nil, 12)
	assert.Equal(t, int64(12), srv.Credits(k))
	assert.NotEqual(t, srv.APIKey, k)
	assert.Equal(t, int64(-1), srv.Credits(unknownKey), "credits of an unknown key")
	assert.Panics(t, func() { srv.AddKey(nil, -1) }, "negative credits")
}
