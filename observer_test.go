package synthient_test

// Tests of observer.go: what an Observer is shown of each call, in which
// order and with which contexts.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/nettest"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// event is one call of a recorder's methods: its kind ("StartCall",
// "StartRequest", "EndRequest", "Hold", "EndCall") and what it was given.
// call numbers the call it belongs to, as the context said; 0 when the
// context carried no call of the recorder's.
type event struct {
	kind    string
	call    int64
	start   synthient.CallStart
	req     synthient.RequestStart
	reqEnd  synthient.RequestEnd
	hold    synthient.PacingHold
	callEnd synthient.CallEnd
	// request reports that the context was the request's, from
	// StartRequest (for EndRequest: it must be).
	request bool
}

type callTag struct{}
type requestTag struct{}

// recorder is an Observer that records every event. It tags each call's
// context with a number, and each request's context too, so that the
// events show which context each method was given. Into each API
// request's Header it puts a Traceparent naming the call and the attempt,
// and an X-Api-Key, which must never replace the client's.
type recorder struct {
	calls  atomic.Int64
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(ctx context.Context, e event) {
	e.call, _ = ctx.Value(callTag{}).(int64)
	e.request = ctx.Value(requestTag{}) != nil
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) StartCall(ctx context.Context, s synthient.CallStart) context.Context {
	ctx = context.WithValue(ctx, callTag{}, r.calls.Add(1))
	r.add(ctx, event{kind: "StartCall", start: s})
	return ctx
}

func (r *recorder) StartRequest(ctx context.Context, s synthient.RequestStart) context.Context {
	r.add(ctx, event{kind: "StartRequest", req: s})
	call, _ := ctx.Value(callTag{}).(int64)
	s.Header.Set("Traceparent", fmt.Sprintf("call %d attempt %d", call, s.Attempt))
	s.Header.Set("X-Api-Key", "observer-key")
	return context.WithValue(ctx, requestTag{}, true)
}

func (r *recorder) EndRequest(ctx context.Context, e synthient.RequestEnd) {
	r.add(ctx, event{kind: "EndRequest", reqEnd: e})
}

func (r *recorder) Hold(ctx context.Context, h synthient.PacingHold) {
	r.add(ctx, event{kind: "Hold", hold: h})
}

func (r *recorder) EndCall(ctx context.Context, e synthient.CallEnd) {
	r.add(ctx, event{kind: "EndCall", callEnd: e})
}

// Events returns the events so far.
func (r *recorder) Events() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// kinds returns the kinds of events, in order.
func kinds(events []event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.kind)
	}
	return out
}

