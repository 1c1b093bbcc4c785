package synthient

// Tests of cachevalue.go from inside: the binary form of an IPLookup
// round-trips every field, and its decoder refuses whatever it did not
// make, never panicking. (The encoding's envelope and fields are tested in
// internal/cachevalue; the client's use of a cache from outside, in
// cache_test.go.)

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cv "github.com/synthient-go/synthient/internal/cachevalue"
)

// fullIP is an IPLookup with every field set.
func fullIP() *IPLookup {
	s := func(v string) *string { return &v }
	return &IPLookup{
		IP:       netip.MustParseAddr("2001:db8::17"),
		Network:  &Network{ASN: 4_200_000_001, ISP: "Example", Type: "DATACENTER", Org: s("Org"), Domain: s(""), AbuseEmail: s("abuse@example.net"), AbusePhone: s("+1 555")},
		Location: &Location{Country: "DE", State: "BE", City: "Berlin", Timezone: "Europe/Berlin", Latitude: -52.52, Longitude: math.SmallestNonzeroFloat64, GeoHash: "u33"},
		Intelligence: &Intelligence{
			RiskScore: 100, Behavior: []string{"TOR_USER", "PROGRAMMATIC_TRAFFIC"}, Categories: []string{"RESIDENTIAL_PROXY"},
			Devices:   []Device{{OS: "Android", Version: "13", LastSeen: 1781049600}, {LastSeen: -1}},
			Providers: []Provider{{Provider: "NORDVPN", Type: "COMMERCIAL_VPN", LastSeen: math.MaxInt64}},
		},
	}
}

func TestIPValueRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.UnixMilli(1781049600123)
	for _, tc := range []struct {
		name string
		l    *IPLookup
	}{
		{"address alone", &IPLookup{IP: netip.MustParseAddr("192.0.2.1")}},
		{"every field", fullIP()},

		{"a zone", &IPLookup{IP: netip.MustParseAddr("fe80::1%eth0")}},
		{"empty lists, not nil", &IPLookup{IP: netip.MustParseAddr("192.0.2.1"), Intelligence: &Intelligence{
			Behavior: []string{}, Categories: []string{}, Devices: []Device{}, Providers: []Provider{}}}},
		{"nil lists", &IPLookup{IP: netip.MustParseAddr("192.0.2.1"), Intelligence: &Intelligence{RiskScore: -3}}},
		{"only categories", &IPLookup{IP: netip.MustParseAddr("192.0.2.1"), Intelligence: &Intelligence{Categories: []string{"a", ""}}}},
		{"network without optional fields", &IPLookup{IP: netip.MustParseAddr("192.0.2.1"), Network: &Network{ASN: -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := encodeIP(tc.l, at)
			got, gotAt, err := decodeIP(ipKey(tc.l.IP), v)
			require.NoError(t, err)
			assert.Equal(t, tc.l, got)
			assert.True(t, at.Equal(gotAt), "given at %v, want %v", gotAt, at)
			// The JSON the CLI prints is the same too (null and [] kept).
			want, _ := json.Marshal(tc.l)
			have, _ := json.Marshal(got)
			assert.JSONEq(t, string(want), string(have))
		})
	}
}

// TestIPValueMapped: the answer for an IPv4-mapped address is stored as
// that of the IPv4 address it maps (which it answers, see LookupIP).
func TestIPValueMapped(t *testing.T) {
	t.Parallel()
	v := encodeIP(&IPLookup{IP: netip.MustParseAddr("::ffff:192.0.2.1")}, time.Now())
	got, _, err := decodeIP(ipKey(netip.MustParseAddr("192.0.2.1")), v)
	require.NoError(t, err)
	assert.Equal(t, netip.MustParseAddr("192.0.2.1"), got.IP)
}

// TestIPValueEveryField fills every field of IPLookup at random, through
// reflection, so that a field added to the struct and not to the encoding
// fails here.
func TestIPValueEveryField(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // a seeded draw, the same each run: nothing to guess
	for range 500 {
		var l IPLookup
		fill(r, reflect.ValueOf(&l).Elem())
		l.CachedAt = time.Time{} // not encoded: the value's time is
		got, ok := readIP(appendIP(nil, &l))
		require.True(t, ok)
		require.Equal(t, &l, got)
	}
}

// fill sets v, and all it holds, to random values; pointers and slices are
// nil a quarter of the time.
func fill(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(4) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem())
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[netip.Addr]():
			var b [16]byte
			for i := range b {
				b[i] = byte(r.Uint32()) //nolint:gosec // random bytes: the low byte of each draw
			}
			ip := netip.AddrFrom16(b)
			if r.IntN(2) == 0 {
				ip = netip.AddrFrom4([4]byte(b[:4]))
			}
			v.Set(reflect.ValueOf(ip))
			return
		case reflect.TypeFor[time.Time]():
			v.Set(reflect.ValueOf(time.Unix(r.Int64N(1<<40), 0)))
			return
		}
		for i := range v.NumField() {
			fill(r, v.Field(i))
		}
	case reflect.Slice:
		if r.IntN(4) == 0 {
			return
		}
		n := r.IntN(4)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(r, v.Index(i))
		}
	case reflect.String:
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte('a' + r.IntN(26)) //nolint:gosec // a letter: 'a' plus at most 25
		}
		v.SetString(string(b))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(r.Uint64())) //nolint:gosec // any int64, negative ones too: the draw's 64 bits
	case reflect.Float64:
		v.SetFloat(r.NormFloat64() * 1e6)
	default:
		panic("fill: no filling for " + v.Type().String())
	}
}

