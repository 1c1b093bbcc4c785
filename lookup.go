package synthient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/synthient-go/synthient/internal/bulk"
	"github.com/synthient-go/synthient/retry"
)

// MaxBatchSize is the most addresses one LookupIPs call takes.
const MaxBatchSize = 1000

// IPLookup is what the API knows of one IP address. Network, Location and
// Intelligence are nil when the API has no such data for the address.
// Timestamps are Unix seconds.
type IPLookup struct {
	IP           netip.Addr    `json:"ip"`
	Network      *Network      `json:"network,omitempty"`
	Location     *Location     `json:"location,omitempty"`
	Intelligence *Intelligence `json:"intelligence,omitempty"`
	// CachedAt is when the API gave this answer, for one the client took
	// from its cache (see WithCache): its age is time.Since(CachedAt). It
	// is zero for an answer the API gave this call, or a call it shared.
	// It is not part of the API's JSON.
	CachedAt time.Time `json:"-"`
}

// Network describes the network an address belongs to. The pointer fields
// are nil when the API sends null.
type Network struct {
	// ASN is 0 when the address is not announced in BGP.
	ASN int    `json:"asn"`
	ISP string `json:"isp"`
	// Type is one of MOBILE, SATELLITE, IN_FLIGHT_WIFI, RESIDENTIAL,
	// CORPORATE, ACADEMIC, DATACENTER, GOVERNMENT (an open set).
	Type       string  `json:"type"`
	Org        *string `json:"org"`
	Domain     *string `json:"domain"`
	AbuseEmail *string `json:"abuse_email"`
	AbusePhone *string `json:"abuse_phone"`
}

// Location is where an address is.
type Location struct {
	Country   string  `json:"country"` // ISO 3166-1 alpha-2
	State     string  `json:"state"`
	City      string  `json:"city"`
	Timezone  string  `json:"timezone"` // IANA time zone
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	GeoHash   string  `json:"geo_hash"`
}

// Intelligence is what was observed of an address over 90 days. Empty
// lists do not mean the address is clean.
type Intelligence struct {
	// RiskScore, 0 to 100, summarises the rest; it is not a verdict.
	RiskScore int `json:"risk_score"`
	// Behavior holds tags such as PROGRAMMATIC_TRAFFIC or TOR_USER.
	Behavior []string `json:"behavior"`
	// Categories holds tags such as RESIDENTIAL_PROXY or COMMERCIAL_VPN.
	Categories []string   `json:"categories"`
	Devices    []Device   `json:"devices"`
	Providers  []Provider `json:"providers"`
}

// Device is a device seen behind an address.
type Device struct {
	OS       string `json:"os"`
	Version  string `json:"version"`
	LastSeen int64  `json:"last_seen"` // Unix seconds
}

// Provider is a proxy, VPN or other service an address was seen in.
type Provider struct {
	Provider string `json:"provider"`  // service tag, such as NORDVPN
	Type     string `json:"type"`      // as Intelligence.Categories
	LastSeen int64  `json:"last_seen"` // Unix seconds
}

// DomainLookup is the honeypot intelligence for a domain.
type DomainLookup struct {
	Domain          string           `json:"domain"`
	Status          string           `json:"status"`
	Stats           DomainStats      `json:"stats"`
	TimeSeries      []DomainDay      `json:"time_series"`
	UniqueIPs       DomainUniqueIPs  `json:"unique_ips"`
	TopASN          *DomainTopASN    `json:"top_asn,omitempty"` // nil when absent
	TopSubdomains   []SubdomainCount `json:"top_subdomains"`
	TopPorts        []PortCount      `json:"top_ports"`
	GeoDistribution []CountryCount   `json:"geo_distribution"`
	// HourDowHeatmap counts events by hour and day of week.
	HourDowHeatmap [][]int64     `json:"hour_dow_heatmap"`
	ActivityStats  ActivityStats `json:"activity_stats"`
	// RecentEvents holds at most DomainLookupParams.Limit events.
	RecentEvents []DomainEvent `json:"recent_events"`
	// CachedAt is when the API gave this answer, for one the client took
	// from its cache; zero for a fresh one. See IPLookup.CachedAt.
	CachedAt time.Time `json:"-"`
}