// of returns the events of the given kind.
func of(events []event, kind string) []event {
	var out []event
	for _, e := range events {
		if e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// requireOneCall checks that events are those of one call, well formed:
// StartCall first and EndCall last, each StartRequest followed by its
// EndRequest, every event in the call's context and each EndRequest in
// its request's; that EndCall counts the requests and names the last
// request id. It returns the EndCall.
func requireOneCall(t *testing.T, events []event) synthient.CallEnd {
	t.Helper()
	require.NotEmpty(t, events)
	require.Equal(t, "StartCall", events[0].kind, "first event")
	require.Equal(t, "EndCall", events[len(events)-1].kind, "last event")
	open, requests, lastID := false, 0, ""
	for i, e := range events {
		assert.Equal(t, events[0].call, e.call, "event %d (%s) in the call's context", i, e.kind)
		assert.NotZero(t, e.call, "event %d (%s) has the call's context", i, e.kind)
		assert.Equal(t, e.kind == "EndRequest", e.request, "event %d (%s): in a request's context", i, e.kind)
		switch e.kind {
		case "StartCall":
			assert.Zero(t, i, "a second StartCall")
		case "StartRequest":
			assert.False(t, open, "event %d: a request started before the last one ended", i)
			open = true
		case "EndRequest":
			assert.True(t, open, "event %d: a request ended that did not start", i)
			open, requests = false, requests+1
			if e.reqEnd.RequestID != "" {
				lastID = e.reqEnd.RequestID
			}
		case "Hold":
			assert.False(t, open, "event %d: a hold during a request", i)
		}
	}
	end := events[len(events)-1].callEnd
	assert.Equal(t, requests, end.Attempts, "EndCall.Attempts counts the requests")
	assert.Equal(t, lastID, end.RequestID, "EndCall.RequestID is the last answer's")
	return end
}

// observedFake returns the fake API and a client of it reporting to a new
// recorder.
func observedFake(t *testing.T, opts ...synthienttest.Option) (*synthienttest.Server, *synthient.Client, *recorder) {
	t.Helper()
	srv := fakeServer(t, opts...)
	rec := &recorder{}
	return srv, fakeClient(t, srv, synthient.WithObserver(rec)), rec
}

// TestObserverSeesEachOperation: each method of the client is one call,
// named after the method, of its retry class, with a request per attempt
// (two for a download, three with its meta), on the fake API.
func TestObserverSeesEachOperation(t *testing.T) {
	t.Parallel()
	ip := netip.MustParseAddr("203.0.113.7")
	const export = "latest"
	for _, tc := range []struct {
		op     string
		class  retry.Class
		routes []string // the Route of each request, "" for storage
		bytes  bool     // the call is a download: EndCall.Bytes is the file's size
		call   func(ctx context.Context, c *synthient.Client) error
	}{
		{op: "Health", class: retry.Billed, routes: []string{"/health"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.Health(ctx)
			return err
		}},
		{op: "Account", class: retry.Standard, routes: []string{"/account/me"}, call: callAccount},
		{op: "LookupIP", class: retry.Billed, routes: []string{"/lookup/ip/{ip}"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.LookupIP(ctx, ip)
			return err
		}},
		{op: "LookupIPs", class: retry.Billed, routes: []string{"/lookup/ips"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.LookupIPs(ctx, []netip.Addr{ip})
			return err
		}},
		{op: "LookupDomain", class: retry.Billed, routes: []string{"/lookup/domain/{domain}"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.LookupDomain(ctx, "example.org", nil)
			return err
		}},
		{op: "ListExports", class: retry.Standard, routes: []string{"/feeds/{feed}/export"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.ListExports(ctx, synthient.FeedProxies, nil)
			return err
		}},
		{op: "AllExports", class: retry.Standard, routes: []string{"/feeds/{feed}/export", "/feeds/{feed}/export"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, errs, _ := drain(c.AllExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 10}), 0)
			return errors.Join(errs...)
		}},
		{op: "ExportMeta", class: retry.Standard, routes: []string{"/feeds/{feed}/export/{id}/meta"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.ExportMeta(ctx, synthient.FeedProxies, export)
			return err
		}},
		{op: "DownloadExport", class: retry.Standard, routes: []string{"/feeds/{feed}/export/{id}", ""}, bytes: true, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.DownloadExport(ctx, synthient.FeedProxies, export, &bytes.Buffer{})
			return err
		}},
		{op: "DownloadExportTo", class: retry.Standard, routes: []string{"/feeds/{feed}/export/{id}/meta", "/feeds/{feed}/export/{id}", ""}, bytes: true, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.DownloadExportTo(ctx, synthient.FeedProxies, export, &bytes.Buffer{}, nil)
			return err
		}},
		{op: "DownloadExportFile", class: retry.Standard, routes: []string{"/feeds/{feed}/export/{id}/meta", "/feeds/{feed}/export/{id}", ""}, bytes: true, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, export, filepath.Join(t.TempDir(), "export.parquet"), nil)
			return err
		}},
		{op: "StreamProxies", class: retry.Standard, routes: []string{"/feeds/{feed}/stream"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, errs, _ := drain(c.StreamProxies(ctx), 3)
			return errors.Join(errs...)
		}},
		{op: "StreamRaw", class: retry.Standard, routes: []string{"/feeds/{feed}/stream"}, call: func(ctx context.Context, c *synthient.Client) error {
			_, errs, _ := drain(c.StreamRaw(ctx, synthient.FeedJA4T), 1)
			return errors.Join(errs...)
		}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			t.Parallel()
			// At 14:20 a feed has 14 hourly exports and one daily:
			// AllExports takes two pages of 10.
			clock := synthienttest.NewManualClock(time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC))
			_, c, rec := observedFake(t, synthienttest.WithClock(clock.Now), synthienttest.WithExportDays(1))
			require.NoError(t, tc.call(callCtx(t), c))

			events := rec.Events()
			end := requireOneCall(t, events)
			assert.Equal(t, synthient.CallStart{Operation: tc.op, Class: tc.class}, events[0].start, "StartCall")
			var routes []string
			for _, e := range of(events, "StartRequest") {
				routes = append(routes, e.req.Route)
				assert.Equal(t, e.req.Route == "", e.req.Storage, "Storage of the request to %q", e.req.URL)
				assert.Equal(t, 1, e.req.Attempt, "Attempt")
			}
			assert.Equal(t, tc.routes, routes, "the requests' routes")
			require.NoError(t, end.Err, "EndCall.Err")
			assert.Empty(t, end.StopReason, "EndCall.StopReason")
			if tc.bytes {
				assert.Positive(t, end.Bytes, "EndCall.Bytes")
			} else {
				assert.Zero(t, end.Bytes, "EndCall.Bytes")
			}
		})
	}
}

