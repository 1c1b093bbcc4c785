package synthienttest_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the time zones the fake names must load anywhere

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

var (
	networkTypes = []string{"MOBILE", "SATELLITE", "IN_FLIGHT_WIFI", "RESIDENTIAL", "CORPORATE", "ACADEMIC", "DATACENTER", "GOVERNMENT"}
	categories   = []string{"FREE_VPN", "COMMERCIAL_VPN", "ENTERPRISE_VPN", "MOBILE_PROXY", "BLOCKCHAIN_PROXY", "RESIDENTIAL_PROXY",
		"PUBLIC_PROXY", "DATACENTER_PROXY", "TOR_NODE", "PRIVATE_RELAY", "BOTNET", "SEARCH_ENGINE", "AI_CRAWLER", "SOCIAL_MEDIA",
		"UPTIME_MONITOR", "LINK_PREVIEW", "SEO_CRAWLER", "WEB_ARCHIVER", "WEBHOOK_PROVIDER", "PAYMENT_PROCESSOR"}
	behaviors = []string{"PROGRAMMATIC_TRAFFIC", "ACTIVE_CRAWLER", "TORRENTING", "TOR_USER", "CREDENTIAL_STUFFING", "COMPROMISED_DEVICE", "MALICIOUS_TRAFFIC"}
)

// geohashCell returns the bounds of a geohash cell.
func geohashCell(h string) (latMin, latMax, lonMin, lonMax float64) {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	latMin, latMax, lonMin, lonMax = -90, 90, -180, 180
	even := true
	for _, c := range h {
		v := strings.IndexRune(alphabet, c)
		for bit := 4; bit >= 0; bit-- {
			on := v>>bit&1 == 1
			if even {
				mid := (lonMin + lonMax) / 2
				if on {
					lonMin = mid
				} else {
					lonMax = mid
				}
			} else {
				mid := (latMin + latMax) / 2
				if on {
					latMin = mid
				} else {
					latMax = mid
				}
			}
			even = !even
		}
	}
	return
}

// checkLookup checks that a lookup is plausible in every field.
func checkLookup(t *testing.T, r *synthient.IPLookup) {
	t.Helper()
	if n := r.Network; n != nil {
		assert.Contains(t, networkTypes, n.Type, "%s: network type", r.IP)
		assert.Positive(t, n.ASN, "%s: ASN", r.IP)
		assert.NotEmpty(t, n.ISP, "%s: ISP", r.IP)
		for _, p := range []*string{n.Org, n.Domain, n.AbuseEmail, n.AbusePhone} {
			if p != nil {
				assert.NotEmpty(t, *p, "%s: an empty string where null belongs", r.IP)
			}
		}
	}
	if l := r.Location; l != nil {
		assert.Regexp(t, "^[A-Z]{2}$", l.Country, "%s: country", r.IP)
		assert.NotEmpty(t, l.State, "%s: state", r.IP)
		assert.NotEmpty(t, l.City, "%s: city", r.IP)
		_, err := time.LoadLocation(l.Timezone)
		require.NoError(t, err, "%s: time zone", r.IP)
		assert.GreaterOrEqual(t, len(l.GeoHash), 3, "%s: geohash %q", r.IP, l.GeoHash)
		a, b, c, d := geohashCell(l.GeoHash)
		assert.True(t, a <= l.Latitude && l.Latitude <= b && c <= l.Longitude && l.Longitude <= d,
			"%s: geohash %s does not hold %v,%v", r.IP, l.GeoHash, l.Latitude, l.Longitude)
	}
	if in := r.Intelligence; in != nil {
		checkIntelligence(t, r.IP, in)
	}
}

