package synthienttest_test

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

var testIP = netip.MustParseAddr("81.2.69.142")

// lastEntry returns the newest log entry of route.
func lastEntry(t *testing.T, srv *synthienttest.Server, route string) synthienttest.Request {
	t.Helper()
	log := srv.Requests()
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Route == route {
			return log[i]
		}
	}
	t.Fatalf("no request to %s in the log", route)
	return synthienttest.Request{}
}

func asConnectionError(t *testing.T, err error) *synthient.ConnectionError {
	t.Helper()
	var ce *synthient.ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *ConnectionError", err, err)
	}
	return ce
}

func TestFaultStatus(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()

	// A billed lookup is not sent again after a 503, and costs nothing.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503})
	_, err := c.LookupIP(ctx, testIP)
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 503, "status")
	eq(t, apiErr.Detail, "Injected fault.", "detail")
	check(t, apiErr.RequestID != "", "no request ID")
	eq(t, srv.Arrivals(synthienttest.RouteLookupIP), 1, "arrivals")
	eq(t, srv.Credits(srv.APIKey), int64(synthienttest.DefaultCredits), "credits")
	e := lastEntry(t, srv, synthienttest.RouteLookupIP)
	check(t, e.Faulted && e.Status == 503, "log entry %+v", e)

	// A free call is: two 503s, then the real answer.
	srv.Inject(synthienttest.RouteAccount, 2, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503})
	acct, err := c.Account(ctx)
	must(t, err, "Account")
	eq(t, acct.Email, "grace@example.com", "email")
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 3, "arrivals")
	e = lastEntry(t, srv, synthienttest.RouteAccount)
	check(t, !e.Faulted && e.Status == 200, "last log entry %+v", e)

	// A 429 with Retry-After 0 is sent again even when billed.
	srv.Reset()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "0"})
	_, err = c.LookupIP(ctx, testIP)
	must(t, err, "LookupIP after a 429")
	eq(t, srv.Arrivals(synthienttest.RouteLookupIP), 2, "arrivals")

	// A 429 without Retry-After is returned at once, even when free.
	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429})
	_, err = c.Account(ctx)
	apiErr = asAPIError(t, err)
	check(t, apiErr.Status == 429 && apiErr.RetryAfter == nil, "error %+v", apiErr)
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 1, "arrivals")

	// A Retry-After longer than the client waits is returned at once.
	srv.Reset()
	srv.Inject(synthienttest.RouteExports, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "120"})
	_, err = c.ListExports(ctx, synthient.FeedProxies, nil)
	apiErr = asAPIError(t, err)
	check(t, apiErr.RetryAfter != nil && *apiErr.RetryAfter == 2*time.Minute, "RetryAfter %v", apiErr.RetryAfter)
	eq(t, srv.Arrivals(synthienttest.RouteExports), 1, "arrivals")

	// Retries run out: a 500 three times.
	srv.Reset()
	srv.Inject(synthienttest.RouteExportMeta, -1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 500})
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "latest")
	eq(t, asAPIError(t, err).Status, 500, "status")
	eq(t, srv.Arrivals(synthienttest.RouteExportMeta), 3, "arrivals with 2 retries")
	srv.Reset()
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "latest")
	must(t, err, "ExportMeta after Reset")
}

