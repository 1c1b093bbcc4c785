package otel_test

// Tests of observer.go and metrics.go: the spans, events and metrics of
// calls on the fake API. Each test's harness scans everything recorded for
// secrets when the test ends.

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/synthient-go/synthient"
	synthotel "github.com/synthient-go/synthient/otel"
	"github.com/synthient-go/synthient/synthienttest"
)

var lookupAddr = netip.MustParseAddr("203.0.113.7")

// TestBilledLookupRetriedAfter429: a lookup answered 429 with a
// Retry-After, then 200, is one call span below the caller's, with two
// client spans (the second a resend) and one wait event; the metrics
// count one call, one retry, one 429 and two request durations.
func TestBilledLookupRetriedAfter429(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "0"})
	parentCtx, parent := h.tp.Tracer("test").Start(ctx(t), "caller")
	_, err := h.c.LookupIP(parentCtx, lookupAddr)
	parent.End()
	require.NoError(t, err)

	spans := h.Spans()
	call := only(t, spans, "synthient.LookupIP")
	assert.Equal(t, parent.SpanContext().SpanID(), call.Parent().SpanID(), "the call's parent is the caller's span")
	assert.Equal(t, trace.SpanKindInternal, call.SpanKind())
	assert.Equal(t, codes.Unset, call.Status().Code)
	log := h.srv.Requests()
	assert.Equal(t, map[string]any{
		"synthient.operation":   "LookupIP",
		"synthient.retry.class": "billed",
		"synthient.attempts":    int64(2),
		"synthient.request_id":  log[1].RequestID,
	}, attrs(call.Attributes()))

	requests := children(spans, call)
	require.Len(t, requests, 2, "client spans")
	apiURL, err := url.Parse(h.srv.URL)
	require.NoError(t, err)
	for i, r := range requests {
		a := attrs(r.Attributes())
		assert.Equal(t, "GET /lookup/ip/{ip}", r.Name())
		assert.Equal(t, trace.SpanKindClient, r.SpanKind())
		assert.Equal(t, "GET", a["http.request.method"])
		assert.Equal(t, apiURL.Hostname(), a["server.address"])
		assert.Equal(t, apiURL.Port(), strconv.FormatInt(a["server.port"].(int64), 10))
		assert.Equal(t, h.srv.URL+"/lookup/ip/203.0.113.7", a["url.full"])
		assert.Equal(t, "/lookup/ip/{ip}", a["url.template"])
		assert.Equal(t, "1.1", a["network.protocol.version"])
		assert.Equal(t, log[i].RequestID, a["synthient.request_id"])
		// The request carried the trace context of its own span.
		assert.Equal(t, traceparent(r), log[i].Header.Get("Traceparent"), "request %d's traceparent", i+1)
	}
	first, second := attrs(requests[0].Attributes()), attrs(requests[1].Attributes())
	assert.Equal(t, int64(429), first["http.response.status_code"])
	assert.Equal(t, "429", first["error.type"])
	assert.Equal(t, "retry", first["synthient.decision"])
	assert.Equal(t, sdktrace.Status{Code: codes.Error}, requests[0].Status(), "an Error that the status code describes")
	assert.NotContains(t, first, "http.request.resend_count", "the first attempt is no resend")
	assert.Equal(t, int64(200), second["http.response.status_code"])
	assert.Equal(t, int64(1), second["http.request.resend_count"])
	assert.Equal(t, "done", second["synthient.decision"])
	assert.NotContains(t, second, "error.type")

	require.Len(t, call.Events(), 1, "events of the call span")
	wait := call.Events()[0]
	assert.Equal(t, "synthient.retry.wait", wait.Name)
	w := attrs(wait.Attributes)
	assert.Equal(t, "retry_after", w["synthient.wait.cause"])
	assert.Equal(t, int64(1), w["synthient.attempt"])
	assert.Equal(t, 0.0, w["synthient.retry_after"], "the Retry-After") //nolint:testifylint // "0" parsed: exactly zero, no arithmetic to round
	assert.Positive(t, w["synthient.wait.duration"], "the wait's duration")

	rm := h.Metrics(t)
	assert.Equal(t, map[string]int64{"synthient.operation=LookupIP,synthient.outcome=ok": 1}, sums(t, rm, "synthient.client.calls"))
	assert.Equal(t, map[string]int64{"synthient.operation=LookupIP,synthient.retry.reason=rate_limited": 1}, sums(t, rm, "synthient.client.retries"))
	assert.Equal(t, map[string]int64{"synthient.operation=LookupIP": 1}, sums(t, rm, "synthient.client.rate_limited"))
	var counted uint64
	for _, dp := range histogram(t, rm, "http.client.request.duration") {
		counted += dp.Count
		a := attrKey(dp.Attributes)
		assert.Contains(t, a, "http.request.method=GET")
		assert.Contains(t, a, "server.address="+apiURL.Hostname())
		assert.Contains(t, a, "network.protocol.version=1.1")
		assert.NotContains(t, a, "url.full", "the duration's attributes hold the URL")
	}
	assert.Equal(t, uint64(2), counted, "request durations")
}

