package synthient_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// The examples run against the fake API of package synthienttest; with a
// real key, leave out WithBaseURL.

func Example() {
	srv := synthienttest.NewServer()
	defer srv.Close()

	c, err := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	r, err := c.LookupIP(context.Background(), netip.MustParseAddr("203.0.113.7"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.IP, r.Network.Type, r.Location.Country, r.Intelligence.Categories)
	// Output: 203.0.113.7 RESIDENTIAL DE [RESIDENTIAL_PROXY]
}

// One errors.As reaches the API's answer; a second one, on *Error, says how
// many requests were sent and why the client stopped.
func ExampleAPIError() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	// The rate limiter asks for a two-minute wait: more than the 60 s the
	// client waits out, so the error comes back at once.
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "120"})

	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	_, err := c.LookupIP(context.Background(), netip.MustParseAddr("198.51.100.23"))
	var apiErr *synthient.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr) // only the status: safe to log
		fmt.Println("retry after", *apiErr.RetryAfter)
	}
	var e *synthient.Error
	if errors.As(err, &e) {
		fmt.Println(e.Attempts, "attempt,", e.StopReason)
	}
	// Output:
	// 429 Too Many Requests
	// retry after 2m0s
	// 1 attempt, retry_after_exceeds_max
}

// A billed lookup that failed after the request was written is not sent
// again: the API may have done the work and charged for it.
func ExampleConnectionError() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})

	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	_, err := c.LookupIP(context.Background(), netip.MustParseAddr("198.51.100.23"))
	var connErr *synthient.ConnectionError
	if errors.As(err, &connErr) {
		fmt.Println("may have been processed:", !connErr.NotSent)
	}
	fmt.Println("requests sent:", srv.Arrivals(synthienttest.RouteLookupIP))
	// Output:
	// may have been processed: true
	// requests sent: 1
}

// A bulk lookup reads its input lazily and yields one result per address,
// in input order; a repeated address is answered from its first
// occurrence, and never charged twice.
func ExampleClient_LookupIPsAll() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	addrs := []netip.Addr{
		netip.MustParseAddr("203.0.113.7"),
		{}, // the zero Addr: invalid, never sent
		netip.MustParseAddr("198.51.100.23"),
		netip.MustParseAddr("203.0.113.7"),
	}
	credits := 0
	for r, err := range c.LookupIPsAll(context.Background(), slices.Values(addrs), &synthient.BulkParams{BatchSize: 2}) {
		credits += r.Credits
		switch {
		case r.Duplicate:
			fmt.Println(r.Index, r.IP, r.Outcome, "as index", r.FirstIndex)
		case err != nil:
			fmt.Println(r.Index, r.Outcome, errors.Is(err, synthient.ErrInvalidArgument))
		default:
			fmt.Println(r.Index, r.IP, r.Outcome, r.Lookup.Network.Type)
		}
	}
	fmt.Println("credits:", credits, "requests:", srv.Arrivals(synthienttest.RouteLookupIPs))
	// Output:
	// 0 203.0.113.7 looked_up RESIDENTIAL
	// 1 invalid true
	// 2 198.51.100.23 looked_up DATACENTER
	// 3 203.0.113.7 looked_up as index 0
	// credits: 2 requests: 1
}

func ExampleClient_AllExports() {
	clock := synthienttest.NewManualClock(time.Date(2026, 6, 10, 14, 20, 0, 0, time.UTC))
	srv := synthienttest.NewServer(synthienttest.WithClock(clock.Now))
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	n := 0
	for e, err := range c.AllExports(context.Background(), synthient.FeedProxies, &synthient.ListExportsParams{Limit: 5}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if n < 3 {
			fmt.Println(e.ID, e.Kind)
		}
		n++
	}
	fmt.Println(n, "exports in", srv.Arrivals(synthienttest.RouteExports), "pages")
	// Output:
	// 2026-06-10/13 hourly
	// 2026-06-10/12 hourly
	// 2026-06-10/11 hourly
	// 17 exports in 4 pages
}

