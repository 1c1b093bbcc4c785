package synthient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
)

// The JSON examples of ../shared/docs/api-v4.md section 7.
const (
	ipLookupExample = `{
  "ip": "198.51.100.23",
  "network": {
    "asn": 64500, "isp": "Example Broadband", "type": "RESIDENTIAL",
    "org": null, "domain": "example-broadband.net",
    "abuse_email": "abuse@example-broadband.net", "abuse_phone": null
  },
  "location": {
    "country": "DE", "state": "BE", "city": "Berlin", "timezone": "Europe/Berlin",
    "latitude": 52.52, "longitude": 13.405, "geo_hash": "u33"
  },
  "intelligence": {
    "risk_score": 81,
    "behavior": ["PROGRAMMATIC_TRAFFIC"],
    "categories": ["RESIDENTIAL_PROXY"],
    "devices": [{"os": "Android", "version": "13", "last_seen": 1781049600}],
    "providers": [{"provider": "EXAMPLEPROXY", "type": "RESIDENTIAL_PROXY", "last_seen": 1781136000}]
  }
}`
	batchExample = `{
  "results": [
    {
      "ip": "203.0.113.7",
      "network": {"asn": 64511, "isp": "Example Hosting", "type": "DATACENTER",
                  "org": "Example Hosting GmbH", "domain": null, "abuse_email": null, "abuse_phone": null},
      "location": {"country": "NL", "state": "NH", "city": "Amsterdam", "timezone": "Europe/Amsterdam",
                   "latitude": 52.37, "longitude": 4.89, "geo_hash": "u17"},
      "intelligence": {"risk_score": 12, "behavior": [], "categories": [], "devices": [], "providers": []}
    },
    {"ip": "2001:db8::1"}
  ]
}`
	domainExample = `{
  "domain": "example.org",
  "status": "active",
  "stats": {"events_24h": 1204, "total_events_30d": 40211},
  "time_series": [
    {"date": 1780963200, "events": 1390, "unique_ips": 311},
    {"date": 1781049600, "events": 1204, "unique_ips": 287}
  ],
  "unique_ips": {"value_24h": 287, "value_30d": 5120,
                 "sparkline_24h": [9,12,10,8,14,11,13,9,12,15,10,11,12,14,9,8,13,12,11,10,9,14,12,13]},
  "top_asn": {"asn": 64500, "events": 431},
  "top_subdomains": [{"subdomain": "api.example.org", "count": 610}],
  "top_ports": [{"port": 443, "count": 980}, {"port": 80, "count": 224}],
  "geo_distribution": [{"country_code": "US", "unique_ips": 120, "events": 502}],
  "hour_dow_heatmap": [[3,1,0,2,5,4,2],[1,0,0,1,2,3,1]],
  "activity_stats": {"peak_hour": 14, "quiet_hour": 4, "median_per_hour": 48, "p95_per_hour": 131, "cadence": "steady"},
  "recent_events": [
    {"timestamp": 1781132400, "source_ip_masked": "198.51.100.x", "target_subdomain": "api.example.org",
     "port": 443, "country_code": "US"},
    {"timestamp": 1781132100, "source_ip_masked": "2001:db8::x", "target_subdomain": "www.example.org",
     "port": 80, "country_code": "DE"}
  ]
}`
	accountExample = `{
  "first_name": "Grace",
  "last_name": "Hopper",
  "email": "grace@example.com",
  "organization": {"id": "2f0c9d1e-6b7a-4c55-9e1d-0a4b3c2d1e0f", "name": "Example Labs", "relation": "ADMIN"},
  "scopes": ["BASIC", "PROXY_FEEDS", "PROXY_FIREHOSE"],
  "lookup_quota": {"credits": 49910, "resets_in": 1209600},
  "api_key": {"id": "7d3b0a52-1c9e-4f0b-8a6d-2e5f4c3b2a19", "name": "ci-key", "created_at": "2026-09-01T12:00:00Z"}
}`
)