// traceparent is the W3C traceparent of span s.
func traceparent(s sdktrace.ReadOnlySpan) string {
	sc := s.SpanContext()
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// TestBilledLookupStopsOn503: a billed lookup answered 503 is not sent
// again: the call fails with may_have_been_processed, its one client span
// with the 503.
func TestBilledLookupStopsOn503(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	_, err := h.c.LookupIP(ctx(t), lookupAddr)
	require.Error(t, err)

	spans := h.Spans()
	call := only(t, spans, "synthient.LookupIP")
	a := attrs(call.Attributes())
	assert.Equal(t, "may_have_been_processed", a["synthient.stop_reason"])
	assert.Equal(t, "503", a["error.type"])
	assert.Equal(t, int64(1), a["synthient.attempts"])
	assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: "503 Service Unavailable"}, call.Status())
	assert.Empty(t, call.Events(), "no wait")
	requests := children(spans, call)
	require.Len(t, requests, 1)
	r := attrs(requests[0].Attributes())
	assert.Equal(t, sdktrace.Status{Code: codes.Error}, requests[0].Status(), "an Error that the status code describes")
	assert.Equal(t, int64(503), r["http.response.status_code"])
	assert.Equal(t, "stop", r["synthient.decision"])
	assert.Equal(t, "may_have_been_processed", r["synthient.stop_reason"])

	rm := h.Metrics(t)
	assert.Equal(t, map[string]int64{"error.type=503,synthient.operation=LookupIP,synthient.outcome=error": 1},
		sums(t, rm, "synthient.client.calls"))
	assert.Empty(t, sums(t, rm, "synthient.client.retries"))
}

// TestAccountRetriedAfter502: the standard class sends Account again after
// a 502, after a backoff.
func TestAccountRetriedAfter502(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 502})
	_, err := h.c.Account(ctx(t))
	require.NoError(t, err)

	spans := h.Spans()
	call := only(t, spans, "synthient.Account")
	assert.Equal(t, "standard", attrs(call.Attributes())["synthient.retry.class"])
	requests := children(spans, call)
	require.Len(t, requests, 2)
	assert.Equal(t, int64(502), attrs(requests[0].Attributes())["http.response.status_code"])
	assert.Equal(t, int64(1), attrs(requests[1].Attributes())["http.request.resend_count"])
	require.Len(t, call.Events(), 1)
	assert.Equal(t, "backoff", attrs(call.Events()[0].Attributes)["synthient.wait.cause"])
	assert.Equal(t, map[string]int64{"synthient.operation=Account,synthient.retry.reason=server_error": 1},
		sums(t, h.Metrics(t), "synthient.client.retries"))
}