func ExampleClient_DownloadExportFile() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir) //nolint:errcheck // a temporary directory: nothing to do if it stays
	path := filepath.Join(dir, "proxies.parquet")

	meta, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", path,
		&synthient.DownloadParams{Verify: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	info, _ := os.Stat(path)
	fmt.Println(info.Size() == meta.Size, meta.Format)
	// Output: true parquet
}

// DownloadExportTo writes exactly the meta's size to any writer; a short,
// long or corrupted download is an error, never a silent success.
func ExampleClient_DownloadExportTo() {
	srv := synthienttest.NewServer(synthienttest.WithExportSize(1 << 10))
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	var buf bytes.Buffer
	meta, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, "latest", &buf,
		&synthient.DownloadParams{Verify: true})
	fmt.Println(int64(buf.Len()) == meta.Size, err)

	// A storage host that cuts the file short.
	srv.Inject(synthienttest.RouteStorage, 1, synthienttest.Fault{Status: 200, Body: "short", ContentType: "application/octet-stream"})
	buf.Reset()
	_, err = c.DownloadExportTo(context.Background(), synthient.FeedProxies, "latest", &buf, nil)
	fmt.Println(errors.Is(err, synthient.ErrSizeMismatch))
	// Output:
	// true <nil>
	// true
}

func ExampleClient_StreamProxies() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	n := 0
	for ev, err := range c.StreamProxies(context.Background()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.IP, ev.Type)
		if n++; n == 2 {
			break // closes the connection
		}
	}
	// Output:
	// 198.68.162.1 RESIDENTIAL_PROXY
	// 2600:bcb0:fc01:2996:8386:458d:9652:15 PUBLIC_PROXY
}

// A long-running consumer reconnects at once after the server's routine
// close, waits max(Retry-After, 2 s) after other errors, and stops on 401
// and 403.
func ExampleReconnectDelay() {
	// This fake closes every stream after 2 events.
	srv := synthienttest.NewServer(synthienttest.WithMaxEvents(2))
	defer srv.Close()
	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL))
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := 0
	for events < 5 {
		var err error
		for _, e := range c.StreamProxies(ctx) {
			if e != nil {
				err = e
				break
			}
			if events++; events == 5 {
				cancel() // enough for the example
				break
			}
		}
		wait, ok := synthient.ReconnectDelay(err)
		if !ok {
			fmt.Println("stop:", err)
			return
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	fmt.Println(events, "events over", srv.Arrivals(synthienttest.RouteStream), "connections")
	// Output: 5 events over 3 connections
}

// printer is an Observer that prints each call's requests and decisions.
// The client calls it from many goroutines at once when calls run at once;
// this one serves one call at a time.
type printer struct{}

func (printer) StartCall(ctx context.Context, s synthient.CallStart) context.Context {
	fmt.Printf("%s (%s)\n", s.Operation, s.Class)
	return ctx
}

func (printer) StartRequest(ctx context.Context, r synthient.RequestStart) context.Context {
	fmt.Printf("  attempt %d: %s %s", r.Attempt, r.Method, r.Route)
	return ctx
}

func (printer) EndRequest(_ context.Context, e synthient.RequestEnd) {
	fmt.Printf(" -> %d", e.Status)
	switch d := e.Decision; {
	case d.Retry && d.HasRetryAfter:
		fmt.Printf(", retry after the Retry-After of %v\n", d.RetryAfter)
	case d.Retry:
		fmt.Println(", retry after a backoff")
	case d.Reason != "":
		fmt.Println(", stop:", d.Reason)
	default:
		fmt.Println()
	}
}

func (printer) Hold(_ context.Context, h synthient.PacingHold) {
	fmt.Printf("  held %v by the %s rate limit\n", h.Wait, h.Bucket)
}

func (printer) EndCall(_ context.Context, e synthient.CallEnd) {
	fmt.Printf("  %d attempts, error: %v\n", e.Attempts, e.Err)
}

// An Observer sees every call, each request with the decision taken on it,
// and the holds of rate-limit pacing. Package
// github.com/synthient-go/synthient/otel makes traces and metrics of them.
func ExampleWithObserver() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "0"})
	srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 503})

	c, _ := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL), synthient.WithObserver(printer{}),
		synthient.WithBackoff(time.Millisecond, 2*time.Millisecond))
	defer c.Close()
	ctx := context.Background()
	_, _ = c.LookupIP(ctx, netip.MustParseAddr("203.0.113.7"))
	_, _ = c.Account(ctx)
	_, _ = c.LookupIP(ctx, netip.Addr{})
	// Output:
	// LookupIP (billed)
	//   attempt 1: GET /lookup/ip/{ip} -> 429, retry after the Retry-After of 0s
	//   attempt 2: GET /lookup/ip/{ip} -> 200
	//   2 attempts, error: <nil>
	// Account (standard)
	//   attempt 1: GET /account/me -> 503, retry after a backoff
	//   attempt 2: GET /account/me -> 200
	//   2 attempts, error: <nil>
	// LookupIP (billed)
	//   0 attempts, error: synthient: invalid argument: LookupIP: the zero netip.Addr is not an address
}

