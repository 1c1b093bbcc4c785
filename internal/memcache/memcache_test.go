package memcache_test

// Tests of memcache.go: bounded, expiring, safe for concurrent use.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/memcache"
)

// stored counts the keys of key(0), ..., key(n-1) that c returns.
func stored(t *testing.T, c *memcache.Cache, n int) int {
	t.Helper()
	found := 0
	for i := range n {
		v, err := c.Get(context.Background(), memKey(i))
		require.NoError(t, err)
		if v != nil {
			assert.Equal(t, []byte(memKey(i)), v, "the value set under the key")
			found++
		}
	}
	return found
}

func memKey(i int) string { return fmt.Sprintf("v1:ip:10.0.%d.%d", i/256, i%256) }

// TestBounded: the cache keeps at most size entries, and keeps them.
func TestBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		size, want int
	}{
		{"size 1", 1, 1},
		{"size 100", 100, 100},
		{"size 10000", 10_000, 10_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := memcache.New(tc.size, time.Hour)
			ctx := context.Background()
			for i := range tc.want {
				require.NoError(t, c.Set(ctx, memKey(i), []byte(memKey(i)), time.Hour))
			}
			assert.Equal(t, tc.want, stored(t, c, tc.want), "up to size, every entry is kept")
			for i := tc.want; i < 3*tc.want; i++ {
				require.NoError(t, c.Set(ctx, memKey(i), []byte(memKey(i)), time.Hour))
			}
			n := stored(t, c, 3*tc.want)
			assert.LessOrEqual(t, n, tc.want, "at most size entries")
			assert.GreaterOrEqual(t, n, (tc.want+1)/2, "a full cache stays mostly full")
		})
	}
}

// TestTTL: an entry expires after the shorter of its TTL and
// the cache's; a cache without a TTL of its own takes the entry's; a
// later Set renews it.
func TestTTL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		cacheTTL, ttl time.Duration
		lives         time.Duration
	}{
		{"the cache's, shorter", time.Minute, time.Hour, time.Minute},
		{"the entry's, shorter", time.Hour, time.Minute, time.Minute},
		{"no TTL of the cache's", 0, 3 * time.Hour, 3 * time.Hour},
		{"a negative one is none", -time.Second, 3 * time.Hour, 3 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				c := memcache.New(10, tc.cacheTTL)
				ctx := context.Background()
				require.NoError(t, c.Set(ctx, "k", []byte("v1"), tc.ttl))
				time.Sleep(tc.lives - time.Nanosecond)
				v, _ := c.Get(ctx, "k")
				assert.Equal(t, []byte("v1"), v, "alive until its TTL")
				time.Sleep(time.Nanosecond)
				v, _ = c.Get(ctx, "k")
				assert.Nil(t, v, "expired")

				require.NoError(t, c.Set(ctx, "k", []byte("v2"), tc.ttl))
				time.Sleep(tc.lives / 2)
				require.NoError(t, c.Set(ctx, "k", []byte("v3"), tc.ttl))
				time.Sleep(tc.lives - time.Nanosecond)
				v, _ = c.Get(ctx, "k")
				assert.Equal(t, []byte("v3"), v, "a Set renews the entry")
			})
		})
	}
}

// TestNothingKept: a Set whose TTL is 0 or less, in a cache without one
// of its own, keeps nothing.
func TestNothingKept(t *testing.T) {
	t.Parallel()
	c := memcache.New(10, 0)
	for _, ttl := range []time.Duration{0, -time.Second} {
		require.NoError(t, c.Set(context.Background(), "k", []byte("v"), ttl))
		v, err := c.Get(context.Background(), "k")
		require.NoError(t, err)
		assert.Nil(t, v, "kept for a TTL of %v", ttl)
	}
}

// TestConcurrent: many goroutines reading and writing one
// cache (under -race) see either no value or one that was set.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	c := memcache.New(64, time.Hour)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 2000 {
				k := memKey((g*7 + i) % 128)
				if i%3 == 0 {
					assert.NoError(t, c.Set(context.Background(), k, []byte(k), time.Hour)) //nolint:testifylint // in a goroutine: require's FailNow must not run in one
					continue
				}
				v, err := c.Get(context.Background(), k)
				assert.NoError(t, err) //nolint:testifylint // in a goroutine: require's FailNow must not run in one
				if v != nil {
					assert.Equal(t, k, string(v))
				}
			}
		})
	}
	wg.Wait()
}