// DomainStats counts a domain's events.
type DomainStats struct {
	Events24h      int64 `json:"events_24h"`
	TotalEvents30d int64 `json:"total_events_30d"`
}

// DomainDay is one day of a domain's time series.
type DomainDay struct {
	Date      int64 `json:"date"` // Unix seconds, start of the day
	Events    int64 `json:"events"`
	UniqueIPs int64 `json:"unique_ips"`
}

// DomainUniqueIPs counts the distinct source addresses of a domain.
type DomainUniqueIPs struct {
	Value24h     int64   `json:"value_24h"`
	Value30d     int64   `json:"value_30d"`
	Sparkline24h []int64 `json:"sparkline_24h"` // hourly
}

// DomainTopASN is the network most events came from.
type DomainTopASN struct {
	ASN    int   `json:"asn"`
	Events int64 `json:"events"`
}

// SubdomainCount counts the events of one subdomain.
type SubdomainCount struct {
	Subdomain string `json:"subdomain"`
	Count     int64  `json:"count"`
}

// PortCount counts the events on one port.
type PortCount struct {
	Port  int   `json:"port"`
	Count int64 `json:"count"`
}

// CountryCount counts the sources and events of one country.
type CountryCount struct {
	CountryCode string `json:"country_code"`
	UniqueIPs   int64  `json:"unique_ips"`
	Events      int64  `json:"events"`
}

// ActivityStats summarises when a domain sees events.
type ActivityStats struct {
	PeakHour      int    `json:"peak_hour"`
	QuietHour     int    `json:"quiet_hour"`
	MedianPerHour int64  `json:"median_per_hour"`
	P95PerHour    int64  `json:"p95_per_hour"`
	Cadence       string `json:"cadence"`
}

// DomainEvent is one recent event of a domain.
type DomainEvent struct {
	Timestamp       int64  `json:"timestamp"` // Unix seconds
	SourceIPMasked  string `json:"source_ip_masked"`
	TargetSubdomain string `json:"target_subdomain"`
	Port            int    `json:"port"`
	CountryCode     string `json:"country_code"`
}

// DomainLookupParams are the options of LookupDomain.
type DomainLookupParams struct {
	// Limit is the most recent events to return, 1 to 1000; zero means
	// the API's default (50).
	Limit int
}

// LookupIP returns what the API knows of ip. It costs one credit.
//
// ip must be a valid address without a zone; otherwise the error matches
// ErrInvalidArgument and nothing is sent. An IPv4-mapped IPv6 address
// (::ffff:192.0.2.7) is the IPv4 address it maps (RFC 4291 2.5.5.2): it is
// looked up as that address, and the result's IP is ip as given. The
// request is billed: it is sent again only after a 429 with a usable
// Retry-After, never after a network failure or a 5xx (the API may have
// done the work; see ConnectionError).
//
// With a cache (WithCache), an answer found there is returned at once,
// free. Calls for the same address made while one is in flight share its
// request and its one charge, and get its outcome, each a copy of the
// answer of its own. Each waits with its own ctx: one whose ctx ends
// returns at once with an *Error matching ctx.Err(), and the request goes
// on for the others; when the last one's ctx ends, the request is
// cancelled, and that caller gets the error a lone caller would (which
// says whether the request may have reached the API).
func (c *Client) LookupIP(ctx context.Context, ip netip.Addr) (_ *IPLookup, err error) {
	ctx, call := c.startCall(ctx, "LookupIP", retry.Billed)
	defer call.end(&err)
	if err := checkAddr("LookupIP", ip); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, closedError("LookupIP")
	}
	addr := ip.Unmap() // what is looked up
	key := ipKey(addr)
	gen := c.ipFlights.Generation(key)
	l := c.cachedIP(ctx, call, addr)
	if l == nil {
		l, err = share(ctx, &c.ipFlights, call, "LookupIP", key, func(ctx context.Context) (*IPLookup, error) {
			return c.fetchIP(ctx, call, addr, c.ipFlights.Generation(key) != gen)
		}, copyIP)
		if err != nil {
			return nil, err
		}
	}
	if l.IP == addr {
		l.IP = ip // the answer is for ip as the caller spelled it
	}
	return l, nil
}