// TestObserverRetryThenSuccess: a billed call answered 429 with a
// Retry-After, then 200, is one call of two requests: the first ends with
// a retry after at least the Retry-After, the second is Attempt 2 and ends
// the call.
func TestObserverRetryThenSuccess(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := lookupMock(t, problem(http.StatusTooManyRequests, "Retry-After", "3", "X-Request-Id", "req-1"),
			answer(http.StatusOK, `{"ip":"203.0.113.7"}`, "Content-Type", "application/json", "X-Request-Id", "req-2"))
		rec := &recorder{}
		c := m.Client(t, synthient.WithObserver(rec))
		require.NoError(t, callLookupIP(callCtx(t), c))

		events := rec.Events()
		require.Equal(t, []string{"StartCall", "StartRequest", "EndRequest", "StartRequest", "EndRequest", "EndCall"}, kinds(events))
		end := requireOneCall(t, events)
		assert.Equal(t, synthient.RequestStart{
			Method: http.MethodGet, URL: mockOrigin + lookupPath, Route: "/lookup/ip/{ip}", Attempt: 1,
			Header: http.Header{"Traceparent": {"call 1 attempt 1"}, "X-Api-Key": {"observer-key"}},
		}, events[1].req, "the first request")
		first := events[2].reqEnd
		assert.Equal(t, http.StatusTooManyRequests, first.Status)
		assert.Equal(t, "req-1", first.RequestID)
		assert.True(t, first.Decision.Retry, "retried")
		assert.True(t, first.Decision.HasRetryAfter, "HasRetryAfter")
		assert.Equal(t, 3*time.Second, first.Decision.RetryAfter)
		assert.GreaterOrEqual(t, first.Decision.Wait, 3*time.Second, "the wait is the Retry-After at least")
		assert.Equal(t, 2, events[3].req.Attempt, "the second request's Attempt")
		second := events[4].reqEnd
		assert.Equal(t, http.StatusOK, second.Status)
		assert.False(t, second.Decision.Retry)
		assert.Empty(t, second.Decision.Reason)
		assert.Equal(t, synthient.CallEnd{Attempts: 2, RequestID: "req-2"}, end)

		// Each attempt carried its own Traceparent, and the client's key.
		for i, r := range m.Requests() {
			assert.Equal(t, "call 1 attempt "+strconv.Itoa(i+1), r.Header.Get("Traceparent"), "request %d", i+1)
			assert.Equal(t, testKey, r.Header.Get("X-Api-Key"), "request %d: the observer replaced the key", i+1)
		}
	})
}

