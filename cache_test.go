package synthient_test

// Tests of cache.go: the client's use of a Cache (WithCache), on the fake
// API and on mocked transports; the memory engine's own are in
// memcache_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// spyCache is a Cache over a memory cache that counts its calls and can
// be made to fail: fail is Get's and Set's error, garbage what Get returns
// instead of a value.
type spyCache struct {
	synthient.Cache
	mu            sync.Mutex
	gets, sets    int
	keys          []string // of the Sets
	fail          error
	garbage       []byte
	batchGets     int
	batchSets     int
	batchSetsKeys []string
}

func newSpyCache() *spyCache { return &spyCache{Cache: synthient.NewMemoryCache(1000, time.Hour)} }

func (s *spyCache) Get(ctx context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	s.gets++
	fail, garbage := s.fail, s.garbage
	s.mu.Unlock()
	switch {
	case fail != nil:
		return nil, fail
	case garbage != nil:
		return garbage, nil
	}
	return s.Cache.Get(ctx, key)
}

func (s *spyCache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	s.mu.Lock()
	s.sets++
	s.keys = append(s.keys, key)
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	return s.Cache.Set(ctx, key, value, ttl)
}

func (s *spyCache) counts() (gets, sets int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets, s.sets
}

// batchSpy is a spyCache that is a BatchCache too.
type batchSpy struct{ *spyCache }

func (b batchSpy) GetBatch(ctx context.Context, keys []string) ([][]byte, error) {
	b.mu.Lock()
	b.batchGets++
	b.mu.Unlock()
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i], _ = b.Cache.Get(ctx, k)
	}
	return out, nil
}

func (b batchSpy) SetBatch(ctx context.Context, entries []synthient.CacheEntry) error {
	b.mu.Lock()
	b.batchSets++
	for _, e := range entries {
		b.batchSetsKeys = append(b.batchSetsKeys, e.Key)
	}
	b.mu.Unlock()
	for _, e := range entries {
		if e.TTL <= 0 {
			return errors.New("a non-positive TTL")
		}
		_ = b.Cache.Set(ctx, e.Key, e.Value, e.TTL)
	}
	return nil
}

// cachedFake returns the fake API and a client of it with a memory cache,
// reporting to a recorder.
func cachedFake(t *testing.T, cache synthient.Cache, opts ...synthienttest.Option) (*synthienttest.Server, *synthient.Client, *recorder) {
	t.Helper()
	srv := fakeServer(t, opts...)
	rec := &recorder{}
	return srv, fakeClient(t, srv, synthient.WithCache(cache), synthient.WithObserver(rec)), rec
}

// lastEnd returns the EndCall of the last call recorded.
func lastEnd(t *testing.T, rec *recorder) synthient.CallEnd {
	t.Helper()
	ends := of(rec.Events(), "EndCall")
	require.NotEmpty(t, ends)
	return ends[len(ends)-1].callEnd
}

func TestWithCacheNil(t *testing.T) {
	t.Parallel()
	_, err := synthient.NewClient(testKey, synthient.WithCache(nil))
	requireInvalid(t, err)
}

