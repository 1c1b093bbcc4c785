package exports

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// What a page's encoded values claim, checked against its bytes before
// parquet-go decodes them: parquet-go sizes its buffers from counts inside
// the data (an RLE run's length, a DELTA_BINARY_PACKED header's value
// count, the lengths of DELTA_LENGTH_BYTE_ARRAY values), which a few
// hostile bytes set to 2^31. And DELTA_BINARY_PACKED pages of INT32
// columns are decoded here, in 64-bit arithmetic: parquet-go decodes them
// in 32 bits, and so reads wrong the deltas that writers such as DuckDB
// compute in 64 bits (2147483647 then -2147483648 is a delta of
// -4294967295, with bit widths up to 33).

// checkRLE walks the RLE/bit-packed hybrid runs of src, of values of
// width bits, and checks that they fit in src and hold about n values: a
// repeated run may not end past the n-th value; a bit-packed run may, by
// padding of up to maxPadding values (DuckDB pads its last run to 256
// values), and its values are bytes that are there.
func checkRLE(src []byte, width int, n int64) error {
	if width < 0 || width > 32 {
		return fmt.Errorf("RLE values of %d bits", width)
	}
	const maxPadding = 504 // the values of 63 groups, the most that a one-byte run header holds
	var total uint64
	for at := 0; at < len(src); {
		h, k := binary.Uvarint(src[at:])
		if k <= 0 {
			return errors.New("an RLE run header cut short")
		}
		at += k
		var count, size, most uint64
		if h&1 == 1 { // groups of 8 values, bit-packed
			count, size, most = (h>>1)*8, (h>>1)*uint64(width), uint64(n)+maxPadding //nolint:gosec // n >= 0, a page value count checked by chunkReader.count
		} else {
			count, size, most = h>>1, uint64(width+7)/8, uint64(n) //nolint:gosec // n >= 0, as above
		}
		if h>>1 > uint64(n)+maxPadding || total+count > most { //nolint:gosec // n >= 0, as above
			return fmt.Errorf("RLE runs of more than the page's %d values", n)
		}
		if size > uint64(len(src)-at) { //nolint:gosec // at <= len(src), the loop holds it
			return errors.New("an RLE run past the end of its data")
		}
		total += count
		at += int(size)
	}
	return nil
}

// deltaHeader is the header of DELTA_BINARY_PACKED data.
type deltaHeader struct {
	blockSize, miniBlocks, total int
	first                        int64
}

// readDeltaHeader reads the header at the start of src, of at most n
// values, and returns the bytes after it.
func readDeltaHeader(src []byte, n int64) (deltaHeader, []byte, error) {
	var h deltaHeader
	var vals [3]uint64
	for i := range vals {
		v, k := binary.Uvarint(src)
		if k <= 0 {
			return h, nil, errors.New("a DELTA_BINARY_PACKED header cut short")
		}
		vals[i], src = v, src[k:]
	}
	first, k := binary.Varint(src)
	if k <= 0 {
		return h, nil, errors.New("a DELTA_BINARY_PACKED header cut short")
	}
	src = src[k:]
	switch {
	case vals[0] == 0 || vals[0]%128 != 0 || vals[0] > 1<<20:
		return h, nil, fmt.Errorf("a DELTA_BINARY_PACKED block of %d values", vals[0])
	case vals[1] == 0 || vals[0]%vals[1] != 0 || (vals[0]/vals[1])%32 != 0:
		return h, nil, fmt.Errorf("a DELTA_BINARY_PACKED block of %d values in %d mini blocks", vals[0], vals[1])
	case vals[2] > uint64(n): //nolint:gosec // n >= 0, a page value count checked by chunkReader.count
		return h, nil, fmt.Errorf("DELTA_BINARY_PACKED data of %d values in a page of %d", vals[2], n)
	}
	h = deltaHeader{blockSize: int(vals[0]), miniBlocks: int(vals[1]), total: int(vals[2]), first: first} //nolint:gosec // each bounded by the checks above: 1<<20, vals[0], n
	return h, src, nil
}

// decodeDelta decodes the DELTA_BINARY_PACKED values at the start of src,
// at most n of them, appending them to dst, in 64-bit arithmetic that
// wraps around (as the format specifies); it returns the bytes after
// them.
func decodeDelta(dst []int64, src []byte, n int64) ([]int64, []byte, error) {
	rest, err := eachDelta(src, n, func(v int64) { dst = append(dst, v) })
	return dst, rest, err
}