// TestObserverCountsAsTheError: the observer's CallEnd.Attempts and the
// error's Attempts read one count of a call's attempts, over all its legs
// and pages; each leg numbers its own attempts from 1 (RequestStart).
func TestObserverCountsAsTheError(t *testing.T) {
	t.Parallel()
	unavailable := statusFault(http.StatusServiceUnavailable)
	for _, tc := range []struct {
		name     string
		call     func(ctx context.Context, c *synthient.Client, srv *synthienttest.Server) error
		attempts int
		numbers  []int // RequestStart.Attempt of each request
	}{
		{
			name: "AllExports, its second page failing after a retry",
			call: func(ctx context.Context, c *synthient.Client, srv *synthienttest.Server) error {
				var errs []error
				for i, err := range enumerate(c.AllExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 10})) {
					if i == 0 { // the first page is in: fail the second
						srv.Inject(synthienttest.RouteExports, 2, unavailable)
					}
					errs = append(errs, err)
				}
				return errors.Join(errs...)
			},
			attempts: 3, numbers: []int{1, 1, 2},
		},
		{
			name: "DownloadExportTo, its API leg retried and its storage leg failing",
			call: func(ctx context.Context, c *synthient.Client, srv *synthienttest.Server) error {
				srv.Inject(synthienttest.RouteDownload, 1, unavailable)
				srv.Inject(synthienttest.RouteStorage, 1, unavailable)
				_, err := c.DownloadExportTo(ctx, synthient.FeedProxies, "latest", &bytes.Buffer{}, nil)
				return err
			},
			attempts: 4, numbers: []int{1, 1, 2, 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// At 14:20 a feed has 14 hourly exports and one daily:
			// AllExports takes two pages of 10.
			clock := synthienttest.NewManualClock(time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC))
			srv := fakeServer(t, synthienttest.WithClock(clock.Now), synthienttest.WithExportDays(1))
			rec := &recorder{}
			c := fakeClient(t, srv, synthient.WithObserver(rec), synthient.WithMaxRetries(1))
			err := tc.call(callCtx(t), c, srv)
			require.Error(t, err)
			events := rec.Events()
			end := requireOneCall(t, events)
			_ = requireStop(t, err, tc.attempts, end.StopReason)
			assert.Equal(t, tc.attempts, end.Attempts, "CallEnd.Attempts")
			var numbers []int
			for _, e := range of(events, "StartRequest") {
				numbers = append(numbers, e.req.Attempt)
			}
			assert.Equal(t, tc.numbers, numbers, "RequestStart.Attempt of each request")
		})
	}
}

// enumerate numbers the items of seq from 0, its errors passed on.
func enumerate[T any](seq iter.Seq2[T, error]) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		i := 0
		for _, err := range seq {
			if !yield(i, err) {
				return
			}
			i++
		}
	}
}

// TestObserverStops: a call that stops reports the stop on its last
// request and on its end, with the error the caller got.
func TestObserverStops(t *testing.T) {
	t.Parallel()
	hookErr := errors.New("refused by the hook")
	for _, tc := range []struct {
		name     string
		opts     []synthient.Option
		fault    synthienttest.Fault
		attempts int
		reason   retry.StopReason
		lastErr  error // what the last request's decision stopped for, if not reason
	}{
		{name: "billed 503", fault: statusFault(503), attempts: 1, reason: retry.MayHaveBeenProcessed},
		{name: "429 without Retry-After", fault: statusFault(429), attempts: 1, reason: retry.RateLimitedWithoutRetryAfter},
		{name: "retries exhausted", fault: synthienttest.Fault{Status: 429, RetryAfter: "0"}, opts: []synthient.Option{synthient.WithMaxRetries(1)},
			attempts: 2, reason: retry.AttemptsExhausted},
		{name: "hook error", fault: statusFault(404), attempts: 1, reason: retry.HookFailed,
			opts: []synthient.Option{synthient.WithResponseHook(func(*synthient.ResponseInfo) error { return hookErr })}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeServer(t)
			srv.Inject(synthienttest.RouteLookupIP, -1, tc.fault)
			rec := &recorder{}
			c := fakeClient(t, srv, append(tc.opts, synthient.WithObserver(rec))...)
			err := callLookupIP(callCtx(t), c)
			require.Error(t, err)

			events := rec.Events()
			end := requireOneCall(t, events)
			ends := of(events, "EndRequest")
			require.Len(t, ends, tc.attempts, "requests")
			last := ends[len(ends)-1].reqEnd
			assert.Equal(t, "1.1", last.ProtocolVersion, "the answer's HTTP version")
			assert.Equal(t, tc.reason, last.Decision.Reason, "the last request's stop reason")
			assert.False(t, last.Decision.Retry)
			assert.Equal(t, err, end.Err, "EndCall.Err is the caller's error")
			assert.Equal(t, tc.reason, end.StopReason, "EndCall.StopReason")
		})
	}
}

