package redis_test

// Tests of cache.go against real redis-server processes.

import (
	"context"
	"encoding/json"
	"net/netip"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	synthredis "github.com/synthient-go/synthient/redis"
	"github.com/synthient-go/synthient/synthienttest"
)

var addr = netip.MustParseAddr("203.0.113.7")

func TestNew(t *testing.T) {
	t.Parallel()
	rdb := redisClient(t, shared)
	for _, tc := range []struct {
		name string
		opt  synthredis.Option
	}{
		{"a zero TTL", synthredis.WithTTL(0)},
		{"a negative timeout", synthredis.WithTimeout(-time.Second)},
		{"a zero cool-down", synthredis.WithCooldown(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := synthredis.New(rdb, tc.opt)
			assert.Error(t, err)
		})
	}
	_, err := synthredis.New(nil)
	require.Error(t, err)
	_, err = synthredis.New(rdb, nil, synthredis.WithPrefix(""))
	assert.NoError(t, err, "a nil option is skipped; an empty prefix is allowed")
}

// TestHitsAcrossClients: what one client paid for, a client of another
// host (its own go-redis client and Cache) gets from Redis, free: single
// lookups, domains and batches.
func TestHitsAcrossClients(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	cacheA, _, prefix := newCache(t, shared)
	cacheB, err := synthredis.New(redisClient(t, shared), synthredis.WithPrefix(prefix))
	require.NoError(t, err)
	a, _ := client(t, srv, cacheA)
	b, endsB := client(t, srv, cacheB)

	first, err := a.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	hit, err := b.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	assert.NotZero(t, hit.CachedAt, "from Redis")
	wantJSON, _ := json.Marshal(first)
	gotJSON, _ := json.Marshal(hit)
	assert.JSONEq(t, string(wantJSON), string(gotJSON))
	assert.Equal(t, 1, endsB.last().CacheHits)
	require.NoError(t, endsB.last().CacheErr)

	_, err = a.LookupDomain(callCtx(t), "example.org", nil)
	require.NoError(t, err)
	d, err := b.LookupDomain(callCtx(t), "example.org", nil)
	require.NoError(t, err)
	assert.NotZero(t, d.CachedAt)

	batch := []netip.Addr{netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("198.51.100.2"), addr}
	_, err = a.LookupIPs(callCtx(t), batch[:2])
	require.NoError(t, err)
	got, err := b.LookupIPs(callCtx(t), batch)
	require.NoError(t, err)
	for i, l := range got {
		assert.Equal(t, batch[i], l.IP)
		assert.NotZero(t, l.CachedAt, "result %d from Redis", i)
	}
	assert.Equal(t, 3, endsB.last().CacheHits)

	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "one request for the address")
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupDomain))
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIPs), "the second batch sent nothing")
}

// TestKeysAndExpiry: each entry is a key under the prefix, with its expiry
// set in Redis: the client's TTL (24 hours for an IP, an hour for a
// domain), or WithTTL's when shorter; an expired entry is gone, and the
// next lookup goes to the API.
func TestKeysAndExpiry(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	cache, rdb, prefix := newCache(t, shared)
	c, _ := client(t, srv, cache)
	_, err := c.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	_, err = c.LookupDomain(callCtx(t), "example.org", &synthient.DomainLookupParams{Limit: 3})
	require.NoError(t, err)
	ipTTL, err := rdb.PTTL(callCtx(t), prefix+"v1:ip:203.0.113.7").Result()
	require.NoError(t, err)
	assert.InDelta(t, 24*time.Hour, ipTTL, float64(time.Minute), "an IP's answer")
	domainTTL, err := rdb.PTTL(callCtx(t), prefix+"v1:domain:3:example.org").Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Hour, domainTTL, float64(time.Minute), "a domain's answer")

	short, rdb2, prefix2 := newCache(t, shared, synthredis.WithTTL(20*time.Millisecond))
	c2, ends2 := client(t, srv, short)
	_, err = c2.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	ttl, err := rdb2.PTTL(callCtx(t), prefix2+"v1:ip:203.0.113.7").Result()
	require.NoError(t, err)
	assert.Positive(t, ttl)
	assert.LessOrEqual(t, ttl, 20*time.Millisecond, "WithTTL's, shorter")
	require.Eventually(t, func() bool {
		n, err := rdb2.Exists(context.Background(), prefix2+"v1:ip:203.0.113.7").Result()
		return err == nil && n == 0
	}, time.Minute, 5*time.Millisecond, "Redis expires the entry")
	l, err := c2.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	assert.Zero(t, l.CachedAt, "expired: from the API")
	assert.Zero(t, ends2.last().CacheHits)
}

