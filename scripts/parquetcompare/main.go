// Command parquetcompare measures the two Parquet libraries issue 16 chose
// between, github.com/parquet-go/parquet-go and
// github.com/apache/arrow-go/v18, on the same 1,000,000 proxies rows: the
// time to write them (snappy and zstd pages, row groups of 122,880 rows,
// dictionary encoding of the columns of few values), the file's size, and
// the time and peak heap to read each file back with each library. It is
// a module of its own, so that the SDK's go.mod never lists arrow-go:
//
//	cd scripts/parquetcompare && go run . -n 1000000
//
// The results are in docs/performance.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pq "github.com/parquet-go/parquet-go"
)

// row is a row of a proxies export.
type row struct {
	IP          string `parquet:"ip"`
	Provider    string `parquet:"provider,dict"`
	Type        string `parquet:"type,dict"`
	Timestamp   int64  `parquet:"timestamp"`
	CountryCode string `parquet:"country_code,dict"`
	ASN         int32  `parquet:"asn"`
}

const groupRows = 122_880

var (
	providers = []string{"BRIGHTDATA", "OXYLABS", "LUNAPROXY", "IPROYAL", "SOAX", "NETNUT", "922S5PROXY", "SMARTPROXY", "WEBSHARE", "PROXYRACK"}
	types     = []string{"RESIDENTIAL_PROXY", "MOBILE_PROXY", "DATACENTER_PROXY", "PUBLIC_PROXY"}
	countries = []string{"US", "DE", "FR", "GB", "NL", "ES", "RU", "CN", "JP", "IN", "AU", "CA", "BR", "SG", "IE", "CH"}
	asns      = []int32{7922, 20115, 7018, 3320, 3215, 2856, 3352, 1136, 12389, 4134, 4713, 9498, 1221, 812, 28573, 6167, 21928, 16509, 14061, 24940}
)

// rows makes n rows, the same each run.
func rows(n int) []row {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]row, n)
	for i := range out {
		a := netip.AddrFrom4([4]byte{byte(1 + r.IntN(222)), byte(r.IntN(256)), byte(r.IntN(256)), byte(1 + r.IntN(254))})
		out[i] = row{a.String(), providers[r.IntN(len(providers))], types[r.IntN(len(types))], 1781049600 + int64(i)*86400/int64(n),
			countries[r.IntN(len(countries))], asns[r.IntN(len(asns))]}
	}
	return out
}

func writeParquetGo(w io.Writer, rs []row, codec string) error {
	c := pq.Compression(&pq.Snappy)
	if codec == "zstd" {
		c = pq.Compression(&pq.Zstd)
	}
	pw := pq.NewGenericWriter[row](w, c, pq.MaxRowsPerRowGroup(groupRows))
	for i := 0; i < len(rs); i += 1024 {
		if _, err := pw.Write(rs[i:min(len(rs), i+1024)]); err != nil {
			return err
		}
	}
	return pw.Close()
}

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "ip", Type: arrow.BinaryTypes.String},
	{Name: "provider", Type: arrow.BinaryTypes.String},
	{Name: "type", Type: arrow.BinaryTypes.String},
	{Name: "timestamp", Type: arrow.PrimitiveTypes.Int64},
	{Name: "country_code", Type: arrow.BinaryTypes.String},
	{Name: "asn", Type: arrow.PrimitiveTypes.Int32},
}, nil)

func writeArrow(w io.Writer, rs []row, codec string) error {
	c := compress.Codecs.Snappy
	if codec == "zstd" {
		c = compress.Codecs.Zstd
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(c), parquet.WithMaxRowGroupLength(groupRows))
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties())
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := 0; i < len(rs); i += 8192 {
		for _, r := range rs[i:min(len(rs), i+8192)] {
			b.Field(0).(*array.StringBuilder).Append(r.IP)
			b.Field(1).(*array.StringBuilder).Append(r.Provider)
			b.Field(2).(*array.StringBuilder).Append(r.Type)
			b.Field(3).(*array.Int64Builder).Append(r.Timestamp)
			b.Field(4).(*array.StringBuilder).Append(r.CountryCode)
			b.Field(5).(*array.Int32Builder).Append(r.ASN)
		}
		rec := b.NewRecordBatch()
		err := fw.WriteBuffered(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return fw.Close()
}

// readParquetGo reads every row as a typed struct.
func readParquetGo(data []byte) (int, error) {
	r := pq.NewGenericReader[row](bytes.NewReader(data))
	defer r.Close()
	buf := make([]row, 1024)
	n := 0
	for {
		k, err := r.Read(buf)
		n += k
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// readArrow reads every record batch and the ip of each row.
func readArrow(data []byte) (int, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	n := 0
	for rr.Next() {
		ips := rr.RecordBatch().Column(0).(*array.String)
		for i := 0; i < ips.Len(); i++ {
			_ = ips.Value(i)
			n++
		}
	}
	return n, rr.Err()
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// peakHeap runs f, sampling the heap in use every millisecond, and
// returns the peak above the heap before it.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak - base
}

func main() {
	n := flag.Int("n", 1_000_000, "rows")
	flag.Parse()
	rs := rows(*n)
	writers := map[string]func(io.Writer, []row, string) error{"parquet-go": writeParquetGo, "arrow-go": writeArrow}
	files := map[string][]byte{}
	for _, codec := range []string{"snappy", "zstd"} {
		for _, lib := range []string{"parquet-go", "arrow-go"} {
			best := time.Duration(1 << 62)
			for range 3 {
				start := time.Now()
				if err := writers[lib](&counter{}, rs, codec); err != nil {
					panic(err)
				}
				best = min(best, time.Since(start))
			}
			var buf bytes.Buffer
			if err := writers[lib](&buf, rs, codec); err != nil {
				panic(err)
			}
			if codec == "snappy" {
				files[lib] = buf.Bytes()
			}
			fmt.Printf("write %-10s %-6s %.2f s (best of 3), %.1f MiB, %.2f M rows/s\n",
				lib, codec, best.Seconds(), float64(buf.Len())/(1<<20), float64(*n)/best.Seconds()/1e6)
		}
	}
	readers := map[string]func([]byte) (int, error){"parquet-go": readParquetGo, "arrow-go": readArrow}
	for _, written := range []string{"parquet-go", "arrow-go"} {
		for _, lib := range []string{"parquet-go", "arrow-go"} {
			var rows int
			var err error
			start := time.Now()
			peak := peakHeap(func() { rows, err = readers[lib](files[written]) })
			d := time.Since(start)
			if err != nil || rows != *n {
				panic(fmt.Sprint(rows, err))
			}
			fmt.Printf("read the %s file (snappy) with %-10s %.2f s, %.2f M rows/s, peak heap +%.1f MiB\n",
				written, lib, d.Seconds(), float64(rows)/d.Seconds()/1e6, float64(peak)/(1<<20))
		}
	}
}
