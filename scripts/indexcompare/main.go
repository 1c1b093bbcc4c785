// Command indexcompare measures package feedindex side by side with a
// map[netip.Addr] and github.com/gaissmai/bart holding the same
// addresses, and with DuckDB loading the same Parquet file, in one run
// (docs/performance.md). It is a module of its own, so that bart never
// enters the SDK's go.mod. DuckDB runs through node (scripts/fixtures,
// after npm ci there); -duckdb=false leaves it out.
//
//	cd scripts/indexcompare && go run . -n 1000000,10000000 -ranges 1000000
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaissmai/bart"
	"github.com/parquet-go/parquet-go"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/feedindex"
)

// val is what the map and bart keep of an address: a tuple id and a
// last-seen time, as the index does.
type val struct{ attr, seen uint32 }

func main() {
	sizes := flag.String("n", "1000000,10000000", "the numbers of addresses, comma-separated")
	ranges := flag.Int("ranges", 1_000_000, "the number of anonymizer ranges")
	duck := flag.Bool("duckdb", true, "also load the files with DuckDB (node, scripts/fixtures)")
	dir := flag.String("dir", "", "where the Parquet files go (default: a temporary directory)")
	flag.Parse()
	log.SetFlags(0)
	if *dir == "" {
		d, err := os.MkdirTemp("", "indexcompare-")
		check(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	fmt.Printf("%s %s/%s, %d CPUs; load average %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), loadAverage())
	rangeFile := filepath.Join(*dir, "anonymizers.parquet")
	writeRanges(rangeFile, *ranges)
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		check(err)
		run(*dir, n, rangeFile, *ranges, *duck)
	}
	fmt.Printf("load average at the end: %s\n", loadAverage())
}

// run measures n addresses.
func run(dir string, n int, rangeFile string, nranges int, duck bool) {
	fmt.Printf("\n## %d addresses (IPv4), %d ranges\n\n", n, nranges)
	addrs := uniqueAddrs(n, 1)
	file := filepath.Join(dir, fmt.Sprintf("proxies-%d.parquet", n))
	writeProxies(file, addrs)
	queries := makeQueries(addrs)

	// The index: build from Parquet, then the lookups and the memory.
	h0 := heap()
	start, c0 := time.Now(), cpuTime()
	ix, err := feedindex.New()
	check(err)
	xf, err := exports.Open(file)
	check(err)
	added, err := ix.AddFile(synthient.FeedProxies, "", xf)
	check(err)
	build, bcpu := time.Since(start), cpuTime()-c0
	check(xf.Close())
	h1 := heap()
	st := ix.Stats()
	fmt.Printf("| build | feedindex from Parquet | %d rows in %.2f s (%.2f s CPU) | %.2f M rows/s |\n", added.Rows, build.Seconds(), bcpu.Seconds(), float64(added.Rows)/build.Seconds()/1e6)
	if duck {
		secs, rows := duckLoad(file)
		fmt.Printf("| build | DuckDB CREATE TABLE AS read_parquet | %d rows in %.2f s | %.2f M rows/s |\n", rows, secs, float64(rows)/secs/1e6)
	}
	fmt.Printf("| memory | feedindex | %.1f B/entry (tables %.1f B/entry) |\n", float64(h1-h0)/float64(n), float64(st.Bytes)/float64(n))
	lookups("feedindex, addresses only", queries, func(a netip.Addr, dst []feedindex.Hit) int { return len(ix.Lookup(dst[:0], a)) })

	// The same index with the ranges.
	rf, err := exports.Open(rangeFile)
	check(err)
	start = time.Now()
	ra, err := ix.AddFile(synthient.FeedAnonymizers, "", rf)
	check(err)
	fmt.Printf("| build | feedindex, ranges | %d rows in %.2f s | %.2f M rows/s |\n", ra.Rows, time.Since(start).Seconds(), float64(ra.Rows)/time.Since(start).Seconds()/1e6)
	check(rf.Close())
	lookups(fmt.Sprintf("feedindex, with %d ranges", nranges), queries, func(a netip.Addr, dst []feedindex.Hit) int { return len(ix.Lookup(dst[:0], a)) })

	// Saving and opening.
	path := filepath.Join(dir, "index.synidx")
	start = time.Now()
	check(ix.Save(path))
	save := time.Since(start)
	fi, err := os.Stat(path)
	check(err)
	check(ix.Close())
	start = time.Now()
	opened, err := feedindex.Open(path)
	check(err)
	open := time.Since(start)
	fmt.Printf("| file | save, open (mapped, every check) | %.0f MiB; save %.2f s; open %.3f s |\n", float64(fi.Size())/(1<<20), save.Seconds(), open.Seconds())
	lookups("feedindex, opened file", queries, func(a netip.Addr, dst []feedindex.Hit) int { return len(opened.Lookup(dst[:0], a)) })
	check(opened.Close())
	opened = nil
	ix = nil

	// A map and bart.
	h0 = heap()
	start = time.Now()
	m := make(map[netip.Addr]val, len(addrs))
	for i, a := range addrs {
		m[a] = val{uint32(i), uint32(i)}
	}
	mb := time.Since(start)
	h1 = heap()
	fmt.Printf("| memory | map[netip.Addr] | %.1f B/entry (insert %.2f s) |\n", float64(h1-h0)/float64(n), mb.Seconds())
	lookups("map[netip.Addr]", queries, func(a netip.Addr, _ []feedindex.Hit) int {
		if _, ok := m[a]; ok {
			return 1
		}
		return 0
	})
	m = nil
	h0 = heap()
	start = time.Now()
	t := new(bart.Table[val])
	for i, a := range addrs {
		t.Insert(netip.PrefixFrom(a, 32), val{uint32(i), uint32(i)})
	}
	bb := time.Since(start)
	h1 = heap()
	fmt.Printf("| memory | bart.Table | %.1f B/entry (insert %.2f s) |\n", float64(h1-h0)/float64(n), bb.Seconds())
	lookups("bart.Table", queries, func(a netip.Addr, _ []feedindex.Hit) int {
		if _, ok := t.Lookup(a); ok {
			return 1
		}
		return 0
	})
	runtime.KeepAlive(t)
	t = nil

	// A sorted []uint32 of the addresses and their values, bisected: the
	// layout the index refines (see docs/performance.md).
	start = time.Now()
	keys := make([]uint32, len(addrs))
	for i, a := range addrs {
		b := a.As4()
		keys[i] = uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	slices.Sort(keys)
	vals := make([]val, len(keys))
	sb := time.Since(start)
	fmt.Printf("| memory | sorted []uint32 | %d B/entry, by construction (sort %.2f s) |\n", 4+8, sb.Seconds())
	lookups("sorted []uint32, bisected", queries, func(a netip.Addr, _ []feedindex.Hit) int {
		b := a.As4()
		k := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		if i, ok := slices.BinarySearch(keys, k); ok && vals[i].seen == 0 {
			return 1
		}
		return 0
	})
}

// lookups measures fn over the queries, in turn.
func lookups(name string, queries []netip.Addr, fn func(netip.Addr, []feedindex.Hit) int) {
	dst := make([]feedindex.Hit, 0, len(feedindex.Feeds))
	hits := 0
	var cpu time.Duration
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		c0 := cpuTime()
		for b.Loop() {
			hits += fn(queries[i&(len(queries)-1)], dst)
			i++
		}
		cpu = cpuTime() - c0
	})
	ns := float64(r.T.Nanoseconds()) / float64(r.N)
	cns := float64(cpu.Nanoseconds()) / float64(r.N)
	fmt.Printf("| lookup | %s | %.1f ns/op wall, %.1f ns/op CPU, %.1f M lookups/s (wall), %d allocs/op |\n", name, ns, cns, 1e3/ns, r.AllocsPerOp())
}

// uniqueAddrs returns n distinct random public IPv4 addresses.
func uniqueAddrs(n int, seed uint64) []netip.Addr {
	r := rand.New(rand.NewPCG(seed, 36))
	seen := make(map[uint32]bool, n)
	out := make([]netip.Addr, 0, n)
	for len(out) < n {
		v := r.Uint32()
		if v>>24 == 0 || v>>24 == 10 || v>>24 == 127 || v>>24 >= 224 || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}))
	}
	return out
}

