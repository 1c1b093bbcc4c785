package synthienttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the time zones the fake names must load anywhere

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
		check(t, slices.Contains(networkTypes, n.Type), "%s: network type %q", r.IP, n.Type)
		check(t, n.ASN > 0 && n.ISP != "", "%s: network %+v", r.IP, n)
		for _, p := range []*string{n.Org, n.Domain, n.AbuseEmail, n.AbusePhone} {
			check(t, p == nil || *p != "", "%s: an empty string where null belongs", r.IP)
		}
	}
	if l := r.Location; l != nil {
		check(t, len(l.Country) == 2 && strings.ToUpper(l.Country) == l.Country, "%s: country %q", r.IP, l.Country)
		check(t, l.State != "" && l.City != "", "%s: location %+v", r.IP, l)
		_, err := time.LoadLocation(l.Timezone)
		check(t, err == nil, "%s: time zone %q: %v", r.IP, l.Timezone, err)
		check(t, len(l.GeoHash) >= 3, "%s: geohash %q", r.IP, l.GeoHash)
		a, b, c, d := geohashCell(l.GeoHash)
		check(t, a <= l.Latitude && l.Latitude <= b && c <= l.Longitude && l.Longitude <= d,
			"%s: geohash %s does not hold %v,%v", r.IP, l.GeoHash, l.Latitude, l.Longitude)
	}
	if in := r.Intelligence; in != nil {
		check(t, in.RiskScore >= 0 && in.RiskScore <= 100, "%s: risk %d", r.IP, in.RiskScore)
		check(t, in.Behavior != nil && in.Categories != nil && in.Devices != nil && in.Providers != nil, "%s: null list in %+v", r.IP, in)
		for _, c := range in.Categories {
			check(t, slices.Contains(categories, c), "%s: category %q", r.IP, c)
		}
		for _, b := range in.Behavior {
			check(t, slices.Contains(behaviors, b), "%s: behaviour %q", r.IP, b)
		}
		day := testNow.Truncate(24 * time.Hour).Unix()
		for _, p := range in.Providers {
			check(t, p.Provider != "" && strings.ToUpper(p.Provider) == p.Provider, "%s: provider %q", r.IP, p.Provider)
			check(t, slices.Contains(in.Categories, p.Type), "%s: provider type %q not among the categories", r.IP, p.Type)
			check(t, p.LastSeen <= day && p.LastSeen > day-91*86400, "%s: provider last seen %d", r.IP, p.LastSeen)
		}
		for _, d := range in.Devices {
			check(t, d.OS != "" && d.Version != "" && d.LastSeen > day-91*86400, "%s: device %+v", r.IP, d)
		}
	}
}

