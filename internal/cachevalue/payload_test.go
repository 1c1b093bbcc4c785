package cachevalue_test

// Tests of payload.go: what the Append functions write, a Reader reads
// back, and it refuses what they did not write.

import (
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cv "github.com/synthient-go/synthient/internal/cachevalue"
)

// TestPayloadRoundTrip: every kind of field reads back as written, and a
// Reader that read it all is Done.
func TestPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	addrs := []netip.Addr{
		netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::17"),
		netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("::ffff:192.0.2.1"),
	}
	ints := []int64{0, 1, -1, 63, -64, 64, 1 << 40, math.MaxInt64, math.MinInt64}
	floats := []float64{0, math.Copysign(0, -1), -52.52, math.SmallestNonzeroFloat64, math.MaxFloat64, math.Inf(-1)}
	texts := []string{"", "a", strings.Repeat("x", 200), "\x00\xff"}
	var b []byte
	for _, ip := range addrs {
		b = cv.AppendAddr(b, ip)
	}
	for _, v := range ints {
		b = cv.AppendInt(b, v)
	}
	for _, f := range floats {
		b = cv.AppendFloat(b, f)
	}
	for _, s := range texts {
		b = cv.AppendString(b, s)
	}
	b = cv.AppendLen(cv.AppendLen(cv.AppendLen(b, true, 0), false, 0), false, 2)
	b = cv.AppendString(cv.AppendString(b, "p"), "q")
	b = append(b, 0xab)

	r := cv.NewReader(b)
	for _, ip := range addrs {
		assert.Equal(t, ip, r.Addr())
	}
	for _, v := range ints {
		assert.Equal(t, v, r.Int64())
	}
	for _, f := range floats {
		assert.Equal(t, math.Float64bits(f), math.Float64bits(r.Float()))
	}
	for _, s := range texts {
		assert.Equal(t, s, r.Text())
	}
	n, isNil := r.Len()
	assert.True(t, isNil, "a nil slice")
	assert.Zero(t, n)
	assert.Nil(t, r.Strings(make([]string, n), isNil), "a nil slice reads nil")
	n, isNil = r.Len()
	assert.False(t, isNil, "an empty slice is not nil")
	assert.Equal(t, []string{}, r.Strings(make([]string, n), isNil))
	n, isNil = r.Len()
	require.False(t, isNil)
	assert.Equal(t, []string{"p", "q"}, r.Strings(make([]string, n), isNil))
	assert.False(t, r.Done(), "a byte is left")
	assert.Equal(t, byte(0xab), r.Byte())
	assert.True(t, r.Done(), "all read")
	assert.False(t, r.Bad())
}

// TestReaderInt: an int that fits reads as it is.
func TestReaderInt(t *testing.T) {
	t.Parallel()
	for _, v := range []int{0, -7, math.MaxInt, math.MinInt} {
		r := cv.NewReader(cv.AppendInt(nil, int64(v)))
		assert.Equal(t, v, r.Int())
		assert.True(t, r.Done())
	}
}

// TestReaderRefuses: a read past the end, a length longer than what is
// left, a varint of more than 64 bits, an address of another length or an
// IPv4 address with a zone make the Reader bad; from then on it reads
// zero values and is not Done.
func TestReaderRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    []byte
		read func(r *cv.Reader) any // the zero value it must give
	}{
		{"a byte past the end", nil, func(r *cv.Reader) any { return r.Byte() }},
		{"a varint cut short", []byte{0x80}, func(r *cv.Reader) any { return r.Uvarint() }},
		{"a varint of 11 bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, func(r *cv.Reader) any { return r.Int64() }},
		{"a varint past 64 bits", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, func(r *cv.Reader) any { return r.Uvarint() }},
		{"an int cut short", []byte{0xff}, func(r *cv.Reader) any { return r.Int() }},
		{"a string longer than what is left", cv.AppendString(nil, "abc")[:3], func(r *cv.Reader) any { return r.Text() }},
		{"a length longer than what is left", cv.AppendLen(nil, false, 2), func(r *cv.Reader) any { n, _ := r.Len(); return n }},
		{"a float cut short", make([]byte, 7), func(r *cv.Reader) any { return r.Float() }},
		{"an address of 5 bytes", []byte{5, 0}, func(r *cv.Reader) any { return r.Addr() }},
		{"an IPv4 address cut short", []byte{4, 1, 2, 3}, func(r *cv.Reader) any { return r.Addr() }},
		{"an IPv6 address cut short", append([]byte{16}, make([]byte, 15)...), func(r *cv.Reader) any { return r.Addr() }},
		{"an IPv4 address with a zone", cv.AppendString([]byte{4, 192, 0, 2, 1}, "eth0"), func(r *cv.Reader) any { return r.Addr().Zone() }},
		{"a zone without an address", cv.AppendString([]byte{0}, "eth0"), func(r *cv.Reader) any { return r.Addr().IsValid() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cv.NewReader(tc.p)
			got := tc.read(&r)
			assert.True(t, r.Bad(), "bad")
			assert.False(t, r.Done(), "done")
			switch got := got.(type) {
			case netip.Addr:
				assert.False(t, got.IsValid(), "a zero address")
			case string:
				if tc.name == "an IPv4 address with a zone" {
					break // the zone was read; the address is what is bad
				}
				assert.Empty(t, got)
			case bool:
			default:
				assert.Zero(t, got)
			}
			assert.Zero(t, r.Byte(), "a bad Reader reads zero values")
			assert.Empty(t, r.Text(), "a bad Reader reads zero values")
		})
	}
}

// TestReaderToTheEnd: a field that ends exactly where the payload does
// reads, and the largest varint does.
func TestReaderToTheEnd(t *testing.T) {
	t.Parallel()
	r := cv.NewReader(cv.AppendString(nil, "tail"))
	assert.Equal(t, "tail", r.Text())
	assert.True(t, r.Done())
	r = cv.NewReader(cv.AppendFloat(nil, 1.5))
	assert.InDelta(t, 1.5, r.Float(), 0)
	assert.True(t, r.Done())
	r = cv.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	assert.Equal(t, uint64(math.MaxUint64), r.Uvarint())
	assert.True(t, r.Done())
}

// TestReaderLen: a length exactly as long as what is left reads.
func TestReaderLen(t *testing.T) {
	t.Parallel()
	r := cv.NewReader(append(cv.AppendLen(nil, false, 2), 'a', 'b'))
	n, isNil := r.Len()
	assert.Equal(t, 2, n)
	assert.False(t, isNil)
	assert.False(t, r.Bad())
	r = cv.NewReader(cv.AppendLen(nil, false, 1))
	_, isNil = r.Len()
	assert.True(t, isNil, "a length past the end reads as nil")
	assert.True(t, r.Bad())
}

// FuzzReader: whatever the bytes, reading never panics and never passes
// the end.
func FuzzReader(f *testing.F) {
	f.Add([]byte{4, 1, 2, 3, 4, 0, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		r := cv.NewReader(p)
		_ = r.Addr()
		_ = r.Int()
		n, isNil := r.Len()
		require.LessOrEqual(t, n, len(p), "a length longer than the input")
		_ = r.Strings(make([]string, n), isNil)
		_ = r.Float()
		if r.Done() {
			require.False(t, r.Bad())
		}
	})
}
