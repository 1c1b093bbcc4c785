package cachevalue_test

// Tests of cachevalue.go: the keys, and the value around a payload, which
// opens only as it was sealed.

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cv "github.com/synthient-go/synthient/internal/cachevalue"
)

func TestKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{cv.IPKey(netip.MustParseAddr("203.0.113.7")), "v1:ip:203.0.113.7"},
		{cv.IPKey(netip.MustParseAddr("2001:db8::1")), "v1:ip:2001:db8::1"},
		{cv.IPKey(netip.MustParseAddr("fe80::1%eth0")), "v1:ip:fe80::1%eth0"},
		{cv.IPKey(netip.MustParseAddr("::ffff:192.0.2.1")), "v1:ip:::ffff:192.0.2.1"},
		{cv.DomainKey("Example.ORG", 10), "v1:domain:10:example.org"},
		{cv.DomainKey("xn--bcher-kva.example", 0), "v1:domain:50:xn--bcher-kva.example"},
		{cv.DomainKey("example.org", cv.DefaultDomainLimit), "v1:domain:50:example.org"},
		{cv.DomainKey("example.org", 1000), "v1:domain:1000:example.org"},
	} {
		assert.Equal(t, tc.want, tc.got)
	}
}

// castagnoli is the checksum's table, for the values the tests build by
// hand.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealed returns body with the checksum of a value under key: a value
// whose checksum is right, whatever its body holds.
func sealed(key string, body []byte) []byte {
	crc := crc32.Update(crc32.Update(0, castagnoli, []byte(key)), castagnoli, body)
	return binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc)
}

// TestSealOpen: a value opens under its key and kind to the payload and
// the time sealed in it, to the millisecond; its layout is the one the
// package comment gives.
func TestSealOpen(t *testing.T) {
	t.Parallel()
	const key = "v1:ip:203.0.113.7"
	for _, tc := range []struct {
		name    string
		at      time.Time
		payload []byte
		wantAt  time.Time
	}{
		{"a payload", time.UnixMilli(1781049600123).Add(456 * time.Microsecond), []byte{1, 2, 3}, time.UnixMilli(1781049600123)},
		{"an empty payload", time.UnixMilli(1), nil, time.UnixMilli(1)},
		{"before 1970", time.UnixMilli(-5), []byte("x"), time.UnixMilli(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, kind := range []byte{cv.KindIP, cv.KindDomain} {
				v := cv.Seal(key, kind, tc.at, tc.payload)
				body := binary.AppendUvarint([]byte{cv.Format, kind}, uint64(tc.wantAt.UnixMilli()))
				assert.Equal(t, sealed(key, append(body, tc.payload...)), v, "the layout")
				at, payload, ok := cv.Open(key, kind, v)
				require.True(t, ok)
				assert.True(t, tc.wantAt.Equal(at), "at %v, want %v", at, tc.wantAt)
				assert.Len(t, payload, len(tc.payload))
				assert.Equal(t, string(tc.payload), string(payload))
			}
		})
	}
}

// TestOpenRefuses: what was not sealed under the key, of the kind, whole,
// does not open: another key, kind or version, a byte changed, cut or
// added, a time that does not read.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	const key = "v1:ip:203.0.113.7"
	good := cv.Seal(key, cv.KindIP, time.UnixMilli(1781049600123), []byte("payload"))
	changed := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, tc := range []struct {
		name  string
		key   string
		kind  byte
		value []byte
	}{
		{"another key", "v1:ip:203.0.113.8", cv.KindIP, good},
		{"another kind", key, cv.KindDomain, good},
		{"another version", key, cv.KindIP, changed(func(b []byte) []byte { b[0]++; return b })},
		{"another version, summed", key, cv.KindIP, sealed(key, append([]byte{cv.Format + 1}, good[1:len(good)-4]...))},
		{"another kind, summed", key, cv.KindIP, sealed(key, append([]byte{cv.Format, cv.KindDomain}, good[2:len(good)-4]...))},
		{"a byte changed", key, cv.KindIP, changed(func(b []byte) []byte { b[len(b)/2] ^= 1; return b })},
		{"the checksum changed", key, cv.KindIP, changed(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b })},
		{"cut", key, cv.KindIP, good[:len(good)-1]},
		{"longer", key, cv.KindIP, append(append([]byte(nil), good...), 0)},
		{"empty", key, cv.KindIP, []byte{}},
		{"a time cut short", key, cv.KindIP, sealed(key, []byte{cv.Format, cv.KindIP, 0x80})},
		{"a time past int64", key, cv.KindIP, sealed(key, binary.AppendUvarint([]byte{cv.Format, cv.KindIP}, math.MaxInt64+1))},
		{"too short to hold a time", key, cv.KindIP, sealed(key, []byte{cv.Format, cv.KindIP})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, ok := cv.Open(tc.key, tc.kind, tc.value)
			assert.False(t, ok)
		})
	}
	// The shortest value: a time of one byte, no payload.
	at, payload, ok := cv.Open(key, cv.KindIP, sealed(key, []byte{cv.Format, cv.KindIP, 0}))
	require.True(t, ok, "the shortest value")
	assert.True(t, time.UnixMilli(0).Equal(at))
	assert.Empty(t, payload)
	_, _, ok = cv.Open(key, cv.KindIP, sealed(key, append([]byte{cv.Format, cv.KindIP}, binary.AppendUvarint(nil, math.MaxInt64)...)))
	assert.True(t, ok, "the latest time")
}

// FuzzOpen: any bytes under any key never panic Open, and what opens
// seals back to the same bytes.
func FuzzOpen(f *testing.F) {
	f.Add("v1:ip:203.0.113.7", cv.Seal("v1:ip:203.0.113.7", cv.KindIP, time.UnixMilli(7), []byte{1}))
	f.Add("k", []byte{cv.Format, cv.KindIP, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, key string, v []byte) {
		at, payload, ok := cv.Open(key, cv.KindIP, v)
		if !ok {
			return
		}
		if resealed := cv.Seal(key, cv.KindIP, at, payload); string(resealed) != string(v) {
			// A time of more varint bytes than needed opens too: same
			// time, same payload.
			at2, payload2, ok := cv.Open(key, cv.KindIP, resealed)
			require.True(t, ok)
			require.True(t, at.Equal(at2))
			require.Equal(t, payload, payload2)
		}
	})
}
