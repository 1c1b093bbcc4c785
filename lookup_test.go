package synthient_test

// Tests of lookup.go: LookupIP, LookupIPs and LookupDomain on an httpmock
// transport, and the fuzz target of the domain validator.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// The JSON examples of section 7 of the API reference (api-v4.md).
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
)

// TestLookupIPRequest checks the request of LookupIP, and that the result
// carries the address as the caller gave it: an IPv4-mapped address is
// sent as the IPv4 address it maps (RFC 4291 2.5.5.2), which the API
// answers.
func TestLookupIPRequest(t *testing.T) {
	t.Parallel()
	cases := []struct{ ip, path, answered string }{
		{"1.2.3.4", "/api/v4/lookup/ip/1.2.3.4", "1.2.3.4"},
		{"2001:db8::1", "/api/v4/lookup/ip/2001:db8::1", "2001:db8::1"},
		{"::ffff:192.0.2.1", "/api/v4/lookup/ip/192.0.2.1", "192.0.2.1"},
	}
	for _, tc := range cases {
		t.Run(tc.ip, func(t *testing.T) {
			t.Parallel()
			api := newMockAPI(t, answerJSON(http.StatusOK, fmt.Sprintf(`{"ip":%q}`, tc.answered)))
			c := api.Client(t)
			r, err := c.LookupIP(context.Background(), netip.MustParseAddr(tc.ip))
			require.NoError(t, err)
			a := api.RequireOne(t, http.MethodGet, tc.path)
			assert.Empty(t, a.URL.RawQuery, "query")
			assert.Equal(t, testKey, a.Header.Get("X-Api-Key"))
			assert.True(t, strings.HasPrefix(a.Header.Get("User-Agent"), "synthient-go/"), "User-Agent = %q", a.Header.Get("User-Agent"))
			assert.Equal(t, netip.MustParseAddr(tc.ip), r.IP)
		})
	}
}

func TestLookupIPDecodesEveryField(t *testing.T) {
	t.Parallel()
	c := newMockAPI(t, answerJSON(http.StatusOK, ipLookupExample)).Client(t)
	got, err := c.LookupIP(context.Background(), netip.MustParseAddr("198.51.100.23"))
	require.NoError(t, err)
	assert.Equal(t, &synthient.IPLookup{
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
	}, got, "LookupIP of the example of api-v4.md §7")
}