// TestDownloadLegs: a download is a call span with a client span for the
// API's 307 and one for the storage host, whose URL has no query; the
// trace context went to the API and not to storage; the bytes are
// counted.
func TestDownloadLegs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, synthienttest.WithExportSize(4096))
	var buf bytes.Buffer
	n, err := h.c.DownloadExport(ctx(t), synthient.FeedProxies, "latest", &buf)
	require.NoError(t, err)

	spans := h.Spans()
	call := only(t, spans, "synthient.DownloadExport")
	assert.Equal(t, n, attrs(call.Attributes())["synthient.download.bytes"])
	legs := children(spans, call)
	require.Len(t, legs, 2, "client spans")
	api, storage := attrs(legs[0].Attributes()), attrs(legs[1].Attributes())
	assert.Equal(t, "GET /feeds/{feed}/export/{id}", legs[0].Name())
	assert.Equal(t, int64(307), api["http.response.status_code"])
	assert.Equal(t, codes.Unset, legs[0].Status().Code, "a 307 is no error")
	assert.Equal(t, "GET", legs[1].Name())
	assert.Equal(t, int64(200), storage["http.response.status_code"])
	storageURL, err := url.Parse(h.srv.StorageURL)
	require.NoError(t, err)
	assert.Equal(t, storageURL.Hostname(), storage["server.address"])
	// At 14:20 the latest export is the hourly one of 13:00.
	assert.Equal(t, h.srv.StorageURL+"/synthient-exports/proxies/2026-06-10/13.parquet", storage["url.full"])
	assert.NotContains(t, storage["url.full"], "?", "the storage URL's query")
	assert.NotContains(t, storage, "url.template")

	log := h.srv.Requests()
	require.Len(t, log, 2)
	assert.Equal(t, traceparent(legs[0]), log[0].Header.Get("Traceparent"), "the API request's traceparent")
	assert.Equal(t, synthienttest.RouteStorage, log[1].Route)
	assert.Empty(t, log[1].Header.Values("Traceparent"), "a traceparent sent to storage")
	assert.Empty(t, log[1].Header.Values("Tracestate"), "a tracestate sent to storage")
	assert.Equal(t, map[string]int64{"synthient.operation=DownloadExport": n},
		sums(t, h.Metrics(t), "synthient.client.download.size"))
}

// TestStreamOpenedAndBrokenOutOf: a loop over a stream is a call span
// that ends with the loop, without an error when broken out of; opening it
// is one client span, which ended first.
func TestStreamOpenedAndBrokenOutOf(t *testing.T) {
	t.Parallel()
	h := newHarness(t, synthienttest.WithEventInterval(time.Millisecond))
	events := 0
	for _, err := range h.c.StreamProxies(ctx(t)) {
		require.NoError(t, err)
		if events++; events == 3 {
			break
		}
	}

	spans := h.Spans()
	call := only(t, spans, "synthient.StreamProxies")
	assert.Equal(t, codes.Unset, call.Status().Code)
	assert.NotContains(t, attrs(call.Attributes()), "synthient.stop_reason")
	open := children(spans, call)
	require.Len(t, open, 1)
	assert.Equal(t, "GET /feeds/{feed}/stream", open[0].Name())
	assert.Equal(t, int64(200), attrs(open[0].Attributes())["http.response.status_code"])
	assert.False(t, open[0].EndTime().After(call.EndTime()), "the client span ends before the call's")
	assert.Equal(t, map[string]int64{"synthient.operation=StreamProxies,synthient.outcome=ok": 1},
		sums(t, h.Metrics(t), "synthient.client.calls"))
}