// TestPrefixesApart: caches of different prefixes do not see each other's
// entries.
func TestPrefixesApart(t *testing.T) {
	t.Parallel()
	srv := fake(t)
	one, _, _ := newCache(t, shared)
	other, _, _ := newCache(t, shared)
	a, _ := client(t, srv, one)
	b, _ := client(t, srv, other)
	_, err := a.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	l, err := b.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	assert.Zero(t, l.CachedAt)
	assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIP))
}

// TestGarbage: whatever else is under a key (text, a value of another
// version, a damaged value, a Redis list) is a miss, reported, and the
// fresh answer replaces it.
func TestGarbage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		plant func(ctx context.Context, rdb *goredis.Client, key string, good []byte) error
	}{
		{"text", func(ctx context.Context, rdb *goredis.Client, key string, _ []byte) error {
			return rdb.Set(ctx, key, "garbage", time.Hour).Err()
		}},
		{"another version", func(ctx context.Context, rdb *goredis.Client, key string, good []byte) error {
			bad := append([]byte{good[0] + 1}, good[1:]...)
			return rdb.Set(ctx, key, bad, time.Hour).Err()
		}},
		{"a damaged value", func(ctx context.Context, rdb *goredis.Client, key string, good []byte) error {
			bad := append([]byte(nil), good...)
			bad[len(bad)/2] ^= 0x20
			return rdb.Set(ctx, key, bad, time.Hour).Err()
		}},
		{"a cut value", func(ctx context.Context, rdb *goredis.Client, key string, good []byte) error {
			return rdb.Set(ctx, key, good[:len(good)-3], time.Hour).Err()
		}},
		{"a list", func(ctx context.Context, rdb *goredis.Client, key string, _ []byte) error {
			return rdb.RPush(ctx, key, "a", "b").Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fake(t)
			cache, rdb, prefix := newCache(t, shared, synthredis.WithCooldown(time.Millisecond))
			key := prefix + "v1:ip:203.0.113.7"
			c, e := client(t, srv, cache)
			_, err := c.LookupIP(callCtx(t), addr)
			require.NoError(t, err)
			good, err := rdb.Get(callCtx(t), key).Bytes()
			require.NoError(t, err)
			require.NoError(t, rdb.Del(callCtx(t), key).Err())
			require.NoError(t, tc.plant(callCtx(t), rdb, key, good))

			l, err := c.LookupIP(callCtx(t), addr)
			require.NoError(t, err, "garbage never fails a lookup")
			assert.Zero(t, l.CachedAt, "from the API")
			require.Error(t, e.last().CacheErr, "reported")
			l, err = c.LookupIP(callCtx(t), addr)
			require.NoError(t, err)
			assert.NotZero(t, l.CachedAt, "the fresh answer replaced the garbage")
			assert.Equal(t, 2, srv.Arrivals(synthienttest.RouteLookupIP))
		})
	}
}

// TestRedisKilledMidRun: Redis killed during a run of lookups fails none of
// them; they go to the API, the failures reported, and once Redis is back
// (empty: no persistence) the cache works again.
func TestRedisKilledMidRun(t *testing.T) {
	t.Parallel()
	s := own(t)
	srv := fake(t)
	cache, _, _ := newCache(t, s, synthredis.WithCooldown(time.Millisecond))
	c, e := client(t, srv, cache)
	addrs := make([]netip.Addr, 10)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
	}
	failures := 0
	for round := range 6 {
		switch round {
		case 2:
			s.kill()
		case 4:
			s.restart(t)
		}
		for _, ip := range addrs {
			l, err := c.LookupIP(callCtx(t), ip)
			require.NoError(t, err, "round %d", round)
			require.Equal(t, ip, l.IP)
			if e.last().CacheErr != nil {
				failures++
			}
		}
	}
	assert.Positive(t, failures, "the failures are reported")
	// The cool-down (1 ms) has passed: the next lookup reaches Redis again.
	require.Eventually(t, func() bool {
		l, err := c.LookupIP(callCtx(t), addrs[0])
		return err == nil && !l.CachedAt.IsZero()
	}, time.Minute, 5*time.Millisecond, "cached again after the restart")
}

