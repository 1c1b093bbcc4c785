// Package redis is a lookup cache for synthient clients on a Redis server,
// shared by every host of a fleet: an answer one host paid for is free for
// the others. It lives in a module of its own, so that the SDK's module
// does not depend on a Redis client.
//
// New returns a *Cache, a synthient.Cache (and synthient.BatchCache, so
// that a batch lookup asks Redis once); give it to the client with
// synthient.WithCache:
//
//	rdb := goredis.NewClient(&goredis.Options{Addr: "cache.internal:6379"})
//	cache, err := redis.New(rdb, redis.WithPrefix("synthient:prod:"))
//	c, err := synthient.NewClient(key, synthient.WithCache(cache))
//
// Each entry is one Redis string, under the prefix and the SDK's key (such
// as "synthient:v1:ip:203.0.113.7"), holding the SDK's value as it is:
// compact, versioned and checksummed by the SDK, so that a value of another
// version, or anything else found under the key, is a miss and never a
// wrong answer (a new version of the SDK uses keys of its own, and does
// not overwrite the old one's). Each is stored with its expiry in Redis
// (SET with PX), the shorter of the client's TTL and WithTTL's.
//
// # Failures
//
// A Redis that is slow, down, or answers garbage never fails a lookup, nor
// slows any call to it by more than the cache's timeout (WithTimeout, 50
// ms by default), whatever the go-redis client's own timeouts and
// retries: each call returns by then with an error, and the lookup goes to
// the API. A miss makes two calls, the read and then the write of the
// answer, so a Redis slow but within its timeout slows it by at most twice
// that. After
// a failure, every call fails at once with an error matching
// ErrUnavailable for a cool-down (WithCooldown, 5 s by default); then one
// call tries Redis again. So while Redis is down, one lookup per cool-down
// waits for the timeout, and the others none. The client reports each
// failure to its observer (synthient.CallEnd.CacheErr) and logs them at
// most once a minute.
//
// go-redis allocates what a reply announces (a string of 64 GiB, an array
// of 2^40 elements) before it reads it, and panics on some lengths; no
// recover survives an allocation the runtime cannot make. So New adds a
// hook to rdb (to each node of a cluster or ring) that checks what Redis
// sends on each connection rdb dials from then on, and fails the
// connection at a reply with a string over 64 MiB, over about a million
// elements announced in arrays, sets and maps, aggregates nested over 64
// deep, or a line over 64 KiB: far above what the cache gets from a real
// Redis, which may be less than other uses of rdb need; give the cache a
// client of its own for those. Create the cache before rdb is used: a
// connection opened earlier is not checked. A panic in go-redis is a
// failure like the others.
//
// Give the cache a *goredis.Client with ContextTimeoutEnabled, as the
// example does: it then bounds each command by the cache's timeout itself,
// and the cache calls it on the lookup's goroutine; with any other client
// each call runs on a goroutine of its own, which the cache stops waiting
// for at the timeout. Few retries (MaxRetries) and short dial, read and
// write timeouts free the client's connections soon after a failure.
package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/synthient-go/synthient"
)

// Defaults of the options.
const (
	DefaultPrefix   = "synthient:"
	DefaultTimeout  = 50 * time.Millisecond
	DefaultCooldown = 5 * time.Second
)

// ErrUnavailable is matched (errors.Is) by the error of a call made during
// the cool-down after a failure: Redis was not asked.
var ErrUnavailable = errors.New("synthient/redis: Redis is unavailable")

// errCooling is the error of a call during a cool-down.
var errCooling = fmt.Errorf("%w: cooling down after a failure", ErrUnavailable)

// Cache is a synthient.Cache on Redis. Create one with New; it is safe for
// concurrent use, and any number of clients, on any number of hosts, may
// share its Redis.
type Cache struct {
	rdb      goredis.UniversalClient
	prefix   string
	ttl      time.Duration // 0: none of its own
	timeout  time.Duration
	cooldown time.Duration
	now      func() time.Time
	// direct reports that rdb bounds a command by its context (a
	// *goredis.Client with ContextTimeoutEnabled): a call then runs on the
	// caller's goroutine.
	direct bool

	// downUntil is when the cool-down after the last failure ends, in Unix
	// nanoseconds; 0 while Redis works.
	downUntil atomic.Int64
}

var _ synthient.BatchCache = (*Cache)(nil)

// Option configures a Cache. An invalid value makes New return an error.
type Option func(*Cache) error

// WithPrefix puts prefix before every key, to keep the cache's entries
// apart from others in the same Redis (another environment, another API).
// The default is DefaultPrefix; "" is allowed.
func WithPrefix(prefix string) Option {
	return func(c *Cache) error {
		c.prefix = prefix
		return nil
	}
}

// WithTTL keeps each entry at most d, when that is shorter than what the
// client asks (24 hours for an IP's answer, an hour for a domain's). d
// must be positive.
func WithTTL(d time.Duration) Option {
	return func(c *Cache) error {
		if d <= 0 {
			return fmt.Errorf("synthient/redis: TTL must be positive, got %v", d)
		}
		c.ttl = d
		return nil
	}
}

// WithTimeout bounds each call to Redis: a Get or Set, or a batch of them.
// The default is DefaultTimeout; d must be positive.
func WithTimeout(d time.Duration) Option {
	return func(c *Cache) error {
		if d <= 0 {
			return fmt.Errorf("synthient/redis: timeout must be positive, got %v", d)
		}
		c.timeout = d
		return nil
	}
}