// TestObserverCallsThatSendNothing: a call refused before anything is
// sent is a call all the same, of no request, with the caller's error.
func TestObserverCallsThatSendNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, c *synthient.Client) error
		is   error
	}{
		{"invalid argument", func(ctx context.Context, c *synthient.Client) error {
			_, err := c.LookupIP(ctx, netip.Addr{})
			return err
		}, synthient.ErrInvalidArgument},
		{"invalid stream feed", func(ctx context.Context, c *synthient.Client) error {
			_, errs, _ := drain(c.StreamRaw(ctx, "nope"), 0)
			require.Len(t, errs, 1)
			return errs[0]
		}, synthient.ErrInvalidArgument},
		{"closed client", func(ctx context.Context, c *synthient.Client) error {
			c.Close()
			return callAccount(ctx, c)
		}, synthient.ErrClosed},
		{"context ended", func(ctx context.Context, c *synthient.Client) error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return callAccount(ctx, c)
		}, context.Canceled},
		// A billed lookup that would share a request in flight: the one it
		// would have started is not sent either.
		{"context ended, LookupIP", func(ctx context.Context, c *synthient.Client) error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return callLookupIP(ctx, c)
		}, context.Canceled},
		{"context ended, LookupDomain", func(ctx context.Context, c *synthient.Client) error {
			ctx, cancel := context.WithTimeout(ctx, -time.Second)
			defer cancel()
			_, err := c.LookupDomain(ctx, "example.org", nil)
			return err
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			c := newMockAPI(t, nil).Client(t, synthient.WithObserver(rec))
			err := tc.call(callCtx(t), c)
			require.ErrorIs(t, err, tc.is)
			events := rec.Events()
			assert.Equal(t, []string{"StartCall", "EndCall"}, kinds(events))
			end := requireOneCall(t, events)
			assert.Equal(t, err, end.Err, "EndCall.Err")
		})
	}
}

// observedDownload downloads an export from an API that redirects to loc,
// with a client reporting to a recorder; it returns the API server, the
// events, and what DownloadExport returned.
func observedDownload(t *testing.T, loc string) (api *apiServer, events []event, n int64, err error) {
	t.Helper()
	api = redirectServer(t, http.StatusTemporaryRedirect, loc)
	rec := &recorder{}
	c := newClient(t, api.Base, synthient.WithObserver(rec))
	n, err = c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &bytes.Buffer{})
	return api, rec.Events(), n, err
}

// TestObserverDownloadStorageLeg: the storage request of a download is
// shown without its query and with no header to fill, and nothing the
// observer puts in the API request's header reaches the storage host.
func TestObserverDownloadStorageLeg(t *testing.T) {
	t.Parallel()
	data := exportBytes(64 << 10)
	storage := storageServer(t, data)
	api, events, n, err := observedDownload(t, presigned(storage.URL))
	require.NoError(t, err)
	end := requireOneCall(t, events)
	starts := of(events, "StartRequest")
	require.Len(t, starts, 2)
	storageStart := starts[1].req
	require.NotNil(t, storageStart.Header, "a header to fill, though it is not sent")
	storageStart.Header = nil
	assert.Equal(t, synthient.RequestStart{Method: http.MethodGet, URL: storage.URL + presignObject, Attempt: 1, Storage: true},
		storageStart, "the storage request")
	ends := of(events, "EndRequest")
	assert.Equal(t, http.StatusTemporaryRedirect, ends[0].reqEnd.Status, "the API leg's answer")
	assert.Equal(t, http.StatusOK, ends[1].reqEnd.Status, "the storage leg's answer")
	assert.Equal(t, "1.1", ends[0].reqEnd.ProtocolVersion, "the API leg's HTTP version")
	assert.Equal(t, "1.1", ends[1].reqEnd.ProtocolVersion, "the storage leg's HTTP version")
	assert.Equal(t, retry.Decision{Class: retry.Never, Attempt: 1, MaxAttempts: 1}, ends[1].reqEnd.Decision,
		"the storage leg's decision: a 200 is the call's result, no stop")
	assert.Equal(t, n, end.Bytes, "EndCall.Bytes")

	assert.Equal(t, "call 1 attempt 1", api.Requests()[0].Header.Get("Traceparent"), "the API request's Traceparent")
	assertStorageRequest(t, storage.Requests()[0])
	assert.Empty(t, storage.Requests()[0].Header.Values("Traceparent"), "a Traceparent sent to storage")
	assert.NotContains(t, fmt.Sprint(events), presignSecret, "an event holds the presigned signature")
}

