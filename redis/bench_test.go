package redis_test

// Benchmarks of the Redis cache on loopback, beside plain net/http doing
// the lookup and beside a hand-written Redis cache, in the same run. The
// figures and the command are in docs/performance.md; scripts/bench.sh
// runs them.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	synthredis "github.com/synthient-go/synthient/redis"
)

// lookupBody is a full IpLookup answer (the root package's benchmarks
// answer the same).
const lookupBody = `{"ip":"198.51.100.23","network":{"asn":64500,"isp":"Example Broadband","type":"RESIDENTIAL","org":null,"domain":"example-broadband.net","abuse_email":"abuse@example-broadband.net","abuse_phone":null},"location":{"country":"DE","state":"BE","city":"Berlin","timezone":"Europe/Berlin","latitude":52.52,"longitude":13.405,"geo_hash":"u33"},"intelligence":{"risk_score":81,"behavior":["PROGRAMMATIC_TRAFFIC"],"categories":["RESIDENTIAL_PROXY"],"devices":[{"os":"Android","version":"13","last_seen":1781049600}],"providers":[{"provider":"EXAMPLEPROXY","type":"RESIDENTIAL_PROXY","last_seen":1781136000}]}}`

var benchIP = netip.MustParseAddr("198.51.100.23")

// apiServer answers every lookup with lookupBody, with RateLimit headers
// that say the bucket is far from spent.
func apiServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Ratelimit-Limit"] = []string{"200"}
		h["Ratelimit-Remaining"] = []string{"199"}
		h["Ratelimit-Reset"] = []string{"1"}
		h["Content-Type"] = []string{"application/json"}
		_, _ = w.Write([]byte(lookupBody))
	}))
	b.Cleanup(srv.Close)
	return srv
}