// cachedIP returns the cached answer for ip, or nil, and reports it to
// call.
func (c *Client) cachedIP(ctx context.Context, call *observedCall, ip netip.Addr) *IPLookup {
	l, err := c.cache.ip(ctx, "LookupIP", ip)
	call.cacheFailed(err)
	if l != nil {
		call.cacheHit(1, 1)
	}
	return l
}

// fetchIP sends the request of LookupIP(ip), ip being no IPv4-mapped
// address, for the leader of its flight, and stores the answer in the
// cache. When again, a flight of the same address ended since the caller
// looked in the cache, and may have stored the answer there: fetchIP
// looks once more first. An answer for another address than ip is a
// *DecodeError, and is not stored.
func (c *Client) fetchIP(ctx context.Context, call *observedCall, ip netip.Addr, again bool) (*IPLookup, error) {
	if again && c.cache != nil {
		if l := c.cachedIP(ctx, call, ip); l != nil {
			return l, nil
		}
	}
	op := &operation{
		name:   "LookupIP",
		method: http.MethodGet,
		route:  "/lookup/ip/{ip}",
		path:   "/lookup/ip/" + url.PathEscape(ip.String()),
		class:  retry.Billed,
		accept: mediaJSON,
		bucket: lookupBucket,
	}
	if c.budget != nil {
		op.credits = 1
	}
	var out IPLookup
	m, err := c.getJSON(ctx, op, &out)
	if err != nil {
		return nil, err
	}
	switch {
	case !out.IP.IsValid():
		return nil, shapeError(m, `response has no "ip"`)
	case out.IP.Unmap() != ip:
		return nil, shapeError(m, fmt.Sprintf("response is for %v, not %v", out.IP, ip))
	}
	call.cacheFailed(c.cache.putIP(ctx, "LookupIP", &out, time.Now()))
	return &out, nil
}

// copyIP returns a copy of l that shares no memory with it.
func copyIP(l *IPLookup) *IPLookup {
	cp, ok := readIP(appendIP(nil, l))
	if !ok { // every IPLookup encodes
		panic("synthient: an IPLookup does not survive its own encoding")
	}
	cp.CachedAt = l.CachedAt
	return cp
}

func checkAddr(op string, ip netip.Addr) error {
	switch {
	case !ip.IsValid():
		return invalid("%s: the zero netip.Addr is not an address", op)
	case ip.Zone() != "":
		return invalid("%s: address %s has a zone", op, ip)
	}
	return nil
}

// LookupIPs looks up 1 to 1000 addresses in one request and returns one
// result per address, in the order given (a repeated address gets a copy
// of its result). It costs ceil(0.9 n) credits for n distinct addresses.
// An IPv4-mapped IPv6 address is sent as the IPv4 address it maps, as
// for LookupIP, so that it and that IPv4 address are one address, charged
// once; each result's IP is the address as given.
//
// An empty slice, more than MaxBatchSize addresses, or an invalid one gives
// an error matching ErrInvalidArgument and sends nothing. The request is
// billed, as for LookupIP. If the response lacks a result for some
// addresses, LookupIPs returns the results it has, in order, and a
// *DecodeError whose Missing field lists the others.
//
// With a cache (WithCache), the addresses found there are not sent: the
// request holds the others only, and none is sent when all are found.
// Their results have CachedAt set. Only a whole answer is stored.
func (c *Client) LookupIPs(ctx context.Context, ips []netip.Addr) ([]IPLookup, error) {
	return c.lookupIPs(ctx, ips, true)
}

