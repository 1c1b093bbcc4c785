package synthienttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewServerOrigins(t *testing.T) {
	srv, _ := newServer(t)
	api, err := url.Parse(srv.URL)
	must(t, err, "parsing URL")
	st, err := url.Parse(srv.StorageURL)
	must(t, err, "parsing StorageURL")
	eq(t, api.Scheme, "http", "API scheme")
	eq(t, api.Path, "/api/v4", "API path")
	eq(t, api.Hostname(), "127.0.0.1", "API host")
	eq(t, st.Hostname(), "127.0.0.1", "storage host")
	check(t, api.Host != st.Host, "API and storage share the origin %s", api.Host)
	check(t, uuidRE.MatchString(srv.APIKey), "APIKey %q is not a UUID", srv.APIKey)
	want := []string{
		"BASIC", "PROXY_FEEDS", "PROXY_FIREHOSE", "ANONYMIZERS_FEED", "ANONYMIZERS_STREAM",
		"TORRENTS_FEED", "TORRENTS_STREAM", "HONEYPOT_HTTP_FEED", "HONEYPOT_HTTP_STREAM",
		"HONEYPOT_HTTPS_FEED", "HONEYPOT_HTTPS_STREAM", "HONEYPOT_DNS_FEED", "HONEYPOT_DNS_STREAM",
		"HONEYPOT_ADB_FEED", "HONEYPOT_ADB_STREAM", "JA4T_FEED", "JA4T_STREAM",
	}
	check(t, slices.Equal(synthienttest.AllScopes(), want), "AllScopes() = %v", synthienttest.AllScopes())
	acct, err := newClient(t, srv).Account(context.Background())
	must(t, err, "Account")
	check(t, slices.Equal(acct.Scopes, want), "APIKey scopes = %v", acct.Scopes)
}

func TestCloseStopsBothOrigins(t *testing.T) {
	srv := synthienttest.NewServer()
	c := newClient(t, srv)
	_, err := c.Health(context.Background())
	must(t, err, "Health")
	srv.Close()
	srv.Close() // a second Close does nothing
	hc := rawClient(t)
	for _, u := range []string{srv.URL + "/health", srv.StorageURL + "/"} {
		if resp, err := hc.Get(u); err == nil {
			resp.Body.Close()
			t.Errorf("GET %s after Close: no error", u)
		}
	}
	_, err = c.Health(context.Background())
	var ce *synthient.ConnectionError
	check(t, errors.As(err, &ce), "Health after Close: %v, want a *ConnectionError", err)
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	srv := synthienttest.NewServer(synthienttest.WithEventInterval(time.Millisecond))
	c, err := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL), synthient.WithMaxRetries(0))
	must(t, err, "NewClient")
	ctx := context.Background()
	// A stream, a slow answer and a slow download in progress.
	next, stop := iter.Pull2(c.StreamTorrents(ctx))
	_, err, _ = next()
	must(t, err, "stream")
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders})
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 1, Delay: time.Second})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = c.Account(ctx) }()
	go func() { defer wg.Done(); _, _ = c.DownloadExport(ctx, synthient.FeedProxies, "latest", io.Discard) }()
	eventually(t, "the requests arrive", func() bool {
		return srv.Arrivals(synthienttest.RouteAccount) == 1 && srv.Arrivals(synthienttest.RouteStorage) == 1
	})
	srv.Close()
	wg.Wait()
	stop()
	c.Close()
	goleak.VerifyNone(t, before)
}

func TestHealth(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	h, err := c.Health(context.Background())
	must(t, err, "Health")
	eq(t, h.Status, "ok", "status")

	r := do(t, rawClient(t), "GET", srv.URL+"/health", "", "")
	eq(t, r.Status, 200, "status")
	eq(t, r.Header.Get("Content-Type"), "application/json", "Content-Type")
	eq(t, strings.TrimSpace(string(r.Body)), `{"status":"ok"}`, "body")
	check(t, uuidRE.MatchString(r.Header.Get("X-Request-Id")), "X-Request-Id %q", r.Header.Get("X-Request-Id"))
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		eq(t, r.Header.Get(h), "", "/health "+h)
	}

	srv.SetUnhealthy("lookup backend unreachable")
	_, err = c.Health(context.Background())
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 503, "status")
	eq(t, apiErr.Detail, "lookup backend unreachable", "detail")
	r = do(t, rawClient(t), "GET", srv.URL+"/health", "", "")
	eq(t, strings.TrimSpace(string(r.Body)), `{"status":"unhealthy","problems":["lookup backend unreachable"]}`, "body")
	eq(t, r.Header.Get("Content-Type"), "application/json", "an unhealthy answer is plain JSON")
	srv.SetUnhealthy()
	_, err = c.Health(context.Background())
	must(t, err, "Health")
	eq(t, srv.Arrivals(synthienttest.RouteHealth), 5, "arrivals")
	for _, req := range srv.Requests() {
		check(t, !req.APIKey, "the SDK sent /health a key")
	}
}

