package synthient

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The keys and values a Cache holds (see WithCache).
//
// A key names the answer: "v1:ip:" and the address, or "v1:domain:", the
// Limit asked for and the name (its punycode form). The "v1" names the
// encoding, so that programs that encode differently can share a store
// without reading or overwriting each other's entries.
//
// A value is
//
//	byte 0     cacheFormat, the encoding's version
//	byte 1     the kind of answer: kindIP or kindDomain
//	uvarint    when the API gave the answer, Unix milliseconds
//	payload    the answer: IP lookups in the compact binary form below,
//	           domain lookups as JSON
//	4 bytes    CRC-32C (Castagnoli), little endian, of the key and of
//	           every byte before it
//
// A value that is not exactly this is refused, so a store that answers
// garbage, a value of another version, or one stored under another key
// (the checksum covers the key) is a miss, never a wrong answer.

// cacheFormat is the version of the encoding of keys and values.
const cacheFormat = 1

// The kinds of answer a value holds.
const (
	kindIP     = 'i'
	kindDomain = 'd'
)

// How long the client has an answer kept at most (the ttl it gives Set)
// and the oldest answer it takes from a cache. An IP's intelligence is
// built over 90 days; a domain's answer counts the last day's events and
// lists the latest, so an hour-old one is already behind.
const (
	ipCacheTTL     = 24 * time.Hour
	domainCacheTTL = time.Hour
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadValue is the error of a cached value that does not decode.
var errBadValue = errors.New("cached value does not decode")

// ipKey returns the cache key of ip's answer.
func ipKey(ip netip.Addr) string {
	var buf [64]byte
	b := append(buf[:0], "v1:ip:"...)
	return string(ip.AppendTo(b))
}

// domainKey returns the cache key of the answer for name, the punycode
// form of a domain, with limit.
func domainKey(name string, limit int) string {
	if limit == 0 {
		limit = defaultDomainLimit // the API's default: the same answer
	}
	// Names are not case sensitive, nor punycode's xn-- prefix.
	return "v1:domain:" + strconv.Itoa(limit) + ":" + strings.ToLower(name)
}

// defaultDomainLimit is the limit of a domain lookup that gives none
// (api-v4.md §2.5).
const defaultDomainLimit = 50

// sealValue returns the value of kind, given at, holding payload, to be
// stored under key.
func sealValue(key string, kind byte, at time.Time, payload []byte) []byte {
	v := make([]byte, 0, 2+binary.MaxVarintLen64+len(payload)+4)
	v = append(v, cacheFormat, kind)
	v = binary.AppendUvarint(v, uint64(max(at.UnixMilli(), 0)))
	v = append(v, payload...)
	return binary.LittleEndian.AppendUint32(v, valueSum(key, v))
}

// valueSum returns the checksum of v stored under key.
func valueSum(key string, v []byte) uint32 {
	return crc32.Update(updateString(0, castagnoli, key), castagnoli, v)
}

// updateString is crc32.Update over the bytes of s, without the copy of s
// into a []byte that crc32.Update would need (and that escapes: one
// allocation per lookup).
func updateString(crc uint32, tab *crc32.Table, s string) uint32 {
	crc = ^crc
	for i := 0; i < len(s); i++ {
		crc = tab[byte(crc)^s[i]] ^ crc>>8 //nolint:gosec // crc's low byte, as crc32's table update takes it
	}
	return ^crc
}

// openValue checks a value stored under key and returns when its answer
// was given and its payload; ok is false for a value that is not of this
// encoding, of kind, intact and under key.
func openValue(key string, kind byte, v []byte) (at time.Time, payload []byte, ok bool) {
	if len(v) < 2+1+4 || v[0] != cacheFormat || v[1] != kind {
		return time.Time{}, nil, false
	}
	body := v[:len(v)-4]
	if binary.LittleEndian.Uint32(v[len(v)-4:]) != valueSum(key, body) {
		return time.Time{}, nil, false
	}
	ms, n := binary.Uvarint(body[2:])
	if n <= 0 || ms > math.MaxInt64 {
		return time.Time{}, nil, false
	}
	return time.UnixMilli(int64(ms)), body[2+n:], true
}

// encodeIP returns the value of l, given at, for the key of its address;
// an IPv4-mapped one is stored as the IPv4 address it maps, which it
// answers (see LookupIP).
func encodeIP(l *IPLookup, at time.Time) []byte {
	u := *l
	u.IP = l.IP.Unmap()
	return sealValue(ipKey(u.IP), kindIP, at, appendIP(nil, &u))
}

// decodeIP returns the answer the value v under key holds, and when it was
// given.
func decodeIP(key string, v []byte) (*IPLookup, time.Time, error) {
	at, payload, ok := openValue(key, kindIP, v)
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
	return sealValue(key, kindDomain, at, payload), nil
}

// decodeDomain returns the answer the value v under key holds, and when
// it was given.
func decodeDomain(key string, v []byte) (*DomainLookup, time.Time, error) {
	at, payload, ok := openValue(key, kindDomain, v)
	if !ok {
		return nil, time.Time{}, errBadValue
	}
	var d DomainLookup
	if err := json.Unmarshal(payload, &d); err != nil || d.Domain == "" {
		return nil, time.Time{}, errBadValue
	}
	return &d, at, nil
}

// The binary form of an IPLookup: the address (its length, 4 or 16, its
// bytes and its zone), a byte of flags saying which parts follow, then
// each part's fields in the order of the struct (Intelligence's two lists
// of tags give both their lengths before their strings). Integers are zig-zag
// varints, floats their 8 IEEE 754 bytes, strings a uvarint length and
// their bytes, slices a uvarint of their length plus one (0 for nil, so
// that nil and empty stay apart, as JSON's null and [] do).
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
	if l.IP.Is4() {
		a := l.IP.As4()
		b = append(append(b, 4), a[:]...)
	} else {
		a := l.IP.As16()
		b = append(append(b, 16), a[:]...)
	}
	b = appendString(b, l.IP.Zone())
	var flags byte
	n := l.Network
	opt := [4]*string{}
	if n != nil {
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
	b = append(b, flags)
	if n != nil {
		b = binary.AppendVarint(b, int64(n.ASN))
		b = appendString(appendString(b, n.ISP), n.Type)
		for _, s := range opt {
			if s != nil {
				b = appendString(b, *s)
			}
		}
	}
	if loc := l.Location; loc != nil {
		for _, s := range [...]string{loc.Country, loc.State, loc.City, loc.Timezone} {
			b = appendString(b, s)
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(loc.Latitude))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(loc.Longitude))
		b = appendString(b, loc.GeoHash)
	}
	if in := l.Intelligence; in != nil {
		b = appendIntelligence(b, in)
	}
	return b
}