// checkIntelligence checks an address's intelligence against the API's
// vocabularies and its 90 days.
func checkIntelligence(t *testing.T, ip netip.Addr, in *synthient.Intelligence) {
	t.Helper()
	assert.GreaterOrEqual(t, in.RiskScore, 0, "%s: risk", ip)
	assert.LessOrEqual(t, in.RiskScore, 100, "%s: risk", ip)
	assert.True(t, in.Behavior != nil && in.Categories != nil && in.Devices != nil && in.Providers != nil, "%s: null list in %+v", ip, in)
	assert.Subset(t, categories, in.Categories, "%s: categories", ip)
	assert.Subset(t, behaviors, in.Behavior, "%s: behaviours", ip)
	day := testNow.Truncate(24 * time.Hour).Unix()
	for _, p := range in.Providers {
		assert.Regexp(t, "^[A-Z0-9_]+$", p.Provider, "%s: provider", ip)
		assert.Contains(t, in.Categories, p.Type, "%s: provider type among the categories", ip)
		assert.True(t, p.LastSeen <= day && p.LastSeen > day-91*86400, "%s: provider last seen %d", ip, p.LastSeen)
	}
	for _, d := range in.Devices {
		assert.True(t, d.OS != "" && d.Version != "" && d.LastSeen > day-91*86400, "%s: device %+v", ip, d)
	}
}

func TestLookupIPDeterministicAndRealistic(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithoutRateLimits())
	other, _ := newServer(t, synthienttest.WithoutRateLimits())
	c, c2 := newClient(t, srv), newClient(t, other)
	ctx := context.Background()
	var noIntel, intel, nullOrg, v6 int
	cats := map[string]bool{}
	types := map[string]bool{}
	for i := range 300 {
		a := netip.AddrFrom4([4]byte{byte(11 + i%89), byte(i * 7), byte(i * 13), byte(1 + i%250)})
		if i%5 == 0 {
			a = netip.AddrFrom16([16]byte{0x2a, 0x01, 0x4f, 0x8, byte(i), byte(i >> 8), 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i + 1)})
			v6++
		}
		r, err := c.LookupIP(ctx, a)
		require.NoError(t, err)
		onOther, err := c2.LookupIP(ctx, a)
		require.NoError(t, err)
		again, err := c.LookupIP(ctx, a)
		require.NoError(t, err)
		assert.Equal(t, r, onOther, "%s on another server", a)
		assert.Equal(t, r, again, "%s again", a)
		assert.Equal(t, a, r.IP)
		require.NotNil(t, r.Network, "%s: a public address has a network", a)
		require.NotNil(t, r.Location, "%s: a public address has a location", a)
		checkLookup(t, r)
		types[r.Network.Type] = true
		if r.Network.Org == nil {
			nullOrg++
		}
		if r.Intelligence == nil {
			noIntel++
			continue
		}
		intel++
		for _, c := range r.Intelligence.Categories {
			cats[c] = true
		}
	}
	assert.Greater(t, noIntel, 30, "addresses without intelligence")
	assert.Greater(t, intel, 150, "addresses with intelligence")
	assert.Greater(t, nullOrg, 30, "null orgs")
	assert.Greater(t, 300-nullOrg, 30, "orgs")
	assert.GreaterOrEqual(t, len(cats), 8, "categories %v", cats)
	assert.GreaterOrEqual(t, len(types), 5, "network types %v", types)
	assert.Equal(t, 60, v6)

	// The network and location belong to the /24.
	a, err := c.LookupIP(ctx, netip.MustParseAddr("81.2.69.1"))
	require.NoError(t, err)
	b, err := c.LookupIP(ctx, netip.MustParseAddr("81.2.69.254"))
	require.NoError(t, err)
	assert.Equal(t, a.Network, b.Network, "a /24 has one network")
	assert.Equal(t, a.Location, b.Location, "a /24 has one location")
}