func TestFaultStatusBodies(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv, synthient.WithMaxRetries(0))
	ctx := context.Background()
	hc := rawClient(t)

	srv.Inject(synthienttest.RouteAccount, 2, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 502, Body: "upstream timed out\n"})
	_, err := c.Account(ctx)
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 502, "status")
	eq(t, apiErr.Detail, "upstream timed out", "detail from a text body")
	r := do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "")
	eq(t, r.Header.Get("Content-Type"), "text/plain; charset=utf-8", "Content-Type")
	check(t, r.Header.Get("X-Request-Id") != "", "a fault answer without X-Request-Id")

	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 504, ContentType: "application/json"})
	r = do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "")
	check(t, r.Status == 504 && len(r.Body) == 0, "empty 504: %d %q", r.Status, r.Body)

	srv.Inject(synthienttest.RouteLookupDomain, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus})
	p := problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/domain/example.org", srv.APIKey, ""), 503)
	eq(t, p.Type, "https://docs.synthient.com/errors/service-unavailable", "type")

	// Faults come before authentication.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 418})
	eq(t, do(t, hc, "GET", srv.URL+"/account/me", "", "").Status, 418, "status without a key")

	// Storage errors are S3 XML.
	srv.Reset()
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503, RetryAfter: "1"})
	_, err = newClient(t, srv).DownloadExport(ctx, synthient.FeedProxies, "latest", io.Discard)
	apiErr = asAPIError(t, err)
	eq(t, apiErr.Status, 503, "storage status")
	eq(t, apiErr.Title, "SlowDown", "storage error code")
	eq(t, srv.Arrivals(synthienttest.RouteStorage), 1, "storage arrivals: the storage leg is never retried")
	eq(t, srv.Arrivals(synthienttest.RouteDownload), 1, "API arrivals")
}

func TestFaultCloseAfterRequest(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	// A first lookup leaves a keep-alive connection for the next one.
	_, err := c.LookupIP(ctx, testIP)
	must(t, err, "LookupIP")
	srv.Reset()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = c.LookupIP(ctx, testIP)
	ce := asConnectionError(t, err)
	check(t, !ce.NotSent, "NotSent on a request the server read")
	var base *synthient.Error
	check(t, errors.As(err, &base) && base.Attempts == 1, "attempts %+v", base)
	eq(t, srv.Arrivals(synthienttest.RouteLookupIP), 1, "arrivals: a billed request is never sent again")
	eq(t, lastEntry(t, srv, synthienttest.RouteLookupIP).Status, 0, "logged status of an unanswered request")

	srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = c.LookupIPs(ctx, []netip.Addr{testIP})
	check(t, !asConnectionError(t, err).NotSent, "NotSent")
	eq(t, srv.Arrivals(synthienttest.RouteLookupIPs), 1, "batch arrivals")

	// A free call is sent again.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = c.Account(ctx)
	must(t, err, "Account")
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 2, "account arrivals")

	// So is opening a stream.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	_, err = take(c.StreamProxies(ctx), 1)
	must(t, err, "StreamProxies")
	eq(t, srv.Arrivals(synthienttest.RouteStream), 2, "stream arrivals")
}

func TestFaultSlowHeaders(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv, synthient.WithTimeout(100*time.Millisecond))
	ctx := context.Background()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 10 * time.Second})
	start := time.Now()
	_, err := c.LookupIP(ctx, testIP)
	var te *synthient.TimeoutError
	check(t, errors.As(err, &te) && te.Timeout() && !te.NotSent, "error %v (%T)", err, err)
	check(t, time.Since(start) < 3*time.Second, "took %v", time.Since(start))
	eq(t, srv.Arrivals(synthienttest.RouteLookupIP), 1, "arrivals")

	// A free call times out, then is answered.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 10 * time.Second})
	_, err = c.Account(ctx)
	must(t, err, "Account")
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 2, "arrivals")

	// A short delay is just slow.
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 30 * time.Millisecond})
	start = time.Now()
	_, err = newClient(t, srv).Account(ctx)
	must(t, err, "Account")
	check(t, time.Since(start) >= 30*time.Millisecond, "not delayed: %v", time.Since(start))
}

func TestCloseInterruptsFaults(t *testing.T) {
	srv := synthienttest.NewServer()
	c := newClient(t, srv, synthient.WithMaxRetries(0))
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders}) // a minute
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Delay: time.Minute})
	errs := make(chan error, 2)
	go func() {
		_, err := c.Account(context.Background())
		errs <- err
	}()
	go func() {
		_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "latest", io.Discard)
		errs <- err
	}()
	eventually(t, "both requests arrive", func() bool {
		return srv.Arrivals(synthienttest.RouteAccount) == 1 && srv.Arrivals(synthienttest.RouteStorage) == 1
	})
	start := time.Now()
	srv.Close()
	check(t, time.Since(start) < 2*time.Second, "Close took %v", time.Since(start))
	for range 2 {
		select {
		case err := <-errs:
			check(t, err != nil, "a call succeeded after Close")
		case <-time.After(3 * time.Second):
			t.Fatal("a call did not end after Close")
		}
	}
}