// TestCacheLookupIP: the second lookup of an address is answered from the
// cache: no request, no credit, the same answer with CachedAt set to when
// the API gave it; the observer counts the hit and the credit saved.
func TestCacheLookupIP(t *testing.T) {
	t.Parallel()
	srv, c, rec := cachedFake(t, synthient.NewMemoryCache(100, time.Hour))
	ip := netip.MustParseAddr("203.0.113.7")
	before := time.Now()
	first, err := c.LookupIP(callCtx(t), ip)
	require.NoError(t, err)
	assert.Zero(t, first.CachedAt, "a fresh answer")
	assert.Zero(t, lastEnd(t, rec).CacheHits)

	second, err := c.LookupIP(callCtx(t), ip)
	require.NoError(t, err)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "requests")
	assert.Equal(t, int64(synthienttest.DefaultCredits-1), srv.Credits(srv.APIKey), "credits spent")
	assert.False(t, second.CachedAt.Before(before.Truncate(time.Millisecond)), "CachedAt %v is when the API answered", second.CachedAt)
	assert.False(t, second.CachedAt.After(time.Now()))
	firstJSON, _ := json.Marshal(first)
	secondJSON, _ := json.Marshal(second)
	assert.JSONEq(t, string(firstJSON), string(secondJSON), "the same answer")

	end := lastEnd(t, rec)
	assert.Equal(t, 1, end.CacheHits)
	assert.Equal(t, 1, end.CreditsSaved)
	assert.Zero(t, end.Attempts)
	require.NoError(t, end.CacheErr)

	// The answer is the caller's: changing it changes nothing cached.
	second.Network.ISP = "changed"
	third, err := c.LookupIP(callCtx(t), ip)
	require.NoError(t, err)
	assert.Equal(t, first.Network.ISP, third.Network.ISP)
}

// TestCacheLookupDomain: a domain's answer is cached by name and Limit.
func TestCacheLookupDomain(t *testing.T) {
	t.Parallel()
	srv, c, _ := cachedFake(t, synthient.NewMemoryCache(100, time.Hour))
	for range 2 {
		d, err := c.LookupDomain(callCtx(t), "Bücher.example", &synthient.DomainLookupParams{Limit: 5})
		require.NoError(t, err)
		assert.Len(t, d.RecentEvents, 5)
	}
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupDomain), "the second from the cache")
	d, err := c.LookupDomain(callCtx(t), "xn--bcher-kva.example", &synthient.DomainLookupParams{Limit: 5})
	require.NoError(t, err)
	assert.NotZero(t, d.CachedAt, "the punycode form is the same name")
	_, err = c.LookupDomain(callCtx(t), "xn--bcher-kva.example", nil)
	require.NoError(t, err)
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupDomain), "another Limit is another answer")
}

// TestCacheKeepsOnlyWholeAnswers: an error (a 5xx, a 429 not waited out, a
// 402, an unknown outcome) is never kept: the next call goes to the API.
func TestCacheKeepsOnlyWholeAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault synthienttest.Fault
	}{
		{"503", statusFault(http.StatusServiceUnavailable)},
		{"429 not waited out", synthienttest.Fault{Status: http.StatusTooManyRequests, RetryAfter: "120"}},
		{"402", statusFault(http.StatusPaymentRequired)},
		{"unknown outcome", synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest}},
		{"cut answer", synthienttest.Fault{Kind: synthienttest.FaultTruncatedBody}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spy := newSpyCache()
			srv, c, _ := cachedFake(t, spy)
			srv.Inject(synthienttest.RouteLookupIP, 1, tc.fault)
			srv.Inject(synthienttest.RouteLookupIPs, 1, tc.fault)
			ip := netip.MustParseAddr("203.0.113.7")
			_, err := c.LookupIP(callCtx(t), ip)
			require.Error(t, err)
			_, err = c.LookupIPs(callCtx(t), []netip.Addr{ip})
			require.Error(t, err)
			_, sets := spy.counts()
			assert.Zero(t, sets, "nothing stored")

			l, err := c.LookupIP(callCtx(t), ip)
			require.NoError(t, err)
			assert.Zero(t, l.CachedAt, "from the API")
			assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIP))
		})
	}
}

