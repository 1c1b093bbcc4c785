// Command zipf measures what the lookup cache and the sharing of
// identical requests in flight save: a stream of LookupIP calls from many
// goroutines on one client, drawn from a set of addresses with a Zipf law
// (a few addresses asked very often, as a service's login IPs are),
// against the fake API, without a cache and with memory caches of two
// sizes; then a bulk lookup (LookupIPsAll) of the same draws, without and
// with a cache, twice. It prints, per run, the lookups, the requests the
// fake received, the credits it charged, the answers taken from the cache
// and the calls that shared a request.
//
//	go run ./scripts/zipf [-lookups 1000000] [-addresses 10000] [-s 1.1] [-goroutines 32]
//
// Every run draws the same sequence (a fixed seed). The figures are in
// docs/performance.md, "Lookup cache"; scripts/bench.sh runs this command.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// counter is an Observer that adds up what the calls' ends say.
type counter struct {
	hits, coalesced, saved, calls atomic.Int64
}

func (c *counter) StartCall(ctx context.Context, _ synthient.CallStart) context.Context { return ctx }
func (c *counter) StartRequest(ctx context.Context, _ synthient.RequestStart) context.Context {
	return ctx
}
func (c *counter) EndRequest(context.Context, synthient.RequestEnd) {}
func (c *counter) Hold(context.Context, synthient.PacingHold)       {}
func (c *counter) EndCall(_ context.Context, e synthient.CallEnd) {
	c.calls.Add(1)
	c.hits.Add(int64(e.CacheHits))
	c.saved.Add(int64(e.CreditsSaved))
	if e.Coalesced {
		c.coalesced.Add(1)
	}
}

// run is one measured run.
type run struct {
	name                       string
	lookups, requests, credits int64
	hits, coalesced, saved     int64
	elapsed                    time.Duration
}

func main() {
	lookups := flag.Int("lookups", 1_000_000, "lookups in all")
	addresses := flag.Int("addresses", 10_000, "distinct addresses drawn from")
	s := flag.Float64("s", 1.1, "the Zipf law's exponent, > 1")
	goroutines := flag.Int("goroutines", 32, "goroutines calling LookupIP on one client")
	flag.Parse()

	draws := drawAddrs(*lookups, *addresses, *s)
	distinct := map[netip.Addr]bool{}
	for _, ip := range draws {
		distinct[ip] = true
	}
	fmt.Printf("# %d lookups of %d addresses (%d drawn at least once), Zipf s=%g; %d goroutines\n",
		len(draws), *addresses, len(distinct), *s, *goroutines)
	fmt.Printf("# the most asked address: %d lookups\n", mostAsked(draws))

	var runs []run
	for _, tc := range []struct {
		name  string
		cache func() synthient.Cache
	}{
		{"LookupIP, no cache (sharing only)", func() synthient.Cache { return nil }},
		{fmt.Sprintf("LookupIP, NewMemoryCache(%d, 1h)", *addresses), func() synthient.Cache { return synthient.NewMemoryCache(*addresses, time.Hour) }},
		{fmt.Sprintf("LookupIP, NewMemoryCache(%d, 1h)", *addresses/10), func() synthient.Cache { return synthient.NewMemoryCache(*addresses/10, time.Hour) }},
	} {
		runs = append(runs, single(tc.name, draws, *goroutines, tc.cache()))
	}
	runs = append(runs, bulk("LookupIPsAll, no cache", draws, nil, 1)...)
	runs = append(runs, bulk(fmt.Sprintf("LookupIPsAll, NewMemoryCache(%d, 1h)", *addresses), draws, synthient.NewMemoryCache(*addresses, time.Hour), 2)...)

	fmt.Println("| run | lookups | requests | credits | cache hits | shared | credits saved | time |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d | %.1f s |\n",
			r.name, r.lookups, r.requests, r.credits, r.hits, r.coalesced, r.saved, r.elapsed.Seconds())
	}
}

// drawAddrs returns n draws of addresses 11.0.0.0 + i, i following a Zipf
// law of exponent s over [0, m).
func drawAddrs(n, m int, s float64) []netip.Addr {
	z := rand.NewZipf(rand.New(rand.NewPCG(24, 2026)), s, 1, uint64(m-1)) //nolint:gosec // a seeded draw, the same each run: nothing to guess
	out := make([]netip.Addr, n)
	for i := range out {
		k := z.Uint64()
		out[i] = netip.AddrFrom4([4]byte{11, byte(k >> 16), byte(k >> 8), byte(k)}) //nolint:gosec // k's low three bytes, cut on purpose
	}
	return out
}

func mostAsked(draws []netip.Addr) int {
	n := map[netip.Addr]int{}
	for _, ip := range draws {
		n[ip]++
	}
	counts := make([]int, 0, len(n))
	for _, c := range n {
		counts = append(counts, c)
	}
	return slices.Max(counts)
}

// fake starts the fake API without rate limits, with credits for every
// lookup.
func fake() *synthienttest.Server {
	return synthienttest.NewServer(synthienttest.WithoutRateLimits(), synthienttest.WithCredits(1<<40))
}

func newClient(srv *synthienttest.Server, cache synthient.Cache, obs synthient.Observer) *synthient.Client {
	opts := []synthient.Option{synthient.WithObserver(obs)}
	if cache != nil {
		opts = append(opts, synthient.WithCache(cache))
	}
	c, err := srv.NewClient(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return c
}

// single looks up draws with LookupIP from goroutines, each call with a
// deadline, on one client.
func single(name string, draws []netip.Addr, goroutines int, cache synthient.Cache) run {
	srv := fake()
	defer srv.Close()
	var obs counter
	c := newClient(srv, cache, &obs)
	defer c.Close()
	var next atomic.Int64
	var failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(draws)) {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if _, err := c.LookupIP(ctx, draws[i]); err != nil {
					failed.Add(1)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d lookups failed\n", name, failed.Load())
		os.Exit(1)
	}
	return result(name, srv, int64(len(draws)), &obs, time.Since(start), synthienttest.RouteLookupIP)
}

// bulk looks up draws with LookupIPsAll, times times on one client.
func bulk(name string, draws []netip.Addr, cache synthient.Cache, times int) []run {
	srv := fake()
	defer srv.Close()
	var obs counter
	c := newClient(srv, cache, &obs)
	defer c.Close()
	var runs []run
	var before run
	for i := range times {
		start := time.Now()
		for r, err := range c.LookupIPsAll(context.Background(), slices.Values(draws), nil) {
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: address %d: %v\n", name, r.Index, err)
				os.Exit(1)
			}
		}
		label := name
		if times > 1 {
			label = fmt.Sprintf("%s, run %d", name, i+1)
		}
		total := result(label, srv, int64(len(draws)), &obs, time.Since(start), synthienttest.RouteLookupIPs)
		r := total
		r.requests, r.credits = total.requests-before.requests, total.credits-before.credits
		r.hits, r.coalesced, r.saved = total.hits-before.hits, total.coalesced-before.coalesced, total.saved-before.saved
		runs, before = append(runs, r), total
	}
	return runs
}

// result is what srv and obs counted.
func result(name string, srv *synthienttest.Server, lookups int64, obs *counter, elapsed time.Duration, route string) run {
	return run{
		name:      name,
		lookups:   lookups,
		requests:  int64(srv.Arrivals(route)),
		credits:   1<<40 - srv.Credits(srv.APIKey),
		hits:      obs.hits.Load(),
		coalesced: obs.coalesced.Load(),
		saved:     obs.saved.Load(),
		elapsed:   elapsed,
	}
}
