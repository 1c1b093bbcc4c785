package synthient

import (
	"encoding/json"
	"errors"
	"net/netip"
	"slices"
	"time"

	cv "github.com/synthient-go/synthient/internal/cachevalue"
)

// The client's answers as the values of its Cache, in the encoding of
// package internal/cachevalue, which describes it: the binary form of an
// IPLookup below, a DomainLookup's JSON.

// How long the client has an answer kept at most (the ttl it gives Set)
// and the oldest answer it takes from a cache. An IP's intelligence is
// built over 90 days; a domain's answer counts the last day's events and
// lists the latest, so an hour-old one is already behind.
const (
	ipCacheTTL     = 24 * time.Hour
	domainCacheTTL = time.Hour
)

// errBadValue is the error of a cached value that does not decode.
var errBadValue = errors.New("cached value does not decode")

// ipKey returns the cache key of ip's answer.
func ipKey(ip netip.Addr) string { return cv.IPKey(ip) }

// domainKey returns the cache key of the answer for name, the punycode
// form of a domain, with limit.
func domainKey(name string, limit int) string { return cv.DomainKey(name, limit) }

// encodeIP returns the value of l, given at, for the key of its address;
// an IPv4-mapped one is stored as the IPv4 address it maps, which it
// answers (see LookupIP).
func encodeIP(l *IPLookup, at time.Time) []byte {
	u := *l
	u.IP = l.IP.Unmap()
	return cv.Seal(ipKey(u.IP), cv.KindIP, at, appendIP(nil, &u))
}

// decodeIP returns the answer the value v under key holds, and when it was
// given.
func decodeIP(key string, v []byte) (*IPLookup, time.Time, error) {
	at, payload, ok := cv.Open(key, cv.KindIP, v)
	if !ok {
		return nil, time.Time{}, errBadValue
	}
	l, ok := readIP(payload)
	if !ok {
		return nil, time.Time{}, errBadValue
	}
	return l, at, nil
}

// encodeDomain returns the value of d, given at, for key.
func encodeDomain(key string, d *DomainLookup, at time.Time) ([]byte, error) {
	payload, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return cv.Seal(key, cv.KindDomain, at, payload), nil
}

// decodeDomain returns the answer the value v under key holds, and when
// it was given.
func decodeDomain(key string, v []byte) (*DomainLookup, time.Time, error) {
	at, payload, ok := cv.Open(key, cv.KindDomain, v)
	if !ok {
		return nil, time.Time{}, errBadValue
	}
	var d DomainLookup
	if err := json.Unmarshal(payload, &d); err != nil || d.Domain == "" {
		return nil, time.Time{}, errBadValue
	}
	return &d, at, nil
}

// The flags of the binary form of an IPLookup: which parts follow the
// address. Intelligence's two lists of tags give both their lengths before
// their strings.
const (
	hasNetwork = 1 << iota
	hasLocation
	hasIntelligence
	hasOrg
	hasDomain
	hasAbuseEmail
	hasAbusePhone
)

// appendIP appends the binary form of l to b.
func appendIP(b []byte, l *IPLookup) []byte {
	b = cv.AppendAddr(b, l.IP)
	flags, opt := ipFlags(l)
	b = append(b, flags)
	if n := l.Network; n != nil {
		b = cv.AppendInt(b, int64(n.ASN))
		b = cv.AppendString(cv.AppendString(b, n.ISP), n.Type)
		for _, s := range opt {
			if s != nil {
				b = cv.AppendString(b, *s)
			}
		}
	}
	if loc := l.Location; loc != nil {
		for _, s := range [...]string{loc.Country, loc.State, loc.City, loc.Timezone} {
			b = cv.AppendString(b, s)
		}
		b = cv.AppendFloat(cv.AppendFloat(b, loc.Latitude), loc.Longitude)
		b = cv.AppendString(b, loc.GeoHash)
	}
	if in := l.Intelligence; in != nil {
		b = appendIntelligence(b, in)
	}
	return b
}

// ipFlags returns the flags of l's binary form, and the optional fields
// of its Network, in the order of the flags from hasOrg.
func ipFlags(l *IPLookup) (flags byte, opt [4]*string) {
	if n := l.Network; n != nil {
		flags |= hasNetwork
		opt = [4]*string{n.Org, n.Domain, n.AbuseEmail, n.AbusePhone}
		for i, s := range opt {
			if s != nil {
				flags |= hasOrg << i
			}
		}
	}
	if l.Location != nil {
		flags |= hasLocation
	}
	if l.Intelligence != nil {
		flags |= hasIntelligence
	}
	return flags, opt
}