// makeQueries returns 1<<20 addresses: every other one from addrs, the
// others random (almost all misses), shuffled.
func makeQueries(addrs []netip.Addr) []netip.Addr {
	r := rand.New(rand.NewPCG(2, 36))
	out := make([]netip.Addr, 1<<20)
	for i := range out {
		if i%2 == 0 {
			out[i] = addrs[r.IntN(len(addrs))]
		} else {
			v := r.Uint32()
			out[i] = netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		}
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

var (
	providers = []string{"BRIGHTDATA", "OXYLABS", "SOAX", "IPROYAL", "NETNUT", "SMARTPROXY", "PROXYRACK", "INFATICA", "GEONODE", "LUNAPROXY"}
	types     = []string{"RESIDENTIAL_PROXY", "MOBILE_PROXY", "DATACENTER_PROXY", "PUBLIC_PROXY"}
	countries = []string{"US", "DE", "FR", "GB", "NL", "JP", "BR", "IN", "RU", "CN", "ID", "VN", "TR", "MX", "PL", "IT", "ES", "CA", "AU", "KR"}
)

// asn returns an ASN of the country of index c: each country has 150,
// so that the rows hold at most 10 x 4 x 3,000 distinct tuples, as a
// feed's addresses share their networks' ASNs.
func asn(r *rand.Rand, c int) int32 { return int32(1000 + 150*c + r.IntN(150)) }

// writeProxies writes a proxies export of addrs, as the fake writes one
// (snappy, dictionary-encoded text columns, row groups of 122,880 rows).
func writeProxies(path string, addrs []netip.Addr) {
	r := rand.New(rand.NewPCG(3, 36))
	writeRows(path, len(addrs), func(i int) exports.ProxyRow {
		c := r.IntN(len(countries))
		return exports.ProxyRow{IP: addrs[i].String(), Provider: providers[r.IntN(len(providers))], Type: types[r.IntN(len(types))],
			Timestamp: 1781049600 + int64(r.IntN(86400)), CountryCode: countries[c], ASN: asn(r, c)}
	})
}

// writeRanges writes an anonymizers export of n IPv4 ranges: aligned
// blocks of 16 to 256 addresses, a tenth of them of 4,096.
func writeRanges(path string, n int) {
	r := rand.New(rand.NewPCG(4, 36))
	ip := func(v uint32) string {
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
	}
	writeRows(path, n, func(i int) exports.AnonymizerRow {
		size := uint32(16) << r.IntN(5)
		if i%10 == 0 {
			size = 1 << 12
		}
		start := r.Uint32() &^ (size - 1)
		c := r.IntN(len(countries))
		return exports.AnonymizerRow{RangeStart: ip(start), RangeEnd: ip(start + size - 1), Provider: providers[r.IntN(len(providers))],
			Type: "COMMERCIAL_VPN", CountryCode: countries[c], ASN: asn(r, c), Timestamp: 1781049600 + int64(r.IntN(86400))}
	})
}

// writeRows writes the n rows row makes to a Parquet file at path.
func writeRows[T any](path string, n int, row func(i int) T) {
	f, err := os.Create(path)
	check(err)
	w := parquet.NewGenericWriter[T](f, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(122_880))
	batch := make([]T, 0, 4096)
	for i := range n {
		if batch = append(batch, row(i)); len(batch) == cap(batch) {
			_, err = w.Write(batch)
			check(err)
			batch = batch[:0]
		}
	}
	_, err = w.Write(batch)
	check(err)
	check(w.Close())
	check(f.Close())
}

// duckLoad loads file into a DuckDB table with node (duckdb-load.mjs of
// scripts/fixtures) and returns the seconds it took and the rows.
func duckLoad(file string) (float64, int64) {
	cmd := exec.Command("node", "duckdb-load.mjs", file)
	cmd.Dir = filepath.Join("..", "fixtures")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	check(err)
	var res struct {
		Seconds float64 `json:"seconds"`
		Rows    int64   `json:"rows"`
	}
	check(json.Unmarshal(out, &res))
	return res.Seconds, res.Rows
}

// cpuTime returns the CPU time the process used: on a loaded machine the
// wall time of a benchmark counts the time other processes ran, its CPU
// time does not (the cache they share still slows it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heap returns the heap in use after a collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