func TestLookupIPDeterministicAndRealistic(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithoutRateLimits())
	other, _ := newServer(t, synthienttest.WithoutRateLimits())
	c, c2 := newClient(t, srv), newClient(t, other)
	ctx := context.Background()
	var noIntel, intel, nullOrg, org, v6 int
	cats := map[string]bool{}
	types := map[string]bool{}
	for i := range 300 {
		var a netip.Addr
		if i%5 == 0 {
			a = netip.AddrFrom16([16]byte{0x2a, 0x01, 0x4f, 0x8, byte(i), byte(i >> 8), 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i + 1)})
		} else {
			a = netip.AddrFrom4([4]byte{byte(11 + i%89), byte(i * 7), byte(i * 13), byte(1 + i%250)})
		}
		r1, err := c.LookupIP(ctx, a)
		must(t, err, "LookupIP")
		r2, err := c2.LookupIP(ctx, a)
		must(t, err, "LookupIP on another server")
		again, err := c.LookupIP(ctx, a)
		must(t, err, "LookupIP again")
		check(t, reflect.DeepEqual(r1, r2) && reflect.DeepEqual(r1, again), "%s: lookups differ:\n%+v\n%+v", a, r1, r2)
		eq(t, r1.IP, a, "ip")
		if r1.Network == nil || r1.Location == nil {
			t.Fatalf("%s: public address without network or location", a)
		}
		checkLookup(t, r1)
		types[r1.Network.Type] = true
		if r1.Network.Org == nil {
			nullOrg++
		} else {
			org++
		}
		if a.Is6() {
			v6++
		}
		if r1.Intelligence == nil {
			noIntel++
			continue
		}
		intel++
		for _, c := range r1.Intelligence.Categories {
			cats[c] = true
		}
	}
	check(t, noIntel > 30 && intel > 150, "%d addresses without intelligence, %d with", noIntel, intel)
	check(t, nullOrg > 30 && org > 30, "%d null orgs, %d set", nullOrg, org)
	check(t, len(cats) >= 8, "only categories %v", cats)
	check(t, len(types) >= 5, "only network types %v", types)
	check(t, v6 == 60, "v6 %d", v6)

	// The network and location belong to the /24.
	a, err := c.LookupIP(ctx, netip.MustParseAddr("81.2.69.1"))
	must(t, err, "LookupIP")
	b, err := c.LookupIP(ctx, netip.MustParseAddr("81.2.69.254"))
	must(t, err, "LookupIP")
	check(t, reflect.DeepEqual(a.Network, b.Network) && reflect.DeepEqual(a.Location, b.Location), "a /24 has two networks")
}

func TestLookupIPSpecialAddresses(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithoutRateLimits())
	c := newClient(t, srv)
	ctx := context.Background()
	look := func(s string) *synthient.IPLookup {
		t.Helper()
		r, err := c.LookupIP(ctx, netip.MustParseAddr(s))
		must(t, err, "LookupIP "+s)
		checkLookup(t, r)
		return r
	}
	for _, s := range []string{"10.1.2.3", "127.0.0.1", "192.168.1.1", "fe80::1", "fd00::1", "::1", "100.64.0.1"} {
		r := look(s)
		check(t, r.Network == nil && r.Location == nil && r.Intelligence == nil, "%s: unrouted address has data %+v", s, r)
	}
	r := look("8.8.8.8")
	eq(t, r.Network.ASN, 15169, "8.8.8.8 ASN")
	eq(t, r.Network.ISP, "Google LLC", "8.8.8.8 ISP")
	eq(t, r.Location.City, "Mountain View", "8.8.8.8 city")
	check(t, r.Intelligence == nil, "8.8.8.8 has intelligence")
	r = look("1.1.1.1")
	eq(t, r.Network.ASN, 13335, "1.1.1.1 ASN")

	// Documentation prefixes: documentation ASNs; 192.0.2.0/24 clean,
	// 2001:db8::/32 without intelligence.
	for i := 1; i < 255; i += 17 {
		r := look(fmt.Sprintf("192.0.2.%d", i))
		check(t, r.Network.ASN >= 64496 && r.Network.ASN <= 64511, "192.0.2.%d: ASN %d", i, r.Network.ASN)
		in := r.Intelligence
		check(t, in != nil && in.RiskScore == 0 && len(in.Categories) == 0 && len(in.Providers) == 0 && len(in.Behavior) == 0,
			"192.0.2.%d is not clean: %+v", i, in)
	}
	r = look("2001:db8::1")
	check(t, r.Network != nil && r.Location != nil && r.Intelligence == nil, "2001:db8::1: %+v", r)
	r = look("198.51.100.23")
	check(t, r.Network.ASN >= 64496 && r.Network.ASN <= 64511, "198.51.100.23: ASN %d", r.Network.ASN)

	// Berlin's coordinates give geohash u33.
	found := false
	for i := range 4000 {
		r, err := c.LookupIP(ctx, netip.AddrFrom4([4]byte{80, byte(i >> 8), byte(i), 1}))
		must(t, err, "LookupIP")
		if r.Location != nil && r.Location.City == "Berlin" {
			eq(t, r.Location.GeoHash, "u33", "Berlin geohash")
			eq(t, r.Location.Timezone, "Europe/Berlin", "Berlin time zone")
			check(t, math.Abs(r.Location.Latitude-52.52) < 0.01 && math.Abs(r.Location.Longitude-13.405) < 0.01, "Berlin at %v,%v", r.Location.Latitude, r.Location.Longitude)
			found = true
			break
		}
	}
	check(t, found, "no address in Berlin")
}