// TestCacheLookupIPs: a batch sends only the addresses not in the cache,
// and none when all are; results keep the input's order, repeats
// included, and cached ones have CachedAt set. A whole answer is stored,
// one that lacks an address is not.
func TestCacheLookupIPs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cache func() synthient.Cache
	}{
		{"Cache", func() synthient.Cache { return newSpyCache() }},
		{"BatchCache", func() synthient.Cache { return batchSpy{newSpyCache()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cache := tc.cache()
			m := newMockAPI(t, nil).Route(http.MethodPost, "/api/v4/lookup/ips",
				answerJSON(http.StatusOK, `{"results":[{"ip":"192.0.2.1"},{"ip":"192.0.2.2"}]}`),
				answerJSON(http.StatusOK, `{"results":[{"ip":"192.0.2.3"}]}`),
				answerJSON(http.StatusOK, `{"results":[{"ip":"192.0.2.4"}]}`), // lacks 192.0.2.5
			)
			rec := &recorder{}
			c := m.Client(t, synthient.WithCache(cache), synthient.WithObserver(rec))
			a, b, cc := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")

			_, err := c.LookupIPs(callCtx(t), []netip.Addr{a, b})
			require.NoError(t, err)
			got, err := c.LookupIPs(callCtx(t), []netip.Addr{b, cc, a, b})
			require.NoError(t, err)
			reqs := m.Requests()
			require.Len(t, reqs, 2)
			assert.JSONEq(t, `{"ips":["192.0.2.3"]}`, reqs[1].Body, "only the address not cached is sent")
			require.Len(t, got, 4)
			for i, want := range []netip.Addr{b, cc, a, b} {
				assert.Equal(t, want, got[i].IP, "result %d", i)
				assert.Equal(t, want != cc, !got[i].CachedAt.IsZero(), "result %d cached", i)
			}
			end := lastEnd(t, rec)
			assert.Equal(t, 3, end.CacheHits)
			assert.Equal(t, 3-1, end.CreditsSaved, "ceil(0.9*3) for 3 distinct, less ceil(0.9*1)")

			got, err = c.LookupIPs(callCtx(t), []netip.Addr{cc, a})
			require.NoError(t, err)
			assert.Len(t, m.Requests(), 2, "all cached: nothing sent")
			assert.Equal(t, []netip.Addr{cc, a}, []netip.Addr{got[0].IP, got[1].IP})
			assert.Equal(t, 2, lastEnd(t, rec).CreditsSaved)

			d, e := netip.MustParseAddr("192.0.2.4"), netip.MustParseAddr("192.0.2.5")
			got, err = c.LookupIPs(callCtx(t), []netip.Addr{a, d, e})
			var de *synthient.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, []netip.Addr{e}, de.Missing)
			require.Len(t, got, 2, "the results there are, in order")
			assert.Equal(t, a, got[0].IP)
			assert.Equal(t, d, got[1].IP)
			assert.JSONEq(t, `{"ips":["192.0.2.4","192.0.2.5"]}`, m.Requests()[2].Body)
			l, err := c.LookupIPs(callCtx(t), []netip.Addr{d})
			require.NoError(t, err, "the mock's last answer again")
			assert.Zero(t, l[0].CachedAt, "an answer that lacked an address is not stored")
		})
	}
}

// TestCacheBatchCacheRoundTrips: with a BatchCache, a LookupIPs asks the
// store once and stores its answers at once.
func TestCacheBatchCacheRoundTrips(t *testing.T) {
	t.Parallel()
	spy := batchSpy{newSpyCache()}
	_, c, _ := cachedFake(t, spy)
	ips := testAddrs(50)
	_, err := c.LookupIPs(callCtx(t), ips)
	require.NoError(t, err)
	_, err = c.LookupIPs(callCtx(t), ips)
	require.NoError(t, err)
	gets, sets := spy.counts()
	assert.Zero(t, gets+sets, "Get and Set not called")
	assert.Equal(t, 2, spy.batchGets)
	assert.Equal(t, 1, spy.batchSets)
	assert.Len(t, spy.batchSetsKeys, 50)
}

