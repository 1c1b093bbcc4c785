package synthient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// bcTransport hands out every response body wrapped in a closer that
// counts: after each call, every body it handed out must have been closed.
type bcTransport struct {
	rt             http.RoundTripper
	opened, closed atomic.Int64
}

func (t *bcTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		t.opened.Add(1)
		resp.Body = &bcBody{ReadCloser: resp.Body, t: t}
	}
	return resp, err
}

// bcBody counts its first Close.
type bcBody struct {
	io.ReadCloser
	t    *bcTransport
	once sync.Once
}

func (b *bcBody) Close() error {
	b.once.Do(func() { b.t.closed.Add(1) })
	return b.ReadCloser.Close()
}

// bcNow is the fake's clock: 14:20 UTC, so the day has 14 hourly exports.
var bcNow = time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)

var errBCHook = errors.New("hook refuses the response")

// TestBodyCloseEveryPath runs each kind of call end — success, error
// statuses, a hook error, a body that does not decode, downloads that
// succeed and fail, streams read to the end, broken out of and cancelled,
// an export listing broken out of — and checks after each that every
// response body the transport handed out was closed, and that the scenario
// did hand out the bodies it should (so none passes by sending nothing).
func TestBodyCloseEveryPath(t *testing.T) {
	clk := synthienttest.NewManualClock(bcNow)
	srv := synthienttest.NewServer(
		synthienttest.WithClock(clk.Now),
		synthienttest.WithoutRateLimits(),
		synthienttest.WithEventInterval(5*time.Millisecond),
		synthienttest.WithMaxEvents(4),
	)
	t.Cleanup(srv.Close)

	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	tr := &bcTransport{rt: base}
	c, err := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL), fastBackoff, synthient.WithTransport(tr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	hooked, err := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL), fastBackoff, synthient.WithTransport(tr),
		synthient.WithResponseHook(func(*synthient.ResponseInfo) error { return errBCHook }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hooked.Close() })

	ctx := context.Background()
	ip := netip.MustParseAddr("203.0.113.9")
	wantErr := func(err error, check func(error) bool, what string) error {
		if err == nil {
			return errors.New("succeeded, want " + what)
		}
		if !check(err) {
			return errors.New("error " + err.Error() + ", want " + what)
		}
		return nil
	}
	isAPI := func(status int) func(error) bool {
		return func(err error) bool {
			var ae *synthient.APIError
			return errors.As(err, &ae) && ae.Status == status
		}
	}
	isConn := func(err error) bool {
		var ce *synthient.ConnectionError
		return errors.As(err, &ce)
	}
	isDecode := func(err error) bool {
		var de *synthient.DecodeError
		return errors.As(err, &de)
	}

	for _, sc := range []struct {
		name   string
		bodies int64 // bodies the transport must hand out
		run    func() error
	}{
		{"LookupIP", 1, func() error { _, err := c.LookupIP(ctx, ip); return err }},
		{"Account", 1, func() error { _, err := c.Account(ctx); return err }},
		{"LookupIPs", 1, func() error {
			_, err := c.LookupIPs(ctx, []netip.Addr{ip, netip.MustParseAddr("2001:db8::1")})
			return err
		}},
		{"ExportMeta", 1, func() error { _, err := c.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09"); return err }},
		{"ListExports", 1, func() error { _, err := c.ListExports(ctx, synthient.FeedProxies, nil); return err }},
		{"429_retry_after_over_max", 1, func() error {
			srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "120"})
			_, err := c.LookupIP(ctx, ip)
			return wantErr(err, isAPI(429), "a 429 *APIError")
		}},
		{"503_retried_then_exhausted", 3, func() error {
			srv.Inject(synthienttest.RouteAccount, 3, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503})
			_, err := c.Account(ctx)
			return wantErr(err, isAPI(503), "a 503 *APIError")
		}},
		{"404", 1, func() error {
			srv.Inject(synthienttest.RouteExportMeta, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 404})
			_, err := c.ExportMeta(ctx, synthient.FeedProxies, "2026-06-09")
			return wantErr(err, isAPI(404), "a 404 *APIError")
		}},
		{"hook_error", 1, func() error {
			_, err := hooked.Account(ctx)
			return wantErr(err, func(err error) bool { return errors.Is(err, errBCHook) }, "the hook's error")
		}},
		{"hook_error_on_error_status", 1, func() error {
			srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 500})
			_, err := hooked.LookupIP(ctx, ip)
			return wantErr(err, func(err error) bool { return errors.Is(err, errBCHook) }, "the hook's error")
		}},
		{"decode_error", 1, func() error {
			srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 200,
				Body: `{"email": 42`, ContentType: "application/json"})
			_, err := c.Account(ctx)
			return wantErr(err, isDecode, "a *DecodeError")
		}},
		{"truncated_json_body", 1, func() error {
			srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody})
			_, err := c.LookupIP(ctx, ip)
			return wantErr(err, isConn, "a *ConnectionError")
		}},
		{"download_success", 2, func() error {
			n, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/13", io.Discard)
			if err == nil && n == 0 {
				return errors.New("downloaded 0 bytes")
			}
			return err
		}},
		{"download_storage_500", 2, func() error {
			srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 500})
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/13", io.Discard)
			return wantErr(err, isAPI(500), "a 500 *APIError from storage")
		}},
		{"download_storage_reset_mid_body", 2, func() error {
			srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/13", io.Discard)
			return wantErr(err, isConn, "a *ConnectionError")
		}},
		{"download_api_404", 1, func() error {
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2001-01-01", io.Discard)
			return wantErr(err, isAPI(404), "a 404 *APIError")
		}},
		{"download_file_verified", 3, func() error {
			_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-09", filepath.Join(t.TempDir(), "x.parquet"),
				&synthient.DownloadParams{Verify: true})
			return err
		}},
		{"stream_to_its_end", 1, func() error {
			n := 0
			for _, err := range c.StreamProxies(ctx) {
				if err != nil {
					return err
				}
				n++
			}
			if n != 4 {
				return errors.New("stream did not give its 4 events")
			}
			return nil
		}},
		{"stream_break_after_one_event", 1, func() error {
			for _, err := range c.StreamRaw(ctx, synthient.FeedTorrents) {
				if err != nil {
					return err
				}
				break
			}
			return nil
		}},
		{"stream_ctx_cancelled_mid_way", 1, func() error {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			n := 0
			for _, err := range c.StreamJA4T(cctx) {
				n++
				if n == 1 {
					if err != nil {
						return err
					}
					cancel()
				}
			}
			return nil
		}},
		{"stream_read_error", 1, func() error {
			srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
			var last error
			for _, err := range c.StreamAnonymizers(ctx) {
				last = err
			}
			return wantErr(last, isConn, "a *ConnectionError ending the stream")
		}},
		{"stream_open_exhausted", 3, func() error {
			srv.Inject(synthienttest.RouteStream, 3, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 502})
			var last error
			for _, err := range c.StreamProxies(ctx) {
				last = err
			}
			return wantErr(last, isAPI(502), "a 502 *APIError")
		}},
		{"all_exports_break", 1, func() error {
			n := 0
			for _, err := range c.AllExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 2}) {
				if err != nil {
					return err
				}
				n++
				break
			}
			if n != 1 {
				return errors.New("no export listed")
			}
			return nil
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			o0, c0 := tr.opened.Load(), tr.closed.Load()
			if err := sc.run(); err != nil {
				t.Fatalf("scenario: %v", err)
			}
			opened, closed := tr.opened.Load()-o0, tr.closed.Load()-c0
			if opened != sc.bodies {
				t.Errorf("the transport handed out %d bodies, want %d", opened, sc.bodies)
			}
			if closed != opened {
				t.Errorf("%d of the %d bodies handed out were closed when the call returned", closed, opened)
			}
		})
	}
}