func appendIntelligence(b []byte, in *Intelligence) []byte {
	b = binary.AppendVarint(b, int64(in.RiskScore))
	// Both lengths first: the decoder makes one array for both lists.
	b = appendLen(b, in.Behavior == nil, len(in.Behavior))
	b = appendLen(b, in.Categories == nil, len(in.Categories))
	for _, list := range [...][]string{in.Behavior, in.Categories} {
		for _, s := range list {
			b = appendString(b, s)
		}
	}
	b = appendLen(b, in.Devices == nil, len(in.Devices))
	for _, d := range in.Devices {
		b = appendString(appendString(b, d.OS), d.Version)
		b = binary.AppendVarint(b, d.LastSeen)
	}
	b = appendLen(b, in.Providers == nil, len(in.Providers))
	for _, p := range in.Providers {
		b = appendString(appendString(b, p.Provider), p.Type)
		b = binary.AppendVarint(b, p.LastSeen)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendLen appends a slice's length plus one, or 0 for a nil slice.
func appendLen(b []byte, isNil bool, n int) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1) //nolint:gosec // n is a slice's length: never negative
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
	r := reader{s: string(p)} // one copy, which every string shares
	blk := new(ipBlock)
	l := &blk.lookup
	l.IP = r.addr()
	flags := r.byte()
	if flags&hasNetwork != 0 {
		n := &blk.network
		n.ASN = r.int()
		n.ISP, n.Type = r.string(), r.string()
		for i, dst := range [...]**string{&n.Org, &n.Domain, &n.AbuseEmail, &n.AbusePhone} {
			if flags&(hasOrg<<i) != 0 {
				blk.opt[i] = r.string()
				*dst = &blk.opt[i]
			}
		}
		l.Network = n
	}
	if flags&hasLocation != 0 {
		loc := &blk.location
		loc.Country, loc.State, loc.City, loc.Timezone = r.string(), r.string(), r.string(), r.string()
		loc.Latitude, loc.Longitude = r.float(), r.float()
		loc.GeoHash = r.string()
		l.Location = loc
	}
	if flags&hasIntelligence != 0 {
		r.intelligence(blk)
		l.Intelligence = &blk.intel
	}
	if r.bad || r.i != len(r.s) || flags >= hasAbusePhone<<1 || !l.IP.IsValid() {
		return nil, false
	}
	return l, true
}