func appendIntelligence(b []byte, in *Intelligence) []byte {
	b = cv.AppendInt(b, int64(in.RiskScore))
	// Both lengths first: the decoder makes one array for both lists.
	b = cv.AppendLen(b, in.Behavior == nil, len(in.Behavior))
	b = cv.AppendLen(b, in.Categories == nil, len(in.Categories))
	for _, list := range [...][]string{in.Behavior, in.Categories} {
		for _, s := range list {
			b = cv.AppendString(b, s)
		}
	}
	b = cv.AppendLen(b, in.Devices == nil, len(in.Devices))
	for _, d := range in.Devices {
		b = cv.AppendString(cv.AppendString(b, d.OS), d.Version)
		b = cv.AppendInt(b, d.LastSeen)
	}
	b = cv.AppendLen(b, in.Providers == nil, len(in.Providers))
	for _, p := range in.Providers {
		b = cv.AppendString(cv.AppendString(b, p.Provider), p.Type)
		b = cv.AppendInt(b, p.LastSeen)
	}
	return b
}

// ipBlock holds a decoded IPLookup and what it points to, so that decoding
// allocates it all at once: with the arrays of the lists too, when they
// are as short as most answers' (a longer list has an array of its own).
type ipBlock struct {
	lookup    IPLookup
	network   Network
	location  Location
	intel     Intelligence
	opt       [4]string
	tags      [4]string // Behavior and Categories
	devices   [2]Device
	providers [2]Provider
}

// readIP decodes the binary form of an IPLookup; ok is false unless p is
// exactly one.
func readIP(p []byte) (_ *IPLookup, ok bool) {
	r := cv.NewReader(p)
	blk := new(ipBlock)
	l := &blk.lookup
	l.IP = r.Addr()
	flags := r.Byte()
	if flags&hasNetwork != 0 {
		n := &blk.network
		n.ASN = r.Int()
		n.ISP, n.Type = r.Text(), r.Text()
		for i, dst := range [...]**string{&n.Org, &n.Domain, &n.AbuseEmail, &n.AbusePhone} {
			if flags&(hasOrg<<i) != 0 {
				blk.opt[i] = r.Text()
				*dst = &blk.opt[i]
			}
		}
		l.Network = n
	}
	if flags&hasLocation != 0 {
		loc := &blk.location
		loc.Country, loc.State, loc.City, loc.Timezone = r.Text(), r.Text(), r.Text(), r.Text()
		loc.Latitude, loc.Longitude = r.Float(), r.Float()
		loc.GeoHash = r.Text()
		l.Location = loc
	}
	if flags&hasIntelligence != 0 {
		readIntelligence(&r, blk)
		l.Intelligence = &blk.intel
	}
	if !r.Done() || flags >= hasAbusePhone<<1 || !l.IP.IsValid() {
		return nil, false
	}
	return l, true
}

// readIntelligence decodes blk's Intelligence, its lists in blk's arrays
// where they fit. Each list is capped at its length, so that an append to
// one never writes into another.
func readIntelligence(r *cv.Reader, blk *ipBlock) {
	in := &blk.intel
	in.RiskScore = r.Int()
	nb, nilB := r.Len()
	nc, nilC := r.Len()
	if r.Bad() {
		return
	}
	both := blk.tags[:]
	if nb+nc > len(blk.tags) {
		both = make([]string, nb+nc)
	}
	in.Behavior, in.Categories = r.Strings(both[:nb:nb], nilB), r.Strings(both[nb:nb+nc:nb+nc], nilC)
	if n, isNil := r.Len(); !isNil {
		in.Devices = grown(blk.devices[:], n)
		for i := range in.Devices {
			d := &in.Devices[i]
			d.OS, d.Version, d.LastSeen = r.Text(), r.Text(), r.Int64()
		}
	}
	if n, isNil := r.Len(); !isNil {
		in.Providers = grown(blk.providers[:], n)
		for i := range in.Providers {
			p := &in.Providers[i]
			p.Provider, p.Type, p.LastSeen = r.Text(), r.Text(), r.Int64()
		}
	}
}

// grown returns a slice of n elements capped at n, never nil: in arr when
// it fits, else in an array of its own.
func grown[T any](arr []T, n int) []T {
	if n == 0 {
		return arr[:0:0]
	}
	return slices.Grow(arr[:0:min(n, len(arr))], n)[:n:n]
}