// TestRedisSlow: a Redis that does not answer (the process stopped) costs
// the first lookup the cache's timeout, the others nothing for the
// cool-down: their cache calls fail at once with ErrUnavailable. Every
// lookup succeeds.
func TestRedisSlow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cache func(t *testing.T, s *server) *synthredis.Cache
	}{
		// Its commands bounded by their context: called on the lookup's
		// goroutine.
		{"ContextTimeoutEnabled", func(t *testing.T, s *server) *synthredis.Cache {
			cache, _, _ := newCache(t, s, synthredis.WithTimeout(30*time.Millisecond), synthredis.WithCooldown(time.Hour))
			return cache
		}},
		// A client that would wait 10 s (its ReadTimeout): called on a
		// goroutine the cache stops waiting for.
		{"a client that ignores the context", func(t *testing.T, s *server) *synthredis.Cache {
			rdb := goredis.NewClient(&goredis.Options{Addr: s.addr, ReadTimeout: 10 * time.Second, MaxRetries: -1})
			t.Cleanup(func() { _ = rdb.Close() })
			cache, err := synthredis.New(rdb, synthredis.WithPrefix("test:slow:"), synthredis.WithTimeout(30*time.Millisecond), synthredis.WithCooldown(time.Hour))
			require.NoError(t, err)
			return cache
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := own(t)
			testRedisSlow(t, s, tc.cache(t, s))
		})
	}
}

func testRedisSlow(t *testing.T, s *server, cache *synthredis.Cache) {
	srv := fake(t)
	c, e := client(t, srv, cache)
	_, err := c.LookupIP(callCtx(t), addr)
	require.NoError(t, err)
	s.signal(syscall.SIGSTOP)
	defer s.signal(syscall.SIGCONT)

	_, err = c.LookupIP(callCtx(t), netip.MustParseAddr("198.51.100.1"))
	require.NoError(t, err)
	first := e.last().CacheErr
	require.Error(t, first)
	require.ErrorIs(t, first, context.DeadlineExceeded, "the first waited for the timeout")
	for i := range 5 {
		l, err := c.LookupIP(callCtx(t), addr)
		require.NoError(t, err, "lookup %d", i)
		assert.Zero(t, l.CachedAt, "from the API")
		assert.True(t, isUnavailable(e.last().CacheErr), "lookup %d did not ask Redis: %v", i, e.last().CacheErr)
	}
	_, err = c.LookupIPs(callCtx(t), []netip.Addr{addr})
	require.NoError(t, err)
	assert.True(t, isUnavailable(e.last().CacheErr), "nor did a batch")
}

// TestCallerContextDoesNotCoolDown: a Get cut short by its caller's
// context is no failure of Redis.
func TestCallerContextDoesNotCoolDown(t *testing.T) {
	t.Parallel()
	cache, _, _ := newCache(t, shared, synthredis.WithCooldown(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := cache.Get(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, cache.Set(context.Background(), "k", []byte("v"), time.Minute))
	v, err := cache.Get(context.Background(), "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("v"), v)
}

// TestPanicIsAFailure: a panic in go-redis (here on a connection the
// client opened before New, which the guard does not check, answered with
// a string of 2^62 bytes) fails the call, whether go-redis runs on the
// caller's goroutine or on the cache's own, and starts a cool-down: the
// process lives.
func TestPanicIsAFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		ctxTimeout bool
	}{
		{"ContextTimeoutEnabled", true},
		{"a client that ignores the context", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startHostile(t, map[string]string{"GET": "$" + lenPanic + "\r\n"})
			rdb := goredis.NewClient(&goredis.Options{Addr: h.addr, ContextTimeoutEnabled: tc.ctxTimeout,
				PoolSize: 1, MaxRetries: -1, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
			t.Cleanup(func() { _ = rdb.Close() })
			require.NoError(t, rdb.Ping(callCtx(t)).Err(), "the connection opened before New")
			cache, err := synthredis.New(rdb, synthredis.WithTimeout(time.Minute), synthredis.WithCooldown(time.Hour))
			require.NoError(t, err)

			_, err = cache.Get(callCtx(t), "k")
			require.ErrorContains(t, err, "synthient/redis: GET: go-redis panicked: runtime error: makeslice")
			_, err = cache.Get(callCtx(t), "k")
			require.ErrorIs(t, err, synthredis.ErrUnavailable, "a cool-down")
		})
	}
}