// eachDelta decodes the values as decodeDelta does, calling emit with
// each.
func eachDelta(src []byte, n int64, emit func(int64)) ([]byte, error) {
	h, src, err := readDeltaHeader(src, n)
	if err != nil || h.total == 0 {
		return src, err
	}
	emit(h.first)
	last, left := uint64(h.first), h.total-1 //nolint:gosec // two's complement: the format's arithmetic wraps around
	perMini := h.blockSize / h.miniBlocks
	for left > 0 {
		minDelta, k := binary.Varint(src)
		if k <= 0 {
			return nil, errors.New("a DELTA_BINARY_PACKED block cut short")
		}
		src = src[k:]
		if len(src) < h.miniBlocks {
			return nil, errors.New("a DELTA_BINARY_PACKED block's bit widths cut short")
		}
		widths := src[:h.miniBlocks]
		src = src[h.miniBlocks:]
		for _, w := range widths {
			if left == 0 {
				break // the bit widths of mini blocks past the last value are padding
			}
			if w > 64 {
				return nil, fmt.Errorf("a DELTA_BINARY_PACKED mini block of %d bits a value", w)
			}
			size := perMini * int(w) / 8
			k := min(perMini, left)
			// The last mini block is padded to its full size; tolerate
			// a writer that stops after the bits it needs.
			need := min(size, (k*int(w)+7)/8)
			if len(src) < need {
				return nil, errors.New("a DELTA_BINARY_PACKED mini block cut short")
			}
			data := src[:min(size, len(src))]
			for j := range k {
				last += uint64(minDelta) + unpack(data, int(w), j) //nolint:gosec // two's complement: the format's arithmetic wraps around
				emit(int64(last))                                  //nolint:gosec // two's complement, as above
			}
			src = src[len(data):]
			left -= k
		}
	}
	return src, nil
}

// unpack returns value j of the little-endian bit-packed values of width
// bits in src.
func unpack(src []byte, width, j int) uint64 {
	if width == 0 {
		return 0
	}
	pos := j * width
	at, shift := pos/8, pos%8
	if at+8 <= len(src) && width+shift <= 64 {
		return binary.LittleEndian.Uint64(src[at:]) >> shift & (math.MaxUint64 >> (64 - width))
	}
	var v uint64
	for got := 0; got < width; {
		b := uint64(0)
		if at < len(src) {
			b = uint64(src[at])
		}
		take := min(8-shift, width-got)
		v |= (b >> shift & (1<<take - 1)) << got
		got += take
		at, shift = at+1, 0
	}
	return v
}

// checkLengths decodes the DELTA_BINARY_PACKED lengths at the start of
// src, at most n of them, and checks that each is non-negative; it
// returns them and the bytes after them.
func checkLengths(src []byte, n int64) ([]int64, []byte, error) {
	lengths, rest, err := decodeDelta(nil, src, n)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range lengths {
		if l < 0 || l > math.MaxInt32 {
			return nil, nil, fmt.Errorf("a value of %d bytes", l)
		}
	}
	return lengths, rest, nil
}

// checkDeltaLengthByteArray checks DELTA_LENGTH_BYTE_ARRAY values, at most
// n of them: their lengths must be non-negative and add up to no more
// than the bytes after them.
func checkDeltaLengthByteArray(src []byte, n int64) error {
	var sum int64
	bad := false
	rest, err := eachDelta(src, n, func(l int64) {
		bad = bad || l < 0 || l > math.MaxInt32
		sum += l & math.MaxInt32
	})
	switch {
	case err != nil:
		return err
	case bad:
		return errors.New("a value of a negative length, or over 2 GiB")
	case sum > int64(len(rest)):
		return fmt.Errorf("values of %d bytes in all, in %d bytes", sum, len(rest))
	}
	return nil
}

// checkDeltaByteArray checks DELTA_BYTE_ARRAY values, at most n of them:
// as many prefix lengths as suffixes, each prefix no longer than the value
// before it, the suffixes within the bytes, and the values' total length
// within limit.
func checkDeltaByteArray(src []byte, n, limit int64) error {
	prefixes, rest, err := checkLengths(src, n)
	if err != nil {
		return err
	}
	suffixes, rest, err := checkLengths(rest, n)
	if err != nil {
		return err
	}
	if len(prefixes) != len(suffixes) {
		return fmt.Errorf("%d prefixes for %d suffixes", len(prefixes), len(suffixes))
	}
	var suffix, total, prev int64
	for i, p := range prefixes {
		if p > prev {
			return fmt.Errorf("a prefix of %d bytes of a value of %d", p, prev)
		}
		prev = p + suffixes[i]
		suffix += suffixes[i]
		total += prev
		if total > limit {
			return fmt.Errorf("values of more than %d bytes in all", limit)
		}
	}
	if suffix > int64(len(rest)) {
		return fmt.Errorf("suffixes of %d bytes in all, in %d bytes", suffix, len(rest))
	}
	return nil
}

// plainInt32 encodes the DELTA_BINARY_PACKED values of an INT32 column at
// the start of src, at most n of them, as PLAIN, appending them to dst:
// each value is the decoded 64-bit value's low 32 bits, which is the
// INT32 value whether the writer computed its deltas in 32 bits, wrapping
// around, or in 64. A first value out of the int32 range is an error.
func plainInt32(dst, src []byte, n int64) ([]byte, error) {
	h, _, err := readDeltaHeader(src, n)
	if err != nil {
		return nil, err
	}
	if h.total > 0 && (h.first < math.MinInt32 || h.first > math.MaxInt32) {
		return nil, fmt.Errorf("an INT32 column's first value %d", h.first)
	}
	dst = slices.Grow(dst, 4*h.total)
	_, err = eachDelta(src, n, func(v int64) { dst = binary.LittleEndian.AppendUint32(dst, uint32(v)) }) //nolint:gosec // an INT32 column: its deltas wrap around in 32 bits
	return dst, err
}

// levelWidth is the bit width of the levels of a column whose largest
// level is max.
func levelWidth(max int) int { return bits.Len(uint(max)) }
