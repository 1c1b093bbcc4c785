package synthienttest

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
)

// city is a place with its real coordinates and IANA time zone.
type city struct {
	country, state, name, tz string
	lat, lon                 float64
}

// The cities the fake places addresses in; ISPs refer to them by index.
var cities = []city{
	{"US", "NY", "New York", "America/New_York", 40.7128, -74.0060},          // 0
	{"US", "CA", "Los Angeles", "America/Los_Angeles", 34.0522, -118.2437},   // 1
	{"US", "IL", "Chicago", "America/Chicago", 41.8781, -87.6298},            // 2
	{"US", "TX", "Dallas", "America/Chicago", 32.7767, -96.7970},             // 3
	{"US", "VA", "Ashburn", "America/New_York", 39.0438, -77.4874},           // 4
	{"US", "WA", "Seattle", "America/Los_Angeles", 47.6062, -122.3321},       // 5
	{"US", "CO", "Denver", "America/Denver", 39.7392, -104.9903},             // 6
	{"US", "GA", "Atlanta", "America/New_York", 33.7490, -84.3880},           // 7
	{"US", "CA", "San Jose", "America/Los_Angeles", 37.3382, -121.8863},      // 8
	{"US", "AZ", "Phoenix", "America/Phoenix", 33.4484, -112.0740},           // 9
	{"US", "MA", "Boston", "America/New_York", 42.3601, -71.0589},            // 10
	{"US", "FL", "Miami", "America/New_York", 25.7617, -80.1918},             // 11
	{"DE", "BE", "Berlin", "Europe/Berlin", 52.5200, 13.4050},                // 12
	{"DE", "HE", "Frankfurt am Main", "Europe/Berlin", 50.1109, 8.6821},      // 13
	{"DE", "BY", "Munich", "Europe/Berlin", 48.1351, 11.5820},                // 14
	{"DE", "HH", "Hamburg", "Europe/Berlin", 53.5511, 9.9937},                // 15
	{"DE", "SN", "Falkenstein", "Europe/Berlin", 50.4779, 12.3713},           // 16
	{"FR", "IDF", "Paris", "Europe/Paris", 48.8566, 2.3522},                  // 17
	{"FR", "HDF", "Roubaix", "Europe/Paris", 50.6942, 3.1746},                // 18
	{"FR", "ARA", "Lyon", "Europe/Paris", 45.7640, 4.8357},                   // 19
	{"GB", "ENG", "London", "Europe/London", 51.5074, -0.1278},               // 20
	{"GB", "ENG", "Manchester", "Europe/London", 53.4808, -2.2426},           // 21
	{"NL", "NH", "Amsterdam", "Europe/Amsterdam", 52.3676, 4.9041},           // 22
	{"ES", "MD", "Madrid", "Europe/Madrid", 40.4168, -3.7038},                // 23
	{"RU", "MOW", "Moscow", "Europe/Moscow", 55.7558, 37.6173},               // 24
	{"CN", "BJ", "Beijing", "Asia/Shanghai", 39.9042, 116.4074},              // 25
	{"CN", "SH", "Shanghai", "Asia/Shanghai", 31.2304, 121.4737},             // 26
	{"CN", "ZJ", "Hangzhou", "Asia/Shanghai", 30.2741, 120.1551},             // 27
	{"JP", "13", "Tokyo", "Asia/Tokyo", 35.6762, 139.6503},                   // 28
	{"JP", "27", "Osaka", "Asia/Tokyo", 34.6937, 135.5023},                   // 29
	{"IN", "MH", "Mumbai", "Asia/Kolkata", 19.0760, 72.8777},                 // 30
	{"IN", "KA", "Bengaluru", "Asia/Kolkata", 12.9716, 77.5946},              // 31
	{"IN", "DL", "New Delhi", "Asia/Kolkata", 28.6139, 77.2090},              // 32
	{"AU", "NSW", "Sydney", "Australia/Sydney", -33.8688, 151.2093},          // 33
	{"AU", "VIC", "Melbourne", "Australia/Melbourne", -37.8136, 144.9631},    // 34
	{"CA", "ON", "Toronto", "America/Toronto", 43.6532, -79.3832},            // 35
	{"CA", "QC", "Montreal", "America/Toronto", 45.5017, -73.5673},           // 36
	{"CA", "BC", "Vancouver", "America/Vancouver", 49.2827, -123.1207},       // 37
	{"BR", "SP", "São Paulo", "America/Sao_Paulo", -23.5505, -46.6333},       // 38
	{"BR", "RJ", "Rio de Janeiro", "America/Sao_Paulo", -22.9068, -43.1729},  // 39
	{"SG", "01", "Singapore", "Asia/Singapore", 1.3521, 103.8198},            // 40
	{"IE", "D", "Dublin", "Europe/Dublin", 53.3498, -6.2603},                 // 41
	{"US", "CA", "Mountain View", "America/Los_Angeles", 37.3861, -122.0839}, // 42
	{"US", "CA", "San Francisco", "America/Los_Angeles", 37.7749, -122.4194}, // 43
	{"US", "CA", "Stanford", "America/Los_Angeles", 37.4275, -122.1697},      // 44
	{"US", "MD", "Germantown", "America/New_York", 39.1732, -77.2717},        // 45
	{"US", "OH", "Columbus", "America/New_York", 39.9612, -82.9988},          // 46
	{"CH", "ZH", "Zurich", "Europe/Zurich", 47.3769, 8.5417},                 // 47
}