func TestLookupIPAbsentOrNullSectionsAreNil(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"absent": `{"ip":"2001:db8::1"}`,
		"null":   `{"ip":"2001:db8::1","network":null,"location":null,"intelligence":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newMockAPI(t, answerJSON(http.StatusOK, body)).Client(t)
			r, err := c.LookupIP(context.Background(), netip.MustParseAddr("2001:db8::1"))
			require.NoError(t, err)
			assert.Equal(t, &synthient.IPLookup{IP: netip.MustParseAddr("2001:db8::1")}, r, "want the IP and nil sections")
		})
	}
}

func TestLookupIPInvalidArguments(t *testing.T) {
	t.Parallel()
	for _, ip := range []netip.Addr{{}, netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("fe80::1%1")} {
		t.Run(ip.String(), func(t *testing.T) {
			t.Parallel()
			api := newMockAPI(t, answerJSON(http.StatusOK, `{"ip":"1.2.3.4"}`))
			c := api.Client(t)
			_, err := c.LookupIP(context.Background(), ip)
			requireInvalid(t, err)
			assert.Zero(t, api.GetTotalCallCount(), "requests sent")
		})
	}
}

// echoBatch answers a batch request with one result per distinct address,
// in the order given by order (nil: as asked), each with an ASN derived
// from its address (asnOf), so that a test can tell the results apart.
func echoBatch(t testing.TB, order func([]string) []string) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		var body struct {
			IPs []string `json:"ips"`
		}
		if err := json.NewDecoder(req.Body).Decode(&body); !assert.NoError(t, err, "the request body") {
			return httpmock.NewStringResponse(http.StatusBadRequest, `{"status":400}`), nil
		}
		ips := slices.Clone(body.IPs)
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
		return answerJSON(http.StatusOK, b.String())(req)
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

// assertResults checks that got holds one result per address of ips, in
// order, each carrying the data echoBatch gave its own address.
func assertResults(t *testing.T, ips []netip.Addr, got []synthient.IPLookup) {
	t.Helper()
	require.Len(t, got, len(ips), "results for %d addresses", len(ips))
	for i, ip := range ips {
		assert.Equal(t, ip, got[i].IP, "result %d", i)
		if assert.NotNil(t, got[i].Network, "result %d for %v has no network", i, ip) {
			assert.Equal(t, asnOf(ip.String()), got[i].Network.ASN, "result %d for %v does not carry its own data", i, ip)
		}
	}
}

func TestLookupIPsRequestBody(t *testing.T) {
	t.Parallel()
	ips := []netip.Addr{
		netip.MustParseAddr("203.0.113.7"),
		netip.MustParseAddr("2001:db8::1"),
		netip.MustParseAddr("192.0.2.1"),
		netip.MustParseAddr("198.51.100.9"),
	}
	api := newMockAPI(t, echoBatch(t, nil))
	c := api.Client(t)
	got, err := c.LookupIPs(context.Background(), ips)
	require.NoError(t, err)
	assertResults(t, ips, got)
	a := api.RequireOne(t, http.MethodPost, "/api/v4/lookup/ips")
	assert.True(t, strings.HasPrefix(a.Header.Get("Content-Type"), "application/json"), "Content-Type = %q", a.Header.Get("Content-Type"))
	assert.Equal(t, testKey, a.Header.Get("X-Api-Key"))
	assert.JSONEq(t, `{"ips":["203.0.113.7","2001:db8::1","192.0.2.1","198.51.100.9"]}`, a.Body)
}

// TestLookupIPsSendsMappedAddressesAsIPv4: an IPv4-mapped address goes
// out as the IPv4 address it maps, so that it and that address are one
// address to the API, charged once; each result keeps the address as
// given.
func TestLookupIPsSendsMappedAddressesAsIPv4(t *testing.T) {
	t.Parallel()
	ips := []netip.Addr{
		netip.MustParseAddr("::ffff:192.0.2.7"),
		netip.MustParseAddr("192.0.2.7"),
		netip.MustParseAddr("2001:db8::1"),
		netip.MustParseAddr("::ffff:198.51.100.9"),
	}
	// The server answers each distinct address once, as the fake does.
	api := newMockAPI(t, echoBatch(t, func(sent []string) []string {
		slices.Sort(sent)
		return slices.Compact(sent)
	}))
	got, err := api.Client(t).LookupIPs(context.Background(), ips)
	require.NoError(t, err)
	assertResults(t, ips, got)
	a := api.RequireOne(t, http.MethodPost, "/api/v4/lookup/ips")
	assert.JSONEq(t, `{"ips":["192.0.2.7","192.0.2.7","2001:db8::1","198.51.100.9"]}`, a.Body)
}

func TestLookupIPsBatchSize(t *testing.T) {
	t.Parallel()
	invalid := map[string][]netip.Addr{"nil": nil}
	for _, n := range []int{0, 1001, 5000} {
		invalid[fmt.Sprintf("%d addresses", n)] = addrs(n)
	}
	for name, ips := range invalid {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			api := newMockAPI(t, answerJSON(http.StatusOK, ""))
			c := api.Client(t)
			_, err := c.LookupIPs(context.Background(), ips)
			requireInvalid(t, err)
			assert.Zero(t, api.GetTotalCallCount(), "requests sent")
		})
	}
	for _, n := range []int{1, 1000} {
		t.Run(fmt.Sprintf("%d addresses", n), func(t *testing.T) {
			t.Parallel()
			api := newMockAPI(t, echoBatch(t, nil))
			c := api.Client(t)
			ips := addrs(n)
			got, err := c.LookupIPs(context.Background(), ips)
			require.NoError(t, err)
			assertResults(t, ips, got)
			assert.Equal(t, 1, api.GetTotalCallCount(), "requests sent")
		})
	}
}

func TestLookupIPsInvalidAddress(t *testing.T) {
	t.Parallel()
	for _, bad := range []netip.Addr{{}, netip.MustParseAddr("fe80::1%eth0")} {
		t.Run(bad.String(), func(t *testing.T) {
			t.Parallel()
			api := newMockAPI(t, answerJSON(http.StatusOK, ""))
			c := api.Client(t)
			_, err := c.LookupIPs(context.Background(), append(addrs(3), bad))
			requireInvalid(t, err)
			assert.Zero(t, api.GetTotalCallCount(), "requests sent")
		})
	}
}

func TestLookupIPsResultsInInputOrder(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			ips := append(addrs(20), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2"))
			c := newMockAPI(t, echoBatch(t, order)).Client(t)
			got, err := c.LookupIPs(context.Background(), ips)
			require.NoError(t, err)
			assertResults(t, ips, got)
		})
	}
}

func TestLookupIPsDuplicatesEachGetTheirResult(t *testing.T) {
	t.Parallel()
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("2001:db8::3")
	ips := []netip.Addr{a, b, a, c, a, b}
	// The server dedupes and answers in its own order.
	client := newMockAPI(t, echoBatch(t, func([]string) []string {
		return []string{c.String(), a.String(), b.String()}
	})).Client(t)
	got, err := client.LookupIPs(context.Background(), ips)
	require.NoError(t, err)
	assertResults(t, ips, got)
}

func TestLookupIPsMatchesAnotherSpellingOfAnAddress(t *testing.T) {
	t.Parallel()
	ips := []netip.Addr{netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("192.0.2.1")}
	c := newMockAPI(t, answerJSON(http.StatusOK, `{"results":[{"ip":"192.0.2.1"},{"ip":"2001:0DB8:0000::0001"}]}`)).Client(t)
	got, err := c.LookupIPs(context.Background(), ips)
	require.NoError(t, err)
	require.Len(t, got, 2, "want the results for %v in order", ips)
	assert.Equal(t, ips[0], got[0].IP, "result 0")
	assert.Equal(t, ips[1], got[1].IP, "result 1")
}

func TestLookupIPsMissingResults(t *testing.T) {
	t.Parallel()
	a, b, c, d := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"),
		netip.MustParseAddr("2001:db8::3"), netip.MustParseAddr("192.0.2.4")
	ips := []netip.Addr{a, b, c, d, a}
	api := newMockAPI(t, echoBatch(t, func([]string) []string { return []string{c.String(), a.String()} }))
	client := api.Client(t)
	got, err := client.LookupIPs(context.Background(), ips)
	var de *synthient.DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, []netip.Addr{b, d}, de.Missing, "Missing")
	assertResults(t, []netip.Addr{a, c, a}, got)
	var base *synthient.Error
	require.ErrorAs(t, err, &base)
	assert.Equal(t, "LookupIPs", base.Op, "Op")
	assert.Equal(t, 1, base.Attempts, "Attempts")
	assert.Equal(t, 1, api.GetTotalCallCount(), "requests sent")
}

func TestLookupIPsWithoutResults(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `{"results":null}`, `{"result":[{"ip":"192.0.2.1"}]}`} {
		t.Run(body, func(t *testing.T) {
			t.Parallel()
			c := newMockAPI(t, answerJSON(http.StatusOK, body)).Client(t)
			got, err := c.LookupIPs(context.Background(), []netip.Addr{netip.MustParseAddr("192.0.2.1")})
			var de *synthient.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Empty(t, got, "results")
		})
	}
}

func TestLookupIPsDecodesTheBatchExample(t *testing.T) {
	t.Parallel()
	ips := []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::1")}
	c := newMockAPI(t, answerJSON(http.StatusOK, batchExample)).Client(t)
	got, err := c.LookupIPs(context.Background(), ips)
	require.NoError(t, err)
	assert.Equal(t, []synthient.IPLookup{
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
	}, got)
}

// long253 is a 253-octet name, the longest a DNS name can be; long254 is
// one octet longer.
var (
	long253 = strings.Join([]string{strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 61)}, ".")
	long254 = strings.Join([]string{strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 62)}, ".")
)

func TestLookupDomainRequest(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			api := newMockAPI(t, answerJSON(http.StatusOK, `{"domain":"example.org"}`))
			c := api.Client(t)
			var before synthient.DomainLookupParams
			if tc.params != nil {
				before = *tc.params
			}
			_, err := c.LookupDomain(context.Background(), tc.domain, tc.params)
			require.NoError(t, err)
			a := api.RequireOne(t, http.MethodGet, tc.path)
			assert.Equal(t, tc.query, a.URL.RawQuery, "query")
			assert.Equal(t, testKey, a.Header.Get("X-Api-Key"))
			if tc.params != nil {
				assert.Equal(t, before, *tc.params, "params were modified")
			}
		})
	}
}

func TestLookupDomainInvalidArguments(t *testing.T) {
	t.Parallel()
	require.Len(t, long253, 253, "a test name")
	require.Len(t, long254, 254, "a test name")
	domains := []string{
		"", long254, strings.Repeat("a", 64) + ".example",
		"a/b", "a?b", "a#b", "a b", "a\tb", "a\nb", "a..b", ".example", "example..",
		"a\u00a0b", "a\u3000b",
		// Names that cannot be converted to punycode.
		"\u0300a.example", "-bücher.example", "\ufffdü.example",
	}
	for _, d := range domains {
		t.Run(fmt.Sprintf("%q", d), func(t *testing.T) {
			t.Parallel()
			api := newMockAPI(t, answerJSON(http.StatusOK, `{"domain":"example.org"}`))
			c := api.Client(t)
			_, err := c.LookupDomain(context.Background(), d, nil)
			requireInvalid(t, err)
			assert.Zero(t, api.GetTotalCallCount(), "requests sent")
		})
	}
	for _, limit := range []int{-1, 1001, -1000} {
		t.Run(fmt.Sprintf("limit_%d", limit), func(t *testing.T) {
			t.Parallel()
			api := newMockAPI(t, answerJSON(http.StatusOK, `{"domain":"example.org"}`))
			c := api.Client(t)
			_, err := c.LookupDomain(context.Background(), "example.org", &synthient.DomainLookupParams{Limit: limit})
			requireInvalid(t, err)
			assert.Zero(t, api.GetTotalCallCount(), "requests sent")
		})
	}
}

func TestLookupDomainDecodesEveryField(t *testing.T) {
	t.Parallel()
	c := newMockAPI(t, answerJSON(http.StatusOK, domainExample)).Client(t)
	got, err := c.LookupDomain(context.Background(), "example.org", &synthient.DomainLookupParams{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, &synthient.DomainLookup{
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
	}, got, "LookupDomain of the example of api-v4.md §7")

	withoutTopASN := strings.Replace(domainExample, `"top_asn": {"asn": 64500, "events": 431},`, "", 1)
	require.NotEqual(t, domainExample, withoutTopASN, "the example has no top_asn to remove")
	c = newMockAPI(t, answerJSON(http.StatusOK, withoutTopASN)).Client(t)
	got, err = c.LookupDomain(context.Background(), "example.org", nil)
	require.NoError(t, err, "without top_asn")
	assert.Nil(t, got.TopASN, "TopASN, when absent")
	assert.Equal(t, "example.org", got.Domain, "the rest was not decoded")
	assert.Len(t, got.RecentEvents, 2, "the rest was not decoded")
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

// ---------------------------------------------------------------------
// The validators, fuzzed through the public API on a mockAPI
// that answers a minimal valid body, so nothing leaves the process. For
// every input, either the call fails with ErrInvalidArgument and sent
// nothing, or it sent exactly one request whose path is well-formed.
// ---------------------------------------------------------------------

const domainPathPrefix = "/api/v4/lookup/domain/"

// isLDH reports whether s holds only letters, digits, '-', '_' and '.',
// the ASCII names whose fate the reference decides exactly.
func isLDH(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// referenceName is the reference for a plain ASCII name: without one
// trailing dot, non-empty, at most 253 octets, every label 1 to 63 octets.
func referenceName(s string) (string, bool) {
	name := strings.TrimSuffix(s, ".")
	if name == "" || len(name) > 253 {
		return "", false
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 {
			return "", false
		}
	}
	return name, true
}

// mustRejectDomain reports why the API contract rejects domain whatever
// else it holds: '/', '?', '#', white space or a control character, or
// bytes that are not UTF-8.
func mustRejectDomain(domain string) string {
	if !utf8.ValidString(domain) {
		return "is not UTF-8"
	}
	for _, r := range domain {
		switch {
		case r == '/' || r == '?' || r == '#':
			return "holds " + strconv.QuoteRune(r)
		case unicode.IsSpace(r):
			return "holds the white space " + strconv.QuoteRune(r)
		case unicode.IsControl(r):
			return "holds the control character " + strconv.QuoteRune(r)
		}
	}
	return ""
}

// requireSentName checks the name a request carries: a single escaped
// path segment that decodes to an ASCII name of at most 253 octets,
// labels of 1 to 63, and no '/', '?', '#', white space or control
// character.
func requireSentName(t *testing.T, domain string, r *mockRequest) string {
	t.Helper()
	escaped := r.URL.EscapedPath()
	seg, ok := strings.CutPrefix(escaped, domainPathPrefix)
	if !ok || seg == "" || strings.Contains(seg, "/") {
		t.Fatalf("LookupDomain(%q) sent path %q, not %s{one segment}", domain, escaped, domainPathPrefix)
	}
	require.Empty(t, r.URL.RawQuery, "LookupDomain(%q) sent a query", domain)
	require.Empty(t, r.URL.Fragment, "LookupDomain(%q) sent a fragment", domain)
	name, err := url.PathUnescape(seg)
	require.NoError(t, err, "LookupDomain(%q) sent the segment %q, which does not unescape", domain, seg)
	require.LessOrEqual(t, len(name), 253, "LookupDomain(%q) sent a name of more than 253 octets: %q", domain, name)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			t.Fatalf("LookupDomain(%q) sent %q, which is not ASCII", domain, name)
		case c < 0x20 || c == 0x7f:
			t.Fatalf("LookupDomain(%q) sent %q, which holds the control character %#x", domain, name, c)
		case c == '/' || c == '?' || c == '#' || c == ' ':
			t.Fatalf("LookupDomain(%q) sent %q, which holds %q", domain, name, c)
		}
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 {
			t.Fatalf("LookupDomain(%q) sent %q, which has a label of %d octets", domain, name, len(l))
		}
	}
	return name
}

// FuzzLookupDomain fuzzes the domain validator through LookupDomain: a
// rejection is an invalid argument that sent nothing; an acceptance sent
// one request whose path segment decodes to a well-formed ASCII name. A
// name with '/', '?', '#', white space or a control character is always
// rejected; a plain LDH name is accepted exactly when the reference says,
// and sent as given (less one trailing dot).
func FuzzLookupDomain(f *testing.F) {
	long := func(n int) string { return strings.Repeat("a", n) }
	name253 := long(63) + "." + long(63) + "." + long(63) + "." + long(61)
	for _, d := range []string{
		"example.com", "example.com.", "example.com..", ".", "..", "", "a", "a.", ".a", "a..b",
		"EXAMPLE.COM", "a_b.example", "-a.com", "a-.com", "1.2.3.4", "localhost",
		long(63) + ".com", long(64) + ".com", name253, name253 + ".", name253 + "a", long(254),
		"exa mple.com", " example.com", "example.com ", "a/b.com", "a?b.com", "a#b.com",
		"a\\b.com", "a%2Fb.com", "a%b.com", "a%", "a\tb", "a\nb", "a\rb", "a\x00b", "a\x7fb",
		"a\u0080b", "a\u0085b", "a\u009fb", "a\u00a0b", "a\u1680b", "a\u2000b", "a\u2028b", "a\u3000b",
		"a\u200bb", "a\u00adb", "a\ufeffb", "\xff.com", "a\xc0\xafb.com",
		"bücher.de", "xn--bcher-kva.de", "xn--.com", "例え.テスト", "ß.de", "ΣΑΣ.gr",
		"a\uff0fb.com", "a\uff1fb.com", "a\uff03b.com", "a\u2215b.com", "a\u3002b", "a\uff0e", "a\uff61b",
		"\u2474.com", "a\u2024b", strings.Repeat("ü", 40) + ".de", strings.Repeat("ü", 70) + ".de",
		strings.Repeat("ü.", 130) + "de", "a;b.com", "a,b.com", "a@b.com", "a:80", "[::1]", "a*b",
		"a+b.com", "a=b", "a&b", "a'b", "a\"b", "a<b>", "a`b", "a{b}", "a|b", "a^b", "a~b", "a!b",
	} {
		f.Add(d)
	}
	rt := newMockAPI(f, answerJSON(http.StatusOK, `{"domain":"example.com"}`))
	c := rt.Client(f)

	f.Fuzz(func(t *testing.T, domain string) {
		_, err := c.LookupDomain(context.Background(), domain, nil)
		r := acceptedRequest(t, strconv.Quote(domain), err, rt.Take())

		if why := mustRejectDomain(domain); why != "" && r != nil {
			t.Fatalf("LookupDomain(%q) sent %q; the domain %s", domain, r.URL.EscapedPath(), why)
		}
		if r == nil {
			if isLDH(domain) {
				_, ok := referenceName(domain)
				require.False(t, ok, "LookupDomain(%q) = %v; the reference accepts the name", domain, err)
			}
			return
		}
		name := requireSentName(t, domain, r)
		if isLDH(domain) {
			want, ok := referenceName(domain)
			require.True(t, ok, "LookupDomain(%q) sent %q; the reference rejects the name", domain, name)
			require.Equal(t, want, name, "LookupDomain(%q) sent the name", domain)
		}
	})
}

// TestLookupIPsRepeatsShareNoMemory: an address asked twice and answered
// once gets two results of its own: changing one changes nothing in the
// other.
func TestLookupIPsRepeatsShareNoMemory(t *testing.T) {
	t.Parallel()
	m := newMockAPI(t, nil).Route(http.MethodPost, "/api/v4/lookup/ips", answerJSON(http.StatusOK,
		`{"results":[{"ip":"10.0.0.1","intelligence":{"risk_score":1,"behavior":[],"categories":["RESIDENTIAL_PROXY"],"devices":[],"providers":[]}}]}`))
	c := m.Client(t)
	ip := netip.MustParseAddr("10.0.0.1")
	res, err := c.LookupIPs(callCtx(t), []netip.Addr{ip, ip})
	require.NoError(t, err)
	require.Len(t, res, 2)
	res[0].Intelligence.RiskScore = 99
	res[0].Intelligence.Categories[0] = "CHANGED"
	assert.Equal(t, 1, res[1].Intelligence.RiskScore)
	assert.Equal(t, []string{"RESIDENTIAL_PROXY"}, res[1].Intelligence.Categories)
}
