package synthienttest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

func TestRequestLog(t *testing.T) {
	t.Parallel()
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
	require.NoError(t, err)
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "1999-01-01")
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 404, apiErr.Status, "status of an unknown date")

	log := srv.Requests()
	require.Len(t, log, 2)
	for i, r := range log {
		assert.Regexp(t, uuidRE, r.RequestID)
		assert.Equal(t, ids[i], r.RequestID, "request ID as the client saw it")
		assert.True(t, r.APIKey, "APIKey")
		assert.False(t, r.Authorization, "Authorization")
		assert.False(t, r.Cookie, "Cookie")
		assert.Equal(t, testNow, r.Time)
		assert.False(t, r.Faulted)
	}
	assert.NotEqual(t, log[0].RequestID, log[1].RequestID)
	assert.Equal(t, log[1].RequestID, apiErr.RequestID, "APIError.RequestID")
	assert.Equal(t, synthienttest.RouteAccount, log[0].Route)
	assert.Equal(t, "GET", log[0].Method)
	assert.Equal(t, "/api/v4/account/me", log[0].Path)
	assert.Equal(t, 200, log[0].Status)
	assert.Equal(t, "synthient-go/"+synthient.Version+" my-app/1.2", log[0].Header.Get("User-Agent"))
	assert.Equal(t, "application/json", log[0].Header.Get("Accept"))
	assert.Equal(t, synthienttest.RouteExportMeta, log[1].Route)
	assert.Equal(t, "/api/v4/feeds/proxies/export/1999-01-01/meta", log[1].Path)
	assert.Equal(t, 404, log[1].Status)

	b, err := json.Marshal(log)
	require.NoError(t, err)
	assert.NotContains(t, string(b), srv.APIKey, "the log holds the key")

	srv.Reset()
	assert.Empty(t, srv.Requests(), "log entries after Reset")
	assert.Zero(t, srv.Arrivals(synthienttest.RouteAccount), "arrivals after Reset")
}

// A secret in the query (a client that leaks it there) is not logged.
func TestRequestLogRedactsQuery(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	for _, tc := range []struct{ query, logged string }{
		{"api_key=" + srv.APIKey + "&limit=5", "api_key=REDACTED&limit=5"},
		{"other=" + url.QueryEscape(strings.ToUpper(srv.APIKey)), "other=REDACTED"},
		{"X-Amz-Signature=abc&token=&Key=v", "X-Amz-Signature=REDACTED&token=REDACTED&Key=REDACTED"},
		{"q=%zz&flag", "q=%zz&flag"},
		{"", ""},
	} {
		srv.Reset()
		do(t, rawClient(t), "GET", srv.URL+"/account/me?"+tc.query, srv.APIKey, "")
		assert.Equal(t, tc.logged, srv.Requests()[0].Query, "query %q", tc.query)
	}
}

// The log keeps the trace-context headers of a request, and no other
// header beyond User-Agent, Accept and Content-Type.
func TestRequestLogKeepsTraceContext(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/account/me", nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", srv.APIKey)
	req.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	req.Header.Set("Tracestate", "congo=t61rcWkgMzE")
	req.Header.Set("Baggage", "userId=alice")
	req.Header.Set("X-Other", "kept out")
	resp, err := rawClient(t).Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close() // only the request matters here

	got := srv.Requests()[0].Header
	assert.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", got.Get("Traceparent"))
	assert.Equal(t, "congo=t61rcWkgMzE", got.Get("Tracestate"))
	assert.Equal(t, "userId=alice", got.Get("Baggage"))
	assert.Empty(t, got.Values("X-Other"), "a header the log does not keep")
	assert.Empty(t, got.Values("X-Api-Key"), "the key header")
}
