package synthient

import (
	"context"
	"time"

	"github.com/maypok86/otter/v2"
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
	return &memoryCache{
		entries: otter.Must(&otter.Options[string, memoryEntry]{
			MaximumSize: size,
			// Maintenance runs on the goroutine that reads or writes, so
			// that the cache starts none of its own. Expiry is the
			// entries' own (memoryEntry.expires), read on Get: otter's
			// would run a goroutine for its clean-ups.
			Executor: func(fn func()) { fn() },
		}),
		ttl: ttl,
		now: time.Now,
	}
}

// memoryCache is the Cache of NewMemoryCache.
type memoryCache struct {
	entries *otter.Cache[string, memoryEntry]
	ttl     time.Duration // 0 or less: none of its own
	now     func() time.Time
}

// memoryEntry is a value and when it expires, in Unix nanoseconds.
type memoryEntry struct {
	value   []byte
	expires int64
}

// Get returns the value under key, unless it expired.
func (m *memoryCache) Get(_ context.Context, key string) ([]byte, error) {
	e, ok := m.entries.GetIfPresent(key)
	if !ok {
		return nil, nil
	}
	if now := m.now().UnixNano(); now >= e.expires {
		// Drop it unless a Set replaced it meanwhile.
		m.entries.ComputeIfPresent(key, func(old memoryEntry) (memoryEntry, otter.ComputeOp) {
			if now >= old.expires {
				return old, otter.InvalidateOp
			}
			return old, otter.CancelOp
		})
		return nil, nil
	}
	return e.value, nil
}

// Set stores value under key for the shorter of ttl and the cache's own.
func (m *memoryCache) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if m.ttl > 0 && (ttl <= 0 || m.ttl < ttl) {
		ttl = m.ttl
	}
	if ttl <= 0 {
		return nil // nothing would be kept
	}
	m.entries.Set(key, memoryEntry{value: value, expires: m.now().Add(ttl).UnixNano()})
	return nil
}
