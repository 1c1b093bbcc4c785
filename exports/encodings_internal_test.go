package exports

// White-box tests of encodings.go: the DELTA_BINARY_PACKED decoder against
// parquet-go's encoder and decoder, and the walk of RLE runs.

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// int32s are INT32 columns whose deltas overflow an int32 (and one that
// needs no delta at all).
var int32s = [][]int32{
	{math.MaxInt32, math.MinInt32, math.MaxInt32, math.MinInt32, 0, -1, 1},
	{5},
	{},
	{math.MinInt32, math.MaxInt32, 7, -7, math.MinInt32 + 1, math.MaxInt32 - 1},
}

// An INT32 column decodes to its values whether the writer computed its
// deltas in 32 bits, wrapping around (parquet-go, Arrow), or in 64 bits
// (DuckDB: bit widths up to 33), in every block size.
func TestPlainInt32(t *testing.T) {
	t.Parallel()
	long := make([]int32, 1000)
	for i := range long {
		long[i] = int32(uint32(i) * 2654435761) //nolint:gosec // wraps on purpose: values of every sign
	}
	for _, vals := range append(int32s, long) {
		wide := make([]int64, len(vals))
		for i, v := range vals {
			wide[i] = int64(v)
		}
		narrow, err := new(delta.BinaryPackedEncoding).EncodeInt32(nil, vals)
		require.NoError(t, err)
		wideEnc, err := new(delta.BinaryPackedEncoding).EncodeInt64(nil, wide)
		require.NoError(t, err)
		for name, enc := range map[string][]byte{"32-bit deltas": narrow, "64-bit deltas": wideEnc} {
			plain, err := plainInt32(nil, enc, int64(len(vals)))
			require.NoError(t, err, name)
			got := make([]int32, len(plain)/4)
			for i := range got {
				got[i] = int32(binary.LittleEndian.Uint32(plain[4*i:])) //nolint:gosec // the bits of an INT32 value
			}
			assert.Equal(t, vals, got, "%s of %d values", name, len(vals))
		}
	}
}

// FuzzDecodeDelta decodes any bytes as DELTA_BINARY_PACKED data: nothing
// panics, no more values come out than the limit, and what parquet-go's
// decoder also reads without an error is the same values.
func FuzzDecodeDelta(f *testing.F) {
	for _, vals := range int32s {
		b, _ := new(delta.BinaryPackedEncoding).EncodeInt32(nil, vals)
		f.Add(b)
	}
	b, _ := new(delta.BinaryPackedEncoding).EncodeInt64(nil, []int64{math.MaxInt64, math.MinInt64, 0, 1 << 40, -3})
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		const n = 1 << 12
		got, _, err := decodeDelta(nil, data, n)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(got), n)
		want, err := new(delta.BinaryPackedEncoding).DecodeInt64(nil, data)
		if err == nil {
			require.Equal(t, want, got)
		}
	})
}

// FuzzCheckRLE walks any bytes as RLE runs: nothing panics.
func FuzzCheckRLE(f *testing.F) {
	f.Add([]byte{0x03, 0xff, 0x08, 0x01}, 1, int64(8))
	f.Add(binary.AppendUvarint(nil, 1<<31), 1, int64(300))
	f.Fuzz(func(t *testing.T, data []byte, width int, n int64) {
		_ = checkRLE(data, width, n)
	})
}

// FuzzThriftSize walks any bytes as a Thrift struct: nothing panics, and
// a size is within the bytes.
func FuzzThriftSize(f *testing.F) {
	f.Add([]byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00})
	f.Add([]byte{0x15, 0x00, 0x15, 0x04, 0x15, 0x04, 0x2c, 0x15, 0x02, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := thriftSize(data)
		if err == nil {
			require.LessOrEqual(t, n, len(data))
		}
	})
}

// A bit-packed run may pad past the page's values, as DuckDB's do; a
// repeated run may not.
func TestCheckRLE(t *testing.T) {
	t.Parallel()
	run := func(count uint64, bitPacked bool, width int) []byte {
		h := count << 1
		size := (width + 7) / 8
		if bitPacked {
			h, size = count/8<<1|1, int(count/8)*width //nolint:gosec // a count of a few values
		}
		return append(binary.AppendUvarint(nil, h), make([]byte, size)...)
	}
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"a run of the page's values", run(400, false, 1), true},
		{"DuckDB's padding", append(append(run(256, true, 1), run(4, false, 1)...), run(256, true, 1)...), true},
		{"a run past the page's values", run(401, false, 1), false},
		{"bit-packed past the padding", run(1024, true, 1), false},
		{"a run cut short", run(16, true, 1)[:2], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkRLE(tc.data, 1, 400)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}
