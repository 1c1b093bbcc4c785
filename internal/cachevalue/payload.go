package cachevalue

import (
	"encoding/binary"
	"math"
	"net/netip"
)

// AppendAddr appends ip: its length (4 or 16), its bytes and its zone.
func AppendAddr(b []byte, ip netip.Addr) []byte {
	if ip.Is4() {
		a := ip.As4()
		b = append(append(b, 4), a[:]...)
	} else {
		a := ip.As16()
		b = append(append(b, 16), a[:]...)
	}
	return AppendString(b, ip.Zone())
}

// AppendInt appends v as a zig-zag varint.
func AppendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendFloat appends the 8 IEEE 754 bytes of f, little endian.
func AppendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// AppendString appends s: its length, a uvarint, and its bytes.
func AppendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// AppendLen appends a slice's length plus one, or 0 for a nil slice.
func AppendLen(b []byte, isNil bool, n int) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1) //nolint:gosec // n is a slice's length: never negative
}

// Reader reads a payload the Append functions wrote. A read past the end,
// or a length or integer that does not fit, makes it bad: it reads zero
// values from then on, and Done reports false.
type Reader struct {
	s   string
	i   int
	bad bool
}

// NewReader returns a Reader of p. It copies p once, into a string that
// every string it reads shares.
func NewReader(p []byte) Reader { return Reader{s: string(p)} }

// fail makes r bad.
func (r *Reader) fail() { r.bad = true }

// Done reports whether every byte was read, and read well.
func (r *Reader) Done() bool { return !r.bad && r.i == len(r.s) }

// Bad reports whether a read failed.
func (r *Reader) Bad() bool { return r.bad }

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.bad || r.i >= len(r.s) {
		r.fail()
		return 0
	}
	r.i++
	return r.s[r.i-1]
}

// Uvarint reads an unsigned varint of at most 64 bits, as
// binary.Uvarint does.
func (r *Reader) Uvarint() uint64 {
	var x uint64
	for shift := uint(0); ; shift += 7 {
		c := r.Byte()
		switch {
		case r.bad:
			return 0
		case shift == 63 && c > 1: // past 64 bits
			r.fail()
			return 0
		case c < 0x80:
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
	}
}

// Int64 reads a zig-zag varint.
func (r *Reader) Int64() int64 {
	u := r.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Int reads a zig-zag varint that must fit an int.
func (r *Reader) Int() int {
	v := r.Int64()
	if int64(int(v)) != v {
		r.fail()
		return 0
	}
	return int(v)
}

// take returns the next n bytes.
func (r *Reader) take(n uint64) string {
	if r.bad || n > uint64(len(r.s)-r.i) { //nolint:gosec // r.i <= len(r.s): Byte and take never pass it
		r.fail()
		return ""
	}
	s := r.s[r.i : r.i+int(n)] //nolint:gosec // n <= len(r.s)-r.i, checked above
	r.i += int(n)              //nolint:gosec // as above
	return s
}

// Text reads a string.
func (r *Reader) Text() string { return r.take(r.Uvarint()) }

// Strings fills dst, nil when isNil, with strings read.
func (r *Reader) Strings(dst []string, isNil bool) []string {
	if isNil {
		return nil
	}
	for i := range dst {
		dst[i] = r.Text()
	}
	return dst
}

// Len reads a slice's length; isNil for a nil slice. A length longer than
// the bytes left could hold is bad.
func (r *Reader) Len() (n int, isNil bool) {
	u := r.Uvarint()
	if u == 0 {
		return 0, true
	}
	if u-1 > uint64(len(r.s)-r.i) { //nolint:gosec // r.i <= len(r.s), as in take
		r.fail()
		return 0, true
	}
	return int(u - 1), false //nolint:gosec // u-1 <= len(r.s)-r.i, checked above
}

// Float reads 8 IEEE 754 bytes.
func (r *Reader) Float() float64 {
	b := r.take(8)
	if len(b) < 8 {
		return 0
	}
	return math.Float64frombits(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
}

// Addr reads an address AppendAddr wrote; a zone on an IPv4 address is
// bad.
func (r *Reader) Addr() netip.Addr {
	var ip netip.Addr
	switch n := r.Byte(); n {
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
		r.fail()
	}
	if zone := r.Text(); zone != "" {
		if !ip.Is6() {
			r.fail()
		}
		ip = ip.WithZone(zone)
	}
	return ip
}
