package synthient

import (
	"context"
	"log/slog"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient/internal/memcache"
)

// Cache is a store of lookup answers for a Client: see WithCache.
// NewMemoryCache returns one that keeps them in memory; module
// github.com/synthient-go/synthient/redis has one that many hosts share.
// Implement it for another store.
//
// Keys are short printable ASCII strings the client makes, such as
// "v1:ip:203.0.113.7"; values are bytes it encodes, versioned and
// checksummed: a store keeps them as they are and needs to know nothing of
// them. The client checks every value it gets, so that a value of another
// version, one that is damaged, or one under the wrong key is a miss,
// never a wrong answer. It never modifies a value it gave to Set or got
// from Get, so a store may keep and return the slice itself.
//
// The methods must be safe for concurrent use, and should return quickly:
// a lookup waits for them (a store over a network should bound each call
// with a short timeout of its own). Their context is the lookup's: a
// store that honours it holds a lookup no longer than its deadline. A
// miss costs one Get and, once answered, one Set (rarely a second Get,
// when an identical lookup stored its answer meanwhile). An error makes
// the lookup go on without the cache: a failing store costs requests,
// never a lookup.
type Cache interface {
	// Get returns the value stored under key, or nil and a nil error when
	// there is none, or it expired.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key for ttl, which is positive: the store
	// must not return it from Get after ttl has passed (it may drop it
	// sooner, or keep it less long by a limit of its own).
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// BatchCache is a Cache that also gets and sets many entries at once, in
// one round trip to its store. LookupIPs and LookupIPsAll use those
// methods when the client's Cache implements them; otherwise they call Get
// and Set for each address.
type BatchCache interface {
	Cache
	// GetBatch returns one value per key, in order, nil for a key with
	// none; on an error, every key is taken as a miss.
	GetBatch(ctx context.Context, keys []string) ([][]byte, error)
	// SetBatch stores each entry, as Set would.
	SetBatch(ctx context.Context, entries []CacheEntry) error
}

// CacheEntry is one entry given to BatchCache.SetBatch.
type CacheEntry struct {
	Key   string
	Value []byte
	// TTL is positive: see Cache.Set.
	TTL time.Duration
}

// WithCache makes the client's lookups consult c before they send
// anything: LookupIP, LookupDomain, LookupIPs and LookupIPsAll. An answer
// found there is returned without a request or a charge, its CachedAt
// field set to when the API gave it, so that its age is
// time.Since(CachedAt); a fresh answer has a zero CachedAt. Each whole
// successful answer the API gives is stored in c; an error, a 429 or
// another refusal, an unknown outcome, and an address a LookupIPs answer
// lacks are never stored. An IP answer is kept at most 24 hours and a
// domain answer (which counts the last day's events) at most an hour, or
// less when c keeps entries less long; an older one a store returns is
// taken as a miss.
//
// A failing c (an error, a value that does not decode) never fails a
// lookup: the lookup goes to the API, the failure is reported to the
// observer (CallEnd.CacheErr) and logged to the client's logger at Warn at
// most once a minute, with the number of failures since the last log.
//
// The observer's CallEnd counts the answers taken from c (CacheHits) and
// the credits they saved. Keys do not hold the base URL or the API key:
// give clients of different APIs (a test server, production) different
// stores, or prefixes. nil is an error.
func WithCache(c Cache) Option {
	return func(s *settings) error {
		if c == nil {
			return invalid("cache is nil")
		}
		s.cache = c
		return nil
	}
}

// cacheLogInterval is the least time between two logs of a cache's
// failures.
const cacheLogInterval = time.Minute

// lookupCache is a client's use of its Cache: the keys and values of its
// answers, and the reporting of the store's failures. A nil *lookupCache
// is a client without a cache: its methods find nothing and store nothing.
type lookupCache struct {
	store  Cache
	batch  BatchCache // store, when it implements BatchCache
	logger *slog.Logger
	now    func() time.Time
	// expires reports that the store is the client's own memory cache,
	// which never returns an entry past the TTL it was given: its answers
	// need no check of their age (and a hit no reading of the clock).
	expires bool

	nextLog  atomic.Int64 // Unix nanoseconds before which no failure is logged
	failures atomic.Int64 // failures not logged yet
}

func newLookupCache(c Cache, logger *slog.Logger) *lookupCache {
	if c == nil {
		return nil
	}
	lc := &lookupCache{store: c, logger: logger, now: time.Now}
	lc.batch, _ = c.(BatchCache)
	_, lc.expires = c.(*memcache.Cache)
	return lc
}

// fail reports a failure of the store, err, during op: it is logged, at
// most once per cacheLogInterval, and returned for the observer.
func (lc *lookupCache) fail(ctx context.Context, op string, err error) error {
	lc.failures.Add(1)
	if lc.logger == nil {
		return err
	}
	now := lc.now().UnixNano()
	next := lc.nextLog.Load()
	if now < next || !lc.nextLog.CompareAndSwap(next, now+int64(cacheLogInterval)) {
		return err
	}
	n := lc.failures.Swap(0)
	lc.logger.LogAttrs(ctx, slog.LevelWarn, "synthient: lookup cache failed; looking up without it",
		slog.String("op", op), slog.String("error", err.Error()), slog.Int64("failures", n))
	return err
}

// get returns the value under key, or nil; err is the store's failure.
func (lc *lookupCache) get(ctx context.Context, op, key string) ([]byte, error) {
	v, err := lc.store.Get(ctx, key)
	if err != nil {
		return nil, lc.fail(ctx, op, err)
	}
	return v, nil
}

// fresh reports whether an answer given at is young enough for ttl, and
// not from the future by more than a clock's drift.
func (lc *lookupCache) fresh(at time.Time, ttl time.Duration) bool {
	if lc.expires {
		return true
	}
	age := lc.now().Sub(at)
	return age < ttl && age > -time.Minute
}

// ip returns the cached answer for ip, or nil; err is the store's failure
// or a value that does not decode. An IPv4-mapped address is the IPv4
// address it maps: the answer's IP is then that address.
func (lc *lookupCache) ip(ctx context.Context, op string, ip netip.Addr) (*IPLookup, error) {
	if lc == nil {
		return nil, nil
	}
	ip = ip.Unmap()
	key := ipKey(ip)
	v, err := lc.get(ctx, op, key)
	if v == nil {
		return nil, err
	}
	l, at, err := decodeIP(key, v)
	switch {
	case err != nil:
		return nil, lc.fail(ctx, op, err)
	case l.IP != ip || !lc.fresh(at, ipCacheTTL):
		return nil, nil
	}
	l.CachedAt = at
	return l, nil
}

// putIP stores l, given at, under the address it answers.
func (lc *lookupCache) putIP(ctx context.Context, op string, l *IPLookup, at time.Time) error {
	if lc == nil {
		return nil
	}
	return lc.put(ctx, op, ipKey(l.IP.Unmap()), encodeIP(l, at), ipCacheTTL)
}

// put stores v under key for ttl. ctx is the request's: a store that
// waits holds the lookup no longer than its callers' deadline.
func (lc *lookupCache) put(ctx context.Context, op, key string, v []byte, ttl time.Duration) error {
	if err := lc.store.Set(ctx, key, v, ttl); err != nil {
		return lc.fail(ctx, op, err)
	}
	return nil
}

// domain returns the cached answer under key, or nil.
func (lc *lookupCache) domain(ctx context.Context, key string) (*DomainLookup, error) {
	if lc == nil {
		return nil, nil
	}
	v, err := lc.get(ctx, "LookupDomain", key)
	if v == nil {
		return nil, err
	}
	d, at, err := decodeDomain(key, v)
	switch {
	case err != nil:
		return nil, lc.fail(ctx, "LookupDomain", err)
	case !lc.fresh(at, domainCacheTTL):
		return nil, nil
	}
	d.CachedAt = at
	return d, nil
}

// putDomain stores d, given at, under key.
func (lc *lookupCache) putDomain(ctx context.Context, key string, d *DomainLookup, at time.Time) error {
	if lc == nil {
		return nil
	}
	v, err := encodeDomain(key, d, at)
	if err != nil {
		return lc.fail(ctx, "LookupDomain", err)
	}
	return lc.put(ctx, "LookupDomain", key, v, domainCacheTTL)
}

// ips returns the cached answers for ips, in order, nil for a miss, each
// with its address as given, and how many were found; err is the first
// failure. It asks the store once when it is a BatchCache.
func (lc *lookupCache) ips(ctx context.Context, op string, ips []netip.Addr) (found []*IPLookup, hits int, err error) {
	if lc == nil {
		return nil, 0, nil
	}
	if lc.batch == nil {
		found = make([]*IPLookup, len(ips))
		for i, ip := range ips {
			l, gerr := lc.ip(ctx, op, ip)
			if gerr != nil && err == nil {
				err = gerr
			}
			if l != nil {
				l.IP = ip
				found[i] = l
				hits++
			}
		}
		return found, hits, err
	}
	keys := make([]string, len(ips))
	for i, ip := range ips {
		keys[i] = ipKey(ip.Unmap())
	}
	vals, gerr := lc.batch.GetBatch(ctx, keys)
	if gerr != nil {
		return nil, 0, lc.fail(ctx, op, gerr)
	}
	found = make([]*IPLookup, len(ips))
	for i, v := range vals[:min(len(vals), len(ips))] {
		if v == nil {
			continue
		}
		l, at, derr := decodeIP(keys[i], v)
		switch {
		case derr != nil:
			if err == nil {
				err = lc.fail(ctx, op, derr)
			}
		case l.IP == ips[i].Unmap() && lc.fresh(at, ipCacheTTL):
			l.IP, l.CachedAt = ips[i], at
			found[i] = l
			hits++
		}
	}
	return found, hits, err
}

// putIPs stores the answers ls, given at, each under the address it
// answers.
func (lc *lookupCache) putIPs(ctx context.Context, op string, ls []IPLookup, at time.Time) error {
	if lc == nil || len(ls) == 0 {
		return nil
	}
	if lc.batch == nil {
		var err error
		for i := range ls {
			if perr := lc.putIP(ctx, op, &ls[i], at); perr != nil && err == nil {
				err = perr
			}
		}
		return err
	}
	entries := make([]CacheEntry, len(ls))
	for i := range ls {
		entries[i] = CacheEntry{Key: ipKey(ls[i].IP.Unmap()), Value: encodeIP(&ls[i], at), TTL: ipCacheTTL}
	}
	if err := lc.batch.SetBatch(ctx, entries); err != nil {
		return lc.fail(ctx, op, err)
	}
	return nil
}
