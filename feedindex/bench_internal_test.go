package feedindex

// The lookup benchmark of docs/performance.md: an index of n random IPv4
// addresses (proxies) and 1M ranges (anonymizers), built straight from
// keys; queries are half addresses of the index, half random ones. Run
// with -bench (the default go test runs none of it):
//
//	go test -run '^$' -bench Lookup -benchmem ./feedindex

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// benchIndex returns an index of n addresses and r ranges, and queries.
func benchIndex(b *testing.B, n, r int) (*Index, []netip.Addr) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 36)) //nolint:gosec // a seeded draw, the same each run: nothing to guess
	ix, err := New()
	if err != nil {
		b.Fatal(err)
	}
	d := ix.writerDict(ix.cur.Load())
	for i := range 1000 {
		if _, err := d.id(textTuple{fmt.Sprint("P", i%10), fmt.Sprint("T", i%4), fmt.Sprint("C", i%20), uint32(i)}); err != nil {
			b.Fatal(err)
		}
	}
	var bt batch
	for range n {
		bt.a4 = append(bt.a4, rec4{rng.Uint32(), entry{attr: rng.Uint32N(1000), seen: 1781049600}})
	}
	for range r {
		size := uint32(16) << rng.IntN(5)
		start := rng.Uint32() &^ (size - 1)
		bt.r4 = append(bt.r4, span4{start, start + size - 1, entry{attr: rng.Uint32N(1000), seen: 1781049600 + rng.Uint32N(86400)}})
	}
	s := &snapshot{dict: d.view}
	s.base[slotProxies] = mergeBatch(slotProxies, &table{}, &batch{a4: bt.a4}, 0)
	s.base[slotAnonymizers] = mergeBatch(slotAnonymizers, &table{}, &batch{r4: bt.r4}, 0)
	ix.cur.Store(s)
	q := make([]netip.Addr, 1<<20)
	for i := range q {
		v := rng.Uint32()
		if i%2 == 0 {
			v = bt.a4[rng.IntN(len(bt.a4))].key
		}
		q[i] = netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}) //nolint:gosec // the bytes of v
	}
	return ix, q
}

func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		for _, r := range []int{0, 1_000_000} {
			b.Run(fmt.Sprintf("addrs=%dM/ranges=%dM", n/1_000_000, r/1_000_000), func(b *testing.B) {
				ix, q := benchIndex(b, n, r)
				dst := make([]Hit, 0, len(Feeds))
				b.ReportAllocs()
				b.ResetTimer()
				i := 0
				for b.Loop() {
					dst = ix.Lookup(dst[:0], q[i&(len(q)-1)])
					i++
				}
				st := ix.Stats()
				b.ReportMetric(float64(16*len(ix.cur.Load().base[slotProxies].k4.idx)/4+2*n+8*n)/float64(n), "B/addr")
				_ = st
			})
		}
	}
}

// BenchmarkFind is the bucketed search of an IPv4 key and its entry
// alone, without the rest of a Lookup (docs/performance.md).
func BenchmarkFind(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("addrs=%dM", n/1_000_000), func(b *testing.B) {
			ix, q := benchIndex(b, n, 0)
			t := &ix.cur.Load().base[slotProxies]
			keys := make([]uint32, len(q))
			for i, a := range q {
				keys[i] = key4(a)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t.lookup4(keys[i&(len(keys)-1)], false)
				i++
			}
		})
	}
}