func TestFaultSlowBody(t *testing.T) {
	srv, _ := newServer(t)
	ctx := context.Background()
	c := newClient(t, srv)
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 100, Delay: 5 * time.Millisecond})
	start := time.Now()
	acct, err := c.Account(ctx)
	must(t, err, "Account with a slow body")
	eq(t, acct.Email, "grace@example.com", "email")
	check(t, time.Since(start) >= 10*time.Millisecond, "not slow: %v", time.Since(start))

	// Slower than the client's timeout: a *TimeoutError while reading,
	// never retried.
	slow := newClient(t, srv, synthient.WithTimeout(100*time.Millisecond))
	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 10, Delay: time.Second})
	_, err = slow.Account(ctx)
	var te *synthient.TimeoutError
	check(t, errors.As(err, &te), "error %v (%T)", err, err)
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 1, "arrivals")

	// A slow download still arrives whole.
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 16 << 10, Delay: time.Millisecond})
	path := filepath.Join(t.TempDir(), "f.parquet")
	_, err = c.DownloadExportFile(ctx, synthient.FeedTorrents, "2026-06-09", path, &synthient.DownloadParams{Verify: true})
	must(t, err, "a slow verified download")

	// A slow stream trickles its lines.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 7, Delay: time.Millisecond})
	evs, err := take(c.StreamJA4T(ctx), 2)
	must(t, err, "a slow stream")
	check(t, len(evs) == 2 && evs[1].JA4T != "", "events %+v", evs)
}

func TestFaultResetMidBody(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	meta, err := c.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09")
	must(t, err, "ExportMeta")

	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	n, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-09", io.Discard)
	ce := asConnectionError(t, err)
	check(t, !ce.NotSent, "NotSent after a response")
	check(t, n < meta.Size, "got %d of %d bytes", n, meta.Size)
	eq(t, srv.Arrivals(synthienttest.RouteStorage), 1, "storage arrivals: no retry")
	eq(t, srv.Arrivals(synthienttest.RouteDownload), 1, "API arrivals")
	e := lastEntry(t, srv, synthienttest.RouteStorage)
	check(t, e.Faulted && e.Status == 200, "storage log entry %+v", e)

	// To a file: an error, and no file, not even a part file.
	dir := t.TempDir()
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody, Size: 1000})
	_, err = c.DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-09", filepath.Join(dir, "p.parquet"), &synthient.DownloadParams{Verify: true})
	asConnectionError(t, err)
	entries, _ := os.ReadDir(dir)
	eq(t, len(entries), 0, "files left behind")

	// A JSON body: a read error, never retried, even for a free call.
	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	_, err = c.Account(ctx)
	asConnectionError(t, err)
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 1, "account arrivals")

	// A stream: the first event, then the error.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	evs, err := take(c.StreamProxies(ctx), 10)
	eq(t, len(evs), 1, "events before the reset")
	asConnectionError(t, err)
	eq(t, srv.Arrivals(synthienttest.RouteStream), 1, "stream arrivals")
	eventually(t, "the stream is closed", func() bool { return srv.OpenStreams() == 0 })
}

