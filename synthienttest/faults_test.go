package synthienttest_test

import (
	"context"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// lastEntry returns the newest log entry of route.
func lastEntry(t *testing.T, srv *synthienttest.Server, route string) synthienttest.Request {
	t.Helper()
	log := srv.Requests()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Route == route {
			return log[i]
		}
	}
	require.FailNow(t, "no request to "+route+" in the log")
	return synthienttest.Request{}
}

func TestFaultStatus(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()

	// A billed lookup is not sent again after a 503, and costs nothing.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503})
	_, err := c.LookupIP(ctx, testIP)
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 503, apiErr.Status, "status")
	assert.Equal(t, "Injected fault.", apiErr.Detail, "detail")
	assert.NotEmpty(t, apiErr.RequestID, "no request ID")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "arrivals")
	assert.Equal(t, int64(synthienttest.DefaultCredits), srv.Credits(srv.APIKey), "credits")
	e := lastEntry(t, srv, synthienttest.RouteLookupIP)
	assert.True(t, e.Faulted, "log entry %+v", e)
	assert.Equal(t, 503, e.Status, "logged status")

	// A free call is: two 503s, then the real answer.
	srv.Inject(synthienttest.RouteAccount, 2, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503})
	acct, err := c.Account(ctx)
	require.NoError(t, err, "Account")
	assert.Equal(t, "grace@example.com", acct.Email, "email")
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteAccount), "arrivals")
	e = lastEntry(t, srv, synthienttest.RouteAccount)
	assert.False(t, e.Faulted, "last log entry %+v", e)
	assert.Equal(t, 200, e.Status, "logged status")

	// A 429 with Retry-After 0 is sent again even when billed.
	srv.Reset()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "0"})
	_, err = c.LookupIP(ctx, testIP)
	require.NoError(t, err, "LookupIP after a 429")
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIP), "arrivals")

	// A 429 without Retry-After is returned at once, even when free.
	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429})
	_, err = c.Account(ctx)
	apiErr = errAs[*synthient.APIError](t, err)
	assert.Equal(t, 429, apiErr.Status)
	assert.Nil(t, apiErr.RetryAfter)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteAccount), "arrivals")

	// A Retry-After longer than the client waits is returned at once.
	srv.Reset()
	srv.Inject(synthienttest.RouteExports, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "120"})
	_, err = c.ListExports(ctx, synthient.FeedProxies, nil)
	apiErr = errAs[*synthient.APIError](t, err)
	require.NotNil(t, apiErr.RetryAfter)
	assert.Equal(t, 2*time.Minute, *apiErr.RetryAfter)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteExports), "arrivals")

	// Retries run out: a 500 three times.
	srv.Reset()
	srv.Inject(synthienttest.RouteExportMeta, -1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 500})
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "latest")
	assert.Equal(t, 500, errAs[*synthient.APIError](t, err).Status, "status")
	assert.Equal(t, 3, srv.Arrivals(synthienttest.RouteExportMeta), "arrivals with 2 retries")
	srv.Reset()
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "latest")
	require.NoError(t, err, "ExportMeta after Reset")
}

func TestFaultStatusBodies(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv, synthient.WithMaxRetries(0))
	ctx := context.Background()
	hc := rawClient(t)

	srv.Inject(synthienttest.RouteAccount, 2, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 502, Body: "upstream timed out\n"})
	_, err := c.Account(ctx)
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 502, apiErr.Status, "status")
	assert.Equal(t, "upstream timed out", apiErr.Detail, "detail from a text body")
	r := do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "")
	assert.Equal(t, "text/plain; charset=utf-8", r.Header.Get("Content-Type"), "Content-Type")
	assert.Regexp(t, uuidRE, r.Header.Get("X-Request-Id"), "a fault answer's X-Request-Id")

	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 504, ContentType: "application/json"})
	r = do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "")
	assert.Equal(t, 504, r.Status)
	assert.Empty(t, r.Body, "a ContentType without a Body")

	srv.Inject(synthienttest.RouteLookupDomain, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus})
	p := problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/domain/example.org", srv.APIKey, ""), 503)
	assert.Equal(t, "https://docs.synthient.com/errors/service-unavailable", p.Type, "type")

	// Faults come before authentication.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 418})
	assert.Equal(t, 418, do(t, hc, "GET", srv.URL+"/account/me", "", "").Status, "status without a key")

	// Storage errors are S3 XML.
	srv.Reset()
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503, RetryAfter: "1"})
	_, err = newClient(t, srv).DownloadExport(ctx, synthient.FeedProxies, "latest", io.Discard)
	apiErr = errAs[*synthient.APIError](t, err)
	assert.Equal(t, 503, apiErr.Status, "storage status")
	assert.Equal(t, "SlowDown", apiErr.Title, "storage error code")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStorage), "storage arrivals: the storage leg is never retried")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteDownload), "API arrivals")
}

