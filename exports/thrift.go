package exports

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The footer and the page headers of a Parquet file are Thrift structs in
// the compact protocol. parquet-go's decoder makes a list of the length
// the bytes announce before it reads the list's elements, so a few bytes
// that announce 2^31 elements reserve gigabytes. thriftSize walks a
// struct first, checking every length against the bytes left.

// errShortThrift reports bytes that end inside the struct: more of the
// file may complete it.
var errShortThrift = errors.New("the struct ends past the bytes read")

// maxThriftDepth bounds how deeply structs and lists may nest; the Parquet
// format nests them a few levels deep.
const maxThriftDepth = 32

// thriftSize returns the length of the compact-protocol struct at the
// start of b. A list, set, map or binary value whose length exceeds the
// bytes left, a nesting deeper than maxThriftDepth, or an unknown type is
// an error; bytes that end inside the struct are errShortThrift.
func thriftSize(b []byte) (int, error) {
	w := thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.at, nil
}

type thriftWalker struct {
	b  []byte
	at int
}

// The compact protocol's types.
const (
	tBoolTrue  = 1
	tBoolFalse = 2
	tByte      = 3
	tI16       = 4
	tI32       = 5
	tI64       = 6
	tDouble    = 7
	tBinary    = 8
	tList      = 9
	tSet       = 10
	tMap       = 11
	tStruct    = 12
	tUUID      = 13
)

func (w *thriftWalker) byte() (byte, error) {
	if w.at >= len(w.b) {
		return 0, errShortThrift
	}
	w.at++
	return w.b[w.at-1], nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	v, n := binary.Uvarint(w.b[w.at:])
	switch {
	case n == 0:
		return 0, errShortThrift
	case n < 0:
		return 0, errors.New("a varint of more than 64 bits")
	}
	w.at += n
	return v, nil
}

// skip passes n bytes.
func (w *thriftWalker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.at) { //nolint:gosec // w.at <= len(w.b), which every move keeps
		return errShortThrift
	}
	w.at += int(n) //nolint:gosec // n <= len(w.b)-w.at, checked above
	return nil
}

// count reads a length of n elements, each at least min bytes, and checks
// it against the bytes left. Only bytes that are there count: a length
// that the rest of the file could hold is still too long when the struct
// has fewer bytes, and that is an error, not errShortThrift, once the
// bytes read cover the whole region the struct may take.
func (w *thriftWalker) count(n uint64, min uint64) error {
	if left := uint64(len(w.b) - w.at); n > left/min { //nolint:gosec // w.at <= len(w.b), which every move keeps
		return fmt.Errorf("%w: a length of %d elements, in %d bytes", errShortThrift, n, left)
	}
	return nil
}

func (w *thriftWalker) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("structs nested more than %d deep", maxThriftDepth)
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		if h == 0 { // stop
			return nil
		}
		if h>>4 == 0 { // a field id of its own, a zigzag varint
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(h&0x0f, depth); err != nil {
			return err
		}
	}
}

func (w *thriftWalker) value(typ byte, depth int) error {
	switch typ {
	case tBoolTrue, tBoolFalse:
		return nil
	case tByte:
		return w.skip(1)
	case tI16, tI32, tI64:
		_, err := w.uvarint()
		return err
	case tDouble:
		return w.skip(8)
	case tUUID:
		return w.skip(16)
	case tBinary:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case tList, tSet:
		return w.list(depth)
	case tMap:
		return w.dict(depth)
	case tStruct:
		return w.structure(depth + 1)
	}
	return fmt.Errorf("an unknown thrift type %d", typ)
}

func (w *thriftWalker) list(depth int) error {
	h, err := w.byte()
	if err != nil {
		return err
	}
	n, elem := uint64(h>>4), h&0x0f
	if n == 15 {
		if n, err = w.uvarint(); err != nil {
			return err
		}
	}
	if err := w.count(n, 1); err != nil {
		return err
	}
	for range n {
		if elem == tBoolTrue || elem == tBoolFalse { // a byte each in a list
			err = w.skip(1)
		} else {
			err = w.value(elem, depth+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *thriftWalker) dict(depth int) error {
	n, err := w.uvarint()
	if err != nil || n == 0 {
		return err
	}
	types, err := w.byte()
	if err != nil {
		return err
	}
	if err := w.count(n, 2); err != nil {
		return err
	}
	for range n {
		for _, typ := range []byte{types >> 4, types & 0x0f} {
			if typ == tBoolTrue || typ == tBoolFalse {
				err = w.skip(1)
			} else {
				err = w.value(typ, depth+1)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
