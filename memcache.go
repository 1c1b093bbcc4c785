package synthient

import (
	"time"

	"github.com/synthient-go/synthient/internal/memcache"
)

// DefaultMemoryCacheSize is the number of entries a memory cache keeps
// when NewMemoryCache is given a size of 0 or less.
const DefaultMemoryCacheSize = 10_000

// NewMemoryCache returns a Cache that keeps at most size entries in memory,
// each for ttl at most (and never longer than the client asks: see
// WithCache). When it is full, an entry is evicted for a new one by how
// recently and how often it was used (W-TinyLFU). A size of 0 or less
// means DefaultMemoryCacheSize; a ttl of 0 or less, only the client's
// limit (24 hours for an IP answer, an hour for a domain's).
//
// An entry takes about 130 bytes besides its key and value; a full IP
// answer's value is about 300 bytes (see docs/performance.md). The cache
// is safe for concurrent use, starts no goroutine, and needs no closing:
// the garbage collector frees it with the last client that holds it. Many
// clients may share one.
func NewMemoryCache(size int, ttl time.Duration) Cache {
	if size <= 0 {
		size = DefaultMemoryCacheSize
	}
	return memcache.New(size, ttl)
}
