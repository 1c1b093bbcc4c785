package redis_test

// Tests of guard.go: a server that passes for Redis and answers garbage.

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	synthredis "github.com/synthient-go/synthient/redis"
	"github.com/synthient-go/synthient/synthienttest"
)

// Lengths no Redis sends: 2^62 makes go-redis's make panic; 64 GiB and
// 2^40 elements are lengths the runtime cannot allocate, which kills the
// process whatever recovers.
const (
	lenPanic = "4611686018427387904"
	lenOOM   = "68719476736"
	countOOM = "1099511627776"
)

// hostileGarbage is what a hostile server answers, and to which command.
var hostileGarbage = []struct {
	name, cmd, reply string
}{
	{"GET: a string of 2^62 bytes", "GET", "$" + lenPanic + "\r\n"},
	{"GET: a string of 64 GiB", "GET", "$" + lenOOM + "\r\n"},
	{"GET: a negative length", "GET", "$-5\r\n"},
	{"GET: an array of 2^62", "GET", "*" + lenPanic + "\r\n"},
	{"GET: a line without end", "GET", endless},
	{"SET: a string of 2^62 bytes", "SET", "$" + lenPanic + "\r\n"},
	{"SET: a string of 64 GiB", "SET", "$" + lenOOM + "\r\n"},
	{"SET: a line without end", "SET", endless},
	{"HELLO: a string of 2^62 bytes", "HELLO", "%1\r\n$6\r\nserver\r\n$" + lenPanic + "\r\n"},
	{"HELLO: an array of 2^40", "HELLO", "%1\r\n$6\r\nserver\r\n*" + countOOM + "\r\n"},
	{"HELLO: a map of 2^62", "HELLO", "%" + lenPanic + "\r\n"},
	{"HELLO: arrays nested 10^5 deep", "HELLO", "%1\r\n$6\r\nserver\r\n" + strings.Repeat("*1\r\n", 100_000)},
	{"HELLO: arrays of 2^20 in arrays of 2^20", "HELLO", "%1\r\n$6\r\nserver\r\n" + strings.Repeat("*1048576\r\n", 3)},
}

// hostileClients are the go-redis clients the cache may be given: each
// calls go-redis on another goroutine.
var hostileClients = []struct {
	name string
	rdb  func(addr string) goredis.UniversalClient
}{
	// Called on the lookup's goroutine.
	{"ContextTimeoutEnabled", func(addr string) goredis.UniversalClient {
		return goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1,
			DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	}},
	// Called on a goroutine of the cache's.
	{"a client that ignores the context", func(addr string) goredis.UniversalClient {
		return goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1,
			DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	}},
	// A pipeline and the heartbeat run on goroutines of go-redis's.
	{"a ring", func(addr string) goredis.UniversalClient {
		return goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"one": addr}, MaxRetries: -1,
			DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
			HeartbeatFrequency: 10 * time.Millisecond})
	}},
}

// TestHostileRedis: a server that answers the handshake, a GET or a SET
// with garbage (lengths no Redis sends, negative ones, a line without
// end) fails no lookup, single or batch, and never takes the process
// down, whatever go-redis client the cache has: the lookup answers from
// the API, the failure is reported, and a cool-down follows.
func TestHostileRedis(t *testing.T) {
	t.Parallel()
	for _, g := range hostileGarbage {
		for _, cl := range hostileClients {
			for _, batch := range []bool{false, true} {
				name := g.name + "/" + cl.name + "/single"
				if batch {
					name = g.name + "/" + cl.name + "/batch"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					h := startHostile(t, map[string]string{g.cmd: g.reply})
					rdb := cl.rdb(h.addr)
					t.Cleanup(func() { _ = rdb.Close() })
					cache, err := synthredis.New(rdb, synthredis.WithTimeout(2*time.Second), synthredis.WithCooldown(time.Hour))
					require.NoError(t, err)
					testHostile(t, cache, batch)
				})
			}
		}
	}
}

func testHostile(t *testing.T, cache *synthredis.Cache, batch bool) {
	srv := fake(t)
	c, e := client(t, srv, cache)
	lookup := func(ip netip.Addr) (time.Time, error) {
		if !batch {
			l, err := c.LookupIP(callCtx(t), ip)
			if err != nil {
				return time.Time{}, err
			}
			return l.CachedAt, nil
		}
		ls, err := c.LookupIPs(callCtx(t), []netip.Addr{ip, netip.MustParseAddr("192.0.2.1")})
		if err != nil {
			return time.Time{}, err
		}
		return ls[0].CachedAt, nil
	}
	at, err := lookup(addr)
	require.NoError(t, err, "garbage never fails a lookup")
	assert.Zero(t, at, "from the API")
	failure := e.last().CacheErr
	require.Error(t, failure, "the store's failure is reported")
	assert.False(t, isUnavailable(failure), "Redis was asked: %v", failure)

	_, err = lookup(netip.MustParseAddr("198.51.100.1"))
	require.NoError(t, err)
	assert.True(t, isUnavailable(e.last().CacheErr), "a cool-down followed: %v", e.last().CacheErr)
	route := synthienttest.RouteLookupIP
	if batch {
		route = synthienttest.RouteLookupIPs
	}
	assert.Equal(t, 2, srv.Arrivals(route))
}
