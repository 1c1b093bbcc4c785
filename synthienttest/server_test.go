package synthienttest_test

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/url"
	"regexp"
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
	t.Parallel()
	srv, _ := newServer(t)
	api, err := url.Parse(srv.URL)
	require.NoError(t, err)
	st, err := url.Parse(srv.StorageURL)
	require.NoError(t, err)
	assert.Equal(t, "http", api.Scheme)
	assert.Equal(t, "/api/v4", api.Path)
	assert.Equal(t, "127.0.0.1", api.Hostname())
	assert.Equal(t, "127.0.0.1", st.Hostname())
	assert.NotEqual(t, api.Host, st.Host, "API and storage share the origin")
	assert.Regexp(t, uuidRE, srv.APIKey)
	want := []string{
		"BASIC", "PROXY_FEEDS", "PROXY_FIREHOSE", "ANONYMIZERS_FEED", "ANONYMIZERS_STREAM",
		"TORRENTS_FEED", "TORRENTS_STREAM", "HONEYPOT_HTTP_FEED", "HONEYPOT_HTTP_STREAM",
		"HONEYPOT_HTTPS_FEED", "HONEYPOT_HTTPS_STREAM", "HONEYPOT_DNS_FEED", "HONEYPOT_DNS_STREAM",
		"HONEYPOT_ADB_FEED", "HONEYPOT_ADB_STREAM", "JA4T_FEED", "JA4T_STREAM",
	}
	assert.Equal(t, want, synthienttest.AllScopes())
	acct, err := newClient(t, srv).Account(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want, acct.Scopes, "the scopes of APIKey")
}

func TestStartOnAnAddressInUse(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	_, err = synthienttest.Start(synthienttest.WithListenAddr(u.Host))
	require.ErrorContains(t, err, u.Host)
	assert.Panics(t, func() { synthienttest.NewServer(synthienttest.WithListenAddr(u.Host)) })
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

func TestCloseStopsBothOrigins(t *testing.T) {
	t.Parallel()
	srv := synthienttest.NewServer()
	c := newClient(t, srv)
	_, err := c.Health(context.Background())
	require.NoError(t, err)
	srv.Close()
	srv.Close() // a second Close does nothing
	hc := rawClient(t)
	for _, u := range []string{srv.URL + "/health", srv.StorageURL + "/"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		require.NoError(t, err)
		resp, err := hc.Do(req)
		if !assert.Error(t, err, "GET %s after Close", u) { //nolint:testifylint // the loop goes on to the next URL
			_ = resp.Body.Close()
		}
	}
	_, err = c.Health(context.Background())
	require.ErrorAs(t, err, new(*synthient.ConnectionError))
}

//nolint:paralleltest // compares the process's goroutines before and after: a parallel test would add its own
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := goleak.IgnoreCurrent()
	srv := synthienttest.NewServer(synthienttest.WithEventInterval(time.Millisecond))
	c, err := srv.NewClient(synthient.WithMaxRetries(0))
	require.NoError(t, err)
	ctx := context.Background()
	// A stream, a slow answer and a slow download in progress.
	next, stop := iter.Pull2(c.StreamTorrents(ctx))
	_, err, _ = next()
	require.NoError(t, err)
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders})
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 1, Delay: time.Second})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = c.Account(ctx) }()
	go func() { defer wg.Done(); _, _ = c.DownloadExport(ctx, synthient.FeedProxies, "latest", io.Discard) }()
	require.Eventually(t, func() bool {
		return srv.Arrivals(synthienttest.RouteAccount) == 1 && srv.Arrivals(synthienttest.RouteStorage) == 1
	}, hang, 5*time.Millisecond, "the requests arrive")

	srv.Close()
	wg.Wait()
	stop()
	c.Close()
	goleak.VerifyNone(t, before)
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithoutRateLimits())
	c := newClient(t, srv)
	const calls, faults = 20, 10
	srv.Inject(synthienttest.RouteAccount, faults, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 502})
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	for range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), hang)
			defer cancel()
			_, err := c.Account(ctx)
			_ = srv.Requests()
			_ = srv.Arrivals(synthienttest.RouteAccount)
			if err != nil {
				mu.Lock()
				failures++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Every fault takes one arrival; every call that succeeded took one
	// more. A call fails only after three 502s.
	assert.Equal(t, faults+calls-failures, srv.Arrivals(synthienttest.RouteAccount), "arrivals")
	assert.LessOrEqual(t, failures, faults/3, "failed calls")
	faulted := 0
	for _, r := range srv.Requests() {
		if r.Faulted {
			faulted++
			assert.Equal(t, 502, r.Status, "faulted status")
		}
	}
	assert.Equal(t, faults, faulted, "faulted requests in the log")
}