// TestCacheFailing: a cache that fails, or answers what does not decode,
// never fails a lookup: it goes to the API, the observer gets the failure,
// and the logger gets it at most once a minute, with the count.
func TestCacheFailing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		spy     func(*spyCache)
		message string
	}{
		{"errors", func(s *spyCache) { s.fail = errors.New("store down") }, "store down"},
		{"garbage", func(s *spyCache) { s.garbage = []byte("\x01i garbage") }, "does not decode"},
		{"another encoding", func(s *spyCache) { s.garbage = []byte(`{"ip":"203.0.113.7"}`) }, "does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				spy := newSpyCache()
				tc.spy(spy)
				m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, sampleAnswer).
					Route(http.MethodPost, "/api/v4/lookup/ips", answerJSON(http.StatusOK, `{"results":[{"ip":"203.0.113.7"}]}`))
				rec := &recorder{}
				c, logs := loggedClient(t, mockBase, synthient.WithTransport(m.MockTransport),
					synthient.WithCache(spy), synthient.WithObserver(rec))
				for range 3 {
					l, err := c.LookupIP(callCtx(t), sampleIP)
					require.NoError(t, err)
					assert.Zero(t, l.CachedAt)
					end := lastEnd(t, rec)
					require.Error(t, end.CacheErr)
					assert.Contains(t, end.CacheErr.Error(), tc.message)
				}
				_, err := c.LookupIPs(callCtx(t), []netip.Addr{sampleIP})
				require.NoError(t, err)
				assert.Len(t, m.Requests(), 4)
				assert.Equal(t, 1, strings.Count(logs.String(), "lookup cache failed"), "logged once a minute")

				time.Sleep(time.Minute)
				_, err = c.LookupIP(callCtx(t), sampleIP)
				require.NoError(t, err)
				assert.Equal(t, 2, strings.Count(logs.String(), "lookup cache failed"), "a minute later, again")
				assert.Contains(t, logs.String(), `"level":"WARN"`)
			})
		})
	}
}

// TestCacheClosedClient: after Close, a lookup fails with ErrClosed, even
// one the cache could answer.
func TestCacheClosedClient(t *testing.T) {
	t.Parallel()
	_, c, _ := cachedFake(t, synthient.NewMemoryCache(10, time.Hour))
	ip := netip.MustParseAddr("203.0.113.7")
	_, err := c.LookupIP(callCtx(t), ip)
	require.NoError(t, err)
	_, err = c.LookupIPs(callCtx(t), []netip.Addr{ip})
	require.NoError(t, err)
	c.Close()
	_, err = c.LookupIP(callCtx(t), ip)
	require.ErrorIs(t, err, synthient.ErrClosed)
	_, err = c.LookupIPs(callCtx(t), []netip.Addr{ip})
	require.ErrorIs(t, err, synthient.ErrClosed)
	_, err = c.LookupDomain(callCtx(t), "example.org", nil)
	assert.ErrorIs(t, err, synthient.ErrClosed)
}

// foreverCache is a Cache that ignores the TTL it is given.
type foreverCache struct{ m sync.Map }

func (f *foreverCache) Get(_ context.Context, key string) ([]byte, error) {
	v, _ := f.m.Load(key)
	b, _ := v.([]byte)
	return b, nil
}

func (f *foreverCache) Set(_ context.Context, key string, value []byte, _ time.Duration) error {
	f.m.Store(key, value)
	return nil
}

