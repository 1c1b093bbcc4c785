// Package cachevalue encodes the keys and values the client keeps in a
// lookup cache (synthient.Cache): a store keeps them as they are, and the
// client reads a value true or refuses it.
//
// A key names the answer: "v1:ip:" and the address (IPKey), or
// "v1:domain:", the Limit asked for and the name in lower case, its
// punycode form (DomainKey). The "v1" names the encoding, so that programs
// that encode differently can share a store without reading or
// overwriting each other's entries.
//
// A value (Seal, Open) is
//
//	byte 0     Format, the encoding's version
//	byte 1     the kind of answer: KindIP or KindDomain
//	uvarint    when the API gave the answer, Unix milliseconds
//	payload    the answer
//	4 bytes    CRC-32C (Castagnoli), little endian, of the key and of
//	           every byte before it
//
// A value that is not exactly this is refused, so a store that answers
// garbage, a value of another version, or one stored under another key
// (the checksum covers the key) is a miss, never a wrong answer.
//
// A domain's payload is its JSON. An IP's is a compact binary form, written
// with the Append functions and read with a Reader: the address
// (AppendAddr), a byte of flags saying which parts of the answer follow,
// then each part's fields in the order of its struct. Integers are zig-zag
// varints (AppendInt), floats their 8 IEEE 754 bytes (AppendFloat),
// strings a uvarint length and their bytes (AppendString), slices a
// uvarint of their length plus one, 0 for nil (AppendLen), so that nil and
// empty stay apart, as JSON's null and [] do. A Reader refuses what these
// did not write: a read past the end, a length longer than the bytes left,
// an integer too large, bytes left over.
package cachevalue

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Format is the version of the encoding of keys and values.
const Format = 1

// The kinds of answer a value holds.
const (
	KindIP     = 'i'
	KindDomain = 'd'
)

// DefaultDomainLimit is the limit of a domain lookup that gives none
// (api-v4.md §2.5): a Limit of 0 and of 50 make the same answer, and key.
const DefaultDomainLimit = 50

// IPKey returns the key of the answer for ip.
func IPKey(ip netip.Addr) string {
	var buf [64]byte
	b := append(buf[:0], "v1:ip:"...)
	return string(ip.AppendTo(b))
}

// DomainKey returns the key of the answer for name, the punycode form of
// a domain, with limit (0 for the API's default).
func DomainKey(name string, limit int) string {
	if limit == 0 {
		limit = DefaultDomainLimit
	}
	// Names are not case sensitive, nor punycode's xn-- prefix.
	return "v1:domain:" + strconv.Itoa(limit) + ":" + strings.ToLower(name)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Seal returns the value of kind, given at, holding payload, to be stored
// under key. A time before 1970 is stored as 1970.
func Seal(key string, kind byte, at time.Time, payload []byte) []byte {
	v := make([]byte, 0, 2+binary.MaxVarintLen64+len(payload)+4)
	v = append(v, Format, kind)
	v = binary.AppendUvarint(v, uint64(max(at.UnixMilli(), 0)))
	v = append(v, payload...)
	return binary.LittleEndian.AppendUint32(v, sum(key, v))
}

// sum returns the checksum of v stored under key.
func sum(key string, v []byte) uint32 {
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

// Open checks a value stored under key and returns when its answer was
// given and its payload; ok is false for a value that is not of this
// encoding, of kind, intact and under key.
func Open(key string, kind byte, v []byte) (at time.Time, payload []byte, ok bool) {
	if len(v) < 2+1+4 || v[0] != Format || v[1] != kind {
		return time.Time{}, nil, false
	}
	body := v[:len(v)-4]
	if binary.LittleEndian.Uint32(v[len(v)-4:]) != sum(key, body) {
		return time.Time{}, nil, false
	}
	ms, n := binary.Uvarint(body[2:])
	if n <= 0 || ms > math.MaxInt64 {
		return time.Time{}, nil, false
	}
	return time.UnixMilli(int64(ms)), body[2+n:], true
}