// checkOneRequest checks that exactly one request arrived, with the method
// and the (decoded) path given, and returns it.
func checkOneRequest(t *testing.T, m *mockAPI, method, path string) arrival {
	t.Helper()
	got := m.got()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	a := got[0]
	if a.method != method || a.url.Path != path {
		t.Errorf("request: %s %s, want %s %s", a.method, a.url.Path, method, path)
	}
	return a
}

func checkInvalid(t *testing.T, m *mockAPI, err error) {
	t.Helper()
	if !errors.Is(err, synthient.ErrInvalidArgument) {
		t.Errorf("err = %v, want one matching ErrInvalidArgument", err)
	}
	if got := m.count(); got != 0 {
		t.Errorf("%d requests were sent, want 0", got)
	}
}

func TestLookupIPRequest(t *testing.T) {
	cases := []struct{ ip, path string }{
		{"1.2.3.4", "/api/v4/lookup/ip/1.2.3.4"},
		{"2001:db8::1", "/api/v4/lookup/ip/2001:db8::1"},
		{"::ffff:192.0.2.1", "/api/v4/lookup/ip/::ffff:192.0.2.1"},
	}
	for _, tc := range cases {
		t.Run(tc.ip, func(t *testing.T) {
			m := newMock(fmt.Sprintf(`{"ip":%q}`, tc.ip))
			r, err := m.client(t).LookupIP(context.Background(), netip.MustParseAddr(tc.ip))
			if err != nil {
				t.Fatalf("LookupIP: %v", err)
			}
			a := checkOneRequest(t, m, http.MethodGet, tc.path)
			if a.url.RawQuery != "" {
				t.Errorf("query %q, want none", a.url.RawQuery)
			}
			if got := a.header.Get("X-Api-Key"); got != testKey {
				t.Errorf("X-Api-Key = %q, want the key", got)
			}
			if got := a.header.Get("User-Agent"); !strings.HasPrefix(got, "synthient-go/") {
				t.Errorf("User-Agent = %q", got)
			}
			if r.IP != netip.MustParseAddr(tc.ip) {
				t.Errorf("IP = %v, want %s", r.IP, tc.ip)
			}
		})
	}
}