// WithCooldown sets how long, after a failure, every call fails at once
// with ErrUnavailable instead of asking Redis. The default is
// DefaultCooldown; d must be positive.
func WithCooldown(d time.Duration) Option {
	return func(c *Cache) error {
		if d <= 0 {
			return fmt.Errorf("synthient/redis: cool-down must be positive, got %v", d)
		}
		c.cooldown = d
		return nil
	}
}

// New returns a Cache on rdb (a *goredis.Client, a cluster or a ring).
// It does no I/O; it adds to rdb the hook that checks Redis's replies (see
// Failures). The Cache does not own rdb: close rdb when done with it. A
// nil rdb or an invalid option is an error.
func New(rdb goredis.UniversalClient, opts ...Option) (*Cache, error) {
	if rdb == nil {
		return nil, errors.New("synthient/redis: the Redis client is nil")
	}
	c := &Cache{rdb: rdb, prefix: DefaultPrefix, timeout: DefaultTimeout, cooldown: DefaultCooldown, now: time.Now}
	if cl, ok := rdb.(*goredis.Client); ok {
		c.direct = cl.Options().ContextTimeoutEnabled
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	guard(rdb)
	return c, nil
}

// Get returns the value under key, or nil when there is none.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := c.call(ctx, "GET", func(ctx context.Context) error {
		b, err := c.rdb.Get(ctx, c.prefix+key).Bytes()
		if errors.Is(err, goredis.Nil) {
			return nil
		}
		v = b
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Set stores value under key, to expire in Redis after the shorter of ttl
// and the cache's TTL.
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	ttl = c.expiry(ttl)
	if ttl <= 0 {
		return nil
	}
	return c.call(ctx, "SET", func(ctx context.Context) error {
		return c.rdb.Set(ctx, c.prefix+key, value, ttl).Err()
	})
}

// GetBatch returns the values under keys, in order, nil for a key with
// none, in one round trip (a pipeline of GETs, which a cluster splits by
// node).
func (c *Cache) GetBatch(ctx context.Context, keys []string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	err := c.call(ctx, "GET", func(ctx context.Context) error {
		cmds := make([]*goredis.StringCmd, len(keys))
		_, err := c.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, k := range keys {
				cmds[i] = p.Get(ctx, c.prefix+k)
			}
			return nil
		})
		if err != nil && !errors.Is(err, goredis.Nil) {
			return err
		}
		for i, cmd := range cmds {
			b, err := cmd.Bytes()
			switch {
			case errors.Is(err, goredis.Nil):
			case err != nil:
				return err
			default:
				out[i] = b
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetBatch stores each entry, as Set would, in one round trip.
func (c *Cache) SetBatch(ctx context.Context, entries []synthient.CacheEntry) error {
	return c.call(ctx, "SET", func(ctx context.Context) error {
		_, err := c.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, e := range entries {
				if ttl := c.expiry(e.TTL); ttl > 0 {
					p.Set(ctx, c.prefix+e.Key, e.Value, ttl)
				}
			}
			return nil
		})
		return err
	})
}

// expiry returns the expiry of an entry the client keeps for ttl.
func (c *Cache) expiry(ttl time.Duration) time.Duration {
	if c.ttl > 0 && (ttl <= 0 || c.ttl < ttl) {
		return c.ttl
	}
	return ttl
}

// call runs fn, a command named cmd, within the cache's timeout, unless a
// cool-down is in force; a call that timed out returns an error matching
// context.DeadlineExceeded. Unless the client bounds commands by their
// context (direct), fn runs on a goroutine of its own, so that a client
// that waits past the timeout does not hold the lookup; its result is then
// dropped. A failure to reach Redis, or to hear from it in time, starts a
// cool-down.
func (c *Cache) call(ctx context.Context, cmd string, fn func(context.Context) error) error {
	if err := c.enter(); err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var err error
	if c.direct {
		err = safe(ctx, fn)
	} else {
		done := make(chan error, 1)
		go func() { done <- safe(ctx, fn) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	var reply goredis.Error
	switch {
	case err != nil && (parent.Err() != nil || errors.As(err, &reply)):
		// The caller's context ended, or Redis answered with an error
		// (a key of another type): Redis is there.
		return fmt.Errorf("synthient/redis: %s: %w", cmd, err)
	case err != nil:
		c.downUntil.Store(c.now().Add(c.cooldown).UnixNano())
		var ne net.Error
		if ctx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("synthient/redis: %s: no answer in time (%v): %w", cmd, c.timeout, context.DeadlineExceeded)
		}
		return fmt.Errorf("synthient/redis: %s: %w", cmd, err)
	}
	c.downUntil.Store(0)
	return nil
}

// safe returns what fn returns, or an error when it panics: go-redis
// panics on some replies of a server that answers garbage.
func safe(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("go-redis panicked: %v", r)
		}
	}()
	return fn(ctx)
}

// enter returns ErrUnavailable during a cool-down. The first call after
// one moves it on by a cool-down before trying, so that while Redis stays
// down a single call per cool-down waits for it.
func (c *Cache) enter() error {
	until := c.downUntil.Load()
	if until == 0 {
		return nil
	}
	now := c.now().UnixNano()
	if now < until || !c.downUntil.CompareAndSwap(until, now+int64(c.cooldown)) {
		return errCooling
	}
	return nil
}