// isp is a network operator. Org, Domain, AbuseEmail and AbusePhone may be
// empty, which the API sends as null.
type isp struct {
	name, org, domain, abuseEmail, abusePhone string
	asn                                       int
	kind                                      string // network.type
	cities                                    []int
	weight                                    int
}

// The operators the fake assigns prefixes to, with their real ASNs.
var isps = []isp{
	// Residential broadband.
	{"Comcast Cable Communications", "", "comcast.net", "abuse@comcast.net", "+1-888-565-4329", 7922, "RESIDENTIAL", []int{0, 2, 7, 10, 11, 6, 5}, 9},
	{"Charter Communications", "Spectrum", "charter.com", "abuse@charter.net", "", 20115, "RESIDENTIAL", []int{1, 3, 0, 46}, 6},
	{"AT&T Services", "AT&T Corp.", "att.com", "abuse@att.net", "+1-919-319-8130", 7018, "RESIDENTIAL", []int{3, 7, 2, 1, 11}, 6},
	{"Deutsche Telekom AG", "", "telekom.de", "abuse@telekom.de", "+49-228-181-0", 3320, "RESIDENTIAL", []int{12, 13, 14, 15}, 5},
	{"Orange S.A.", "Orange France", "orange.fr", "abuse@orange.fr", "", 3215, "RESIDENTIAL", []int{17, 19}, 4},
	{"British Telecommunications PLC", "BT", "bt.com", "abuse@bt.com", "+44-800-800-150", 2856, "RESIDENTIAL", []int{20, 21}, 4},
	{"Telefonica de Espana", "Movistar", "telefonica.es", "nemesys@telefonica.es", "", 3352, "RESIDENTIAL", []int{23}, 3},
	{"KPN B.V.", "", "kpn.com", "abuse@kpn.com", "", 1136, "RESIDENTIAL", []int{22}, 2},
	{"PJSC Rostelecom", "", "rt.ru", "abuse@rt.ru", "", 12389, "RESIDENTIAL", []int{24}, 3},
	{"China Telecom", "Chinanet", "chinatelecom.com.cn", "anti-spam@chinatelecom.cn", "", 4134, "RESIDENTIAL", []int{25, 26, 27}, 6},
	{"NTT Communications", "OCN", "ocn.ad.jp", "abuse@ocn.ad.jp", "", 4713, "RESIDENTIAL", []int{28, 29}, 3},
	{"Bharti Airtel Ltd.", "", "airtel.in", "abuse@airtel.com", "", 9498, "RESIDENTIAL", []int{30, 31, 32}, 3},
	{"Telstra Limited", "", "telstra.net", "abuse@telstra.net", "", 1221, "RESIDENTIAL", []int{33, 34}, 2},
	{"Rogers Communications Canada", "", "rogers.com", "abuse@rogers.com", "", 812, "RESIDENTIAL", []int{35, 36, 37}, 2},
	{"Claro NXT Telecomunicacoes", "Claro S.A.", "claro.com.br", "", "", 28573, "RESIDENTIAL", []int{38, 39}, 3},
	// Mobile carriers.
	{"Verizon Wireless", "Cellco Partnership", "verizonwireless.com", "abuse@verizon.com", "", 6167, "MOBILE", []int{0, 2, 3, 1, 10}, 4},
	{"T-Mobile USA, Inc.", "", "t-mobile.com", "abuse@t-mobile.com", "", 21928, "MOBILE", []int{5, 1, 6, 9}, 4},
	{"Vodafone GmbH", "", "vodafone.de", "abuse.de@vodafone.com", "", 3209, "MOBILE", []int{12, 14, 15}, 2},
	{"EE Limited", "", "ee.co.uk", "abuse@ee.co.uk", "", 12576, "MOBILE", []int{20, 21}, 2},
	{"Reliance Jio Infocomm Limited", "", "jio.com", "", "", 55836, "MOBILE", []int{30, 31, 32}, 4},
	{"NTT DOCOMO, INC.", "", "docomo.ne.jp", "", "", 9605, "MOBILE", []int{28, 29}, 2},
	// Hosting and cloud.
	{"Amazon.com, Inc.", "Amazon Technologies Inc.", "amazon.com", "abuse@amazonaws.com", "", 16509, "DATACENTER", []int{4, 5, 13, 41, 28, 40, 33}, 7},
	{"Google LLC", "Google Cloud", "google.com", "google-cloud-compliance@google.com", "", 396982, "DATACENTER", []int{46, 3, 13, 22, 40}, 4},
	{"Microsoft Corporation", "", "microsoft.com", "abuse@microsoft.com", "+1-425-882-8080", 8075, "DATACENTER", []int{4, 9, 41, 22, 40}, 4},
	{"DigitalOcean, LLC", "", "digitalocean.com", "abuse@digitalocean.com", "+1-646-827-4366", 14061, "DATACENTER", []int{0, 8, 22, 20, 13, 31, 40}, 4},
	{"OVH SAS", "", "ovh.net", "abuse@ovh.net", "+33-9-72-10-10-07", 16276, "DATACENTER", []int{18, 36, 13}, 4},
	{"Hetzner Online GmbH", "", "hetzner.com", "abuse@hetzner.com", "+49-9831-505-0", 24940, "DATACENTER", []int{16, 14, 5}, 4},
	{"Akamai Connected Cloud", "Linode", "linode.com", "abuse@linode.com", "", 63949, "DATACENTER", []int{3, 0, 13, 20, 28}, 2},
	{"The Constant Company, LLC", "Vultr Holdings", "vultr.com", "abuse@vultr.com", "", 20473, "DATACENTER", []int{0, 1, 2, 22, 28}, 3},
	{"M247 Europe SRL", "", "m247.com", "abuse@m247.ro", "", 9009, "DATACENTER", []int{20, 13, 22, 23, 47}, 3},
	{"Cloudflare, Inc.", "", "cloudflare.com", "abuse@cloudflare.com", "+1-650-319-8930", 13335, "DATACENTER", []int{43, 20, 13, 40}, 2},
	{"Alibaba (US) Technology Co., Ltd.", "Alibaba Cloud", "alibabacloud.com", "", "", 45102, "DATACENTER", []int{27, 40, 8}, 2},
	// Satellite.
	{"SpaceX Services, Inc.", "Starlink", "starlink.com", "abuse@spacex.com", "", 14593, "SATELLITE", []int{5, 6, 35, 33, 12}, 2},
	{"Viasat, Inc.", "", "viasat.com", "abuse@viasat.com", "", 7155, "SATELLITE", []int{6, 3}, 1},
	{"Hughes Network Systems", "HughesNet", "hughes.com", "", "", 6621, "SATELLITE", []int{45, 9}, 1},
	// Corporate, academic, government.
	{"Apple Inc.", "", "apple.com", "abuse@apple.com", "", 714, "CORPORATE", []int{8, 1}, 1},
	{"Cisco Systems, Inc.", "", "cisco.com", "", "", 109, "CORPORATE", []int{8}, 1},
	{"Massachusetts Institute of Technology", "", "mit.edu", "security@mit.edu", "", 3, "ACADEMIC", []int{10}, 1},
	{"Stanford University", "", "stanford.edu", "security@stanford.edu", "", 32, "ACADEMIC", []int{44}, 1},
	{"DoD Network Information Center", "", "", "", "", 721, "GOVERNMENT", []int{6, 7}, 1},
}