// lookupIPs is LookupIPs; probe says whether to look in the cache first
// (a bulk lookup has looked already). The answer is stored either way.
func (c *Client) lookupIPs(ctx context.Context, ips []netip.Addr, probe bool) (_ []IPLookup, err error) {
	ctx, call := c.startCall(ctx, "LookupIPs", retry.Billed)
	defer call.end(&err)
	switch {
	case len(ips) == 0:
		return nil, invalid("LookupIPs: no addresses")
	case len(ips) > MaxBatchSize:
		return nil, invalid("LookupIPs: %d addresses, more than %d", len(ips), MaxBatchSize)
	}
	for i, ip := range ips {
		if err := checkAddr("LookupIPs", ip); err != nil {
			return nil, fmt.Errorf("%w (index %d)", err, i)
		}
	}
	if c.cache == nil || !probe {
		return c.fetchIPs(ctx, call, ips)
	}
	if c.closed.Load() {
		return nil, closedError("LookupIPs")
	}
	found, hits, cerr := c.cache.ips(ctx, "LookupIPs", ips)
	call.cacheFailed(cerr)
	if hits == 0 {
		return c.fetchIPs(ctx, call, ips)
	}
	misses := make([]netip.Addr, 0, len(ips)-hits)
	for i, l := range found {
		if l == nil {
			misses = append(misses, ips[i])
		}
	}
	call.cacheHit(hits, bulk.Cost(bulk.Distinct(ips))-bulk.Cost(bulk.Distinct(misses)))
	var fetched []IPLookup
	if len(misses) > 0 {
		fetched, err = c.fetchIPs(ctx, call, misses)
		var de *DecodeError
		if err != nil && !(errors.As(err, &de) && len(de.Missing) > 0) {
			return nil, err
		}
	}
	return mergeResults(ips, found, fetched, err), err
}

// fetchIPs sends the request of LookupIPs(ips) and stores a whole answer
// in the cache.
func (c *Client) fetchIPs(ctx context.Context, call *observedCall, ips []netip.Addr) ([]IPLookup, error) {
	req := struct {
		IPs []string `json:"ips"`
	}{IPs: make([]string, len(ips))}
	for i, ip := range ips {
		req.IPs[i] = ip.Unmap().String()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, opError(meta{op: "LookupIPs"}, "encoding the request", err)
	}
	op := &operation{
		name:   "LookupIPs",
		method: http.MethodPost,
		route:  "/lookup/ips",
		path:   "/lookup/ips",
		body:   body,
		class:  retry.Billed,
		accept: mediaJSON,
		bucket: lookupBucket,
	}
	if c.budget != nil {
		op.credits = int64(bulk.Cost(bulk.Distinct(ips)))
	}
	var out struct {
		Results *[]IPLookup `json:"results"`
	}
	m, err := c.getJSON(ctx, op, &out)
	if err != nil {
		return nil, err
	}
	if out.Results == nil {
		return nil, shapeError(m, `response has no "results"`)
	}
	results, err := alignResults(ips, *out.Results, m)
	if err == nil {
		call.cacheFailed(c.cache.putIPs(ctx, "LookupIPs", results, time.Now()))
	}
	return results, err
}

// mergeResults returns the results for ips, in order: the cached ones of
// found, and for the others those of fetched, in order, less those that
// err (a *DecodeError, or nil) lists as missing.
func mergeResults(ips []netip.Addr, found []*IPLookup, fetched []IPLookup, err error) []IPLookup {
	var missing map[netip.Addr]bool
	var de *DecodeError
	if errors.As(err, &de) {
		missing = make(map[netip.Addr]bool, len(de.Missing))
		for _, ip := range de.Missing {
			missing[ip] = true
		}
	}
	out := make([]IPLookup, 0, len(ips))
	next := 0
	for i, l := range found {
		switch {
		case l != nil:
			out = append(out, *l)
		case missing[ips[i]] || next >= len(fetched):
		default:
			out = append(out, fetched[next])
			next++
		}
	}
	return out
}