// reader decodes the binary form of an IPLookup. A read past the end, or
// a length that does not fit, sets bad and reads zero values from then on.
type reader struct {
	s   string
	i   int
	bad bool
}

// intelligence decodes blk's Intelligence, its lists in blk's arrays
// where they fit. Each list is capped at its length, so that an append to
// one never writes into another.
func (r *reader) intelligence(blk *ipBlock) {
	in := &blk.intel
	in.RiskScore = r.int()
	nb, nilB := r.len()
	nc, nilC := r.len()
	if r.bad {
		return
	}
	both := blk.tags[:]
	if nb+nc > len(blk.tags) {
		both = make([]string, nb+nc)
	}
	in.Behavior, in.Categories = r.strings(both[:nb:nb], nilB), r.strings(both[nb:nb+nc:nb+nc], nilC)
	if n, isNil := r.len(); !isNil {
		in.Devices = blk.devices[:0:0]
		if n > 0 {
			in.Devices = slices.Grow(blk.devices[:0:min(n, len(blk.devices))], n)[:n:n]
		}
		for i := range in.Devices {
			d := &in.Devices[i]
			d.OS, d.Version, d.LastSeen = r.string(), r.string(), r.int64()
		}
	}
	if n, isNil := r.len(); !isNil {
		in.Providers = blk.providers[:0:0]
		if n > 0 {
			in.Providers = slices.Grow(blk.providers[:0:min(n, len(blk.providers))], n)[:n:n]
		}
		for i := range in.Providers {
			p := &in.Providers[i]
			p.Provider, p.Type, p.LastSeen = r.string(), r.string(), r.int64()
		}
	}
}

// strings fills dst, nil when isNil, with strings read.
func (r *reader) strings(dst []string, isNil bool) []string {
	if isNil {
		return nil
	}
	for i := range dst {
		dst[i] = r.string()
	}
	return dst
}

func (r *reader) byte() byte {
	if r.i >= len(r.s) {
		r.bad = true
		return 0
	}
	r.i++
	return r.s[r.i-1]
}

func (r *reader) uvarint() uint64 {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c := r.byte()
		if r.bad {
			return 0
		}
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x
		}
	}
	r.bad = true
	return 0
}

func (r *reader) int64() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// int reads an int64 that must fit an int.
func (r *reader) int() int {
	v := r.int64()
	if int64(int(v)) != v {
		r.bad = true
		return 0
	}
	return int(v)
}

// take returns the next n bytes.
func (r *reader) take(n uint64) string {
	if r.bad || n > uint64(len(r.s)-r.i) { //nolint:gosec // r.i <= len(r.s): byte and take never pass it
		r.bad = true
		return ""
	}
	s := r.s[r.i : r.i+int(n)] //nolint:gosec // n <= len(r.s)-r.i, checked above
	r.i += int(n)              //nolint:gosec // as above
	return s
}

func (r *reader) string() string { return r.take(r.uvarint()) }

// len reads a slice's length; isNil for a nil slice. A length longer than
// the bytes left could hold is bad.
func (r *reader) len() (n int, isNil bool) {
	u := r.uvarint()
	if u == 0 {
		return 0, true
	}
	if u-1 > uint64(len(r.s)-r.i) { //nolint:gosec // r.i <= len(r.s), as in take
		r.bad = true
		return 0, true
	}
	return int(u - 1), false //nolint:gosec // u-1 <= len(r.s)-r.i, checked above
}

func (r *reader) float() float64 {
	b := r.take(8)
	if len(b) < 8 {
		return 0
	}
	return math.Float64frombits(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
}

func (r *reader) addr() netip.Addr {
	var ip netip.Addr
	switch n := r.byte(); n {
	case 4:
		b := r.take(4)
		if len(b) == 4 {
			ip = netip.AddrFrom4([4]byte{b[0], b[1], b[2], b[3]})
		}
	case 16:
		b := r.take(16)
		if len(b) == 16 {
			var a [16]byte
			copy(a[:], b)
			ip = netip.AddrFrom16(a)
		}
	default:
		r.bad = true
	}
	if zone := r.string(); zone != "" {
		if !ip.Is6() {
			r.bad = true
		}
		ip = ip.WithZone(zone)
	}
	return ip
}
