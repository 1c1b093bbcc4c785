package lookup_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/root"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/synthienttest"
)

// BenchmarkBatch100k looks up 100,000 addresses through lookup ips
// (--file -, the SDK's LookupIPsAll: requests of 1000, 4 in flight,
// NDJSON out)
// against the fake API, and reports the requests sent and the peak heap.
func BenchmarkBatch100k(b *testing.B) {
	const n = 100_000
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, "10.%d.%d.%d\n", i>>16&255, i>>8&255, i&255)
	}
	input := in.String()
	srv := synthienttest.NewServer(synthienttest.WithoutRateLimits(), synthienttest.WithCredits(1<<40))
	defer srv.Close()
	b.ReportAllocs()
	var peak atomic.Uint64
	for b.Loop() {
		srv.Reset()
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() { // sample the heap while the batch runs
			defer close(sampled)
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		var out countWriter
		var errBuf bytes.Buffer
		code := root.Run(context.Background(), []string{"--base-url", srv.URL, "lookup", "ips", "--file", "-", "--output", "json"}, root.Env{System: iostreams.System{
			Stdin:  strings.NewReader(input),
			Stdout: &out,
			Stderr: &errBuf,
			Getenv: func(k string) string { return map[string]string{"SYNTHIENT_API_KEY": srv.APIKey}[k] },
		}})
		close(stop)
		<-sampled
		if code != 0 || out.lines != n {
			b.Fatalf("exit %d, %d result lines, stderr %q", code, out.lines, errBuf.String())
		}
		b.ReportMetric(float64(srv.Arrivals(synthienttest.RouteLookupIPs)), "requests")
	}
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// countWriter counts the lines written to it.
type countWriter struct{ lines int }

func (w *countWriter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
