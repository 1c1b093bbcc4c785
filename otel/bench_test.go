package otel_test

import (
	"context"
	"net/netip"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/synthient-go/synthient"
	synthotel "github.com/synthient-go/synthient/otel"
	"github.com/synthient-go/synthient/synthienttest"
)

// BenchmarkLookupIP compares LookupIP, serially, on the fake API without
// an observer and with this package's: every span sampled and handed to
// an exporter that drops it, every measurement aggregated by the SDK's
// meter. docs/performance.md has the figures.
func BenchmarkLookupIP(b *testing.B) {
	ip := netip.MustParseAddr("198.51.100.23")
	srv := synthienttest.NewServer(synthienttest.WithoutRateLimits(), synthienttest.WithCredits(1<<62))
	defer srv.Close()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	defer tp.Shutdown(context.Background())
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	obs, err := synthotel.NewObserver(synthotel.WithTracerProvider(tp), synthotel.WithMeterProvider(mp),
		synthotel.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []synthient.Option
	}{
		{"observer=off", nil},
		{"observer=otel", []synthient.Option{synthient.WithObserver(obs)}},
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