func TestLookupIPCredits(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithCredits(3))
	c := newClient(t, srv)
	ctx := context.Background()
	for i := range 3 {
		_, err := c.LookupIP(ctx, netip.MustParseAddr("81.2.69.142"))
		must(t, err, "LookupIP")
		eq(t, srv.Credits(srv.APIKey), int64(2-i), "credits")
	}
	acct, err := c.Account(ctx)
	must(t, err, "Account")
	eq(t, acct.LookupQuota.Credits, int64(0), "account credits")
	eq(t, acct.LookupQuota.ResetsIn, int64(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC).Sub(testNow)/time.Second), "resets_in")

	_, err = c.LookupIP(ctx, netip.MustParseAddr("81.2.69.142"))
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 402, "status at zero credits")
	eq(t, apiErr.Type, "https://docs.synthient.com/errors/payment-required", "type")
	eq(t, srv.Arrivals(synthienttest.RouteLookupIP), 4, "arrivals (a 402 is not retried)")
	_, err = c.LookupDomain(ctx, "example.org", nil)
	eq(t, asAPIError(t, err).Status, 402, "domain lookup at zero credits")
	_, err = c.LookupIPs(ctx, []netip.Addr{netip.MustParseAddr("81.2.69.142")})
	eq(t, asAPIError(t, err).Status, 402, "batch at zero credits")
	_, err = c.Account(ctx)
	must(t, err, "Account at zero credits")

	// Raw: a problem+json 402; a key added with no credits gets the same.
	p := problemOf(t, do(t, rawClient(t), "GET", srv.URL+"/lookup/ip/8.8.8.8", srv.AddKey([]string{"BASIC"}, 0), ""), 402)
	check(t, strings.Contains(p.Detail, "credits"), "detail %q", p.Detail)
	eq(t, srv.Credits("nope"), int64(-1), "credits of an unknown key")
}

func TestLookupIPValidation(t *testing.T) {
	srv, _ := newServer(t)
	hc := rawClient(t)
	for _, v := range []string{"not-an-ip", "256.1.1.1", "1.2.3", "fe80::1%25eth0", "8.8.8.8.8"} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/ip/"+v, srv.APIKey, ""), 422)
		eq(t, p.Title, "Validation error", "title")
		eq(t, strings.Join(p.Errors["ip_address"], ";"), "must be a valid IP address", v+": errors.ip_address")
		eq(t, p.Instance, "/api/v4/lookup/ip/"+strings.ReplaceAll(v, "%25", "%"), "instance")
	}
	eq(t, srv.Credits(srv.APIKey), int64(synthienttest.DefaultCredits), "credits after invalid lookups")

	// An IPv6 address with an escaped colon is fine.
	r := do(t, hc, "GET", srv.URL+"/lookup/ip/2001%3Adb8%3A%3A1", srv.APIKey, "")
	eq(t, r.Status, 200, "escaped IPv6 status")
	var got synthient.IPLookup
	must(t, json.Unmarshal(r.Body, &got), "decoding")
	eq(t, got.IP, netip.MustParseAddr("2001:db8::1"), "ip")

	// The SDK rejects invalid addresses before sending anything.
	c := newClient(t, srv)
	_, err := c.LookupIP(context.Background(), netip.Addr{})
	check(t, errors.Is(err, synthient.ErrInvalidArgument), "zero Addr: %v", err)
	eq(t, srv.Arrivals(synthienttest.RouteLookupIP), 6, "arrivals")
}