// TestPacingHoldStopsTheCall: a call that rate-limit pacing would hold
// past its deadline stops at once: the hold is an event of its span and a
// count, and nothing is sent.
func TestPacingHoldStopsTheCall(t *testing.T) {
	t.Parallel()
	// A token every 1000 s, a turn held up to 2 hours; a deadline a
	// minute away, which only a hang reaches.
	h := newClientHarness(t, []synthient.Option{synthient.WithMaxRetryAfter(2 * time.Hour)},
		synthienttest.WithRateLimit(synthienttest.BucketAccount, 0.001, 1))
	_, err := h.c.Account(ctx(t))
	require.NoError(t, err, "the call that spends the bucket")
	short, cancel := context.WithTimeout(ctx(t), time.Minute)
	defer cancel()
	// Before a 429 confirms the model, a call whose turn would come after
	// its deadline goes, to probe it; the bucket answers 429.
	_, err = h.c.Account(short)
	require.Error(t, err, "the probe")
	_, err = h.c.Account(short)
	require.ErrorIs(t, err, synthient.ErrRateLimitHold)

	spans := h.Spans()
	require.Len(t, spans, 5, "three call spans and two client spans")
	held := spans[4]
	assert.Equal(t, "synthient.Account", held.Name())
	assert.Empty(t, children(spans, held), "a request of the held call")
	require.Len(t, held.Events(), 1)
	hold := held.Events()[0]
	assert.Equal(t, "synthient.pacing.hold", hold.Name)
	assert.Equal(t, "account", attrs(hold.Attributes)["synthient.pacing.bucket"])
	assert.Equal(t, "pacing_exceeds_deadline", attrs(hold.Attributes)["synthient.stop_reason"])
	assert.Equal(t, "rate_limit_hold", attrs(held.Attributes())["error.type"])
	assert.Equal(t, map[string]int64{"synthient.operation=Account,synthient.pacing.bucket=account,synthient.stop_reason=pacing_exceeds_deadline": 1},
		sums(t, h.Metrics(t), "synthient.client.pacing.holds"))
}

// TestNewObserverOptions: a nil provider or propagator is an error; the
// defaults are the global ones.
func TestNewObserverOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opt  synthotel.Option
		ok   bool
	}{
		{"defaults", nil, true},
		{"nil tracer provider", synthotel.WithTracerProvider(nil), false},
		{"nil meter provider", synthotel.WithMeterProvider(nil), false},
		{"nil propagator", synthotel.WithPropagator(nil), false},
		{"a propagator", synthotel.WithPropagator(propagation.Baggage{}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obs, err := synthotel.NewObserver(tc.opt)
			if tc.ok {
				require.NoError(t, err)
				assert.NotNil(t, obs)
				return
			}
			require.Error(t, err)
			assert.Nil(t, obs)
		})
	}
}

// TestCallErrorTypes: the error.type of a call's span names its error.
func TestCallErrorTypes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault *synthienttest.Fault
		call  func(h *harness) error
		want  string
	}{
		{"invalid argument", nil, func(h *harness) error {
			_, err := h.c.LookupIP(ctx(t), netip.Addr{})
			return err
		}, "invalid_argument"},
		{"connection", &synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest}, func(h *harness) error {
			_, err := h.c.LookupIP(ctx(t), lookupAddr)
			return err
		}, "connection"},
		{"decode", &synthienttest.Fault{Status: 200, Body: "{", ContentType: "application/json"}, func(h *harness) error {
			_, err := h.c.LookupIP(ctx(t), lookupAddr)
			return err
		}, "decode"},
		{"closed", nil, func(h *harness) error {
			h.c.Close()
			_, err := h.c.LookupIP(ctx(t), lookupAddr)
			return err
		}, "closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.fault != nil {
				h.srv.Inject(synthienttest.RouteLookupIP, 1, *tc.fault)
			}
			err := tc.call(h)
			require.Error(t, err)
			call := only(t, h.Spans(), "synthient.LookupIP")
			assert.Equal(t, tc.want, attrs(call.Attributes())["error.type"])
			assert.Equal(t, sdktrace.Status{Code: codes.Error, Description: err.Error()}, call.Status())
		})
	}
}

