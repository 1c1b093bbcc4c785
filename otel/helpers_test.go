package otel_test

// The package's test harness: an Observer that records into the
// OpenTelemetry SDK's in-memory span recorder and a manual metric reader,
// a client of the fake API reporting to it, and the look-ups the tests
// make into what was recorded, with the one secret scanner.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/synthient-go/synthient"
	synthotel "github.com/synthient-go/synthient/otel"
	"github.com/synthient-go/synthient/synthienttest"
)

// testNow is the fake's time: a fixed clock makes the presigned URLs it
// signs the same for the client and for presignedQuery.
var testNow = time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)

// harness is a client of the fake API whose observer records into spans
// and reader.
type harness struct {
	srv    *synthienttest.Server
	c      *synthient.Client
	tp     *sdktrace.TracerProvider
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

// newHarness starts the fake with opts on a fixed clock, and a client of
// it with tiny backoffs, W3C trace context and an Observer on an SDK
// tracer and meter; everything is closed when the test ends, after the
// recorded spans and metrics were scanned for secrets.
func newHarness(t *testing.T, opts ...synthienttest.Option) *harness {
	t.Helper()
	return newClientHarness(t, nil, opts...)
}

// newClientHarness is newHarness with the client options clientOpts too.
func newClientHarness(t *testing.T, clientOpts []synthient.Option, opts ...synthienttest.Option) *harness {
	t.Helper()
	h := &harness{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	clock := synthienttest.NewManualClock(testNow)
	h.srv = synthienttest.NewServer(append([]synthienttest.Option{synthienttest.WithClock(clock.Now)}, opts...)...)
	t.Cleanup(h.srv.Close)
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		h.assertNoSecret(t)
		assert.NoError(t, h.tp.Shutdown(context.Background()))
		assert.NoError(t, mp.Shutdown(context.Background()))
	})
	obs, err := synthotel.NewObserver(synthotel.WithTracerProvider(h.tp), synthotel.WithMeterProvider(mp),
		synthotel.WithPropagator(propagation.TraceContext{}))
	require.NoError(t, err)
	h.c, err = h.srv.NewClient(append([]synthient.Option{synthient.WithObserver(obs), synthient.WithBackoff(time.Millisecond, 2*time.Millisecond)}, clientOpts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { h.c.Close() })
	return h
}

// ctx is the context of a call under test: a watchdog of 2 minutes, which
// only a hang outlasts.
func ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Spans returns the ended spans, in the order they ended.
func (h *harness) Spans() []sdktrace.ReadOnlySpan { return h.spans.Ended() }

// only returns the one span named name.
func only(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans named %q", name)
	return found[0]
}

// children returns the spans whose parent is parent, in the order they
// ended.
func children(spans []sdktrace.ReadOnlySpan, parent sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Parent().SpanID() == parent.SpanContext().SpanID() {
			out = append(out, s)
		}
	}
	return out
}

// attrs returns the attributes of a span or an event as a map.
func attrs(kvs []attribute.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// Metrics collects the metrics recorded so far.
func (h *harness) Metrics(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	return rm
}

// sums returns the data points of the counter name, as the value of each
// attribute set rendered by attrKey.
func sums(t *testing.T, rm metricdata.ResourceMetrics, name string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "%s is a sum of int64", name)
			for _, dp := range sum.DataPoints {
				out[attrKey(dp.Attributes)] += dp.Value
			}
		}
	}
	return out
}

// attrKey renders an attribute set as "k=v,k=v", sorted.
func attrKey(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}

// histogram returns the data points of the histogram name.
func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				h, ok := m.Data.(metricdata.Histogram[float64])
				require.True(t, ok, "%s is a histogram of float64", name)
				return h.DataPoints
			}
		}
	}
	return nil
}

// presignedQuery returns the query of the presigned URL the fake answers a
// download of feed's export id with, as the client gets it.
func (h *harness) presignedQuery(t *testing.T, feed, id string) url.Values {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, h.srv.URL+"/feeds/"+feed+"/export/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", h.srv.APIKey)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	return loc.Query()
}

// assertNoSecret checks every recorded span (names, attributes, events,
// status) and metric (names and attribute sets) for the API key and the
// marks of a presigned query: its parameter names, the fake's signing key
// id and any signature it made today.
func (h *harness) assertNoSecret(t *testing.T) {
	t.Helper()
	spans, err := json.Marshal(tracetest.SpanStubsFromReadOnlySpans(h.Spans()))
	require.NoError(t, err)
	metrics, err := json.Marshal(h.Metrics(t))
	require.NoError(t, err)
	secrets := []string{h.srv.APIKey, "X-Amz-", "SYNTHIENTTESTKEY", "Signature="}
	for _, feed := range []string{"proxies", "anonymizers"} {
		secrets = append(secrets, h.presignedQuery(t, feed, "latest").Get("X-Amz-Signature"))
	}
	for _, s := range secrets {
		assert.NotContains(t, string(spans), s, "a span holds a secret")
		assert.NotContains(t, string(metrics), s, "a metric holds a secret")
	}
	// A metric attribute holds no address looked up and no URL: they
	// would leak the data and explode the attribute sets.
	for _, s := range []string{lookupAddr.String(), "url.full", "url.path"} {
		assert.NotContains(t, string(metrics), s, "a metric attribute holds %q", s)
	}
	assert.Contains(t, string(spans)+string(metrics), "synthient", "nothing was scanned")
}