func TestLookupIPs(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	addrs := []netip.Addr{
		netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("203.0.113.7"),
		netip.MustParseAddr("81.2.69.142"), netip.MustParseAddr("8.8.8.8"),
	}
	res, err := c.LookupIPs(ctx, addrs)
	must(t, err, "LookupIPs")
	if len(res) != len(addrs) {
		t.Fatalf("%d results for %d addresses", len(res), len(addrs))
	}
	for i, a := range addrs {
		eq(t, res[i].IP, a, fmt.Sprintf("result %d", i))
		single, err := c.LookupIP(ctx, a)
		must(t, err, "LookupIP")
		check(t, reflect.DeepEqual(*single, res[i]), "batch and single lookups of %s differ", a)
	}
	// 4 unique addresses cost ceil(3.6) = 4, and the 5 single lookups 5.
	eq(t, srv.Credits(srv.APIKey), int64(synthienttest.DefaultCredits-4-5), "credits")

	// Raw: duplicates and invalid entries are dropped, first-seen order.
	before := srv.Credits(srv.APIKey)
	hc := rawClient(t)
	r := do(t, hc, "POST", srv.URL+"/lookup/ips", srv.APIKey, `{"ips": ["203.0.113.7", "2001:db8::1", "203.0.113.7", "not-an-ip", 7, "2001:DB8::1"]}`)
	eq(t, r.Status, 200, "status")
	var out struct {
		Results []json.RawMessage `json:"results"`
	}
	must(t, json.Unmarshal(r.Body, &out), "decoding")
	eq(t, len(out.Results), 2, "results")
	eq(t, before-srv.Credits(srv.APIKey), int64(2), "credits for 2 unique valid addresses")
	var first struct {
		IP string `json:"ip"`
	}
	must(t, json.Unmarshal(out.Results[0], &first), "decoding")
	eq(t, first.IP, "203.0.113.7", "first result")
	eq(t, string(out.Results[1]), string(mustJSON(t, res[1])), "second result")

	// Batch billing: ceil(n*0.9).
	for _, n := range []int{1, 2, 10, 11, 100, 1000} {
		ips := make([]string, n)
		for i := range ips {
			ips[i] = fmt.Sprintf("%d.%d.%d.1", 20+i/65536, i/256%256, i%256)
		}
		body, _ := json.Marshal(map[string]any{"ips": ips})
		before := srv.Credits(srv.APIKey)
		eq(t, do(t, hc, "POST", srv.URL+"/lookup/ips", srv.APIKey, string(body)).Status, 200, "status")
		eq(t, before-srv.Credits(srv.APIKey), int64(math.Ceil(float64(n)*0.9)), fmt.Sprintf("cost of %d", n))
	}

	// 422 with errors.ips.
	for body, field := range map[string]string{
		`{}`:                         "ips",
		`{"ips": []}`:                "ips",
		`{"ips": ["nope", "1.2.3"]}`: "ips",
		`[1,2]`:                      "body",
		`{"ips": "8.8.8.8"}`:         "ips",
		`{"ips": {"a": 1}}`:          "ips",
		`[1, 2]`:                     "body",
		`{"ips": ` + bigList() + `}`: "ips",
	} {
		before := srv.Credits(srv.APIKey)
		p := problemOf(t, do(t, hc, "POST", srv.URL+"/lookup/ips", srv.APIKey, body), 422)
		check(t, len(p.Errors[field]) > 0, "%.40s: errors %v lack %s", body, p.Errors, field)
		eq(t, srv.Credits(srv.APIKey), before, "credits after a 422")
	}
	p := problemOf(t, do(t, hc, "POST", srv.URL+"/lookup/ips", srv.APIKey, `{"ips": ["nope", "1.2.3"]}`), 422)
	eq(t, p.Errors["ips[0]"][0], "must be a valid IP address", "errors.ips[0]")
	eq(t, p.Errors["ips[1]"][0], "must be a valid IP address", "errors.ips[1]")

	// Too few credits for the batch: 402, nothing taken.
	poor := srv.AddKey([]string{"BASIC"}, 2)
	p = problemOf(t, do(t, hc, "POST", srv.URL+"/lookup/ips", poor, `{"ips": ["81.2.69.1", "81.2.69.2", "81.2.69.3"]}`), 402)
	eq(t, srv.Credits(poor), int64(2), "credits after a refused batch")
	eq(t, do(t, hc, "POST", srv.URL+"/lookup/ips", poor, `{"ips": ["81.2.69.1", "81.2.69.2"]}`).Status, 200, "a batch of 2 for 2 credits")
	eq(t, srv.Credits(poor), int64(0), "credits")

	// The SDK rejects an empty or oversized batch before sending.
	srv.Reset()
	_, err = c.LookupIPs(ctx, nil)
	check(t, errors.Is(err, synthient.ErrInvalidArgument), "empty batch: %v", err)
	_, err = c.LookupIPs(ctx, make([]netip.Addr, 1001))
	check(t, errors.Is(err, synthient.ErrInvalidArgument), "1001 addresses: %v", err)
	eq(t, srv.Arrivals(synthienttest.RouteLookupIPs), 0, "arrivals")
}