func TestFaultCloseAfterRequest(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	// A first lookup leaves a keep-alive connection for the next one.
	_, err := c.LookupIP(ctx, testIP)
	require.NoError(t, err, "LookupIP")
	srv.Reset()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = c.LookupIP(ctx, testIP)
	ce := errAs[*synthient.ConnectionError](t, err)
	assert.False(t, ce.NotSent, "NotSent on a request the server read")
	assert.Equal(t, 1, errAs[*synthient.Error](t, err).Attempts)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "arrivals: a billed request is never sent again")
	assert.Zero(t, lastEntry(t, srv, synthienttest.RouteLookupIP).Status, "logged status of an unanswered request")

	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = c.LookupIPs(ctx, []netip.Addr{testIP})
	assert.False(t, errAs[*synthient.ConnectionError](t, err).NotSent, "NotSent")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "batch arrivals")

	// A free call is sent again.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = c.Account(ctx)
	require.NoError(t, err, "Account")
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteAccount), "account arrivals")

	// So is opening a stream.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = take(c.StreamProxies(ctx), 1)
	require.NoError(t, err, "StreamProxies")
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteStream), "stream arrivals")
}

//nolint:paralleltest // on real time (a delay against a timeout): it runs alone, not beside the parallel tests
func TestFaultSlowHeaders(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv, synthient.WithTimeout(100*time.Millisecond))
	ctx := context.Background()
	// Headers an hour away: only the client's timeout ends the call.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: time.Hour})
	_, err := c.LookupIP(ctx, testIP)
	te := errAs[*synthient.TimeoutError](t, err)
	assert.True(t, te.Timeout())
	assert.False(t, te.NotSent)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "arrivals")

	// A free call times out, then is answered.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: time.Hour})
	_, err = c.Account(ctx)
	require.NoError(t, err, "Account")
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteAccount), "arrivals")

	// A short delay is just slow: the fault answered, and the call
	// succeeded.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 30 * time.Millisecond})
	_, err = newClient(t, srv).Account(ctx)
	require.NoError(t, err, "Account")
	assert.True(t, lastEntry(t, srv, synthienttest.RouteAccount).Faulted, "delayed")
}

//nolint:paralleltest // on real time (a delay against a timeout): it runs alone, not beside the parallel tests
func TestCloseInterruptsFaults(t *testing.T) {
	srv := synthienttest.NewServer()
	c := newClient(t, srv, synthient.WithMaxRetries(0))
	// Faults that hold their answers an hour: only Close ends them within
	// the tests' bound.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: time.Hour})
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Delay: time.Hour})
	errs := make(chan error, 2)
	go func() {
		_, err := c.Account(context.Background())
		errs <- err
	}()
	go func() {
		_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "latest", io.Discard)
		errs <- err
	}()
	require.Eventually(t, func() bool {
		return srv.Arrivals(synthienttest.RouteAccount) == 1 && srv.Arrivals(synthienttest.RouteStorage) == 1
	}, hang, 5*time.Millisecond, "both requests arrive")

	closed := make(chan struct{})
	go func() {
		srv.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(hang):
		t.Fatal("Close waits for the faults")
	}
	for range 2 {
		select {
		case err := <-errs:
			require.Error(t, err, "a call succeeded after Close")
		case <-time.After(hang):
			t.Fatal("a call did not end after Close")
		}
	}
}

//nolint:paralleltest // on real time (a delay against a timeout): it runs alone, not beside the parallel tests
func TestFaultSlowBody(t *testing.T) {
	srv, _ := newServer(t)
	ctx := context.Background()
	c := newClient(t, srv)
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 100, Delay: 5 * time.Millisecond})
	acct, err := c.Account(ctx)
	require.NoError(t, err, "Account with a slow body")
	assert.Equal(t, "grace@example.com", acct.Email, "email")
	assert.True(t, lastEntry(t, srv, synthienttest.RouteAccount).Faulted, "slow")

	// Slower than the client's timeout: a *TimeoutError while reading,
	// never retried.
	slow := newClient(t, srv, synthient.WithTimeout(100*time.Millisecond))
	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 10, Delay: time.Hour})
	_, err = slow.Account(ctx)
	require.ErrorAs(t, err, new(*synthient.TimeoutError))
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteAccount), "arrivals")

	// A slow download still arrives whole.
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 16 << 10, Delay: time.Millisecond})
	path := filepath.Join(t.TempDir(), "f.parquet")
	_, err = c.DownloadExportFile(ctx, synthient.FeedTorrents, "2026-06-09", path, &synthient.DownloadParams{Verify: true})
	require.NoError(t, err, "a slow verified download")

	// A slow stream trickles its lines.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 7, Delay: time.Millisecond})
	evs, err := take(c.StreamJA4T(ctx), 2)
	require.NoError(t, err, "a slow stream")
	require.Len(t, evs, 2)
	assert.NotEmpty(t, evs[1].JA4T)
}