// TestObserverStorageFailure: a storage request that fails stops the call,
// never retried, and the call ends with the bytes it wrote.
func TestObserverStorageFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		kind   string
	}{
		{"error status", http.StatusForbidden, ""},
		{"refused", 0, "dial"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc := "http://" + nettest.DeadAddr(t) + presignObject + "?" + presignQuery
			if tc.status != 0 {
				storage := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tc.status) })
				loc = presigned(storage.URL)
			}
			_, events, _, err := observedDownload(t, loc)
			require.Error(t, err)
			end := requireOneCall(t, events)
			last := of(events, "EndRequest")[1].reqEnd
			assert.Equal(t, tc.status, last.Status, "Status")
			assert.Equal(t, tc.kind, last.ErrorKind, "ErrorKind")
			if tc.status != 0 {
				assert.Equal(t, "1.1", last.ProtocolVersion, "the storage answer's HTTP version")
			} else {
				assert.Empty(t, last.ProtocolVersion, "the HTTP version of no answer")
			}
			assert.Equal(t, retry.NotRetryable, last.Decision.Reason, "the storage request's stop")
			assert.Equal(t, retry.NotRetryable, end.StopReason, "EndCall.StopReason")
			assert.Zero(t, end.Bytes, "EndCall.Bytes")
		})
	}
}

// TestObserverPacingHold: a hold of rate-limit pacing comes before the
// request it held; a hold that would pass the deadline stops the call,
// which sends nothing more.
func TestObserverPacingHold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bk := newRateLimited(1, 1, `{"ip":"203.0.113.7"}`)
		m := lookupMock(t, bk.Respond)
		rec := &recorder{}
		c := m.Client(t, synthient.WithObserver(rec))
		for range 2 {
			require.NoError(t, callLookupIP(callCtx(t), c))
		}
		events := rec.Events()
		second := events[slices.IndexFunc(events, func(e event) bool { return e.call == 2 }):]
		assert.Equal(t, []string{"StartCall", "Hold", "StartRequest", "EndRequest", "EndCall"}, kinds(second), "the second call")
		requireOneCall(t, second)
		hold := second[1].hold
		assert.Equal(t, "lookup", hold.Bucket)
		assert.Equal(t, 1, hold.Attempt)
		assert.Positive(t, hold.Wait)
		assert.Empty(t, hold.Stop)

		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		// Before a 429 confirms the model, a call too late for its turn
		// goes, to probe it; the bucket answers 429.
		require.Error(t, callLookupIP(ctx, c))
		events = rec.Events()
		err := callLookupIP(ctx, c)
		require.ErrorIs(t, err, synthient.ErrRateLimitHold)
		third := rec.Events()[len(events):]
		assert.Equal(t, []string{"StartCall", "Hold", "EndCall"}, kinds(third), "the third call")
		end := requireOneCall(t, third)
		assert.Equal(t, retry.PacingExceedsDeadline, third[1].hold.Stop, "the hold's stop")
		assert.Equal(t, retry.PacingExceedsDeadline, end.StopReason, "EndCall.StopReason")
	})
}

// TestObserverStreamEnds: a loop over a stream is one call from its start
// to its end: broken out of, it ends without an error; ended by a failure,
// with the error the loop got.
func TestObserverStreamEnds(t *testing.T) {
	t.Parallel()
	srv, c, rec := observedFake(t)
	_, errs, _ := drain(c.StreamProxies(callCtx(t)), 2)
	require.Empty(t, errs)
	end := requireOneCall(t, rec.Events())
	require.NoError(t, end.Err, "a loop broken out of")

	srv.Inject(synthienttest.RouteStream, 1, synthienttest.Fault{Kind: synthienttest.FaultResetMidBody})
	before := len(rec.Events())
	_, errs, _ = drain(c.StreamProxies(callCtx(t)), 0)
	require.Len(t, errs, 1)
	end = requireOneCall(t, rec.Events()[before:])
	assert.Equal(t, errs[0], end.Err, "a stream that broke")
	assert.Equal(t, retry.NotRetryable, end.StopReason)
}

// nilObserver returns nil for every context.
type nilObserver struct{ recorder }

func (o *nilObserver) StartCall(ctx context.Context, s synthient.CallStart) context.Context {
	o.recorder.StartCall(ctx, s)
	return nil
}

