package otel_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/synthient-go/synthient"
	synthotel "github.com/synthient-go/synthient/otel"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// BenchmarkLookupIP compares LookupIP, serially, on the fake API without
// an observer and with this package's, beside otelhttp's transport on the
// same client: every span sampled and handed to an exporter that drops it,
// every measurement aggregated by the SDK's meter, W3C trace context put
// into every request. docs/performance.md has the figures.
//
//   - observer=off: the client's own transport, no observer.
//   - observer=otel: the client's own transport, this package's observer
//     (a span for the call, a client span for its request).
//   - observer=transport: the client with a plain http.Transport given
//     with synthient.WithTransport, no observer: otelhttp's baseline.
//   - observer=otelhttp: that transport wrapped with otelhttp.NewTransport
//     (a client span for the request) on the same providers.
func BenchmarkLookupIP(b *testing.B) {
	ip := netip.MustParseAddr("198.51.100.23")
	srv := synthienttest.NewServer(synthienttest.WithoutRateLimits(), synthienttest.WithCredits(1<<62))
	defer srv.Close()
	tp, mp, obs := benchObserver(b)
	plain := benchTransport()
	defer plain.CloseIdleConnections()
	traced := otelhttp.NewTransport(plain, otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp),
		otelhttp.WithPropagators(propagation.TraceContext{}))
	for _, tc := range []struct {
		name string
		opts []synthient.Option
	}{
		{"observer=off", nil},
		{"observer=otel", []synthient.Option{synthient.WithObserver(obs)}},
		{"observer=transport", []synthient.Option{synthient.WithTransport(plain)}},
		{"observer=otelhttp", []synthient.Option{synthient.WithTransport(traced)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := srv.NewClient(tc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.LookupIP(context.Background(), ip); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchObserver returns the providers of the benchmarks, shut down when
// b ends, and an Observer on them: every span sampled and handed to an
// exporter that drops it, every measurement aggregated by the SDK's meter,
// W3C trace context.
func benchObserver(b *testing.B) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider, *synthotel.Observer) {
	b.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		if err := errors.Join(tp.Shutdown(context.Background()), mp.Shutdown(context.Background())); err != nil {
			b.Error(err)
		}
	})
	obs, err := synthotel.NewObserver(synthotel.WithTracerProvider(tp), synthotel.WithMeterProvider(mp),
		synthotel.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		b.Fatal(err)
	}
	return tp, mp, obs
}

// benchTransport returns a plain transport with the pool of the client's
// own: HTTP/1.1, 64 idle connections per host.
func benchTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 128, 64
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	tr.Protocols = &protocols
	return tr
}

// BenchmarkObserverCall measures the hooks alone, without a client or a
// network: the events of one LookupIP that succeeds at its first attempt,
// as the client sends them, on the providers of BenchmarkLookupIP. It is
// the observer's own cost, steadier than the difference of two
// BenchmarkLookupIP columns.
func BenchmarkObserverCall(b *testing.B) {
	_, _, obs := benchObserver(b)
	start := synthient.RequestStart{Method: http.MethodGet, URL: "http://127.0.0.1:8080/api/v4/lookup/ip/198.51.100.23",
		Route: "/lookup/ip/{ip}", Attempt: 1}
	end := synthient.RequestEnd{Status: http.StatusOK, RequestID: "req-1", ProtocolVersion: "1.1",
		Decision: retry.Decision{Class: retry.Billed, Attempt: 1, MaxAttempts: 4}}
	b.ReportAllocs()
	for b.Loop() {
		ctx := obs.StartCall(context.Background(), synthient.CallStart{Operation: "LookupIP", Class: retry.Billed})
		start.Header = http.Header{}
		obs.EndRequest(obs.StartRequest(ctx, start), end)
		obs.EndCall(ctx, synthient.CallEnd{Attempts: 1, RequestID: "req-1"})
	}
}