func TestLookupIPSpecialAddresses(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithoutRateLimits())
	c := newClient(t, srv)
	ctx := context.Background()
	look := func(s string) *synthient.IPLookup {
		t.Helper()
		r, err := c.LookupIP(ctx, netip.MustParseAddr(s))
		require.NoError(t, err, s)
		checkLookup(t, r)
		return r
	}
	for _, s := range []string{"10.1.2.3", "127.0.0.1", "192.168.1.1", "fe80::1", "fd00::1", "::1", "100.64.0.1"} {
		r := look(s)
		assert.Nil(t, r.Network, "%s: unrouted address with a network", s)
		assert.Nil(t, r.Location, "%s: unrouted address with a location", s)
		assert.Nil(t, r.Intelligence, "%s: unrouted address with intelligence", s)
	}
	r := look("8.8.8.8")
	assert.Equal(t, 15169, r.Network.ASN)
	assert.Equal(t, "Google LLC", r.Network.ISP)
	assert.Equal(t, "Mountain View", r.Location.City)
	assert.Nil(t, r.Intelligence, "a well-known resolver has no intelligence")
	assert.Equal(t, 13335, look("1.1.1.1").Network.ASN)

	// Documentation prefixes: documentation ASNs; 192.0.2.0/24 clean,
	// 2001:db8::/32 without intelligence.
	for i := 1; i < 255; i += 17 {
		r := look(fmt.Sprintf("192.0.2.%d", i))
		assert.True(t, r.Network.ASN >= 64496 && r.Network.ASN <= 64511, "192.0.2.%d: ASN %d", i, r.Network.ASN)
		assert.Equal(t, &synthient.Intelligence{Behavior: []string{}, Categories: []string{}, Devices: []synthient.Device{}, Providers: []synthient.Provider{}},
			r.Intelligence, "192.0.2.%d is clean", i)
	}
	r = look("2001:db8::1")
	assert.NotNil(t, r.Network)
	assert.NotNil(t, r.Location)
	assert.Nil(t, r.Intelligence)
	r = look("198.51.100.23")
	assert.True(t, r.Network.ASN >= 64496 && r.Network.ASN <= 64511, "198.51.100.23: ASN %d", r.Network.ASN)

	// Berlin's coordinates give geohash u33.
	var berlin *synthient.Location
	for i := 0; i < 4000 && berlin == nil; i++ {
		r, err := c.LookupIP(ctx, netip.AddrFrom4([4]byte{80, byte(i >> 8), byte(i), 1})) //nolint:gosec // the bytes of a small counter
		require.NoError(t, err)
		if r.Location != nil && r.Location.City == "Berlin" {
			berlin = r.Location
		}
	}
	require.NotNil(t, berlin, "no address in Berlin")
	assert.Equal(t, "u33", berlin.GeoHash)
	assert.Equal(t, "Europe/Berlin", berlin.Timezone)
	assert.InDelta(t, 52.52, berlin.Latitude, 0.01)
	assert.InDelta(t, 13.405, berlin.Longitude, 0.01)
}

func TestLookupIPCredits(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithCredits(3))
	c := newClient(t, srv)
	ctx := context.Background()
	for i := range 3 {
		_, err := c.LookupIP(ctx, testIP)
		require.NoError(t, err)
		assert.Equal(t, int64(2-i), srv.Credits(srv.APIKey), "credits")
	}
	acct, err := c.Account(ctx)
	require.NoError(t, err)
	assert.Zero(t, acct.LookupQuota.Credits, "account credits")
	assert.Equal(t, int64(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC).Sub(testNow)/time.Second), acct.LookupQuota.ResetsIn, "resets_in")

	_, err = c.LookupIP(ctx, testIP)
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 402, apiErr.Status, "status at zero credits")
	assert.Equal(t, "https://docs.synthient.com/errors/payment-required", apiErr.Type)
	assert.Equal(t, 4, srv.Arrivals(synthienttest.RouteLookupIP), "arrivals (a 402 is not retried)")
	_, err = c.LookupDomain(ctx, "example.org", nil)
	assert.Equal(t, 402, errAs[*synthient.APIError](t, err).Status, "domain lookup at zero credits")
	_, err = c.LookupIPs(ctx, []netip.Addr{testIP})
	assert.Equal(t, 402, errAs[*synthient.APIError](t, err).Status, "batch at zero credits")
	_, err = c.Account(ctx)
	require.NoError(t, err, "Account at zero credits")

	// Raw: a problem+json 402; a key added with no credits gets the same.
	p := problemOf(t, do(t, rawClient(t), "GET", srv.URL+"/lookup/ip/8.8.8.8", srv.AddKey([]string{"BASIC"}, 0), ""), 402)
	assert.Contains(t, p.Detail, "credits")
}