// TestClientSpanStatus: a client span's status is Error for an answer
// from 400 on, without the description the status code implies, and for a
// request that got no answer, described by the kind of failure; it is
// unset for a 2xx or 3xx. network.protocol.version is the answer's.
func TestClientSpanStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		fault    *synthienttest.Fault
		status   sdktrace.Status
		protocol any // network.protocol.version; nil for none
	}{
		{"200", nil, sdktrace.Status{}, "1.1"},
		{"404", &synthienttest.Fault{Status: 404}, sdktrace.Status{Code: codes.Error}, "1.1"},
		{"503", &synthienttest.Fault{Status: 503}, sdktrace.Status{Code: codes.Error}, "1.1"},
		{"no answer", &synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest},
			sdktrace.Status{Code: codes.Error, Description: "connection"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.fault != nil {
				h.srv.Inject(synthienttest.RouteLookupIP, 1, *tc.fault)
			}
			_, _ = h.c.LookupIP(ctx(t), lookupAddr)
			spans := h.Spans()
			requests := children(spans, only(t, spans, "synthient.LookupIP"))
			require.Len(t, requests, 1)
			assert.Equal(t, tc.status, requests[0].Status())
			assert.Equal(t, tc.protocol, attrs(requests[0].Attributes())["network.protocol.version"])
		})
	}
}

// TestInstrumentationScope: spans and metrics carry the module's scope:
// its name, its version (the SDK's, with which it is released) and the
// schema URL of the semantic conventions it follows.
func TestInstrumentationScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.c.LookupIP(ctx(t), lookupAddr)
	require.NoError(t, err)
	want := instrumentation.Scope{Name: synthotel.ScopeName, Version: synthotel.Version, SchemaURL: semconv.SchemaURL}
	spans := h.Spans()
	require.NotEmpty(t, spans)
	for _, s := range spans {
		assert.Equal(t, want, s.InstrumentationScope(), "the scope of span %q", s.Name())
	}
	rm := h.Metrics(t)
	require.NotEmpty(t, rm.ScopeMetrics)
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, want, sm.Scope, "the scope of the metrics")
	}
	assert.Equal(t, synthient.Version, synthotel.Version, "the module's version is the SDK's")
	assert.Equal(t, "https://opentelemetry.io/schemas/1.43.0", synthotel.SchemaURL)
}

// TestBodyFailureOnTheDurationPoint: a 200 whose body then fails is on
// the call's span and on its request's http.client.request.duration point,
// as error.type, though its client span (which ended at the headers) says
// 200 and no error.
func TestBodyFailureOnTheDurationPoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault *synthienttest.Fault
		want  string // error.type; "" for none
	}{
		{"a body that decodes", nil, ""},
		{"a body that does not decode", &synthienttest.Fault{Status: 200, Body: "{", ContentType: "application/json"}, "decode"},
		{"a body cut short", &synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody}, "connection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.fault != nil {
				h.srv.Inject(synthienttest.RouteLookupIP, 1, *tc.fault)
			}
			_, err := h.c.LookupIP(ctx(t), lookupAddr)
			assert.Equal(t, tc.want == "", err == nil, "the call's error: %v", err)

			spans := h.Spans()
			call := only(t, spans, "synthient.LookupIP")
			assert.Equal(t, nilIfEmpty(tc.want), attrs(call.Attributes())["error.type"], "the call's error.type")
			requests := children(spans, call)
			require.Len(t, requests, 1)
			r := attrs(requests[0].Attributes())
			assert.Equal(t, int64(200), r["http.response.status_code"])
			assert.NotContains(t, r, "error.type", "the client span, ended at the headers")

			points := histogram(t, h.Metrics(t), "http.client.request.duration")
			require.Len(t, points, 1, "duration points")
			assert.Equal(t, uint64(1), points[0].Count)
			errType, ok := points[0].Attributes.Value(semconv.ErrorTypeKey)
			assert.Equal(t, tc.want, errType.AsString(), "the point's error.type")
			assert.Equal(t, tc.want != "", ok)
			status, _ := points[0].Attributes.Value(semconv.HTTPResponseStatusCodeKey)
			assert.Equal(t, int64(200), status.AsInt64(), "the point's status code")
		})
	}
}

// nilIfEmpty is nil for "", else s: an attribute absent or present.
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// failingCache is a lookup cache whose store is down.
type failingCache struct{}

func (failingCache) Get(context.Context, string) ([]byte, error) {
	return nil, errors.New("store down")
}
func (failingCache) Set(context.Context, string, []byte, time.Duration) error {
	return errors.New("store down")
}

