package redis_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/redis"
	"github.com/synthient-go/synthient/synthienttest"
)

// Two hosts share a Redis: the answer the first paid for is the second's,
// free. The example runs against the fake API of package synthienttest
// and the test's own redis-server; with a real key, leave out WithBaseURL.
func Example() {
	api := synthienttest.NewServer()
	defer api.Close()

	rdb := goredis.NewClient(&goredis.Options{
		Addr:                  shared.addr, // your Redis, as "cache.internal:6379"
		ContextTimeoutEnabled: true,        // free a connection when the cache gives up on a call
		MaxRetries:            -1,
	})
	defer rdb.Close()                                                //nolint:errcheck // the program ends: nothing is lost whatever Close says
	defer rdb.Del(context.Background(), "example:v1:ip:203.0.113.7") // so that the example runs the same each time

	// Each call to Redis is bounded by the cache's timeout, 50 ms by
	// default; this one is for a test machine however loaded.
	cache, err := redis.New(rdb, redis.WithPrefix("example:"), redis.WithTimeout(time.Minute))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	ip := netip.MustParseAddr("203.0.113.7")
	for _, host := range []string{"host 1", "host 2"} {
		c, err := synthient.NewClient(api.APIKey, synthient.WithBaseURL(api.URL), synthient.WithCache(cache))
		if err != nil {
			fmt.Println(err)
			return
		}
		r, err := c.LookupIP(ctx, ip)
		c.Close()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(host, r.IP, "cached:", !r.CachedAt.IsZero())
	}
	fmt.Println("requests to the API:", api.Arrivals(synthienttest.RouteLookupIP))
	// Output:
	// host 1 203.0.113.7 cached: false
	// host 2 203.0.113.7 cached: true
	// requests to the API: 1
}