var totalWeight = func() int {
	n := 0
	for _, i := range isps {
		n += i.weight
	}
	return n
}()

// The networks of the documentation prefixes (RFC 5737, RFC 3849), with
// documentation ASNs (RFC 5398).
var docISPs = []isp{
	{"Example Broadband", "", "example-broadband.net", "abuse@example-broadband.net", "", 64500, "RESIDENTIAL", []int{12, 0, 20}, 1},
	{"Example Hosting", "Example Hosting GmbH", "", "", "", 64511, "DATACENTER", []int{22, 13}, 1},
	{"Example Mobile", "", "example-mobile.net", "abuse@example-mobile.net", "+1-555-0100", 64501, "MOBILE", []int{1, 5}, 1},
}

// wellKnown are public resolvers the fake knows by name; they have no
// intelligence.
var wellKnown = []struct {
	prefix netip.Prefix
	isp    isp
}{
	{netip.MustParsePrefix("8.8.8.0/24"), isp{"Google LLC", "", "google.com", "network-abuse@google.com", "", 15169, "DATACENTER", []int{42}, 0}},
	{netip.MustParsePrefix("8.8.4.0/24"), isp{"Google LLC", "", "google.com", "network-abuse@google.com", "", 15169, "DATACENTER", []int{42}, 0}},
	{netip.MustParsePrefix("2001:4860::/32"), isp{"Google LLC", "", "google.com", "network-abuse@google.com", "", 15169, "DATACENTER", []int{42}, 0}},
	{netip.MustParsePrefix("1.1.1.0/24"), isp{"Cloudflare, Inc.", "APNIC Research and Development", "cloudflare.com", "abuse@cloudflare.com", "", 13335, "DATACENTER", []int{43}, 0}},
	{netip.MustParsePrefix("1.0.0.0/24"), isp{"Cloudflare, Inc.", "APNIC Research and Development", "cloudflare.com", "abuse@cloudflare.com", "", 13335, "DATACENTER", []int{43}, 0}},
	{netip.MustParsePrefix("2606:4700::/32"), isp{"Cloudflare, Inc.", "", "cloudflare.com", "abuse@cloudflare.com", "", 13335, "DATACENTER", []int{43}, 0}},
	{netip.MustParsePrefix("9.9.9.0/24"), isp{"Quad9", "", "quad9.net", "abuse@quad9.net", "", 19281, "DATACENTER", []int{47}, 0}},
}