func TestLookupIPDecodesEveryField(t *testing.T) {
	m := newMock(ipLookupExample)
	got, err := m.client(t).LookupIP(context.Background(), netip.MustParseAddr("198.51.100.23"))
	if err != nil {
		t.Fatalf("LookupIP: %v", err)
	}
	want := &synthient.IPLookup{
		IP: netip.MustParseAddr("198.51.100.23"),
		Network: &synthient.Network{
			ASN: 64500, ISP: "Example Broadband", Type: "RESIDENTIAL",
			Org: nil, Domain: ptr("example-broadband.net"),
			AbuseEmail: ptr("abuse@example-broadband.net"), AbusePhone: nil,
		},
		Location: &synthient.Location{
			Country: "DE", State: "BE", City: "Berlin", Timezone: "Europe/Berlin",
			Latitude: 52.52, Longitude: 13.405, GeoHash: "u33",
		},
		Intelligence: &synthient.Intelligence{
			RiskScore:  81,
			Behavior:   []string{"PROGRAMMATIC_TRAFFIC"},
			Categories: []string{"RESIDENTIAL_PROXY"},
			Devices:    []synthient.Device{{OS: "Android", Version: "13", LastSeen: 1781049600}},
			Providers:  []synthient.Provider{{Provider: "EXAMPLEPROXY", Type: "RESIDENTIAL_PROXY", LastSeen: 1781136000}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("LookupIP decoded\n%s\nwant the example of api-v4.md §7", gj)
	}
}

func TestLookupIPAbsentOrNullSectionsAreNil(t *testing.T) {
	for _, body := range []string{
		`{"ip":"2001:db8::1"}`,
		`{"ip":"2001:db8::1","network":null,"location":null,"intelligence":null}`,
	} {
		m := newMock(body)
		r, err := m.client(t).LookupIP(context.Background(), netip.MustParseAddr("2001:db8::1"))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if r.IP != netip.MustParseAddr("2001:db8::1") || r.Network != nil || r.Location != nil || r.Intelligence != nil {
			t.Errorf("%s: decoded %+v, want the IP and nil sections", body, *r)
		}
	}
}

func TestLookupIPInvalidArguments(t *testing.T) {
	for _, ip := range []netip.Addr{{}, netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("fe80::1%1")} {
		m := newMock(`{"ip":"1.2.3.4"}`)
		_, err := m.client(t).LookupIP(context.Background(), ip)
		checkInvalid(t, m, err)
	}
}

// addrs returns n distinct IPv4 addresses from 10.0.0.1 on.
func addrs(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	a := netip.MustParseAddr("10.0.0.1")
	for i := range out {
		out[i] = a
		a = a.Next()
	}
	return out
}

// echoBatch answers a batch request with one result per distinct address,
// in the order given by order (nil: as asked), each with its index in the
// request as ASN, so that a test can tell the results apart.
func echoBatch(t *testing.T, order func([]string) []string) func(arrival) reply {
	return func(a arrival) reply {
		var req struct {
			IPs []string `json:"ips"`
		}
		if err := json.Unmarshal(a.body, &req); err != nil {
			t.Errorf("request body %q: %v", a.body, err)
			return problemReply(400)
		}
		ips := slices.Clone(req.IPs)
		if order != nil {
			ips = order(ips)
		}
		var b strings.Builder
		b.WriteString(`{"results":[`)
		for i, ip := range ips {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"ip":%q,"network":{"asn":%d,"isp":"isp","type":"DATACENTER"}}`, ip, asnOf(ip))
		}
		b.WriteString("]}")
		return jsonReply(200, b.String())
	}
}

// asnOf derives an ASN from an address, to check which result is which.
func asnOf(ip string) int {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return -1
	}
	s := a.As16()
	return int(s[14])<<8 | int(s[15]) + 1
}

func checkResults(t *testing.T, ips []netip.Addr, got []synthient.IPLookup) {
	t.Helper()
	if len(got) != len(ips) {
		t.Fatalf("%d results for %d addresses", len(got), len(ips))
	}
	for i, ip := range ips {
		if got[i].IP != ip {
			t.Errorf("result %d is for %v, want %v", i, got[i].IP, ip)
		}
		if got[i].Network == nil || got[i].Network.ASN != asnOf(ip.String()) {
			t.Errorf("result %d for %v does not carry its own data: %+v", i, ip, got[i].Network)
		}
	}
}

func TestLookupIPsRequestBody(t *testing.T) {
	ips := []netip.Addr{
		netip.MustParseAddr("203.0.113.7"),
		netip.MustParseAddr("2001:db8::1"),
		netip.MustParseAddr("192.0.2.1"),
		netip.MustParseAddr("198.51.100.9"),
	}
	m := newMock("")
	m.handler = echoBatch(t, nil)
	got, err := m.client(t).LookupIPs(context.Background(), ips)
	if err != nil {
		t.Fatalf("LookupIPs: %v", err)
	}
	checkResults(t, ips, got)
	a := checkOneRequest(t, m, http.MethodPost, "/api/v4/lookup/ips")
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if got := a.header.Get("X-Api-Key"); got != testKey {
		t.Errorf("X-Api-Key = %q, want the key", got)
	}
	var body map[string][]string
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Fatalf("body %s: %v", a.body, err)
	}
	want := map[string][]string{"ips": {"203.0.113.7", "2001:db8::1", "192.0.2.1", "198.51.100.9"}}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %s, want %v", a.body, want)
	}
}

func TestLookupIPsBatchSize(t *testing.T) {
	for _, n := range []int{0, 1001, 5000} {
		m := newMock("")
		_, err := m.client(t).LookupIPs(context.Background(), addrs(n))
		checkInvalid(t, m, err)
	}
	m := newMock("")
	_, err := m.client(t).LookupIPs(context.Background(), nil)
	checkInvalid(t, m, err)

	for _, n := range []int{1, 1000} {
		m := newMock("")
		m.handler = echoBatch(t, nil)
		ips := addrs(n)
		got, err := m.client(t).LookupIPs(context.Background(), ips)
		if err != nil {
			t.Fatalf("%d addresses: %v", n, err)
		}
		checkResults(t, ips, got)
		if c := m.count(); c != 1 {
			t.Errorf("%d addresses: %d requests, want 1", n, c)
		}
	}
}

func TestLookupIPsInvalidAddress(t *testing.T) {
	for _, bad := range []netip.Addr{{}, netip.MustParseAddr("fe80::1%eth0")} {
		m := newMock("")
		ips := append(addrs(3), bad)
		_, err := m.client(t).LookupIPs(context.Background(), ips)
		checkInvalid(t, m, err)
	}
}

func TestLookupIPsResultsInInputOrder(t *testing.T) {
	reverse := func(s []string) []string { slices.Reverse(s); return s }
	shuffle := func(s []string) []string {
		// A fixed permutation: odd indexes first, then even ones.
		var out []string
		for i := 1; i < len(s); i += 2 {
			out = append(out, s[i])
		}
		for i := 0; i < len(s); i += 2 {
			out = append(out, s[i])
		}
		return out
	}
	for name, order := range map[string]func([]string) []string{"reversed": reverse, "shuffled": shuffle} {
		t.Run(name, func(t *testing.T) {
			ips := append(addrs(20), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2"))
			m := newMock("")
			m.handler = echoBatch(t, order)
			got, err := m.client(t).LookupIPs(context.Background(), ips)
			if err != nil {
				t.Fatalf("LookupIPs: %v", err)
			}
			checkResults(t, ips, got)
		})
	}
}

func TestLookupIPsDuplicatesEachGetTheirResult(t *testing.T) {
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("2001:db8::3")
	ips := []netip.Addr{a, b, a, c, a, b}
	// The server dedupes and answers in its own order.
	m := newMock("")
	m.handler = echoBatch(t, func(s []string) []string {
		return []string{c.String(), a.String(), b.String()}
	})
	got, err := m.client(t).LookupIPs(context.Background(), ips)
	if err != nil {
		t.Fatalf("LookupIPs: %v", err)
	}
	checkResults(t, ips, got)
}

func TestLookupIPsMatchesAnotherSpellingOfAnAddress(t *testing.T) {
	ips := []netip.Addr{netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("192.0.2.1")}
	m := newMock(`{"results":[{"ip":"192.0.2.1"},{"ip":"2001:0DB8:0000::0001"}]}`)
	got, err := m.client(t).LookupIPs(context.Background(), ips)
	if err != nil {
		t.Fatalf("LookupIPs: %v", err)
	}
	if len(got) != 2 || got[0].IP != ips[0] || got[1].IP != ips[1] {
		t.Errorf("results %v, want them for %v in order", got, ips)
	}
}

func TestLookupIPsMissingResults(t *testing.T) {
	a, b, c, d := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"),
		netip.MustParseAddr("2001:db8::3"), netip.MustParseAddr("192.0.2.4")
	ips := []netip.Addr{a, b, c, d, a}
	m := newMock("")
	m.handler = echoBatch(t, func([]string) []string { return []string{c.String(), a.String()} })
	got, err := m.client(t).LookupIPs(context.Background(), ips)
	var de *synthient.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %T %v, want a *DecodeError", err, err)
	}
	if want := []netip.Addr{b, d}; !slices.Equal(de.Missing, want) {
		t.Errorf("Missing = %v, want %v", de.Missing, want)
	}
	checkResults(t, []netip.Addr{a, c, a}, got)
	if base := baseOf(t, err); base.Op != "LookupIPs" || base.Attempts != 1 {
		t.Errorf("base: Op %q, Attempts %d", base.Op, base.Attempts)
	}
	if n := m.count(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestLookupIPsWithoutResults(t *testing.T) {
	for _, body := range []string{`{}`, `{"results":null}`, `{"result":[{"ip":"192.0.2.1"}]}`} {
		m := newMock(body)
		got, err := m.client(t).LookupIPs(context.Background(), []netip.Addr{netip.MustParseAddr("192.0.2.1")})
		var de *synthient.DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: err = %T %v, want a *DecodeError", body, err, err)
		}
		if len(got) != 0 {
			t.Errorf("%s: results %v", body, got)
		}
	}
}

func TestLookupIPsDecodesTheBatchExample(t *testing.T) {
	ips := []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::1")}
	m := newMock(batchExample)
	got, err := m.client(t).LookupIPs(context.Background(), ips)
	if err != nil {
		t.Fatalf("LookupIPs: %v", err)
	}
	want := []synthient.IPLookup{
		{
			IP: ips[0],
			Network: &synthient.Network{ASN: 64511, ISP: "Example Hosting", Type: "DATACENTER",
				Org: ptr("Example Hosting GmbH")},
			Location: &synthient.Location{Country: "NL", State: "NH", City: "Amsterdam", Timezone: "Europe/Amsterdam",
				Latitude: 52.37, Longitude: 4.89, GeoHash: "u17"},
			Intelligence: &synthient.Intelligence{RiskScore: 12, Behavior: []string{}, Categories: []string{},
				Devices: []synthient.Device{}, Providers: []synthient.Provider{}},
		},
		{IP: ips[1]},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results = %+v\nwant %+v", got, want)
	}
}

func TestLookupDomainRequest(t *testing.T) {
	cases := []struct {
		name   string
		domain string
		params *synthient.DomainLookupParams
		path   string
		query  string
	}{
		{"nil_params", "example.org", nil, "/api/v4/lookup/domain/example.org", ""},
		{"zero_limit", "example.org", &synthient.DomainLookupParams{}, "/api/v4/lookup/domain/example.org", ""},
		{"limit_2", "example.org", &synthient.DomainLookupParams{Limit: 2}, "/api/v4/lookup/domain/example.org", "limit=2"},
		{"limit_1000", "sub.example.org", &synthient.DomainLookupParams{Limit: 1000}, "/api/v4/lookup/domain/sub.example.org", "limit=1000"},
		{"idn", "bücher.example", nil, "/api/v4/lookup/domain/xn--bcher-kva.example", ""},
		{"idn_upper_case", "BÜCHER.example", nil, "/api/v4/lookup/domain/xn--bcher-kva.example", ""},
		{"253_octets", long253, nil, "/api/v4/lookup/domain/" + long253, ""},
		{"63_octet_label", strings.Repeat("a", 63) + ".example", nil, "/api/v4/lookup/domain/" + strings.Repeat("a", 63) + ".example", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMock(`{"domain":"example.org"}`)
			var before synthient.DomainLookupParams
			if tc.params != nil {
				before = *tc.params
			}
			if _, err := m.client(t).LookupDomain(context.Background(), tc.domain, tc.params); err != nil {
				t.Fatalf("LookupDomain: %v", err)
			}
			a := checkOneRequest(t, m, http.MethodGet, tc.path)
			if a.url.RawQuery != tc.query {
				t.Errorf("query %q, want %q", a.url.RawQuery, tc.query)
			}
			if got := a.header.Get("X-Api-Key"); got != testKey {
				t.Errorf("X-Api-Key = %q, want the key", got)
			}
			if tc.params != nil && *tc.params != before {
				t.Errorf("params were modified: %+v, was %+v", *tc.params, before)
			}
		})
	}
}

// long253 is a 253-octet name, the longest a DNS name can be; long254 is
// one octet longer.
var (
	long253 = strings.Join([]string{strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 61)}, ".")
	long254 = strings.Join([]string{strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 62)}, ".")
)

func TestLookupDomainInvalidArguments(t *testing.T) {
	if len(long253) != 253 || len(long254) != 254 {
		t.Fatalf("test names are %d and %d octets", len(long253), len(long254))
	}
	domains := []string{
		"", long254, strings.Repeat("a", 64) + ".example",
		"a/b", "a?b", "a#b", "a b", "a\tb", "a\nb", "a..b", ".example", "example..",
		"a\u00a0b", "a\u3000b",
		// Names that cannot be converted to punycode.
		"\u0300a.example", "-bücher.example", "\ufffdü.example",
	}
	for _, d := range domains {
		t.Run(fmt.Sprintf("%q", d), func(t *testing.T) {
			m := newMock(`{"domain":"example.org"}`)
			_, err := m.client(t).LookupDomain(context.Background(), d, nil)
			checkInvalid(t, m, err)
		})
	}
	for _, limit := range []int{-1, 1001, -1000} {
		t.Run(fmt.Sprintf("limit_%d", limit), func(t *testing.T) {
			m := newMock(`{"domain":"example.org"}`)
			_, err := m.client(t).LookupDomain(context.Background(), "example.org", &synthient.DomainLookupParams{Limit: limit})
			checkInvalid(t, m, err)
		})
	}
}

func TestLookupDomainDecodesEveryField(t *testing.T) {
	m := newMock(domainExample)
	got, err := m.client(t).LookupDomain(context.Background(), "example.org", &synthient.DomainLookupParams{Limit: 2})
	if err != nil {
		t.Fatalf("LookupDomain: %v", err)
	}
	want := &synthient.DomainLookup{
		Domain: "example.org",
		Status: "active",
		Stats:  synthient.DomainStats{Events24h: 1204, TotalEvents30d: 40211},
		TimeSeries: []synthient.DomainDay{
			{Date: 1780963200, Events: 1390, UniqueIPs: 311},
			{Date: 1781049600, Events: 1204, UniqueIPs: 287},
		},
		UniqueIPs: synthient.DomainUniqueIPs{Value24h: 287, Value30d: 5120,
			Sparkline24h: []int64{9, 12, 10, 8, 14, 11, 13, 9, 12, 15, 10, 11, 12, 14, 9, 8, 13, 12, 11, 10, 9, 14, 12, 13}},
		TopASN:          &synthient.DomainTopASN{ASN: 64500, Events: 431},
		TopSubdomains:   []synthient.SubdomainCount{{Subdomain: "api.example.org", Count: 610}},
		TopPorts:        []synthient.PortCount{{Port: 443, Count: 980}, {Port: 80, Count: 224}},
		GeoDistribution: []synthient.CountryCount{{CountryCode: "US", UniqueIPs: 120, Events: 502}},
		HourDowHeatmap:  [][]int64{{3, 1, 0, 2, 5, 4, 2}, {1, 0, 0, 1, 2, 3, 1}},
		ActivityStats:   synthient.ActivityStats{PeakHour: 14, QuietHour: 4, MedianPerHour: 48, P95PerHour: 131, Cadence: "steady"},
		RecentEvents: []synthient.DomainEvent{
			{Timestamp: 1781132400, SourceIPMasked: "198.51.100.x", TargetSubdomain: "api.example.org", Port: 443, CountryCode: "US"},
			{Timestamp: 1781132100, SourceIPMasked: "2001:db8::x", TargetSubdomain: "www.example.org", Port: 80, CountryCode: "DE"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("LookupDomain decoded\n%s\nwant the example of api-v4.md §7", gj)
	}

	withoutTopASN := strings.Replace(domainExample, `"top_asn": {"asn": 64500, "events": 431},`, "", 1)
	if withoutTopASN == domainExample {
		t.Fatal("the example has no top_asn to remove")
	}
	m = newMock(withoutTopASN)
	got, err = m.client(t).LookupDomain(context.Background(), "example.org", nil)
	if err != nil {
		t.Fatalf("LookupDomain without top_asn: %v", err)
	}
	if got.TopASN != nil {
		t.Errorf("TopASN = %+v, want nil when absent", *got.TopASN)
	}
	if got.Domain != "example.org" || len(got.RecentEvents) != 2 {
		t.Errorf("the rest was not decoded: %+v", got)
	}
}

func TestAccountDecodesEveryField(t *testing.T) {
	m := newMock(accountExample)
	got, err := m.client(t).Account(context.Background())
	if err != nil {
		t.Fatalf("Account: %v", err)
	}
	a := checkOneRequest(t, m, http.MethodGet, "/api/v4/account/me")
	if k := a.header.Get("X-Api-Key"); k != testKey {
		t.Errorf("X-Api-Key = %q, want the key", k)
	}
	if got.APIKey == nil {
		t.Fatal("APIKey = nil")
	}
	created := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	if !got.APIKey.CreatedAt.Equal(created) {
		t.Errorf("APIKey.CreatedAt = %v, want %v", got.APIKey.CreatedAt, created)
	}
	want := &synthient.Account{
		FirstName: "Grace", LastName: "Hopper", Email: "grace@example.com",
		Organization: synthient.Organization{ID: "2f0c9d1e-6b7a-4c55-9e1d-0a4b3c2d1e0f", Name: "Example Labs", Relation: "ADMIN"},
		Scopes:       []string{"BASIC", "PROXY_FEEDS", "PROXY_FIREHOSE"},
		LookupQuota:  synthient.LookupQuota{Credits: 49910, ResetsIn: 1209600},
		APIKey:       &synthient.APIKeyInfo{ID: "7d3b0a52-1c9e-4f0b-8a6d-2e5f4c3b2a19", Name: "ci-key", CreatedAt: got.APIKey.CreatedAt},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Account = %+v\nwant %+v", got, want)
	}
	if d := got.LookupQuota.ResetsInDuration(); d != 14*24*time.Hour {
		t.Errorf("ResetsInDuration = %v, want 336h", d)
	}

	without := strings.Replace(accountExample, `,
  "api_key": {"id": "7d3b0a52-1c9e-4f0b-8a6d-2e5f4c3b2a19", "name": "ci-key", "created_at": "2026-09-01T12:00:00Z"}`, "", 1)
	if without == accountExample {
		t.Fatal("the example has no api_key to remove")
	}
	m = newMock(without)
	got, err = m.client(t).Account(context.Background())
	if err != nil {
		t.Fatalf("Account without api_key: %v", err)
	}
	if got.APIKey != nil {
		t.Errorf("APIKey = %+v, want nil when absent", *got.APIKey)
	}
	if got.Email != "grace@example.com" {
		t.Errorf("Email = %q", got.Email)
	}
}

func TestHealth(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		m := newMock(`{"status":"ok"}`)
		h, err := m.client(t).Health(context.Background())
		if err != nil {
			t.Fatalf("Health: %v", err)
		}
		if h.Status != "ok" || len(h.Problems) != 0 {
			t.Errorf("Health = %+v", *h)
		}
		a := checkOneRequest(t, m, http.MethodGet, "/api/v4/health")
		if v, ok := a.header[http.CanonicalHeaderKey("X-Api-Key")]; ok {
			t.Errorf("X-Api-Key sent to /health: %q", v)
		}
		for k, vs := range a.header {
			for _, v := range vs {
				if strings.Contains(v, testKey) {
					t.Errorf("header %s holds the key", k)
				}
			}
		}
	})
	t.Run("unhealthy", func(t *testing.T) {
		m := newMock("", jsonReply(503, `{"status":"unhealthy","problems":["lookup backend unreachable","feed store down"]}`), succeed)
		_, err := m.client(t).Health(context.Background())
		ae := apiErrorOf(t, err)
		if ae.Status != 503 {
			t.Errorf("Status = %d, want 503", ae.Status)
		}
		if !strings.Contains(ae.Detail, "lookup backend unreachable") || !strings.Contains(ae.Detail, "feed store down") {
			t.Errorf("Detail = %q, want both problems", ae.Detail)
		}
		if n := m.count(); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		if a := m.got()[0]; a.header.Get("X-Api-Key") != "" {
			t.Errorf("X-Api-Key sent to /health")
		}
	})
}
