package synthienttest_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// A user's test checks that its code survives a flaky API: the fake fails
// the first two account calls with 503, the SDK retries them, and the
// arrival count shows what was sent. A billed lookup, by contrast, is never
// sent again after a 503.
func ExampleServer_Inject() {
	srv := synthienttest.NewServer()
	defer srv.Close()

	c, err := srv.NewClient(synthient.WithBackoff(time.Millisecond, 2*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx := context.Background()

	srv.Inject(synthienttest.RouteAccount, 2, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503})
	acct, err := c.Account(ctx)
	if err != nil {
		fmt.Println("account:", err)
		return
	}
	fmt.Println("account:", acct.Email, acct.LookupQuota.Credits)
	fmt.Println("account arrivals:", srv.Arrivals(synthienttest.RouteAccount))

	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: 503})
	_, err = c.LookupIP(ctx, netip.MustParseAddr("8.8.8.8"))
	var apiErr *synthient.APIError
	if errors.As(err, &apiErr) {
		fmt.Println("lookup:", apiErr)
	}
	fmt.Println("lookup arrivals:", srv.Arrivals(synthienttest.RouteLookupIP))

	r, err := c.LookupIP(ctx, netip.MustParseAddr("8.8.8.8"))
	if err != nil {
		fmt.Println("lookup:", err)
		return
	}
	fmt.Println("lookup:", r.IP, r.Network.ISP, r.Network.ASN, r.Location.City)

	// Output:
	// account: grace@example.com 50000
	// account arrivals: 3
	// lookup: 503 Service Unavailable
	// lookup arrivals: 1
	// lookup: 8.8.8.8 Google LLC 15169 Mountain View
}

// A test gets a client of the fake from NewClient, with any options it
// needs: they apply after the fake's URL and key.
func ExampleServer_NewClient() {
	srv := synthienttest.NewServer()
	defer srv.Close()

	c, err := srv.NewClient(synthient.WithMaxRetries(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	r, err := c.LookupIP(context.Background(), netip.MustParseAddr("1.1.1.1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.IP, r.Network.ISP, r.Network.ASN)
	fmt.Println("credits left:", srv.Credits(srv.APIKey))

	// Output:
	// 1.1.1.1 Cloudflare, Inc. 13335
	// credits left: 49999
}

// A user's test asks for exactly the case it checks: the fake answers a
// pinned result for one address, here a risk score of 59, and logs which
// addresses were charged.
func ExampleWithIPLookup() {
	ip := netip.MustParseAddr("203.0.113.59")
	srv := synthienttest.NewServer(synthienttest.WithIPLookup(synthient.IPLookup{
		IP:           ip,
		Intelligence: &synthient.Intelligence{RiskScore: 59, Categories: []string{"COMMERCIAL_VPN"}},
	}))
	defer srv.Close()

	c, err := srv.NewClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	r, err := c.LookupIP(context.Background(), ip)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.IP, r.Intelligence.RiskScore, r.Intelligence.Categories)
	fmt.Println("charged:", srv.ChargedIPs())
	// Output:
	// 203.0.113.59 59 [COMMERCIAL_VPN]
	// charged: [203.0.113.59]
}