// The prefixes that are not routed on the internet: a lookup of one has no
// network, location or intelligence.
var bogons = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("224.0.0.0/3"),
	netip.MustParsePrefix("::/8"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

var docPrefixes = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// isPublic reports whether a is a routed unicast address.
func isPublic(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && !inAny(a, bogons) && !(a.Is6() && !globalUnicast6.Contains(a))
}

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// seededRNG returns a generator seeded by the hash of the parts and, when
// it is not 0, the server's seed (WithSeed).
func seededRNG(seed uint64, parts ...string) *rand.Rand {
	if seed != 0 {
		parts = append([]string{"seed", strconv.FormatUint(seed, 10)}, parts...)
	}
	return rng(parts...)
}

// rng returns a generator seeded by the hash of the parts.
func rng(parts ...string) *rand.Rand {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return rand.New(rand.NewPCG(binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16]))) //nolint:gosec // deterministic fake data from a seed, not a secret
}

// networkPrefix is the prefix that shares a network and location: a /24
// for IPv4, a /48 for IPv6.
func networkPrefix(a netip.Addr) netip.Prefix {
	if a.Is4() {
		return netip.PrefixFrom(a, 24).Masked()
	}
	return netip.PrefixFrom(a, 48).Masked()
}

func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// lookupIP makes up what the API knows of addr, the same for the same
// address and seed (and, for the network and location, its whole /24 or
// /48); timestamps count back from now's day.
func lookupIP(addr netip.Addr, now time.Time, seed uint64) synthient.IPLookup {
	out := synthient.IPLookup{IP: addr}
	a := addr.Unmap()
	if !isPublic(a) {
		return out
	}
	pr := seededRNG(seed, "network", networkPrefix(a).String())
	doc := inAny(a, docPrefixes)
	op := operator(a, doc, pr)
	c := cities[op.cities[pr.IntN(len(op.cities))]]
	out.Network = &synthient.Network{
		ASN: op.asn, ISP: op.name, Type: op.kind,
		Org: ptr(op.org), Domain: ptr(op.domain), AbuseEmail: ptr(op.abuseEmail), AbusePhone: ptr(op.abusePhone),
	}
	out.Location = &synthient.Location{
		Country: c.country, State: c.state, City: c.name, Timezone: c.tz,
		Latitude: c.lat, Longitude: c.lon, GeoHash: geohash(c.lat, c.lon, 3),
	}
	switch {
	case op.weight == 0: // a well-known resolver
		return out
	case doc && docPrefixes[3].Contains(a): // 2001:db8::/32
		return out
	case doc && docPrefixes[0].Contains(a): // 192.0.2.0/24
		out.Intelligence = &synthient.Intelligence{Behavior: []string{}, Categories: []string{}, Devices: []synthient.Device{}, Providers: []synthient.Provider{}}
		return out
	}
	out.Intelligence = intelligence(a, op.kind, now, seed)
	return out
}