func TestAuthentication(t *testing.T) {
	srv, _ := newServer(t)
	hc := rawClient(t)

	// A key that is not a UUID: the edge's text/plain 401.
	r := do(t, hc, "GET", srv.URL+"/account/me", "not-a-uuid-key", "")
	eq(t, r.Status, 401, "status")
	check(t, strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain"), "Content-Type %q", r.Header.Get("Content-Type"))
	check(t, uuidRE.MatchString(r.Header.Get("X-Request-Id")), "no X-Request-Id")
	eq(t, r.Header.Get("RateLimit-Limit"), "", "RateLimit-Limit before authentication")

	// An unknown well-formed key, and no key: problem+json 401.
	p := problemOf(t, do(t, hc, "GET", srv.URL+"/account/me", "c23f3dab-5c04-4416-af21-c6b879bb90b9", ""), 401)
	eq(t, p.Detail, "Invalid API Key", "detail")
	eq(t, p.Type, "https://docs.synthient.com/errors/unauthorized", "type")
	problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/ip/8.8.8.8", "", ""), 401)

	// The SDK surfaces both as an *APIError 401, sent once.
	for _, key := range []string{"test-key-6f1d2c3b-secret", "c23f3dab-5c04-4416-af21-c6b879bb90b9"} {
		srv.Reset()
		_, err := newClientKey(t, srv, key).Account(context.Background())
		apiErr := asAPIError(t, err)
		eq(t, apiErr.Status, 401, "status")
		check(t, apiErr.Detail != "", "no detail")
		check(t, uuidRE.MatchString(apiErr.RequestID), "request ID %q", apiErr.RequestID)
		eq(t, srv.Arrivals(synthienttest.RouteAccount), 1, "arrivals")
		check(t, !strings.Contains(err.Error(), key), "the error holds the key")
	}

	// Scopes: BASIC reaches the account and lookups only; no scope reaches
	// nothing but /health.
	basic := srv.AddKey([]string{synthienttest.ScopeBasic}, 10)
	check(t, uuidRE.MatchString(basic), "AddKey gave %q", basic)
	eq(t, do(t, hc, "GET", srv.URL+"/account/me", basic, "").Status, 200, "BASIC account")
	for path, scope := range map[string]string{
		"/feeds/proxies/export":               "PROXY_FEEDS",
		"/feeds/proxies/stream":               "PROXY_FIREHOSE",
		"/feeds/helio/dns/export/latest/meta": "HONEYPOT_DNS_FEED",
		"/feeds/torrents/export/2026-06-09":   "TORRENTS_FEED",
		"/feeds/ja4t/stream":                  "JA4T_STREAM",
	} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+path, basic, ""), 403)
		check(t, strings.Contains(p.Detail, scope), "%s: detail %q does not name %s", path, p.Detail, scope)
	}
	none := srv.AddKey(nil, 10)
	problemOf(t, do(t, hc, "GET", srv.URL+"/account/me", none, ""), 403)
	problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/ip/8.8.8.8", none, ""), 403)
	eq(t, do(t, hc, "GET", srv.URL+"/health", none, "").Status, 200, "/health with a key without scopes")

	feedKey := srv.AddKey([]string{synthienttest.ExportScope(synthient.FeedHoneypotHTTP)}, 0)
	eq(t, do(t, hc, "GET", srv.URL+"/feeds/helio/http/export", feedKey, "").Status, 200, "export listing with its scope")
	problemOf(t, do(t, hc, "GET", srv.URL+"/feeds/helio/http/stream", feedKey, ""), 403)

	// Through the SDK: a 403 is an *APIError, not retried.
	srv.Reset()
	_, err := newClientKey(t, srv, basic).ListExports(context.Background(), synthient.FeedJA4T, nil)
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 403, "status")
	check(t, strings.Contains(apiErr.Detail, "JA4T_FEED"), "detail %q", apiErr.Detail)
	eq(t, srv.Arrivals(synthienttest.RouteExports), 1, "arrivals")
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	srv, _ := newServer(t)
	hc := rawClient(t)
	problemOf(t, do(t, hc, "GET", srv.URL+"/nope", srv.APIKey, ""), 404)
	problemOf(t, do(t, hc, "GET", strings.TrimSuffix(srv.URL, "/api/v4")+"/api/v3/account/me", srv.APIKey, ""), 404)
	problemOf(t, do(t, hc, "GET", srv.URL+"/feeds/helio/ftp/stream", srv.APIKey, ""), 404)
	eq(t, srv.Arrivals(""), 2, "arrivals at unknown paths")
	eq(t, srv.Arrivals(synthienttest.RouteStream), 1, "arrivals at the stream route")
	r := do(t, hc, "POST", srv.URL+"/account/me", srv.APIKey, `{}`)
	problemOf(t, r, 405)
	eq(t, r.Header.Get("Allow"), "GET, HEAD", "Allow")
	problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/ips", srv.APIKey, ""), 405)
}