// TestCacheHitsAndSharedCalls: a lookup answered from the cache, and calls
// that shared a request, are counted, with the credits they saved, and
// marked on their spans; a failing cache is counted too.
func TestCacheHitsAndSharedCalls(t *testing.T) {
	t.Parallel()
	h := newClientHarness(t, []synthient.Option{synthient.WithCache(synthient.NewMemoryCache(10, time.Hour))})
	for range 2 {
		_, err := h.c.LookupIP(ctx(t), lookupAddr)
		require.NoError(t, err)
	}
	spans := h.Spans()
	require.Len(t, spans, 3, "two calls and one request")
	a := attrs(spans[2].Attributes())
	assert.Equal(t, "synthient.LookupIP", spans[2].Name())
	assert.Equal(t, int64(1), a["synthient.cache.hits"])
	assert.Equal(t, int64(1), a["synthient.credits_saved"])
	assert.Equal(t, int64(0), a["synthient.attempts"])
	assert.NotContains(t, attrs(spans[1].Attributes()), "synthient.cache.hits", "the first call's span")

	// Calls for another address at once, its answer slow: those that
	// shared a request are counted, and saved a credit each.
	other := netip.MustParseAddr("198.51.100.9")
	h.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: 200 * time.Millisecond})
	const calls = 8
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			_, err := h.c.LookupIP(ctx(t), other)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	sent := h.srv.Arrivals(synthienttest.RouteLookupIP) - 1
	rm := h.Metrics(t)
	coalesced := sums(t, rm, "synthient.client.coalesced")["synthient.operation=LookupIP"]
	hits := sums(t, rm, "synthient.client.cache.hits")["synthient.operation=LookupIP"]
	assert.Equal(t, int64(calls-sent), coalesced+hits-1, "each call sent a request, shared one, or hit the cache")
	assert.Equal(t, coalesced+hits, sums(t, rm, "synthient.client.credits_saved")["synthient.operation=LookupIP"])
	assert.Empty(t, sums(t, rm, "synthient.client.cache.errors"))
}

func TestCacheErrorsCounted(t *testing.T) {
	t.Parallel()
	h := newClientHarness(t, []synthient.Option{synthient.WithCache(failingCache{})})
	_, err := h.c.LookupIP(ctx(t), lookupAddr)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"synthient.operation=LookupIP": 1}, sums(t, h.Metrics(t), "synthient.client.cache.errors"))
}

// TestCreditsCounted: what calls draw on a credit budget is counted by
// operation, and marked on their spans; a refusal's error.type is
// credit_budget.
func TestCreditsCounted(t *testing.T) {
	t.Parallel()
	h := newClientHarness(t, []synthient.Option{synthient.WithCreditBudget(synthient.NewCreditBudget(2, 0))})
	_, err := h.c.LookupIP(ctx(t), lookupAddr)
	require.NoError(t, err)
	h.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "0"})
	_, err = h.c.LookupIP(ctx(t), netip.MustParseAddr("198.51.100.9"))
	require.NoError(t, err, "a 429 waited out: its credit given back, then reserved again")
	_, err = h.c.LookupIP(ctx(t), netip.MustParseAddr("198.51.100.10"))
	require.ErrorIs(t, err, synthient.ErrCreditBudget)

	rm := h.Metrics(t)
	op := "synthient.operation=LookupIP"
	for name, want := range map[string]int64{"reserved": 3, "spent": 2, "refunded": 1, "refused": 1} {
		assert.Equal(t, map[string]int64{op: want}, sums(t, rm, "synthient.client.credits."+name), name)
	}
	assert.Equal(t, int64(1), sums(t, rm, "synthient.client.calls")["error.type=credit_budget,"+op+",synthient.outcome=error"])
	spans := h.Spans()
	last := attrs(spans[len(spans)-1].Attributes())
	assert.Equal(t, int64(1), last["synthient.credits.refused"])
	assert.NotContains(t, last, "synthient.credits.reserved")
}
