package synthient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// scErrTree returns err and every error below it, through Unwrap() error
// and Unwrap() []error.
func scErrTree(err error) []error {
	var out []error
	queue := []error{err}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if e == nil {
			continue
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			queue = append(queue, u.Unwrap()...)
		default:
			queue = append(queue, errors.Unwrap(e))
		}
	}
	return out
}

// scRenderings returns every way an error is commonly printed, for err and
// each error in its chain.
func scRenderings(err error) []string {
	var out []string
	for _, e := range scErrTree(err) {
		out = append(out, e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e), fmt.Sprintf("%s", e))
	}
	// The base *Error that errors.As builds for a typed error, too.
	var base *synthient.Error
	if errors.As(err, &base) {
		out = append(out, base.Error(), fmt.Sprintf("%+v", base), fmt.Sprintf("%#v", base))
	}
	return out
}

// scDrain ranges over seq, keeping at most max items, and returns the
// errors it yielded.
func scDrain[T any](seq iter.Seq2[T, error], max int) (n int, errs []error) {
	for _, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		if n >= max {
			break
		}
	}
	return n, errs
}

// TestNoSecretInLogsOrErrors runs every operation end to end against the
// fake, with injected faults of every kind on several routes (storage
// too), a Debug logger and a response hook that learns each download's
// presigned Location. Neither the log nor any rendering (Error, %v, %+v,
// %#v) of any error returned, or of anything in its chain, may hold the
// API key, a presigned query or its signature.
func TestNoSecretInLogsOrErrors(t *testing.T) {
	clk := synthienttest.NewManualClock(time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC))
	srv := synthienttest.NewServer(
		synthienttest.WithClock(clk.Now),
		synthienttest.WithoutRateLimits(),
		synthienttest.WithEventInterval(2*time.Millisecond),
		synthienttest.WithStreamLimit(16),
	)
	t.Cleanup(srv.Close)

	logger, logs := newLogger()
	var (
		mu        sync.Mutex
		locations []string
	)
	hook := func(ri *synthient.ResponseInfo) error {
		if ri.Status == http.StatusTemporaryRedirect {
			mu.Lock()
			locations = append(locations, ri.Header.Get("Location"))
			mu.Unlock()
		}
		return nil
	}
	c, err := synthient.NewClient(srv.APIKey,
		synthient.WithBaseURL(srv.URL), fastBackoff,
		synthient.WithTimeout(500*time.Millisecond),
		synthient.WithLogger(logger),
		synthient.WithResponseHook(hook),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	ctx := context.Background()
	var errs []error
	keep := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	inject := func(route string, f synthienttest.Fault) { srv.Inject(route, 1, f) }
	const (
		fStatus    = synthienttest.FaultStatus
		fClose     = synthienttest.FaultCloseAfterRequest
		fReset     = synthienttest.FaultResetMidBody
		fSlowHead  = synthienttest.FaultSlowHeaders
		fSlowBody  = synthienttest.FaultSlowBody
		fTruncated = synthienttest.FaultTruncatedBody
		fOversized = synthienttest.FaultOversizedLine
	)
	slowHeaders := synthienttest.Fault{Kind: fSlowHead, Delay: time.Second} // beyond the timeout
	slowBody := synthienttest.Fault{Kind: fSlowBody, Size: 16 << 10, Delay: time.Millisecond}
	ip := netip.MustParseAddr("198.51.100.23")
	ips := []netip.Addr{ip, netip.MustParseAddr("2001:db8::7"), netip.MustParseAddr("203.0.113.4")}
	const hourID, dayID = "2026-06-10/13", "2026-06-09"

	// Every operation once without a fault.
	_, err = c.Health(ctx)
	keep("Health", err)
	_, err = c.Account(ctx)
	keep("Account", err)
	_, err = c.LookupIP(ctx, ip)
	keep("LookupIP", err)
	_, err = c.LookupIPs(ctx, ips)
	keep("LookupIPs", err)
	_, err = c.LookupDomain(ctx, "example.com", &synthient.DomainLookupParams{Limit: 5})
	keep("LookupDomain", err)
	_, err = c.ListExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 3})
	keep("ListExports", err)
	_, aerrs := scDrain(c.AllExports(ctx, synthient.FeedAnonymizers, &synthient.ListExportsParams{Limit: 4}), 1000)
	for _, e := range aerrs {
		keep("AllExports", e)
	}
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, "latest")
	keep("ExportMeta", err)
	_, err = c.DownloadExport(ctx, synthient.FeedProxies, hourID, io.Discard)
	keep("DownloadExport", err)
	dir := t.TempDir()
	_, err = c.DownloadExportFile(ctx, synthient.FeedTorrents, dayID, filepath.Join(dir, "a.parquet"), &synthient.DownloadParams{Verify: true})
	keep("DownloadExportFile", err)
	for name, open := range map[string]func() []error{
		"StreamProxies":       func() []error { _, e := scDrain(c.StreamProxies(ctx), 2); return e },
		"StreamAnonymizers":   func() []error { _, e := scDrain(c.StreamAnonymizers(ctx), 2); return e },
		"StreamTorrents":      func() []error { _, e := scDrain(c.StreamTorrents(ctx), 2); return e },
		"StreamJA4T":          func() []error { _, e := scDrain(c.StreamJA4T(ctx), 2); return e },
		"StreamHoneypotHTTP":  func() []error { _, e := scDrain(c.StreamHoneypotHTTP(ctx), 2); return e },
		"StreamHoneypotHTTPS": func() []error { _, e := scDrain(c.StreamHoneypotHTTPS(ctx), 2); return e },
		"StreamHoneypotDNS":   func() []error { _, e := scDrain(c.StreamHoneypotDNS(ctx), 2); return e },
		"StreamHoneypotADB":   func() []error { _, e := scDrain(c.StreamHoneypotADB(ctx), 2); return e },
		"StreamRaw":           func() []error { _, e := scDrain(c.StreamRaw(ctx, synthient.FeedHoneypotHTTP), 2); return e },
	} {
		for _, e := range open() {
			keep(name, e)
		}
	}
	if len(errs) > 0 {
		// Not a failure of this test (a loaded machine can time a call
		// out), but worth seeing; the errors are checked as the others.
		t.Logf("the fault-free run failed: %v", errs)
	}

	// Then faults of every kind, on API routes and on storage.
	inject(synthienttest.RouteHealth, synthienttest.Fault{Kind: fStatus, Status: 503})
	_, err = c.Health(ctx)
	keep("Health 503", err)

	inject(synthienttest.RouteAccount, synthienttest.Fault{Kind: fStatus, Status: 503, RetryAfter: "0"})
	inject(synthienttest.RouteAccount, synthienttest.Fault{Kind: fStatus, Status: 500})
	inject(synthienttest.RouteAccount, synthienttest.Fault{Kind: fStatus, Status: 502})
	_, err = c.Account(ctx)
	keep("Account 503/500/502", err)
	inject(synthienttest.RouteAccount, synthienttest.Fault{Kind: fTruncated})
	_, err = c.Account(ctx)
	keep("Account truncated", err)
	inject(synthienttest.RouteAccount, synthienttest.Fault{Kind: fStatus, Status: 200, Body: `{"email":`, ContentType: "application/json"})
	_, err = c.Account(ctx)
	keep("Account undecodable", err)

	inject(synthienttest.RouteLookupIP, synthienttest.Fault{Kind: fStatus, Status: 429, RetryAfter: "0"})
	_, err = c.LookupIP(ctx, ip)
	keep("LookupIP 429 then success", err)
	inject(synthienttest.RouteLookupIP, synthienttest.Fault{Kind: fStatus, Status: 429})
	_, err = c.LookupIP(ctx, ip)
	keep("LookupIP 429 without Retry-After", err)
	inject(synthienttest.RouteLookupIP, synthienttest.Fault{Kind: fStatus, Status: 429, RetryAfter: "3600"})
	_, err = c.LookupIP(ctx, ip)
	keep("LookupIP 429 Retry-After over max", err)
	inject(synthienttest.RouteLookupIP, synthienttest.Fault{Kind: fReset})
	_, err = c.LookupIP(ctx, ip)
	keep("LookupIP reset", err)
	inject(synthienttest.RouteLookupIP, synthienttest.Fault{Kind: fStatus, Status: 401,
		Body: "invalid key", ContentType: "text/plain"})
	_, err = c.LookupIP(ctx, ip)
	keep("LookupIP 401", err)

	inject(synthienttest.RouteLookupIPs, synthienttest.Fault{Kind: fClose})
	_, err = c.LookupIPs(ctx, ips)
	keep("LookupIPs closed", err)
	inject(synthienttest.RouteLookupIPs, slowBody)
	_, err = c.LookupIPs(ctx, ips)
	keep("LookupIPs slow body", err)

	inject(synthienttest.RouteLookupDomain, slowHeaders)
	_, err = c.LookupDomain(ctx, "example.org", nil)
	keep("LookupDomain slow headers", err)
	inject(synthienttest.RouteLookupDomain, synthienttest.Fault{Kind: fStatus, Status: 422})
	_, err = c.LookupDomain(ctx, "example.org", nil)
	keep("LookupDomain 422", err)

	inject(synthienttest.RouteExports, synthienttest.Fault{Kind: fStatus, Status: 504})
	inject(synthienttest.RouteExports, slowBody)
	_, err = c.ListExports(ctx, synthient.FeedProxies, nil)
	keep("ListExports 504 then slow body", err)
	inject(synthienttest.RouteExports, synthienttest.Fault{Kind: fStatus, Status: 404})
	_, aerrs = scDrain(c.AllExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 2}), 1000)
	for _, e := range aerrs {
		keep("AllExports 404", e)
	}
	inject(synthienttest.RouteExports, synthienttest.Fault{Kind: fOversized, Size: 1 << 20})
	_, err = c.ListExports(ctx, synthient.FeedProxies, nil)
	keep("ListExports oversized", err)

	inject(synthienttest.RouteExportMeta, slowHeaders)
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, dayID)
	keep("ExportMeta slow headers then success", err)
	inject(synthienttest.RouteExportMeta, synthienttest.Fault{Kind: fStatus, Status: 404})
	_, err = c.ExportMeta(ctx, synthient.FeedProxies, dayID)
	keep("ExportMeta 404", err)

	// Downloads: the API leg and the storage leg.
	inject(synthienttest.RouteDownload, synthienttest.Fault{Kind: fClose})
	_, err = c.DownloadExport(ctx, synthient.FeedProxies, hourID, io.Discard)
	keep("DownloadExport API leg closed then success", err)
	inject(synthienttest.RouteDownload, synthienttest.Fault{Kind: fStatus, Status: 503})
	inject(synthienttest.RouteDownload, synthienttest.Fault{Kind: fStatus, Status: 503})
	inject(synthienttest.RouteDownload, synthienttest.Fault{Kind: fStatus, Status: 503})
	_, err = c.DownloadExport(ctx, synthient.FeedProxies, hourID, io.Discard)
	keep("DownloadExport API leg 503s", err)
	for i, f := range []synthienttest.Fault{
		{Kind: fStatus, Status: 403},
		{Kind: fStatus, Status: 500},
		{Kind: fStatus, Status: 503, RetryAfter: "7"},
		{Kind: fStatus, Status: 429, RetryAfter: "1"},
		{Kind: fClose},
		{Kind: fReset},
		{Kind: fReset, Size: 1000},
		{Kind: fTruncated},
		slowHeaders,
		slowBody,
		{Kind: fOversized, Size: 1 << 10},
	} {
		inject(synthienttest.RouteStorage, f)
		_, err = c.DownloadExport(ctx, synthient.FeedProxies, hourID, io.Discard)
		keep(fmt.Sprintf("DownloadExport storage fault %d (%v)", i, f.Kind), err)
	}
	for i, f := range []synthienttest.Fault{
		{Kind: fStatus, Status: 500},
		{Kind: fReset},
		{Kind: fTruncated},
		slowHeaders,
	} {
		inject(synthienttest.RouteStorage, f)
		_, err = c.DownloadExportFile(ctx, synthient.FeedProxies, dayID, filepath.Join(dir, fmt.Sprintf("f%d.parquet", i)), &synthient.DownloadParams{Verify: true})
		keep(fmt.Sprintf("DownloadExportFile storage fault %d (%v)", i, f.Kind), err)
	}

	// Streams.
	for i, f := range []synthienttest.Fault{
		{Kind: fStatus, Status: 429},
		{Kind: fStatus, Status: 503},
		{Kind: fClose},
		{Kind: fReset},
		{Kind: fTruncated},
		slowHeaders,
		{Kind: fSlowBody, Size: 8, Delay: time.Millisecond},
		{Kind: fOversized, Size: synthient.MaxLineSize + 16},
	} {
		inject(synthienttest.RouteStream, f)
		_, e := scDrain(c.StreamRaw(ctx, synthient.FeedProxies), 3)
		for _, err := range e {
			keep(fmt.Sprintf("StreamRaw fault %d (%v)", i, f.Kind), err)
		}
	}
	inject(synthienttest.RouteStream, synthienttest.Fault{Kind: fReset})
	_, e := scDrain(c.StreamHoneypotHTTPS(ctx), 3)
	for _, err := range e {
		keep("StreamHoneypotHTTPS reset", err)
	}

	// The run must have produced the material it checks.
	mu.Lock()
	locs := append([]string(nil), locations...)
	mu.Unlock()
	if len(errs) < 25 {
		t.Fatalf("only %d errors came back; the faults did not bite", len(errs))
	}
	if len(locs) < 15 {
		t.Fatalf("the hook saw %d download redirects, want at least 15", len(locs))
	}
	secrets := map[string]string{srv.APIKey: "the API key"}
	for _, loc := range locs {
		u, err := url.Parse(loc)
		if err != nil || u.RawQuery == "" {
			t.Fatalf("Location %q is not a presigned URL", loc)
		}
		sig := u.Query().Get("X-Amz-Signature")
		if len(sig) < 16 {
			t.Fatalf("Location %q has no X-Amz-Signature", loc)
		}
		secrets[u.RawQuery] = "a presigned query"
		if q, err := url.QueryUnescape(u.RawQuery); err == nil {
			secrets[q] = "a presigned query (unescaped)"
		}
		secrets[sig] = "a presigned signature"
		secrets[u.Query().Get("X-Amz-Credential")] = "a presigned credential"
		secrets[url.QueryEscape(u.Query().Get("X-Amz-Credential"))] = "a presigned credential (escaped)"
	}
	delete(secrets, "")

	log := logs.String()
	if !strings.Contains(log, `"route":"/lookup/ip/{ip}"`) || !strings.Contains(log, `"level":"DEBUG"`) {
		t.Fatalf("the log holds no attempt events at Debug:\n%.2000s", log)
	}
	for s, what := range secrets {
		if i := strings.Index(log, s); i >= 0 {
			t.Errorf("the log holds %s %q: ...%s...", what, s, log[max(0, i-200):min(len(log), i+len(s)+50)])
		}
	}
	for _, err := range errs {
		for _, r := range scRenderings(err) {
			for s, what := range secrets {
				if strings.Contains(r, s) {
					t.Errorf("an error rendering holds %s %q: %s", what, s, r)
				}
			}
		}
	}
	t.Logf("%d errors, %d presigned URLs, %d log bytes checked", len(errs), len(locs), len(log))
}