// A cache answers the second lookup of an address without a request or a
// charge; CachedAt tells it from a fresh answer, and gives its age.
func ExampleWithCache() {
	srv := synthienttest.NewServer()
	defer srv.Close()

	cache := synthient.NewMemoryCache(10_000, time.Hour) // 10,000 answers, each for an hour at most
	c, err := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL), synthient.WithCache(cache))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	ip := netip.MustParseAddr("203.0.113.7")
	for range 2 {
		r, err := c.LookupIP(context.Background(), ip)
		if err != nil {
			fmt.Println(err)
			return
		}
		if r.CachedAt.IsZero() {
			fmt.Println(r.IP, "from the API")
		} else {
			fmt.Println(r.IP, "from the cache, under a minute old:", time.Since(r.CachedAt) < time.Minute)
		}
	}
	fmt.Println("requests:", srv.Arrivals(synthienttest.RouteLookupIP), "credits spent:", synthienttest.DefaultCredits-srv.Credits(srv.APIKey))
	// Output:
	// 203.0.113.7 from the API
	// 203.0.113.7 from the cache, under a minute old: true
	// requests: 1 credits spent: 1
}

// A credit budget bounds what a client can spend: a bulk run of 25
// addresses in requests of 10 on a budget of 20 credits sends the first
// two requests (9 credits each), and the third (5) does not fit: its
// addresses are NotSent, nothing charged. The budget's count never falls
// below the API's.
func ExampleWithCreditBudget() {
	srv := synthienttest.NewServer()
	defer srv.Close()

	budget := synthient.NewCreditBudget(20, 0) // 20 credits, never refilled; 24*time.Hour refills at 00:00 UTC
	c, err := synthient.NewClient(srv.APIKey, synthient.WithBaseURL(srv.URL), synthient.WithCreditBudget(budget))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	addrs := make([]netip.Addr, 25)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
	}
	outcomes := map[synthient.BulkOutcome]int{}
	var refused error
	for r, err := range c.LookupIPsAll(context.Background(), slices.Values(addrs), &synthient.BulkParams{BatchSize: 10, Concurrency: 1}) {
		outcomes[r.Outcome]++
		if errors.Is(err, synthient.ErrCreditBudget) && refused == nil {
			refused = err
		}
	}
	fmt.Println("looked up:", outcomes[synthient.LookedUp], "not sent:", outcomes[synthient.NotSent])
	fmt.Println(refused)
	bal, _ := budget.Balance(context.Background())
	fmt.Println("budget spent:", bal.Spent, "left:", bal.Left)
	fmt.Println("the API charged:", synthienttest.DefaultCredits-srv.Credits(srv.APIKey))
	// Output:
	// looked up: 20 not sent: 5
	// synthient: LookupIPs: refused by the credit budget (request not sent): credit budget exhausted: 5 credits needed, 2 left of 20
	// budget spent: 18 left: 2
	// the API charged: 18
}
