package otel_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/synthient-go/synthient"
	synthotel "github.com/synthient-go/synthient/otel"
	"github.com/synthient-go/synthient/synthienttest"
)

// A lookup that the rate limiter turns away once: the trace shows the call,
// its two requests and the wait between them. In a service, the tracer
// provider is the one that exports the service's spans; the example keeps
// them in memory to print them.
func Example() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "0"})

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			fmt.Println(err)
		}
	}()
	obs, err := synthotel.NewObserver(synthotel.WithTracerProvider(tp), synthotel.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		fmt.Println(err)
		return
	}

	c, err := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL),
		synthient.WithObserver(obs), synthient.WithBackoff(time.Millisecond, 2*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if _, err := c.LookupIP(context.Background(), netip.MustParseAddr("203.0.113.7")); err != nil {
		fmt.Println(err)
		return
	}

	// The spans as they ended: the requests first, then the call.
	for _, s := range spans.Ended() {
		line := s.Name()
		for _, kv := range s.Attributes() {
			if kv.Key == "http.response.status_code" || kv.Key == "synthient.attempts" {
				line += fmt.Sprintf(" %s=%s", kv.Key, kv.Value.String())
			}
		}
		for _, e := range s.Events() {
			line += ", event " + e.Name
		}
		fmt.Println(line)
	}
	// Output:
	// GET /lookup/ip/{ip} http.response.status_code=429
	// GET /lookup/ip/{ip} http.response.status_code=200
	// synthient.LookupIP synthient.attempts=2, event synthient.retry.wait
}