// TestIPValueRefused: what the client did not store under the key is a
// miss: another key, another version or kind, a byte changed or cut, an
// empty value.
func TestIPValueRefused(t *testing.T) {
	t.Parallel()
	l := fullIP()
	key := ipKey(l.IP)
	good := encodeIP(l, time.Now())
	mutate := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, tc := range []struct {
		name  string
		key   string
		value []byte
	}{
		{"another key", ipKey(netip.MustParseAddr("192.0.2.1")), good},
		{"another version", key, mutate(func(b []byte) []byte { b[0]++; return b })},
		{"a domain's kind", key, mutate(func(b []byte) []byte { b[1] = cv.KindDomain; return b })},
		{"a byte changed", key, mutate(func(b []byte) []byte { b[len(b)/2] ^= 1; return b })},
		{"the checksum changed", key, mutate(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b })},
		{"cut", key, good[:len(good)-1]},
		{"longer", key, append(append([]byte(nil), good...), 0)},
		{"empty", key, []byte{}},
		{"text", key, []byte("OK")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := decodeIP(tc.key, tc.value)
			assert.ErrorIs(t, err, errBadValue)
		})
	}
}

// TestReadIPRefuses: the binary form reads only as appendIP wrote it:
// not with a byte more or less, nor with a flag it does not know.
func TestReadIPRefuses(t *testing.T) {
	t.Parallel()
	good := appendIP(nil, fullIP())
	bare := appendIP(nil, &IPLookup{IP: netip.MustParseAddr("192.0.2.1")})
	unknownFlag := slices.Clone(bare)
	unknownFlag[len(unknownFlag)-1] |= hasAbusePhone << 1
	for _, tc := range []struct {
		name string
		p    []byte
	}{
		{"a byte more", append(slices.Clone(good), 0)},
		{"a byte less", good[:len(good)-1]},
		{"an unknown flag", unknownFlag},
		{"no flags", bare[:len(bare)-1]},
		{"empty", nil},
	} {
		_, ok := readIP(tc.p)
		assert.False(t, ok, tc.name)
	}
	_, ok := readIP(bare)
	assert.True(t, ok, "the address alone")
}

// TestDomainValueRoundTrip: a domain's answer round-trips through its
// value, and refuses another key.
func TestDomainValueRoundTrip(t *testing.T) {
	t.Parallel()
	d := &DomainLookup{Domain: "xn--bcher-kva.example", Status: "active", TopASN: &DomainTopASN{ASN: 1, Events: 2},
		HourDowHeatmap: [][]int64{{1, 2}, {}}, RecentEvents: []DomainEvent{{Timestamp: 1, Port: 443}}}
	key := domainKey(d.Domain, 10)
	at := time.UnixMilli(1781049600123)
	v, err := encodeDomain(key, d, at)
	require.NoError(t, err)
	got, gotAt, err := decodeDomain(key, v)
	require.NoError(t, err)
	assert.Equal(t, d, got)
	assert.True(t, at.Equal(gotAt))
	_, _, err = decodeDomain(domainKey(d.Domain, 0), v)
	require.ErrorIs(t, err, errBadValue, "another Limit's key")
	_, _, err = decodeIP(key, v)
	assert.ErrorIs(t, err, errBadValue, "read as an IP's")
}

// FuzzReadIP: the decoder of the binary form never panics and never reads
// past its input, and what it accepts encodes back to an answer it reads
// the same.
func FuzzReadIP(f *testing.F) {
	f.Add(appendIP(nil, fullIP()))
	f.Add(appendIP(nil, &IPLookup{IP: netip.MustParseAddr("192.0.2.1")}))
	f.Add([]byte{4, 1, 2, 3, 4, 0, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		l, ok := readIP(p)
		if !ok {
			return
		}
		again, ok := readIP(appendIP(nil, l))
		require.True(t, ok, "an accepted answer encodes")
		require.Equal(t, l, again)
	})
}

// FuzzDecodeIP: a whole value, checksum and all, never panics the decoder.
func FuzzDecodeIP(f *testing.F) {
	key := ipKey(fullIP().IP)
	f.Add(encodeIP(fullIP(), time.UnixMilli(1)))
	f.Add([]byte{cv.Format, cv.KindIP, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		l, _, err := decodeIP(key, v)
		if err == nil {
			require.Equal(t, fullIP().IP, l.IP, "only a value made for the key decodes")
		}
	})
}
