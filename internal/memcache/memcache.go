// Package memcache is the in-memory store of lookup answers behind
// synthient.NewMemoryCache: a bounded map of keys to values, each value
// with an expiry.
//
// The model. The entries live in an otter cache of at most a fixed number
// of entries; when it is full, an entry is evicted for a new one by how
// recently and how often it was used (W-TinyLFU). Each entry keeps when it
// expires, the shorter of the TTL its Set gave and the cache's own (none
// when that is 0 or less). Get reads the clock, drops an entry that has
// expired (unless a Set replaced it meanwhile) and returns no value for
// it. Otter's own expiry is not used: it runs a goroutine for its
// clean-ups, where this cache starts none (its maintenance runs on the
// goroutine that reads or writes) and needs no closing.
package memcache

import (
	"context"
	"time"

	"github.com/maypok86/otter/v2"
)

// Cache is a bounded in-memory store of values with an expiry. It is safe
// for concurrent use. Its Get and Set have the signatures of
// synthient.Cache's, and never fail.
type Cache struct {
	entries *otter.Cache[string, entry]
	ttl     time.Duration // 0 or less: none of its own
	now     func() time.Time
}

// entry is a value and when it expires, in Unix nanoseconds.
type entry struct {
	value   []byte
	expires int64
}

// New returns a Cache of at most size entries (size must be positive),
// each kept at most ttl (0 or less: only what its Set asks).
func New(size int, ttl time.Duration) *Cache {
	return &Cache{
		entries: otter.Must(&otter.Options[string, entry]{
			MaximumSize: size,
			// Maintenance on the goroutine that reads or writes: the
			// cache starts none of its own.
			Executor: func(fn func()) { fn() },
		}),
		ttl: ttl,
		now: time.Now,
	}
}

// Get returns the value under key, unless it expired.
func (m *Cache) Get(_ context.Context, key string) ([]byte, error) {
	e, ok := m.entries.GetIfPresent(key)
	if !ok {
		return nil, nil
	}
	if now := m.now().UnixNano(); now >= e.expires {
		// Drop it unless a Set replaced it meanwhile.
		m.entries.ComputeIfPresent(key, func(old entry) (entry, otter.ComputeOp) {
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
// Nothing is kept for a ttl of 0 or less (when the cache has none).
func (m *Cache) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if m.ttl > 0 && (ttl <= 0 || m.ttl < ttl) {
		ttl = m.ttl
	}
	if ttl <= 0 {
		return nil // nothing would be kept
	}
	m.entries.Set(key, entry{value: value, expires: m.now().Add(ttl).UnixNano()})
	return nil
}
