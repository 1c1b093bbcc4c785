// Command cachecompare measures the two libraries issue 24 allowed for the
// memory cache, as NewMemoryCache uses them: github.com/maypok86/otter/v2
// (bounded by MaximumSize, maintenance on the calling goroutine, expiry
// read from the entry) and github.com/hashicorp/golang-lru/v2 (its plain
// LRU behind a mutex, the same expiry; its expirable package starts a
// goroutine per cache that never stops, which a Cache with no Close cannot
// have). It prints the time of a hit from one goroutine and from 32, and
// the heap per entry of 1,000,000 entries of 246-byte values (a full IP
// answer's), besides the key and the value.
//
//	cd scripts/cachecompare && go run .
//
// A module of its own, so that golang-lru stays out of the SDK's go.mod.
// The figures are in docs/performance.md, "Lookup cache".
package main

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maypok86/otter/v2"
)

type entry struct {
	value   []byte
	expires int64
}

type store interface {
	get(string) ([]byte, bool)
	set(string, []byte, time.Duration)
}

type otterStore struct{ c *otter.Cache[string, entry] }

func newOtter(n int) store {
	return &otterStore{otter.Must(&otter.Options[string, entry]{MaximumSize: n, Executor: func(fn func()) { fn() }})}
}

func (s *otterStore) get(k string) ([]byte, bool) {
	e, ok := s.c.GetIfPresent(k)
	if !ok || time.Now().UnixNano() >= e.expires {
		return nil, false
	}
	return e.value, true
}

func (s *otterStore) set(k string, v []byte, ttl time.Duration) {
	s.c.Set(k, entry{v, time.Now().Add(ttl).UnixNano()})
}

// lruStore is golang-lru's Cache, which takes its own mutex.
type lruStore struct{ c *lru.Cache[string, entry] }

func newLRU(n int) store {
	c, err := lru.New[string, entry](n)
	if err != nil {
		panic(err)
	}
	return &lruStore{c}
}

func (s *lruStore) get(k string) ([]byte, bool) {
	e, ok := s.c.Get(k)
	if !ok || time.Now().UnixNano() >= e.expires {
		return nil, false
	}
	return e.value, true
}

func (s *lruStore) set(k string, v []byte, ttl time.Duration) {
	s.c.Add(k, entry{v, time.Now().Add(ttl).UnixNano()})
}

func key(i int) string {
	return fmt.Sprintf("v1:ip:11.%d.%d.%d", i>>16&255, i>>8&255, i&255)
}

func main() {
	const valueSize = 246
	impls := []struct {
		name string
		mk   func(int) store
	}{{"otter/v2 v2.4.0", newOtter}, {"golang-lru/v2 v2.0.7", newLRU}}

	fmt.Println("| library | hit, 1 goroutine | hit, 32 goroutines | heap per entry at 1,000,000 | of which besides key and value |")
	fmt.Println("|---|---|---|---|---|")
	for _, im := range impls {
		serial, parallel := hitTimes(im.mk, valueSize)
		total, overhead := bytesPerEntry(im.mk, valueSize)
		fmt.Printf("| %s | %.0f ns | %.0f ns | %.0f B | %.0f B |\n", im.name, serial, parallel, total, overhead)
	}
}

// hitTimes returns the ns of a hit among 10,000 entries, from one
// goroutine and from 32 (best of 3).
func hitTimes(mk func(int) store, valueSize int) (serial, parallel float64) {
	const n = 10_000
	s := mk(n)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key(i)
		s.set(keys[i], make([]byte, valueSize), time.Hour)
	}
	best := func(f func(b *testing.B)) float64 {
		m := 0.0
		for range 3 {
			r := testing.Benchmark(f)
			if ns := float64(r.T.Nanoseconds()) / float64(r.N); m == 0 || ns < m {
				m = ns
			}
		}
		return m
	}
	serial = best(func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, ok := s.get(keys[i%n]); !ok {
				panic("miss")
			}
		}
	})
	parallel = best(func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i += 7 {
				s.get(keys[i%n])
			}
		})
	})
	return serial, parallel
}

// bytesPerEntry fills a store of 1,000,000 entries and returns the heap
// it takes per entry, in all and besides the key and the value.
func bytesPerEntry(mk func(int) store, valueSize int) (total, overhead float64) {
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key(i)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := mk(n)
	keyBytes := 0
	for _, k := range keys {
		k := string([]byte(k)) // a key of its own, as the client's
		keyBytes += len(k)
		s.set(k, make([]byte, valueSize), time.Hour)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	total = float64(after.HeapAlloc-before.HeapAlloc) / n
	runtime.KeepAlive(s)
	return total, total - float64(keyBytes)/n - float64(valueSize)
}