func (o *nilObserver) StartRequest(ctx context.Context, s synthient.RequestStart) context.Context {
	o.recorder.StartRequest(ctx, s)
	return nil
}

// TestObserverReturningNilContexts: an observer that returns no context
// leaves the call's as it was.
func TestObserverReturningNilContexts(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t)
	obs := &nilObserver{}
	c := fakeClient(t, srv, synthient.WithObserver(obs))
	require.NoError(t, callAccount(callCtx(t), c))
	assert.Equal(t, []string{"StartCall", "StartRequest", "EndRequest", "EndCall"}, kinds(obs.Events()))
}

// backgroundObserver returns contexts derived from none it is given.
type backgroundObserver struct{ recorder }

func (o *backgroundObserver) StartCall(ctx context.Context, s synthient.CallStart) context.Context {
	o.recorder.StartCall(ctx, s)
	return context.WithValue(context.Background(), callTag{}, int64(-1))
}

func (o *backgroundObserver) StartRequest(ctx context.Context, s synthient.RequestStart) context.Context {
	o.recorder.StartRequest(ctx, s)
	return context.WithValue(context.Background(), requestTag{}, true)
}

// TestObserverCannotDropTheDeadline: an observer that returns contexts not
// derived from the ones it was given does not free the call of its
// deadline, and its values are still found.
func TestObserverCannotDropTheDeadline(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t)
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 5 * time.Second})
	obs := &backgroundObserver{}
	c := fakeClient(t, srv, synthient.WithObserver(obs), synthient.WithMaxRetries(0))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.LookupIP(ctx, testAddr(1))
	require.Error(t, err, "the call outlived its deadline")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	events := obs.Events()
	end := of(events, "EndCall")
	require.Len(t, end, 1)
	assert.Equal(t, int64(-1), end[0].call, "EndCall sees the observer's call value")
	assert.True(t, of(events, "EndRequest")[0].request, "EndRequest sees the observer's request value")
}

// TestObserverSeesPanic: a panic through a call (here the caller's loop
// body over a stream) ends the call with an error, not as a success, and
// goes on to the caller.
func TestObserverSeesPanic(t *testing.T) {
	t.Parallel()
	_, c, rec := observedFake(t)
	func() {
		defer func() { assert.Equal(t, "loop body", recover(), "the panic goes on") }()
		for range c.StreamRaw(callCtx(t), synthient.FeedProxies) { //nolint:errcheck // the loop body panics at the first item: what it holds is not this test's
			panic("loop body")
		}
	}()
	end := requireOneCall(t, rec.Events())
	require.Error(t, end.Err, "a call that panicked ended as a success")
	assert.Contains(t, end.Err.Error(), "panic")
}

// TestObserverConcurrentCalls: calls made at once on one client each get
// their own, well-formed series of events.
func TestObserverConcurrentCalls(t *testing.T) {
	t.Parallel()
	_, c, rec := observedFake(t, synthienttest.WithoutRateLimits())
	const calls = 16
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			_, err := c.LookupIP(callCtx(t), netip.AddrFrom4([4]byte{203, 0, 113, byte(i)})) //nolint:gosec // i < calls (16)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	byCall := map[int64][]event{}
	for _, e := range rec.Events() {
		byCall[e.call] = append(byCall[e.call], e)
	}
	require.Len(t, byCall, calls)
	for id, events := range byCall {
		t.Run("call "+strconv.FormatInt(id, 10), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, []string{"StartCall", "StartRequest", "EndRequest", "EndCall"}, kinds(events))
			requireOneCall(t, events)
		})
	}
}

// TestObserverSeesNoSecret: nothing an observer is given holds the API
// key or a part of a presigned query, whatever the call.
func TestObserverSeesNoSecret(t *testing.T) {
	t.Parallel()
	storage := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Error(w, "SignatureDoesNotMatch "+r.URL.RawQuery, http.StatusForbidden)
	})
	_, events, _, err := observedDownload(t, presigned(storage.URL))
	require.Error(t, err)
	text := fmt.Sprintf("%+v", events)
	for _, s := range secrets {
		assert.NotContains(t, text, s, "an event holds a secret")
	}
	assert.Contains(t, text, "DownloadExport", "the events were rendered")
}