func TestFaultResetMidBody(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	meta, err := c.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09")
	require.NoError(t, err, "ExportMeta")

	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	n, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-09", io.Discard)
	ce := errAs[*synthient.ConnectionError](t, err)
	assert.False(t, ce.NotSent, "NotSent after a response")
	assert.Less(t, n, meta.Size, "bytes before the reset")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStorage), "storage arrivals: no retry")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteDownload), "API arrivals")
	e := lastEntry(t, srv, synthienttest.RouteStorage)
	assert.True(t, e.Faulted, "storage log entry %+v", e)
	assert.Equal(t, 200, e.Status, "logged status")

	// To a file: an error, and no file, not even a part file.
	dir := t.TempDir()
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody, Size: 1000})
	_, err = c.DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-09", filepath.Join(dir, "p.parquet"), &synthient.DownloadParams{Verify: true})
	require.ErrorAs(t, err, new(*synthient.ConnectionError))
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "files left behind")

	// A JSON body: a read error, never retried, even for a free call.
	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	_, err = c.Account(ctx)
	require.ErrorAs(t, err, new(*synthient.ConnectionError))
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteAccount), "account arrivals")

	// A stream: the first event, then the error.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	evs, err := take(c.StreamProxies(ctx), 10)
	assert.Len(t, evs, 1, "events before the reset")
	require.ErrorAs(t, err, new(*synthient.ConnectionError))
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStream), "stream arrivals")
	require.Eventually(t, func() bool { return srv.OpenStreams() == 0 }, hang, 5*time.Millisecond, "the stream is closed")
}

func TestFaultTruncatedBody(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()

	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody, Size: 20})
	r := do(t, &tolerantClient{rawClient(t)}, "GET", srv.URL+"/account/me", srv.APIKey, "")
	assert.Len(t, r.Body, 20, "bytes sent")
	cl, _ := strconv.Atoi(r.Header.Get("Content-Length"))
	assert.Greater(t, cl, 20, "Content-Length")
	assert.Equal(t, 200, r.Status, "status")

	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody})
	_, err := c.Account(ctx)
	ce := errAs[*synthient.ConnectionError](t, err)
	require.ErrorIs(t, ce, io.ErrUnexpectedEOF)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteAccount), "arrivals")

	srv.Inject(synthienttest.RouteLookupDomain, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody})
	_, err = c.LookupDomain(ctx, "example.org", nil)
	require.ErrorAs(t, err, new(*synthient.ConnectionError))
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupDomain), "domain arrivals")

	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody, Size: 1000})
	n, err := c.DownloadExport(ctx, synthient.FeedProxies, "latest", io.Discard)
	require.ErrorAs(t, err, new(*synthient.ConnectionError))
	assert.Equal(t, int64(1000), n, "bytes before the cut")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStorage), "storage arrivals")

	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody, Size: 30})
	evs, err := take(c.StreamProxies(ctx), 10)
	assert.Empty(t, evs, "events in 30 bytes")
	assert.Error(t, err, "a truncated stream")
}

func TestFaultOversizedLine(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultOversizedLine})
	evs, err := take(c.StreamProxies(ctx), 1)
	assert.Empty(t, evs)
	require.ErrorIs(t, err, synthient.ErrLineTooLong)
	require.ErrorAs(t, err, new(*synthient.DecodeError))
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteStream), "arrivals")

	// A line of exactly the most the client accepts goes through, and the
	// stream then ends cleanly.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultOversizedLine, Size: synthient.MaxLineSize})
	raw, err := take(c.StreamRaw(ctx, synthient.FeedTorrents), 5)
	require.NoError(t, err, "a line of MaxLineSize")
	require.Len(t, raw, 1, "lines")
	assert.Len(t, raw[0], synthient.MaxLineSize, "line length")

	r := do(t, rawClient(t), "GET", srv.URL+"/account/me", "", "")
	assert.Equal(t, 401, r.Status, "no fault left")
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultOversizedLine, Size: 64})
	r = do(t, rawClient(t), "GET", srv.URL+"/account/me", "", "")
	assert.Len(t, r.Body, 65, "body of a 64-byte line")
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"), "Content-Type")
}

func TestInjectRules(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	hc := rawClient(t)
	get := func() int { return do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "").Status }
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 500})
	srv.Inject(synthienttest.RouteAccount, 2, synthienttest.Fault{Status: 502})
	srv.Inject(synthienttest.RouteAccount, 0, synthienttest.Fault{Status: 504}) // nothing
	for _, want := range []int{500, 502, 502, 200} {
		assert.Equal(t, want, get(), "status in order")
	}
	srv.Inject(synthienttest.RouteAccount, -1, synthienttest.Fault{Status: 503})
	for range 5 {
		assert.Equal(t, 503, get(), "status of a lasting fault")
	}
	srv.Reset()
	assert.Equal(t, 200, get(), "status after Reset")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteAccount), "arrivals after Reset")
	assert.Equal(t, "reset-mid-body", synthienttest.FaultResetMidBody.String(), "FaultKind.String")

	for _, route := range []string{"/account", "/lookup/ip/8.8.8.8", "", "STORAGE"} {
		assert.Panics(t, func() { srv.Inject(route, 1, synthienttest.Fault{}) }, "Inject(%q)", route)
	}
	assert.Panics(t, func() { srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: 99}) }, "an unknown kind")
	assert.Equal(t, "FaultKind(99)", synthienttest.FaultKind(99).String())
}