// sdkClient returns a client of srv with opts.
func sdkClient(b *testing.B, srv *httptest.Server, opts ...synthient.Option) *synthient.Client {
	c, err := synthient.NewClient("bench-key", append([]synthient.Option{synthient.WithBaseURL(srv.URL + "/api/v4")}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// plainLookup is LookupIP with net/http alone, as a careful user writes it.
func plainLookup(ctx context.Context, hc *http.Client, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v4/lookup/ip/"+benchIP.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Api-Key", "bench-key")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // read to the end above: closing returns the connection, it loses nothing
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	var out synthient.IPLookup
	return json.NewDecoder(resp.Body).Decode(&out)
}

// latencies records the time of each call, for percentiles.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.all = append(l.all, d...)
	l.mu.Unlock()
}

// report adds p50, p99 and max to b's metrics, and the calls that took at
// least slow (when slow is positive).
func (l *latencies) report(b *testing.B, slow time.Duration) {
	if len(l.all) == 0 {
		return
	}
	slices.Sort(l.all)
	at := func(q float64) float64 { return float64(l.all[int(q*float64(len(l.all)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
	b.ReportMetric(float64(l.all[len(l.all)-1].Nanoseconds()), "max-ns")
	if slow > 0 {
		n := 0
		for _, d := range l.all {
			if d >= slow {
				n++
			}
		}
		b.ReportMetric(float64(n), "slow-calls")
	}
}

// run calls call b.N times, serially or from 32 goroutines, and reports
// the latencies (and lookups/s in parallel).
func run(b *testing.B, parallel bool, slow time.Duration, call func(context.Context) error) {
	b.ReportAllocs()
	var lat latencies
	ctx := context.Background()
	start := time.Now()
	if !parallel {
		var own []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if err := call(ctx); err != nil {
				b.Fatal(err)
			}
			own = append(own, time.Since(t0))
		}
		lat.add(own)
	} else {
		b.SetParallelism(16) // 16 x GOMAXPROCS(2) = 32 goroutines
		b.RunParallel(func(pb *testing.PB) {
			var own []time.Duration
			for pb.Next() {
				t0 := time.Now()
				if err := call(ctx); err != nil {
					b.Error(err)
					return
				}
				own = append(own, time.Since(t0))
			}
			lat.add(own)
		})
		b.ReportMetric(float64(len(lat.all))/time.Since(start).Seconds(), "lookups/s")
	}
	lat.report(b, slow)
}

// BenchmarkRedisHit is a LookupIP answered from Redis on loopback
// (impl=sdk), beside a hand-written Redis cache (impl=plainredis: GET of
// the answer's JSON and json.Unmarshal) and plain net/http asking the API
// (impl=plain), serially and from 32 goroutines.
func BenchmarkRedisHit(b *testing.B) {
	for _, mode := range []struct {
		name     string
		parallel bool
	}{{"mode=serial", false}, {"mode=parallel32", true}} {
		b.Run(mode.name+"/impl=sdk", func(b *testing.B) {
			cache, _, _ := newCache(b, shared, synthredis.WithTimeout(synthredis.DefaultTimeout))
			c := sdkClient(b, apiServer(b), synthient.WithCache(cache))
			if _, err := c.LookupIP(context.Background(), benchIP); err != nil {
				b.Fatal(err)
			}
			var misses atomic.Int64
			run(b, mode.parallel, 0, func(ctx context.Context) error {
				l, err := c.LookupIP(ctx, benchIP)
				if err == nil && l.CachedAt.IsZero() {
					misses.Add(1) // Redis did not answer within the timeout
				}
				return err
			})
			b.ReportMetric(float64(misses.Load()), "misses")
		})
		b.Run(mode.name+"/impl=plainredis", func(b *testing.B) {
			_, rdb, prefix := newCache(b, shared)
			key := prefix + "plain:" + benchIP.String()
			if err := rdb.Set(context.Background(), key, lookupBody, time.Hour).Err(); err != nil {
				b.Fatal(err)
			}
			run(b, mode.parallel, 0, func(ctx context.Context) error {
				v, err := rdb.Get(ctx, key).Bytes()
				if err != nil {
					return err
				}
				var out synthient.IPLookup
				return json.Unmarshal(v, &out)
			})
		})
		b.Run(mode.name+"/impl=plain", func(b *testing.B) {
			srv := apiServer(b)
			tr := &http.Transport{MaxIdleConnsPerHost: 64}
			b.Cleanup(tr.CloseIdleConnections)
			hc := &http.Client{Transport: tr}
			run(b, mode.parallel, 0, func(ctx context.Context) error { return plainLookup(ctx, hc, srv.URL) })
		})
	}
}

// BenchmarkRedisDown is a LookupIP, all misses to the API, while Redis is
// refusing connections (redis=refused), stopped (redis=stopped: the
// process paused, so that each call waits for the cache's timeout unless a
// cool-down is in force), and without a cache (redis=none), beside plain
// net/http (impl=plain). slow-calls counts the calls that took the cache's
// timeout (50 ms) or more: at most one per cool-down (5 s) is the goal.
func BenchmarkRedisDown(b *testing.B) {
	for _, tc := range []struct {
		name  string
		cache func(b *testing.B) synthient.Cache
	}{
		{"redis=none", func(*testing.B) synthient.Cache { return nil }},
		{"redis=refused", func(b *testing.B) synthient.Cache {
			addr, err := freeAddr()
			if err != nil {
				b.Fatal(err)
			}
			cache, _, _ := newCache(b, &server{addr: addr}, synthredis.WithTimeout(synthredis.DefaultTimeout))
			return cache
		}},
		{"redis=stopped", func(b *testing.B) synthient.Cache {
			s := own(b)
			cache, _, _ := newCache(b, s, synthredis.WithTimeout(synthredis.DefaultTimeout))
			s.signal(syscall.SIGSTOP)
			b.Cleanup(func() { s.signal(syscall.SIGCONT) })
			return cache
		}},
	} {
		b.Run(tc.name+"/impl=sdk", func(b *testing.B) {
			var opts []synthient.Option
			if cache := tc.cache(b); cache != nil {
				opts = append(opts, synthient.WithCache(cache))
			}
			c := sdkClient(b, apiServer(b), opts...)
			run(b, false, synthredis.DefaultTimeout, func(ctx context.Context) error {
				_, err := c.LookupIP(ctx, benchIP)
				return err
			})
		})
	}
	b.Run("impl=plain", func(b *testing.B) {
		srv := apiServer(b)
		hc := &http.Client{Transport: &http.Transport{}}
		b.Cleanup(hc.CloseIdleConnections)
		run(b, false, synthredis.DefaultTimeout, func(ctx context.Context) error { return plainLookup(ctx, hc, srv.URL) })
	})
}
