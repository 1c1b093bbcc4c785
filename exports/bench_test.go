package exports_test

// The reading benchmark of docs/performance.md: a proxies export of about
// 1,000,000 and 4,000,000 rows, read with the typed and the untyped
// sequences, and with parquet-go's own generic reader.

import (
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/synthienttest"
)

// heapPeak records the peak heap in use, sampled every 10,000 rows.
type heapPeak struct{ peak uint64 }

func (h *heapPeak) sample(rows int64) {
	if rows%10_000 != 0 {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapInuse)
}

// bigExport downloads a proxies export of about size bytes to a
// temporary file.
func bigExport(b *testing.B, size int64) string {
	srv := synthienttest.NewServer(synthienttest.WithClock(func() time.Time { return testNow }), synthienttest.WithoutRateLimits(),
		synthienttest.WithExportSize(size))
	defer srv.Close()
	c, err := srv.NewClient()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	path := filepath.Join(b.TempDir(), "proxies.parquet")
	if _, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-09", path, nil); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRead reads every row of a proxies export: impl=typed is
// File.Proxies, impl=untyped File.Rows, impl=generic parquet-go's
// GenericReader[exports.ProxyRow] in batches of 1,024 rows.
func BenchmarkRead(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int64
	}{{"1M", 10 << 20}, {"4M", 40 << 20}} {
		path := bigExport(b, size.bytes)
		impls := []struct {
			name string
			read func(b *testing.B, path string, h *heapPeak) int64
		}{{"typed", readTyped}, {"untyped", readUntyped}, {"generic", readGeneric}}
		for _, impl := range impls {
			b.Run("rows="+size.name+"/impl="+impl.name, func(b *testing.B) {
				runtime.GC()
				h := &heapPeak{}
				var rows int64
				start := time.Now()
				for b.Loop() {
					rows = impl.read(b, path, h)
				}
				b.ReportMetric(float64(rows)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
				b.ReportMetric(float64(h.peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

func readTyped(b *testing.B, path string, h *heapPeak) int64 {
	return readAll(b, path, h, (*exports.File).Proxies)
}

func readUntyped(b *testing.B, path string, h *heapPeak) int64 {
	return readAll(b, path, h, (*exports.File).Rows)
}

// readAll opens path and counts the rows of its sequence seq.
func readAll[T any](b *testing.B, path string, h *heapPeak, seq func(*exports.File) iter.Seq2[T, error]) int64 {
	f, err := exports.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var n int64
	for _, err := range seq(f) {
		if err != nil {
			b.Fatal(err)
		}
		n++
		h.sample(n)
	}
	return n
}

func readGeneric(b *testing.B, path string, h *heapPeak) int64 {
	osf, err := os.Open(path) //nolint:gosec // a fixture of this test
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = osf.Close() }() // read-only: nothing to lose
	r := parquet.NewGenericReader[exports.ProxyRow](osf)
	defer func() { _ = r.Close() }()
	buf := make([]exports.ProxyRow, 1024)
	var n int64
	for {
		k, err := r.Read(buf)
		for range k {
			n++
			h.sample(n)
		}
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