// TestCacheTTL: an entry lives as long as the memory cache keeps it, and
// never longer than the client's limit for its kind, 24 hours for an IP,
// an hour for a domain, also in a store that ignores the TTL it is given.
func TestCacheTTL(t *testing.T) {
	t.Parallel()
	memory := func(ttl time.Duration) func() synthient.Cache {
		return func() synthient.Cache { return synthient.NewMemoryCache(10, ttl) }
	}
	for _, tc := range []struct {
		name      string
		cache     func() synthient.Cache
		domain    bool
		hit, miss time.Duration // ages at which the answer is, and is no longer, cached
	}{
		{"the cache's TTL", memory(10 * time.Minute), false, 10*time.Minute - time.Millisecond, 10 * time.Minute},
		{"an IP's limit", memory(0), false, 24*time.Hour - time.Millisecond, 24 * time.Hour},
		{"an IP's limit under a longer TTL", memory(48 * time.Hour), false, 24*time.Hour - time.Millisecond, 24 * time.Hour},
		{"a domain's limit", memory(48 * time.Hour), true, time.Hour - time.Millisecond, time.Hour},
		{"an IP's limit in a store without expiry", func() synthient.Cache { return &foreverCache{} }, false, 24*time.Hour - time.Millisecond, 24 * time.Hour},
		{"a domain's limit in a store without expiry", func() synthient.Cache { return &foreverCache{} }, true, time.Hour - time.Millisecond, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, sampleAnswer).
					Route(http.MethodGet, "/api/v4/lookup/domain/example.org", answerJSON(http.StatusOK, `{"domain":"example.org"}`))
				c := m.Client(t, synthient.WithCache(tc.cache()))
				lookup := func() time.Time {
					if tc.domain {
						d, err := c.LookupDomain(callCtx(t), "example.org", nil)
						require.NoError(t, err)
						return d.CachedAt
					}
					l, err := c.LookupIP(callCtx(t), sampleIP)
					require.NoError(t, err)
					return l.CachedAt
				}
				t0 := time.Now()
				require.Zero(t, lookup())
				time.Sleep(tc.hit)
				at := lookup()
				assert.Equal(t, t0, at, "cached, with when the API answered")
				assert.Equal(t, tc.hit, time.Since(at), "its age")
				time.Sleep(tc.miss - tc.hit)
				assert.Zero(t, lookup(), "expired: from the API")
				assert.Len(t, m.Requests(), 2)
			})
		})
	}
}

// TestCacheAndCoalescing: with a cache, concurrent calls share one
// request, and the calls after it are answered from the cache.
func TestCacheAndCoalescing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, gated(open, sampleAnswer))
		c := m.Client(t, synthient.WithCache(synthient.NewMemoryCache(10, time.Hour)))
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				_, err := c.LookupIP(callCtx(t), sampleIP)
				assert.NoError(t, err)
			})
		}
		synctest.Wait()
		close(open)
		wg.Wait()
		l, err := c.LookupIP(callCtx(t), sampleIP)
		require.NoError(t, err)
		assert.NotZero(t, l.CachedAt)
		assert.Len(t, m.Requests(), 1)
	})
}

// TestCacheMappedAddress: an IPv4-mapped address and the IPv4 address it
// maps are one answer in the cache, each result with the address as
// given, in LookupIP and LookupIPs.
func TestCacheMappedAddress(t *testing.T) {
	t.Parallel()
	srv, c, _ := cachedFake(t, synthient.NewMemoryCache(10, time.Hour))
	mapped, plain := netip.MustParseAddr("::ffff:203.0.113.7"), netip.MustParseAddr("203.0.113.7")
	l, err := c.LookupIP(callCtx(t), mapped)
	require.NoError(t, err)
	assert.Equal(t, mapped, l.IP)
	l, err = c.LookupIP(callCtx(t), plain)
	require.NoError(t, err)
	assert.Equal(t, plain, l.IP)
	assert.NotZero(t, l.CachedAt)
	l, err = c.LookupIP(callCtx(t), mapped)
	require.NoError(t, err)
	assert.Equal(t, mapped, l.IP)
	assert.NotZero(t, l.CachedAt)
	got, err := c.LookupIPs(callCtx(t), []netip.Addr{plain, mapped})
	require.NoError(t, err)
	assert.Equal(t, []netip.Addr{plain, mapped}, []netip.Addr{got[0].IP, got[1].IP})
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP))
	assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs))
}

// blockingSetCache is a Cache that finds nothing and whose Set waits for
// its context to end: a store with no timeout of its own.
type blockingSetCache struct{}