func TestFaultTruncatedBody(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()

	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody, Size: 20})
	r := do(t, rawClientNoFail(t), "GET", srv.URL+"/account/me", srv.APIKey, "")
	eq(t, len(r.Body), 20, "bytes sent")
	cl, _ := strconv.Atoi(r.Header.Get("Content-Length"))
	check(t, cl > 20, "Content-Length %d", cl)
	eq(t, r.Status, 200, "status")

	srv.Reset()
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody})
	_, err := c.Account(ctx)
	ce := asConnectionError(t, err)
	check(t, errors.Is(ce, io.ErrUnexpectedEOF), "cause %v", ce.Err)
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 1, "arrivals")

	srv.Inject(synthienttest.RouteLookupDomain, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody})
	_, err = c.LookupDomain(ctx, "example.org", nil)
	asConnectionError(t, err)
	eq(t, srv.Arrivals(synthienttest.RouteLookupDomain), 1, "domain arrivals")

	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody, Size: 1000})
	n, err := c.DownloadExport(ctx, synthient.FeedProxies, "latest", io.Discard)
	asConnectionError(t, err)
	eq(t, n, int64(1000), "bytes before the cut")
	eq(t, srv.Arrivals(synthienttest.RouteStorage), 1, "storage arrivals")

	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody, Size: 30})
	evs, err := take(c.StreamProxies(ctx), 10)
	eq(t, len(evs), 0, "events in 30 bytes")
	check(t, err != nil, "a truncated stream ended without an error")
}

// rawClientNoFail is rawClient; reading a truncated body with it returns
// what arrived (do fails on a read error, so it reads through a
// tolerant wrapper).
func rawClientNoFail(t *testing.T) *tolerantClient { return &tolerantClient{rawClient(t)} }

func TestFaultOversizedLine(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultOversizedLine})
	evs, err := take(c.StreamProxies(ctx), 1)
	eq(t, len(evs), 0, "events")
	check(t, errors.Is(err, synthient.ErrLineTooLong), "error %v", err)
	var de *synthient.DecodeError
	check(t, errors.As(err, &de), "error %T is not a *DecodeError", err)
	eq(t, srv.Arrivals(synthienttest.RouteStream), 1, "arrivals")

	// A line of exactly the most the client accepts goes through, and the
	// stream then ends cleanly.
	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultOversizedLine, Size: synthient.MaxLineSize})
	raw, err := take(c.StreamRaw(ctx, synthient.FeedTorrents), 5)
	must(t, err, "a line of MaxLineSize")
	eq(t, len(raw), 1, "lines")
	eq(t, len(raw[0]), synthient.MaxLineSize, "line length")

	r := do(t, rawClient(t), "GET", srv.URL+"/account/me", "", "")
	eq(t, r.Status, 401, "no fault left")
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultOversizedLine, Size: 64})
	r = do(t, rawClient(t), "GET", srv.URL+"/account/me", "", "")
	eq(t, len(r.Body), 65, "body of a 64-byte line")
	eq(t, r.Header.Get("Content-Type"), "application/json", "Content-Type")
}

func TestInjectRules(t *testing.T) {
	srv, _ := newServer(t)
	hc := rawClient(t)
	get := func() int { return do(t, hc, "GET", srv.URL+"/account/me", srv.APIKey, "").Status }
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 500})
	srv.Inject(synthienttest.RouteAccount, 2, synthienttest.Fault{Status: 502})
	srv.Inject(synthienttest.RouteAccount, 0, synthienttest.Fault{Status: 504}) // nothing
	for _, want := range []int{500, 502, 502, 200} {
		eq(t, get(), want, "status in order")
	}
	srv.Inject(synthienttest.RouteAccount, -1, synthienttest.Fault{Status: 503})
	for range 5 {
		eq(t, get(), 503, "status of a lasting fault")
	}
	srv.Reset()
	eq(t, get(), 200, "status after Reset")
	eq(t, srv.Arrivals(synthienttest.RouteAccount), 1, "arrivals after Reset")
	eq(t, synthienttest.FaultResetMidBody.String(), "reset-mid-body", "FaultKind.String")

	for _, route := range []string{"/account", "/lookup/ip/8.8.8.8", "", "STORAGE"} {
		func() {
			defer func() {
				check(t, recover() != nil, "Inject(%q) did not panic", route)
			}()
			srv.Inject(route, 1, synthienttest.Fault{})
		}()
	}
}