// operator is the operator of a's network, drawn from pr: a documentation
// network's (doc), a well-known resolver's, or an ISP by weight.
func operator(a netip.Addr, doc bool, pr *rand.Rand) isp {
	if doc {
		return docISPs[pr.IntN(len(docISPs))]
	}
	for _, wk := range wellKnown {
		if wk.prefix.Contains(a) {
			return wk.isp
		}
	}
	n := pr.IntN(totalWeight)
	for _, i := range isps {
		if n < i.weight {
			return i
		}
		n -= i.weight
	}
	return isp{}
}

// profile is a kind of activity seen from an address.
type profile struct {
	category  string   // "" for none
	providers []string // service tags for the category
	behavior  []string // behaviours that go with it
	risk      [2]int   // risk score range
}

var (
	profClean       = profile{"", nil, nil, [2]int{0, 18}}
	profResProxy    = profile{"RESIDENTIAL_PROXY", []string{"BRIGHTDATA", "OXYLABS", "LUNAPROXY", "IPROYAL", "SOAX", "NETNUT", "922S5PROXY", "SMARTPROXY"}, []string{"PROGRAMMATIC_TRAFFIC", "CREDENTIAL_STUFFING"}, [2]int{62, 92}}
	profMobileProxy = profile{"MOBILE_PROXY", []string{"SOAX", "IPROYAL", "PROXYEMPIRE", "BRIGHTDATA"}, []string{"PROGRAMMATIC_TRAFFIC"}, [2]int{55, 88}}
	profDCProxy     = profile{"DATACENTER_PROXY", []string{"WEBSHARE", "OXYLABS", "PROXYRACK", "BRIGHTDATA"}, []string{"PROGRAMMATIC_TRAFFIC", "ACTIVE_CRAWLER"}, [2]int{58, 90}}
	profPublicProxy = profile{"PUBLIC_PROXY", []string{"OPENPROXY", "SQUID"}, []string{"MALICIOUS_TRAFFIC", "PROGRAMMATIC_TRAFFIC"}, [2]int{70, 97}}
	profVPN         = profile{"COMMERCIAL_VPN", []string{"NORDVPN", "EXPRESSVPN", "SURFSHARK", "PROTONVPN", "MULLVAD", "PRIVATEINTERNETACCESS", "CYBERGHOST"}, nil, [2]int{35, 60}}
	profFreeVPN     = profile{"FREE_VPN", []string{"HOTSPOTSHIELD", "WINDSCRIBE", "URBANVPN", "HOLAVPN"}, []string{"PROGRAMMATIC_TRAFFIC"}, [2]int{45, 75}}
	profEntVPN      = profile{"ENTERPRISE_VPN", []string{"ZSCALER", "PALOALTO_GLOBALPROTECT", "CISCO_ANYCONNECT"}, nil, [2]int{5, 25}}
	profTor         = profile{"TOR_NODE", []string{"TOR"}, []string{"TOR_USER", "MALICIOUS_TRAFFIC"}, [2]int{80, 100}}
	profRelay       = profile{"PRIVATE_RELAY", []string{"ICLOUD_PRIVATE_RELAY"}, nil, [2]int{10, 30}}
	profBotnet      = profile{"BOTNET", []string{"MIRAI", "AISURU"}, []string{"COMPROMISED_DEVICE", "MALICIOUS_TRAFFIC"}, [2]int{85, 100}}
	profSearch      = profile{"SEARCH_ENGINE", []string{"GOOGLEBOT", "BINGBOT", "YANDEXBOT"}, []string{"ACTIVE_CRAWLER"}, [2]int{0, 10}}
	profAI          = profile{"AI_CRAWLER", []string{"GPTBOT", "CLAUDEBOT", "PERPLEXITYBOT", "CCBOT"}, []string{"ACTIVE_CRAWLER", "PROGRAMMATIC_TRAFFIC"}, [2]int{10, 35}}
	profUptime      = profile{"UPTIME_MONITOR", []string{"UPTIMEROBOT", "PINGDOM", "BETTERSTACK"}, []string{"PROGRAMMATIC_TRAFFIC"}, [2]int{0, 12}}
	profSEO         = profile{"SEO_CRAWLER", []string{"AHREFSBOT", "SEMRUSHBOT", "MJ12BOT"}, []string{"ACTIVE_CRAWLER"}, [2]int{8, 30}}
	profPreview     = profile{"LINK_PREVIEW", []string{"SLACKBOT", "DISCORDBOT", "TWITTERBOT"}, []string{"PROGRAMMATIC_TRAFFIC"}, [2]int{0, 15}}
	profWebhook     = profile{"WEBHOOK_PROVIDER", []string{"GITHUB_HOOKS", "ZAPIER"}, []string{"PROGRAMMATIC_TRAFFIC"}, [2]int{0, 12}}
	profPayments    = profile{"PAYMENT_PROCESSOR", []string{"STRIPE", "ADYEN", "PAYPAL"}, []string{"PROGRAMMATIC_TRAFFIC"}, [2]int{0, 8}}
	profArchiver    = profile{"WEB_ARCHIVER", []string{"ARCHIVE_ORG"}, []string{"ACTIVE_CRAWLER"}, [2]int{0, 10}}
	profSocial      = profile{"SOCIAL_MEDIA", []string{"FACEBOOKEXTERNALHIT", "LINKEDINBOT"}, []string{"ACTIVE_CRAWLER"}, [2]int{0, 12}}
	profTorrent     = profile{"", nil, []string{"TORRENTING"}, [2]int{20, 45}}
)

