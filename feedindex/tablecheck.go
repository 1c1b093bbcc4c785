package feedindex

import (
	"errors"
	"fmt"
)

// readTable reads, in place, and checks the table of slot from its
// sections (nil when absent): a keys4 index of 1<<bits+1 offsets from 0
// to len(lo), not decreasing; low key bits increasing within each bucket
// and below 1<<(32-bits); IPv6 keys increasing; an entry for each key,
// naming one of the dictionary's tuples (or none, in a range table);
// a range table's keys starting at the zero address.
func readTable(slot int, bits uint32, idx, lo, vals4, k6, vals6 []byte, tuples int) (table, error) {
	var t table
	ranges := slot == slotAnonymizers
	if idx != nil || lo != nil || vals4 != nil {
		if bits < minBits || bits > maxBits {
			return t, fmt.Errorf("a bucket table of %d bits", bits)
		}
		t.k4 = keys4{bits: uint8(bits), idx: asUint32s(idx), lo: asUint16s(lo)}
		t.v4 = asEntries(vals4)
		if err := checkKeys4(&t.k4, ranges); err != nil {
			return t, err
		}
		if len(t.v4) != t.k4.len() {
			return t, fmt.Errorf("%d IPv4 entries for %d keys", len(t.v4), t.k4.len())
		}
	}
	if k6 != nil || vals6 != nil {
		t.k6 = keys6(asUint64s(k6))
		t.v6 = asEntries(vals6)
		if err := checkKeys6(t.k6, ranges); err != nil {
			return t, err
		}
		if len(t.v6) != t.k6.len() {
			return t, fmt.Errorf("%d IPv6 entries for %d keys", len(t.v6), t.k6.len())
		}
	}
	if err := checkEntries(t.v4, tuples, ranges); err != nil {
		return t, err
	}
	return t, checkEntries(t.v6, tuples, ranges)
}

// checkEntries checks that each entry names one of the tuples tuples of
// the dictionary, or none in a range table.
func checkEntries(es []entry, tuples int, ranges bool) error {
	for i, e := range es {
		if int(e.attr) >= tuples && (!ranges || e.attr != noAttr) {
			return fmt.Errorf("entry %d names tuple %d of %d", i, e.attr, tuples)
		}
	}
	return nil
}

func checkKeys4(k *keys4, ranges bool) error {
	if len(k.idx) != 1<<k.bits+1 || len(k.lo) == 0 {
		return fmt.Errorf("a bucket table of %d offsets (%d bits) for %d keys", len(k.idx), k.bits, len(k.lo))
	}
	if k.idx[0] != 0 || int(k.idx[len(k.idx)-1]) != len(k.lo) {
		return errors.New("a bucket table that does not span its keys")
	}
	limit := uint32(1) << (32 - k.bits)
	for b := 0; b+1 < len(k.idx); b++ {
		s, e := k.idx[b], k.idx[b+1]
		if s > e || int(e) > len(k.lo) {
			return fmt.Errorf("bucket %d from %d to %d", b, s, e)
		}
		for i := s; i < e; i++ {
			if uint32(k.lo[i]) >= limit || i > s && k.lo[i] <= k.lo[i-1] {
				return fmt.Errorf("IPv4 key %d out of order", i)
			}
		}
	}
	if ranges && (k.idx[1] == 0 || k.lo[0] != 0) {
		return errors.New("a range table that does not start at the zero address")
	}
	return nil
}

func checkKeys6(k keys6, ranges bool) error {
	if len(k) == 0 {
		return errors.New("an IPv6 table without keys")
	}
	for i := 1; i < k.len(); i++ {
		if !k.at(i - 1).less(k.at(i)) {
			return fmt.Errorf("IPv6 key %d out of order", i)
		}
	}
	if ranges && k.at(0) != (addr6{}) {
		return errors.New("a range table that does not start at the zero address")
	}
	return nil
}