// alignResults orders results as the addresses asked for, ips, each with
// its address as given. A result answers the address it names, or the
// IPv4 address of an IPv4-mapped one (the request sent the IPv4 form, and
// a server may spell either); of two results for one address the first
// answers it.
func alignResults(ips []netip.Addr, results []IPLookup, m meta) ([]IPLookup, error) {
	if inOrder(ips, results) {
		// The usual answer: one result per address, as asked.
		for i := range results {
			results[i].IP = ips[i]
		}
		return results, nil
	}
	byAddr := make(map[netip.Addr]int, len(results))
	for i, r := range results {
		if _, dup := byAddr[r.IP.Unmap()]; !dup {
			byAddr[r.IP.Unmap()] = i
		}
	}
	out := make([]IPLookup, 0, len(ips))
	taken := make([]bool, len(results))
	var missing []netip.Addr
	for _, ip := range ips {
		i, ok := byAddr[ip.Unmap()]
		if !ok {
			missing = append(missing, ip)
			continue
		}
		r := results[i]
		if taken[i] {
			// A repeat of an address answered once: a copy of its
			// own, sharing no memory with the other's.
			r = *copyIP(&results[i])
		}
		taken[i] = true
		r.IP = ip
		out = append(out, r)
	}
	if missing != nil {
		err := decodeError(m, http.StatusOK, fmt.Errorf("response has no result for %d of %d addresses", len(missing), len(ips)))
		err.Missing = missing
		return out, err
	}
	return out, nil
}

// inOrder reports whether results answer ips one to one, in order.
func inOrder(ips []netip.Addr, results []IPLookup) bool {
	if len(ips) != len(results) {
		return false
	}
	for i, ip := range ips {
		if results[i].IP.Unmap() != ip.Unmap() {
			return false
		}
	}
	return true
}

// LookupDomain returns the honeypot intelligence for domain. It costs one
// credit. p may be nil.
//
// A Unicode name is sent as punycode. An empty name, one longer than 253
// octets or with a label longer than 63, one holding '/', '?', '#' or
// white space, one that cannot be converted to punycode, or a Limit outside
// 0 to 1000 gives an error matching ErrInvalidArgument and sends nothing.
// The request is billed, as for LookupIP.
//
// With a cache, and for calls that share a request, LookupDomain is as
// LookupIP: the same domain and Limit make the same answer.
func (c *Client) LookupDomain(ctx context.Context, domain string, p *DomainLookupParams) (_ *DomainLookup, err error) {
	ctx, call := c.startCall(ctx, "LookupDomain", retry.Billed)
	defer call.end(&err)
	name, err := normalizeDomain(domain)
	if err != nil {
		return nil, err
	}
	limit := 0
	if p != nil {
		if p.Limit < 0 || p.Limit > 1000 {
			return nil, invalid("LookupDomain: limit %d is outside 1 to 1000", p.Limit)
		}
		limit = p.Limit
	}
	if c.closed.Load() {
		return nil, closedError("LookupDomain")
	}
	key := domainKey(name, limit)
	gen := c.domainFlights.Generation(key)
	if d := c.cachedDomain(ctx, call, key); d != nil {
		return d, nil
	}
	return share(ctx, &c.domainFlights, call, "LookupDomain", key, func(ctx context.Context) (*DomainLookup, error) {
		return c.fetchDomain(ctx, call, key, name, limit, c.domainFlights.Generation(key) != gen)
	}, copyDomain)
}

// cachedDomain returns the cached answer under key, or nil, and reports it
// to call.
func (c *Client) cachedDomain(ctx context.Context, call *observedCall, key string) *DomainLookup {
	d, err := c.cache.domain(ctx, key)
	call.cacheFailed(err)
	if d != nil {
		call.cacheHit(1, 1)
	}
	return d
}