// profiles by network type, with weights.
var profilesByType = map[string][]struct {
	p profile
	w int
}{
	"RESIDENTIAL": {{profClean, 40}, {profResProxy, 30}, {profBotnet, 8}, {profTorrent, 12}, {profRelay, 4}, {profFreeVPN, 6}},
	"MOBILE":      {{profClean, 45}, {profMobileProxy, 40}, {profRelay, 10}, {profBotnet, 5}},
	"DATACENTER": {{profClean, 10}, {profDCProxy, 18}, {profVPN, 20}, {profPublicProxy, 6}, {profTor, 6}, {profSearch, 5}, {profAI, 7},
		{profUptime, 4}, {profSEO, 5}, {profPreview, 3}, {profWebhook, 3}, {profPayments, 2}, {profArchiver, 2}, {profSocial, 3}, {profFreeVPN, 4}, {profBotnet, 2}},
	"SATELLITE":  {{profClean, 70}, {profResProxy, 20}, {profTorrent, 10}},
	"CORPORATE":  {{profClean, 50}, {profEntVPN, 50}},
	"ACADEMIC":   {{profClean, 60}, {profTor, 15}, {profTorrent, 25}},
	"GOVERNMENT": {{profClean, 85}, {profEntVPN, 15}},
}

var deviceOSes = []struct{ os, version string }{
	{"Android", "14"}, {"Android", "13"}, {"Android", "12"}, {"iOS", "17.5"}, {"iOS", "18.1"},
	{"Windows", "11"}, {"Windows", "10"}, {"macOS", "14.6"}, {"macOS", "15.1"}, {"Linux", "6.8"},
	{"ChromeOS", "128"},
}

