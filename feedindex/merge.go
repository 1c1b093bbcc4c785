package feedindex

import (
	"slices"
)

// A batch holds rows not yet in a table, in the order they were added:
// of rows of the same key with the same last-seen time, the later one
// wins. Merging a batch into a table makes a new table; neither the
// batch nor the old table is changed.

// rec4 and rec6 are an address row; span4 and span6 a range row.
type (
	rec[K any] struct {
		key K
		e   entry
	}
	rec4  = rec[uint32]
	rec6  = rec[addr6]
	span4 struct {
		start, end uint32
		e          entry
	}
	span6 struct {
		start, end addr6
		e          entry
	}
)

// batch is the rows of one feed.
type batch struct {
	a4 []rec4
	a6 []rec6
	r4 []span4
	r6 []span6
}

// newer reports whether x wins over y, y being earlier: x was seen
// later, or at the same time.
func newer(x, y entry) bool { return x.seen >= y.seen }

// sortRecs4 sorts recs by key, keeping the order of equal keys (a radix
// sort: two passes of 16 bits), and keeps the entry that wins of each key.
func sortRecs4(recs []rec4) []rec4 {
	if len(recs) < 2 {
		return recs
	}
	tmp := make([]rec4, len(recs))
	var count [1 << 16]int
	for shift := 0; shift < 32; shift += 16 {
		clear(count[:])
		for _, r := range recs {
			count[r.key>>shift&0xffff]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, r := range recs {
			d := r.key >> shift & 0xffff
			tmp[count[d]] = r
			count[d]++
		}
		recs, tmp = tmp, recs
	}
	return dedupe(recs, func(a, b rec4) bool { return a.key == b.key }, func(r rec4) entry { return r.e })
}

// sortRecs6 sorts recs by key, keeping the order of equal keys, and keeps
// the entry that wins of each key.
func sortRecs6(recs []rec6) []rec6 {
	slices.SortStableFunc(recs, func(a, b rec6) int { return cmp6(a.key, b.key) })
	return dedupe(recs, func(a, b rec6) bool { return a.key == b.key }, func(r rec6) entry { return r.e })
}

func cmp6(a, b addr6) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// dedupe keeps, of each run of equal keys in sorted recs, the record
// whose entry wins (the latest; of equal times the last), in place.
func dedupe[R any](recs []R, same func(a, b R) bool, e func(R) entry) []R {
	out := recs[:0]
	for i, r := range recs {
		if i > 0 && same(out[len(out)-1], r) {
			if newer(e(r), e(out[len(out)-1])) {
				out[len(out)-1] = r
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// live reports whether e is within the maximum age: its last-seen time is
// at or after cutoff.
func live(e entry, cutoff uint32) bool { return e.seen >= cutoff }

// mergeAddrs returns the address table of t with recs (sorted by
// sortRecs4 and sortRecs6) merged in, without the entries seen before
// cutoff.
func mergeAddrs(t *table, a4 []rec4, a6 []rec6, cutoff uint32) table {
	var out table
	keys := make([]uint32, 0, t.k4.len()+len(a4))
	out.v4 = make([]entry, 0, cap(keys))
	old4 := func(yield func(uint32, entry) bool) {
		t.k4.all(func(i int, key uint32) { yield(key, t.v4[i]) })
	}
	mergeSorted(old4, a4, func(a, b uint32) bool { return a < b }, cutoff, func(k uint32, e entry) {
		keys = append(keys, k)
		out.v4 = append(out.v4, e)
	})
	out.k4 = newKeys4(keys)
	out.k6 = make(keys6, 0, len(t.k6)+2*len(a6))
	out.v6 = make([]entry, 0, t.k6.len()+len(a6))
	old6 := func(yield func(addr6, entry) bool) {
		for i := range t.k6.len() {
			if !yield(t.k6.at(i), t.v6[i]) {
				return
			}
		}
	}
	mergeSorted(old6, a6, addr6.less, cutoff, func(k addr6, e entry) {
		out.k6 = append(out.k6, k.hi, k.lo)
		out.v6 = append(out.v6, e)
	})
	return out
}

// mergeSorted calls put with the keys of old and of recs, both sorted,
// in order, and the entry of each: of a key in both, the later entry
// (recs' on a tie); entries seen before cutoff are left out.
func mergeSorted[K comparable](old func(yield func(K, entry) bool), recs []rec[K], less func(a, b K) bool, cutoff uint32, put func(K, entry)) {
	keep := func(k K, e entry) {
		if live(e, cutoff) {
			put(k, e)
		}
	}
	j := 0
	for key, e := range old {
		for ; j < len(recs) && less(recs[j].key, key); j++ {
			keep(recs[j].key, recs[j].e)
		}
		if j < len(recs) && recs[j].key == key {
			if newer(recs[j].e, e) {
				e = recs[j].e
			}
			j++
		}
		keep(key, e)
	}
	for ; j < len(recs); j++ {
		keep(recs[j].key, recs[j].e)
	}
}

// mergeRanges returns the range table of t with the ranges r4 and r6
// merged in, without the ranges seen before cutoff: each address is in
// the interval of the latest range that covers it. The table's intervals
// count as ranges earlier than every new one.
func mergeRanges(t *table, r4 []span4, r6 []span6, cutoff uint32) table {
	old := tableBatch(slotAnonymizers, t)
	spans4 := make([]span[uint32], 0, len(old.r4)+len(r4))
	for _, r := range append(old.r4, r4...) {
		spans4 = append(spans4, span[uint32](r))
	}
	var out table
	var keys []uint32
	if ps := flatten(spans4, ord4{}, cutoff); !empty(ps) {
		for _, p := range ps {
			keys = append(keys, p.start)
			out.v4 = append(out.v4, p.e)
		}
	}
	out.k4 = newKeys4(keys)
	spans6 := make([]span[addr6], 0, len(old.r6)+len(r6))
	for _, r := range append(old.r6, r6...) {
		spans6 = append(spans6, span[addr6](r))
	}
	if ps := flatten(spans6, ord6{}, cutoff); !empty(ps) {
		for _, p := range ps {
			out.k6 = append(out.k6, p.start.hi, p.start.lo)
			out.v6 = append(out.v6, p.e)
		}
	}
	return out
}

// empty reports pieces that no range covers: a table of none, which a
// lookup would search for nothing.
func empty[K any](ps []piece[K]) bool { return len(ps) == 1 && ps[0].e.attr == noAttr }

// dec6 returns a-1 (a is above zero).
func dec6(a addr6) addr6 {
	if a.lo == 0 {
		return addr6{a.hi - 1, ^uint64(0)}
	}
	return addr6{a.hi, a.lo - 1}
}

// inc6 returns a+1, and false when a is the last address.
func inc6(a addr6) (addr6, bool) {
	if a.lo == ^uint64(0) {
		if a.hi == ^uint64(0) {
			return addr6{}, false
		}
		return addr6{a.hi + 1, 0}, true
	}
	return addr6{a.hi, a.lo + 1}, true
}