func (blockingSetCache) Get(context.Context, string) ([]byte, error) { return nil, nil }
func (blockingSetCache) Set(ctx context.Context, _ string, _ []byte, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestCacheSetBoundedByTheCall: a store whose Set waits holds a lookup no
// longer than the lookup's deadline; the answer, paid for, is returned.
func TestCacheSetBoundedByTheCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, sampleAnswer)
		c := m.Client(t, synthient.WithCache(blockingSetCache{}))
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		l, err := c.LookupIP(ctx, sampleIP)
		require.NoError(t, err)
		assert.Equal(t, sampleIP, l.IP)
		assert.LessOrEqual(t, time.Since(t0), 200*time.Millisecond, "the lookup's time")
	})
}

// TestCacheAnswerForAnotherAddress: an answer for another address than
// asked is a *DecodeError, and is stored under neither address: the other
// address is looked up afresh.
func TestCacheAnswerForAnotherAddress(t *testing.T) {
	t.Parallel()
	const other = `{"ip":"1.1.1.1","intelligence":{"risk_score":99,"behavior":[],"categories":[],"devices":[],"providers":[]}}`
	m := newMockAPI(t, nil).
		Route(http.MethodGet, "/api/v4/lookup/ip/8.8.8.8", answerJSON(http.StatusOK, other)).
		Route(http.MethodGet, "/api/v4/lookup/ip/1.1.1.1", answerJSON(http.StatusOK, other))
	c := m.Client(t, synthient.WithCache(synthient.NewMemoryCache(100, 0)))
	_, err := c.LookupIP(callCtx(t), netip.MustParseAddr("8.8.8.8"))
	var de *synthient.DecodeError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), "response is for 1.1.1.1, not 8.8.8.8")
	l, err := c.LookupIP(callCtx(t), netip.MustParseAddr("1.1.1.1"))
	require.NoError(t, err)
	assert.True(t, l.CachedAt.IsZero(), "1.1.1.1 answered from the cache")
	assert.Len(t, m.Requests(), 2)
}

// TestCacheDomainSpellings: the spellings of one domain query are one
// answer, one request and one credit: case, punycode's case, a trailing
// dot, and no limit against the API's default of 50. An answer for
// another domain than asked is returned, but not kept.
func TestCacheDomainSpellings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		a, b   string
		la, lb int
		answer string
		want   int // requests
	}{
		{"case", "Example.COM", "example.com", 0, 0, "example.com", 1},
		{"punycode's case", "XN--BCHER-KVA.de", "bücher.de", 0, 0, "xn--bcher-kva.de", 1},
		{"a trailing dot", "example.com.", "example.com", 0, 0, "example.com", 1},
		{"no limit is the default 50", "example.com", "example.com", 0, 50, "example.com", 1},
		{"another domain answered", "example.com", "example.com", 0, 0, "evil.test", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMockAPI(t, nil).RoutePrefix(http.MethodGet, "/api/v4/lookup/domain/",
				answerJSON(http.StatusOK, `{"domain":"`+tc.answer+`","status":"active"}`))
			c := m.Client(t, synthient.WithCache(synthient.NewMemoryCache(100, 0)))
			_, err := c.LookupDomain(callCtx(t), tc.a, &synthient.DomainLookupParams{Limit: tc.la})
			require.NoError(t, err)
			_, err = c.LookupDomain(callCtx(t), tc.b, &synthient.DomainLookupParams{Limit: tc.lb})
			require.NoError(t, err)
			assert.Len(t, m.Requests(), tc.want, "requests for %q then %q", tc.a, tc.b)
		})
	}
}

// TestCacheOneReadPerMiss: a miss reads the store once, then writes the
// answer: a second read, for an answer a flight of the same address may
// have stored meanwhile, is made only when one ended since the first.
func TestCacheOneReadPerMiss(t *testing.T) {
	t.Parallel()
	m := newMockAPI(t, nil).Route(http.MethodGet, lookupPath, sampleAnswer)
	spy := newSpyCache()
	c := m.Client(t, synthient.WithCache(spy))
	_, err := c.LookupIP(callCtx(t), sampleIP)
	require.NoError(t, err)
	gets, sets := spy.counts()
	assert.Equal(t, 1, gets, "reads")
	assert.Equal(t, 1, sets, "writes")
}
