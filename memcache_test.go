package synthient_test

// Tests of memcache.go: NewMemoryCache's defaults. The memory engine
// itself is tested in internal/memcache.

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// TestNewMemoryCacheDefaults: a size of 0 or less keeps
// DefaultMemoryCacheSize entries; a ttl of 0 or less keeps an entry as
// long as its Set asks, and a positive one caps it.
func TestNewMemoryCacheDefaults(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, -1} {
		c := synthient.NewMemoryCache(size, time.Hour)
		ctx := context.Background()
		const n = 2 * synthient.DefaultMemoryCacheSize
		for i := range n {
			require.NoError(t, c.Set(ctx, fmt.Sprint(i), []byte{1}, time.Hour))
		}
		kept := 0
		for i := range n {
			if v, _ := c.Get(ctx, fmt.Sprint(i)); v != nil {
				kept++
			}
		}
		assert.LessOrEqual(t, kept, synthient.DefaultMemoryCacheSize, "size %d: at most the default", size)
		assert.Greater(t, kept, synthient.DefaultMemoryCacheSize/2, "size %d: a full cache stays mostly full", size)
	}
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		none, capped := synthient.NewMemoryCache(10, 0), synthient.NewMemoryCache(10, time.Minute)
		for _, c := range []synthient.Cache{none, capped} {
			require.NoError(t, c.Set(ctx, "k", []byte("v"), time.Hour))
		}
		time.Sleep(time.Minute)
		v, _ := none.Get(ctx, "k")
		assert.Equal(t, []byte("v"), v, "a ttl of 0: the entry's own")
		v, _ = capped.Get(ctx, "k")
		assert.Nil(t, v, "the cache's ttl caps the entry's")
	})
}
