package feedindex

import (
	"encoding/binary"
	"unsafe"
)

// The tables of a file are read in place where the machine allows it: on
// a little-endian machine, a section (aligned to 8 bytes in the file, and
// the mapping to a page) is the table's slice itself, so that opening a
// file copies nothing and the processes that open it share its pages.
// Elsewhere the section is decoded into a new slice.

// littleEndian reports whether this machine stores integers as the file
// does.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1 //nolint:gosec // reads a byte of x: the machine's order
}()

// inPlace reports whether b, of elements of size bytes, can be read as
// a slice in place.
func inPlace(b []byte, size uintptr) bool {
	return littleEndian && len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%size == 0 //nolint:gosec // the address, for its alignment
}

// asUint16s returns b, little-endian, as a []uint16 (len(b) is even).
func asUint16s(b []byte) []uint16 { return asSlice(b, binary.LittleEndian.Uint16) }

// asUint32s returns b, little-endian, as a []uint32 (len(b) is a multiple
// of 4).
func asUint32s(b []byte) []uint32 { return asSlice(b, binary.LittleEndian.Uint32) }

// asUint64s returns b, little-endian, as a []uint64 (len(b) is a multiple
// of 8).
func asUint64s(b []byte) []uint64 { return asSlice(b, binary.LittleEndian.Uint64) }

// asSlice returns b as a []T, in place where the machine allows, else
// decoded with dec.
func asSlice[T uint16 | uint32 | uint64](b []byte, dec func([]byte) T) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	n := len(b) / size
	if inPlace(b, uintptr(size)) {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n) //nolint:gosec // b holds n aligned little-endian elements, checked above
	}
	out := make([]T, n)
	for i := range out {
		out[i] = dec(b[size*i:])
	}
	return out
}

// asEntries returns b, pairs of little-endian uint32 (attr, seen), as
// entries (len(b) is a multiple of 8).
func asEntries(b []byte) []entry {
	n := len(b) / 8
	if inPlace(b, 4) {
		return unsafe.Slice((*entry)(unsafe.Pointer(&b[0])), n) //nolint:gosec // b holds n aligned little-endian elements, checked above
	}
	out := make([]entry, n)
	for i := range out {
		out[i] = entry{binary.LittleEndian.Uint32(b[8*i:]), binary.LittleEndian.Uint32(b[8*i+4:])}
	}
	return out
}

// bytesOf returns the bytes of s, little-endian: in place where the
// machine is little-endian, else encoded into a new slice. T is uint16,
// uint32, uint64 or entry.
func bytesOf[T uint16 | uint32 | uint64 | entry](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	size := int(unsafe.Sizeof(s[0]))
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*size) //nolint:gosec // the bytes of s, read only while s lives
	}
	out := make([]byte, 0, len(s)*size)
	for _, v := range s {
		switch v := any(v).(type) {
		case uint16:
			out = binary.LittleEndian.AppendUint16(out, v)
		case uint32:
			out = binary.LittleEndian.AppendUint32(out, v)
		case uint64:
			out = binary.LittleEndian.AppendUint64(out, v)
		case entry:
			out = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(out, v.attr), v.seen)
		}
	}
	return out
}