func TestRequestIDsAndLog(t *testing.T) {
	srv, _ := newServer(t)
	ctx := context.Background()
	var mu sync.Mutex
	var ids []string
	hook := func(ri *synthient.ResponseInfo) error {
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, ri.RequestID)
		return nil
	}
	c := newClient(t, srv, synthient.WithUserAgent("my-app/1.2"), synthient.WithResponseHook(hook))
	_, err := c.Account(ctx)
	must(t, err, "Account")
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "1999-01-01")
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 404, "status of an unknown date")

	log := srv.Requests()
	if len(log) != 2 {
		t.Fatalf("log has %d entries, want 2", len(log))
	}
	seen := map[string]bool{}
	for i, r := range log {
		check(t, uuidRE.MatchString(r.RequestID), "request ID %q", r.RequestID)
		check(t, !seen[r.RequestID], "request ID %s repeats", r.RequestID)
		seen[r.RequestID] = true
		eq(t, r.RequestID, ids[i], "request ID as the client saw it")
		check(t, r.APIKey && !r.Authorization && !r.Cookie, "header presence %+v", r)
		eq(t, r.Time, testNow, "time")
		check(t, !r.Faulted, "faulted")
	}
	eq(t, apiErr.RequestID, log[1].RequestID, "APIError.RequestID")
	eq(t, log[0].Route, synthienttest.RouteAccount, "route")
	eq(t, log[0].Method, "GET", "method")
	eq(t, log[0].Path, "/api/v4/account/me", "path")
	eq(t, log[0].Status, 200, "status")
	eq(t, log[0].Header.Get("User-Agent"), "synthient-go/"+synthient.Version+" my-app/1.2", "User-Agent")
	eq(t, log[0].Header.Get("Accept"), "application/json", "Accept")
	eq(t, log[1].Route, synthienttest.RouteExportMeta, "route")
	eq(t, log[1].Path, "/api/v4/feeds/proxies/export/1999-01-01/meta", "path")
	eq(t, log[1].Status, 404, "status")

	b, err := json.Marshal(log)
	must(t, err, "encoding the log")
	check(t, !strings.Contains(string(b), srv.APIKey), "the log holds the key")

	// A key in the query (a client that leaks it there) is not logged.
	srv.Reset()
	hc := rawClient(t)
	do(t, hc, "GET", srv.URL+"/account/me?api_key="+srv.APIKey+"&other="+url.QueryEscape(strings.ToUpper(srv.APIKey))+"&limit=5", srv.APIKey, "")
	q := srv.Requests()[0].Query
	eq(t, q, "api_key=REDACTED&other=REDACTED&limit=5", "logged query")

	srv.Reset()
	eq(t, len(srv.Requests()), 0, "log entries after Reset")
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 0, "arrivals after Reset")
}

func TestConcurrentUse(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithoutRateLimits())
	c := newClient(t, srv)
	const calls, faults = 20, 10
	srv.Inject(synthienttest.RouteAccount, faults, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 502})
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := c.Account(ctx)
			_ = srv.Requests()
			_ = srv.Arrivals(synthienttest.RouteAccount)
			if err != nil {
				mu.Lock()
				failures++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Every fault takes one arrival; every call that succeeded took one
	// more. A call fails only after three 502s.
	eq(t, srv.Arrivals(synthienttest.RouteAccount), faults+calls-failures, "arrivals")
	check(t, failures <= faults/3, "%d calls failed", failures)
	faulted := 0
	for _, r := range srv.Requests() {
		if r.Faulted {
			faulted++
			eq(t, r.Status, 502, "faulted status")
		}
	}
	eq(t, faulted, faults, "faulted requests in the log")
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, _ := newServer(t)
	c, err := srv.NewClient()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	acct, err := c.Account(ctx)
	require.NoError(t, err)
	assert.Equal(t, "synthienttest", acct.APIKey.Name, "the client sends Server.APIKey")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteAccount))

	// The caller's options apply last: its base URL wins.
	other, _ := newServer(t)
	c2, err := srv.NewClient(synthient.WithBaseURL(other.URL))
	require.NoError(t, err)
	t.Cleanup(func() { c2.Close() })
	_, err = c2.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, other.Arrivals(synthienttest.RouteHealth))
	assert.Zero(t, srv.Arrivals(synthienttest.RouteHealth))

	_, err = srv.NewClient(synthient.WithMaxRetries(-1))
	assert.ErrorIs(t, err, synthient.ErrInvalidArgument)
}