// fetchDomain sends the request of LookupDomain for name and limit, the
// leader of its flight, and stores the answer under key (looking there
// once more first when again, as fetchIP does). An answer for another
// domain than name is returned, as the API's, but not stored.
func (c *Client) fetchDomain(ctx context.Context, call *observedCall, key, name string, limit int, again bool) (*DomainLookup, error) {
	if again && c.cache != nil {
		if d := c.cachedDomain(ctx, call, key); d != nil {
			return d, nil
		}
	}
	op := &operation{
		name:   "LookupDomain",
		method: http.MethodGet,
		route:  "/lookup/domain/{domain}",
		path:   "/lookup/domain/" + url.PathEscape(name),
		class:  retry.Billed,
		accept: mediaJSON,
		bucket: domainBucket,
	}
	if c.budget != nil {
		op.credits = 1
	}
	if limit > 0 {
		op.query = url.Values{"limit": {strconv.Itoa(limit)}}
	}
	var out DomainLookup
	m, err := c.getJSON(ctx, op, &out)
	if err != nil {
		return nil, err
	}
	if out.Domain == "" {
		return nil, shapeError(m, `response has no "domain"`)
	}
	if answered, err := normalizeDomain(out.Domain); err == nil && strings.EqualFold(answered, name) {
		call.cacheFailed(c.cache.putDomain(ctx, key, &out, time.Now()))
	}
	return &out, nil
}

// copyDomain returns a copy of d that shares no memory with it.
func copyDomain(d *DomainLookup) *DomainLookup {
	b, err := json.Marshal(d)
	cp := new(DomainLookup)
	if err == nil {
		err = json.Unmarshal(b, cp)
	}
	if err != nil { // every DomainLookup survives JSON
		panic("synthient: a DomainLookup does not survive JSON: " + err.Error())
	}
	cp.CachedAt = d.CachedAt
	return cp
}

// normalizeDomain validates a domain name and converts a Unicode one to
// punycode. A single trailing dot is dropped.
func normalizeDomain(domain string) (string, error) {
	if err := checkDomainText(domain); err != nil {
		return "", err
	}
	name := strings.TrimSuffix(domain, ".")
	if !isASCII(name) {
		ascii, err := idna.Lookup.ToASCII(name)
		if err != nil {
			return "", invalid("LookupDomain: %q cannot be converted to punycode: %v", domain, err)
		}
		name = ascii
	}
	if err := checkDomainLength(domain, name); err != nil {
		return "", err
	}
	return name, nil
}

// checkDomainText refuses a domain, as given, that is empty, not UTF-8,
// or holds a character no domain name holds.
func checkDomainText(domain string) error {
	if domain == "" {
		return invalid("LookupDomain: empty domain")
	}
	if !utf8.ValidString(domain) {
		return invalid("LookupDomain: domain is not valid UTF-8")
	}
	if i := strings.IndexFunc(domain, notInDomain); i >= 0 {
		r, _ := utf8.DecodeRuneInString(domain[i:])
		return invalid("LookupDomain: domain holds %q", r)
	}
	return nil
}

// notInDomain reports whether r is a URL delimiter, an escape, white space
// or a control character.
func notInDomain(r rune) bool {
	return r == '/' || r == '?' || r == '#' || r == '\\' || r == '%' || isSpace(r) || r < 0x20 || r == 0x7f
}

// checkDomainLength refuses name, the ASCII form of domain, when it is
// longer than 253 octets or has an empty label or one longer than 63.
func checkDomainLength(domain, name string) error {
	if len(name) > 253 {
		return invalid("LookupDomain: domain is %d octets long, more than 253", len(name))
	}
	for _, label := range strings.Split(name, ".") {
		switch {
		case label == "":
			return invalid("LookupDomain: domain %q has an empty label", domain)
		case len(label) > 63:
			return invalid("LookupDomain: domain has a label of %d octets, more than 63", len(label))
		}
	}
	return nil
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