func TestLookupIPValidation(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	hc := rawClient(t)
	for _, v := range []string{"not-an-ip", "256.1.1.1", "1.2.3", "fe80::1%25eth0", "8.8.8.8.8"} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/ip/"+v, srv.APIKey, ""), 422)
		assert.Equal(t, "Validation error", p.Title)
		assert.Equal(t, []string{"must be a valid IP address"}, p.Errors["ip_address"], v)
		assert.Equal(t, "/api/v4/lookup/ip/"+strings.ReplaceAll(v, "%25", "%"), p.Instance)
	}
	assert.Equal(t, int64(synthienttest.DefaultCredits), srv.Credits(srv.APIKey), "credits after invalid lookups")

	// An IPv6 address with an escaped colon is fine.
	r := do(t, hc, "GET", srv.URL+"/lookup/ip/2001%3Adb8%3A%3A1", srv.APIKey, "")
	assert.Equal(t, 200, r.Status, "escaped IPv6")
	var got synthient.IPLookup
	require.NoError(t, json.Unmarshal(r.Body, &got))
	assert.Equal(t, netip.MustParseAddr("2001:db8::1"), got.IP)

	// The SDK rejects invalid addresses before sending anything.
	_, err := newClient(t, srv).LookupIP(context.Background(), netip.Addr{})
	require.ErrorIs(t, err, synthient.ErrInvalidArgument, "zero Addr")
	assert.Equal(t, 6, srv.Arrivals(synthienttest.RouteLookupIP), "arrivals")
}