// intelligence makes up the 90-day intelligence of a, or nil (about one
// address in four has none).
func intelligence(a netip.Addr, kind string, now time.Time, seed uint64) *synthient.Intelligence {
	r := seededRNG(seed, "intel", a.String())
	if r.IntN(4) == 0 {
		return nil
	}
	day := now.Truncate(24 * time.Hour).Unix()
	seen := func() int64 { return day - int64(r.IntN(90))*86400 - int64(r.IntN(86400)) }
	in := &synthient.Intelligence{Behavior: []string{}, Categories: []string{}, Devices: []synthient.Device{}, Providers: []synthient.Provider{}}
	profs := []profile{pickProfile(r, kind)}
	if r.IntN(6) == 0 {
		profs = append(profs, pickProfile(r, kind))
	}
	risk := 0
	for _, p := range profs {
		risk = max(risk, p.risk[0]+r.IntN(p.risk[1]-p.risk[0]+1))
		addProfile(in, r, p, seen)
	}
	if kind == "RESIDENTIAL" || kind == "MOBILE" || kind == "SATELLITE" || r.IntN(5) == 0 {
		for n := r.IntN(3); n > 0; n-- {
			d := deviceOSes[r.IntN(len(deviceOSes))]
			in.Devices = append(in.Devices, synthient.Device{OS: d.os, Version: d.version, LastSeen: seen()})
		}
	}
	in.RiskScore = min(100, risk)
	return in
}

// pickProfile draws a profile of a network type by its weight.
func pickProfile(r *rand.Rand, kind string) profile {
	choices := profilesByType[kind]
	total := 0
	for _, c := range choices {
		total += c.w
	}
	n := r.IntN(total)
	for _, c := range choices {
		if n < c.w {
			return c.p
		}
		n -= c.w
	}
	return profClean
}

// addProfile adds what p says of an address to in: its category with one
// or two of its providers (last seen at seen()), and some of its
// behaviours.
func addProfile(in *synthient.Intelligence, r *rand.Rand, p profile, seen func() int64) {
	if p.category != "" && !slices.Contains(in.Categories, p.category) {
		in.Categories = append(in.Categories, p.category)
		for n := 1 + r.IntN(2); n > 0; n-- {
			name := p.providers[r.IntN(len(p.providers))]
			if !slices.ContainsFunc(in.Providers, func(x synthient.Provider) bool { return x.Provider == name }) {
				in.Providers = append(in.Providers, synthient.Provider{Provider: name, Type: p.category, LastSeen: seen()})
			}
		}
	}
	for _, b := range p.behavior {
		if r.IntN(3) > 0 && !slices.Contains(in.Behavior, b) {
			in.Behavior = append(in.Behavior, b)
		}
	}
}

const geohashAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// geohash encodes a position as a geohash of prec characters.
func geohash(lat, lon float64, prec int) string {
	latR, lonR := [2]float64{-90, 90}, [2]float64{-180, 180}
	var b strings.Builder
	bit, ch, even := 0, 0, true
	for b.Len() < prec {
		if even {
			mid := (lonR[0] + lonR[1]) / 2
			if lon >= mid {
				ch |= 1 << (4 - bit)
				lonR[0] = mid
			} else {
				lonR[1] = mid
			}
		} else {
			mid := (latR[0] + latR[1]) / 2
			if lat >= mid {
				ch |= 1 << (4 - bit)
				latR[0] = mid
			} else {
				latR[1] = mid
			}
		}
		even = !even
		if bit < 4 {
			bit++
		} else {
			b.WriteByte(geohashAlphabet[ch])
			bit, ch = 0, 0
		}
	}
	return b.String()
}

// randomPublicIP draws a routed address, IPv6 about one time in eight,
// outside the documentation and well-known prefixes.
func randomPublicIP(r *rand.Rand) netip.Addr {
	for {
		var a netip.Addr
		if r.IntN(8) == 0 {
			var b [16]byte
			prefixes := [][2]byte{{0x2a, 0x01}, {0x2a, 0x02}, {0x26, 0x00}, {0x24, 0x0e}, {0x2a, 0x0d}, {0x28, 0x04}}
			p := prefixes[r.IntN(len(prefixes))]
			b[0], b[1] = p[0], p[1]
			binary.BigEndian.PutUint64(b[2:10], r.Uint64())
			binary.BigEndian.PutUint32(b[10:14], r.Uint32())
			b[14], b[15] = 0, byte(1+r.IntN(250)) //nolint:gosec // below 251
			a = netip.AddrFrom16(b)
		} else {
			a = netip.AddrFrom4([4]byte{byte(1 + r.IntN(222)), byte(r.IntN(256)), byte(r.IntN(256)), byte(1 + r.IntN(254))}) //nolint:gosec // each below 256
		}
		if isPublic(a) && !inAny(a, docPrefixes) && !isWellKnown(a) {
			return a
		}
	}
}

func isWellKnown(a netip.Addr) bool {
	for _, wk := range wellKnown {
		if wk.prefix.Contains(a) {
			return true
		}
	}
	return false
}