func bigList() string {
	ips := make([]string, 1001)
	for i := range ips {
		ips[i] = fmt.Sprintf(`"10.0.%d.%d"`, i/256, i%256)
	}
	return "[" + strings.Join(ips, ",") + "]"
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err, "encoding")
	return b
}

func TestLookupDomain(t *testing.T) {
	srv, clk := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	d, err := c.LookupDomain(ctx, "synthient.com", nil)
	must(t, err, "LookupDomain")
	again, err := c.LookupDomain(ctx, "SYNTHIENT.com.", nil)
	must(t, err, "LookupDomain")
	check(t, reflect.DeepEqual(d, again), "the same domain gave two answers")
	eq(t, d.Domain, "synthient.com", "domain")
	eq(t, d.Status, "active", "status")
	eq(t, len(d.TimeSeries), 30, "time series days")
	day := testNow.Truncate(24 * time.Hour).Unix()
	eq(t, d.TimeSeries[29].Date, day, "last day")
	var total int64
	for i, p := range d.TimeSeries {
		total += p.Events
		if i > 0 {
			eq(t, p.Date-d.TimeSeries[i-1].Date, int64(86400), "day step")
		}
	}
	eq(t, d.Stats.TotalEvents30d, total, "total_events_30d")
	eq(t, d.Stats.Events24h, d.TimeSeries[29].Events, "events_24h")
	eq(t, len(d.UniqueIPs.Sparkline24h), 24, "sparkline points")
	eq(t, len(d.HourDowHeatmap), 24, "heatmap rows")
	for _, row := range d.HourDowHeatmap {
		eq(t, len(row), 7, "heatmap columns")
	}
	check(t, d.ActivityStats.PeakHour >= 0 && d.ActivityStats.PeakHour < 24 && d.ActivityStats.Cadence != "", "activity %+v", d.ActivityStats)
	check(t, d.ActivityStats.P95PerHour >= d.ActivityStats.MedianPerHour, "p95 below the median")
	check(t, len(d.TopSubdomains) >= 3 && len(d.TopPorts) >= 2 && len(d.GeoDistribution) >= 3, "breakdowns %+v", d)
	for _, s := range d.TopSubdomains {
		check(t, strings.HasSuffix(s.Subdomain, ".synthient.com"), "subdomain %q", s.Subdomain)
	}
	eq(t, len(d.RecentEvents), int(min(50, d.Stats.TotalEvents30d)), "recent events by default")
	for i, e := range d.RecentEvents {
		check(t, e.Timestamp <= testNow.Unix() && e.Timestamp > testNow.Unix()-31*86400, "event time %d", e.Timestamp)
		if i > 0 {
			check(t, e.Timestamp <= d.RecentEvents[i-1].Timestamp, "events not newest first")
		}
		check(t, strings.HasSuffix(e.SourceIPMasked, ".x") || strings.HasSuffix(e.SourceIPMasked, "::x"), "masked ip %q", e.SourceIPMasked)
		check(t, e.Port > 0 && len(e.CountryCode) == 2 && strings.HasSuffix(e.TargetSubdomain, ".synthient.com"), "event %+v", e)
	}

	d2, err := c.LookupDomain(ctx, "synthient.com", &synthient.DomainLookupParams{Limit: 2})
	must(t, err, "LookupDomain limit 2")
	eq(t, len(d2.RecentEvents), 2, "recent events with limit 2")
	d3, err := c.LookupDomain(ctx, "synthient.com", &synthient.DomainLookupParams{Limit: 1000})
	must(t, err, "LookupDomain limit 1000")
	eq(t, len(d3.RecentEvents), int(min(1000, d.Stats.TotalEvents30d)), "recent events with limit 1000")
	check(t, d.Stats.TotalEvents30d >= 1000, "pick a busier test domain: %d events", d.Stats.TotalEvents30d)

	hc := rawClient(t)
	r := do(t, hc, "GET", srv.URL+"/lookup/domain/synthient.com?limit=5000", srv.APIKey, "")
	eq(t, r.Status, 200, "limit=5000 is clamped")
	var clamped synthient.DomainLookup
	must(t, json.Unmarshal(r.Body, &clamped), "decoding")
	eq(t, len(clamped.RecentEvents), 1000, "recent events with limit=5000")
	for _, q := range []string{"limit=0", "limit=-3", "limit=abc", "limit="} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/domain/synthient.com?"+q, srv.APIKey, ""), 422)
		check(t, len(p.Errors["limit"]) > 0, "%s: errors %v", q, p.Errors)
	}
	for _, name := range []string{"localhost", "-bad-.com", "a..b", "exa_mple!.com", strings.Repeat("a", 64) + ".com", strings.Repeat("abcdefghi.", 26) + "com"} {
		p := problemOf(t, do(t, hc, "GET", srv.URL+"/lookup/domain/"+name, srv.APIKey, ""), 422)
		check(t, len(p.Errors["domain"]) > 0, "%s: errors %v", name, p.Errors)
	}
	// Punycode names pass, as the SDK sends them.
	u, err := c.LookupDomain(ctx, "bücher.example", nil)
	must(t, err, "LookupDomain punycode")
	eq(t, u.Domain, "xn--bcher-kva.example", "punycode domain")

	// The day moves with the clock; the data of a domain stays put.
	clk.Advance(24 * time.Hour)
	next, err := c.LookupDomain(ctx, "synthient.com", nil)
	must(t, err, "LookupDomain")
	eq(t, next.TimeSeries[29].Date, day+86400, "last day after a day")
	// Six lookups and the five successful ones before cost 1 each.
	eq(t, srv.Credits(srv.APIKey), int64(synthienttest.DefaultCredits-7), "credits")
}

// A batch holding an IPv4 address and its IPv4-mapped IPv6 form gets a
// result per address, each carrying the address it was asked for. The fake
// answers both spellings (netip treats them as two addresses), so the SDK
// must not mix the two results up.
func TestLookupIPsMappedAndPlainAddress(t *testing.T) {
	srv, _ := newServer(t)
	c := newClient(t, srv)
	in := []netip.Addr{netip.MustParseAddr("81.2.69.142"), netip.MustParseAddr("::ffff:81.2.69.142")}
	res, err := c.LookupIPs(context.Background(), in)
	must(t, err, "LookupIPs")
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	eq(t, res[0].IP, in[0], "IP of the result for 81.2.69.142")
	eq(t, res[1].IP, in[1], "IP of the result for ::ffff:81.2.69.142")
	check(t, reflect.DeepEqual(res[0].Network, res[1].Network), "the two spellings have two networks")
}