func TestLookupIPs(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	addrs := []netip.Addr{
		netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("203.0.113.7"),
		testIP, netip.MustParseAddr("8.8.8.8"),
	}
	res, err := c.LookupIPs(ctx, addrs)
	require.NoError(t, err)
	require.Len(t, res, len(addrs))
	for i, a := range addrs {
		single, err := c.LookupIP(ctx, a)
		require.NoError(t, err)
		assert.Equal(t, *single, res[i], "batch and single lookups of %s", a)
	}
	// 4 unique addresses cost ceil(3.6) = 4, and the 5 single lookups 5.
	assert.Equal(t, int64(synthienttest.DefaultCredits-4-5), srv.Credits(srv.APIKey), "credits")

	// Raw: duplicates and invalid entries are dropped, first-seen order.
	before := srv.Credits(srv.APIKey)
	r := do(t, rawClient(t), "POST", srv.URL+"/lookup/ips", srv.APIKey, `{"ips": ["203.0.113.7", "2001:db8::1", "203.0.113.7", "not-an-ip", 7, "2001:DB8::1"]}`)
	require.Equal(t, 200, r.Status)
	var out struct {
		Results []json.RawMessage `json:"results"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &out))
	require.Len(t, out.Results, 2)
	assert.Equal(t, int64(2), before-srv.Credits(srv.APIKey), "credits for 2 unique valid addresses")
	var first struct {
		IP string `json:"ip"`
	}
	require.NoError(t, json.Unmarshal(out.Results[0], &first))
	assert.Equal(t, "203.0.113.7", first.IP, "first result")
	second, err := json.Marshal(res[1])
	require.NoError(t, err)
	assert.JSONEq(t, string(second), string(out.Results[1]), "second result")
}

// A batch of n distinct valid addresses costs ceil(n × 0.9).
func TestLookupIPsCost(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	for _, n := range []int{1, 2, 10, 11, 100, 1000} {
		ips := make([]string, n)
		for i := range ips {
			ips[i] = fmt.Sprintf("%d.%d.%d.1", 20+i/65536, i/256%256, i%256)
		}
		body, err := json.Marshal(map[string]any{"ips": ips})
		require.NoError(t, err)
		before := srv.Credits(srv.APIKey)
		assert.Equal(t, 200, do(t, rawClient(t), "POST", srv.URL+"/lookup/ips", srv.APIKey, string(body)).Status)
		assert.Equal(t, int64(math.Ceil(float64(n)*0.9)), before-srv.Credits(srv.APIKey), "cost of %d", n)
	}

	// Too few credits for the batch: 402, nothing taken.
	poor := srv.AddKey([]string{"BASIC"}, 2)
	problemOf(t, do(t, rawClient(t), "POST", srv.URL+"/lookup/ips", poor, `{"ips": ["81.2.69.1", "81.2.69.2", "81.2.69.3"]}`), 402)
	assert.Equal(t, int64(2), srv.Credits(poor), "credits after a refused batch")
	assert.Equal(t, 200, do(t, rawClient(t), "POST", srv.URL+"/lookup/ips", poor, `{"ips": ["81.2.69.1", "81.2.69.2"]}`).Status, "a batch of 2 for 2 credits")
	assert.Zero(t, srv.Credits(poor))
}

// A batch without a valid address answers 422 and costs nothing.
//
//nolint:tparallel // the subtests compare the credits of one key before and after
func TestLookupIPsValidation(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	bigList := make([]string, 1001)
	for i := range bigList {
		bigList[i] = fmt.Sprintf(`"10.0.%d.%d"`, i/256, i%256)
	}
	for _, tc := range []struct {
		name, body string
		errors     map[string][]string
	}{
		{"no ips", `{}`, map[string][]string{"ips": {"is required"}}},
		{"no entries", `{"ips": []}`, map[string][]string{"ips": {"must contain between 1 and 1000 entries"}}},
		{"1001 entries", `{"ips": [` + strings.Join(bigList, ",") + `]}`, map[string][]string{"ips": {"must contain between 1 and 1000 entries"}}},
		{"a body over 1 MiB", `{"ips": ["` + strings.Repeat(" ", 1<<20) + `"]}`, map[string][]string{"ips": {"must contain between 1 and 1000 entries"}}},
		{"an array", `[1, 2]`, map[string][]string{"body": {"must be a JSON object with an ips array"}}},
		{"not JSON", `{"ips": [`, map[string][]string{"body": {"must be a JSON object with an ips array"}}},
		{"a string", `{"ips": "8.8.8.8"}`, map[string][]string{"ips": {"must be an array of IP addresses"}}},
		{"an object", `{"ips": {"a": 1}}`, map[string][]string{"ips": {"must be an array of IP addresses"}}},
		{"no valid entry", `{"ips": ["nope", "1.2.3", 7]}`, map[string][]string{
			"ips[0]": {"must be a valid IP address"}, "ips[1]": {"must be a valid IP address"}, "ips[2]": {"must be a string"},
			"ips": {"must contain at least one valid IP address"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.Credits(srv.APIKey)
			p := problemOf(t, do(t, rawClient(t), "POST", srv.URL+"/lookup/ips", srv.APIKey, tc.body), 422)
			assert.Equal(t, tc.errors, p.Errors)
			assert.Equal(t, before, srv.Credits(srv.APIKey), "credits after a 422")
		})
	}

	// The SDK rejects an empty or oversized batch before sending.
	srv.Reset()
	c := newClient(t, srv)
	_, err := c.LookupIPs(context.Background(), nil)
	require.ErrorIs(t, err, synthient.ErrInvalidArgument, "empty batch")
	_, err = c.LookupIPs(context.Background(), make([]netip.Addr, 1001))
	require.ErrorIs(t, err, synthient.ErrInvalidArgument, "1001 addresses")
	assert.Zero(t, srv.Arrivals(synthienttest.RouteLookupIPs), "arrivals")
}

// A batch holding an IPv4 address and its IPv4-mapped IPv6 form gets a
// result per address, each carrying the address it was asked for, and is
// charged for one address: the fake counts the two spellings as two
// addresses (api-v4.md §2.4), so the SDK sends the IPv4 form of both.
func TestLookupIPsMappedAndPlainAddress(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	in := []netip.Addr{testIP, netip.MustParseAddr("::ffff:81.2.69.142")}
	before := srv.Credits(srv.APIKey)
	res, err := newClient(t, srv).LookupIPs(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, in[0], res[0].IP, "IP of the result for 81.2.69.142")
	assert.Equal(t, in[1], res[1].IP, "IP of the result for ::ffff:81.2.69.142")
	assert.Equal(t, res[0].Network, res[1].Network, "the two spellings have one network")
	assert.EqualValues(t, 1, before-srv.Credits(srv.APIKey), "credits charged for one address")
}

func TestLookupDomain(t *testing.T) {
	t.Parallel()
	srv, clk := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	d, err := c.LookupDomain(ctx, "synthient.com", nil)
	require.NoError(t, err)
	again, err := c.LookupDomain(ctx, "SYNTHIENT.com.", nil)
	require.NoError(t, err)
	assert.Equal(t, d, again, "the same domain in another spelling")
	assert.Equal(t, "synthient.com", d.Domain)
	assert.Equal(t, "active", d.Status)
	require.Len(t, d.TimeSeries, 30, "time series days")
	day := testNow.Truncate(24 * time.Hour).Unix()
	assert.Equal(t, day, d.TimeSeries[29].Date, "last day")
	var total int64
	for i, p := range d.TimeSeries {
		total += p.Events
		if i > 0 {
			assert.Equal(t, int64(86400), p.Date-d.TimeSeries[i-1].Date, "day step")
		}
	}
	assert.Equal(t, total, d.Stats.TotalEvents30d, "total_events_30d")
	assert.Equal(t, d.TimeSeries[29].Events, d.Stats.Events24h, "events_24h")
	assert.Len(t, d.UniqueIPs.Sparkline24h, 24, "sparkline points")
	assert.Len(t, d.HourDowHeatmap, 24, "heatmap rows")
	for _, row := range d.HourDowHeatmap {
		assert.Len(t, row, 7, "heatmap columns")
	}
	assert.True(t, d.ActivityStats.PeakHour >= 0 && d.ActivityStats.PeakHour < 24, "peak hour %d", d.ActivityStats.PeakHour)
	assert.NotEmpty(t, d.ActivityStats.Cadence)
	assert.GreaterOrEqual(t, d.ActivityStats.P95PerHour, d.ActivityStats.MedianPerHour, "p95 and median")
	assert.GreaterOrEqual(t, len(d.TopSubdomains), 3, "top subdomains")
	assert.GreaterOrEqual(t, len(d.TopPorts), 2, "top ports")
	assert.GreaterOrEqual(t, len(d.GeoDistribution), 3, "countries")
	for _, s := range d.TopSubdomains {
		assert.True(t, strings.HasSuffix(s.Subdomain, ".synthient.com"), "subdomain %q", s.Subdomain)
	}
	assert.Len(t, d.RecentEvents, int(min(50, d.Stats.TotalEvents30d)), "recent events by default")
	for i, e := range d.RecentEvents {
		assert.True(t, e.Timestamp <= testNow.Unix() && e.Timestamp > testNow.Unix()-31*86400, "event time %d", e.Timestamp)
		if i > 0 {
			assert.LessOrEqual(t, e.Timestamp, d.RecentEvents[i-1].Timestamp, "events newest first")
		}
		assert.Regexp(t, `(\.|::)x$`, e.SourceIPMasked, "masked ip")
		assert.Positive(t, e.Port)
		assert.Len(t, e.CountryCode, 2)
		assert.True(t, strings.HasSuffix(e.TargetSubdomain, ".synthient.com"), "target %q", e.TargetSubdomain)
	}

	d2, err := c.LookupDomain(ctx, "synthient.com", &synthient.DomainLookupParams{Limit: 2})
	require.NoError(t, err)
	assert.Len(t, d2.RecentEvents, 2, "recent events with limit 2")
	require.GreaterOrEqual(t, d.Stats.TotalEvents30d, int64(1000), "pick a busier test domain")
	d3, err := c.LookupDomain(ctx, "synthient.com", &synthient.DomainLookupParams{Limit: 1000})
	require.NoError(t, err)
	assert.Len(t, d3.RecentEvents, 1000, "recent events with limit 1000")

	r := do(t, rawClient(t), "GET", srv.URL+"/lookup/domain/synthient.com?limit=5000", srv.APIKey, "")
	assert.Equal(t, 200, r.Status, "limit=5000 is clamped")
	var clamped synthient.DomainLookup
	require.NoError(t, json.Unmarshal(r.Body, &clamped))
	assert.Len(t, clamped.RecentEvents, 1000, "recent events with limit=5000")

	// Punycode names pass, as the SDK sends them.
	u, err := c.LookupDomain(ctx, "bücher.example", nil)
	require.NoError(t, err)
	assert.Equal(t, "xn--bcher-kva.example", u.Domain)

	// The day moves with the clock; the data of a domain stays put.
	clk.Advance(24 * time.Hour)
	next, err := c.LookupDomain(ctx, "synthient.com", nil)
	require.NoError(t, err)
	assert.Equal(t, day+86400, next.TimeSeries[29].Date, "last day after a day")
	// Seven lookups cost 1 each.
	assert.Equal(t, int64(synthienttest.DefaultCredits-7), srv.Credits(srv.APIKey), "credits")
}

func TestLookupDomainValidation(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	for _, tc := range []struct{ path, field string }{
		{"synthient.com?limit=0", "limit"},
		{"synthient.com?limit=-3", "limit"},
		{"synthient.com?limit=abc", "limit"},
		{"synthient.com?limit=", "limit"},
		{"localhost", "domain"},
		{"-bad-.com", "domain"},
		{"a..b", "domain"},
		{"exa_mple!.com", "domain"},
		{"b%C3%BCcher.example", "domain"},
		{strings.Repeat("a", 64) + ".com", "domain"},
		{strings.Repeat("abcdefghi.", 26) + "com", "domain"},
	} {
		p := problemOf(t, do(t, rawClient(t), "GET", srv.URL+"/lookup/domain/"+tc.path, srv.APIKey, ""), 422)
		assert.Len(t, p.Errors[tc.field], 1, "%s: errors %v", tc.path, p.Errors)
	}
	assert.Equal(t, int64(synthienttest.DefaultCredits), srv.Credits(srv.APIKey), "credits after 422s")
}

// The lookups of many addresses and domains hash to the pinned sums: the
// data the fake makes up does not change.
func TestLookupDataPinned(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, synthienttest.WithoutRateLimits())
	hc := rawClient(t)
	h := sha256.New()
	for batch := range 4 {
		ips := make([]string, 1000)
		for i := range ips {
			n := batch*1000 + i
			if n%7 == 0 {
				ips[i] = fmt.Sprintf("2a0%d:%x:%x::%x", n%4, n*31, n*17, n%250+1)
			} else {
				ips[i] = fmt.Sprintf("%d.%d.%d.%d", 1+n*37%222, n*13%256, n*101%256, 1+n%254)
			}
		}
		body, err := json.Marshal(map[string]any{"ips": ips})
		require.NoError(t, err)
		r := do(t, hc, "POST", srv.URL+"/lookup/ips", srv.APIKey, string(body))
		require.Equal(t, http.StatusOK, r.Status)
		_, _ = h.Write(r.Body)
	}
	for i := range 300 {
		r := do(t, hc, "GET", fmt.Sprintf("%s/lookup/domain/host-%d.example.org?limit=200", srv.URL, i), srv.APIKey, "")
		require.Equal(t, http.StatusOK, r.Status)
		_, _ = h.Write(r.Body)
	}
	assert.Equal(t, "3b284955f7a998b914f9193faa7f201474432db225f4e6fad3f5e844cbf68efc", fmt.Sprintf("%x", h.Sum(nil)))
}
