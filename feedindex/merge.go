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
	rec4 struct {
		key uint32
		e   entry
	}
	rec6 struct {
		key addr6
		e   entry
	}
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
	out.k4, out.v4 = mergeAddrs4(t, a4, cutoff)
	out.k6, out.v6 = mergeAddrs6(t, a6, cutoff)
	return out
}

// mergeAddrs4 is mergeAddrs for the IPv4 keys.
func mergeAddrs4(t *table, a4 []rec4, cutoff uint32) (keys4, []entry) {
	keys := make([]uint32, 0, t.k4.len()+len(a4))
	vals := make([]entry, 0, cap(keys))
	put := func(key uint32, e entry) {
		if live(e, cutoff) {
			keys = append(keys, key)
			vals = append(vals, e)
		}
	}
	j := 0
	t.k4.all(func(i int, key uint32) {
		for ; j < len(a4) && a4[j].key < key; j++ {
			put(a4[j].key, a4[j].e)
		}
		e := t.v4[i]
		if j < len(a4) && a4[j].key == key {
			if newer(a4[j].e, e) {
				e = a4[j].e
			}
			j++
		}
		put(key, e)
	})
	for ; j < len(a4); j++ {
		put(a4[j].key, a4[j].e)
	}
	return newKeys4(keys), vals
}

// mergeAddrs6 is mergeAddrs for the IPv6 keys.
func mergeAddrs6(t *table, a6 []rec6, cutoff uint32) (keys6, []entry) {
	keys := make(keys6, 0, len(t.k6)+2*len(a6))
	vals := make([]entry, 0, t.k6.len()+len(a6))
	put := func(key addr6, e entry) {
		if live(e, cutoff) {
			keys = append(keys, key.hi, key.lo)
			vals = append(vals, e)
		}
	}
	j := 0
	for i := range t.k6.len() {
		key := t.k6.at(i)
		for ; j < len(a6) && a6[j].key.less(key); j++ {
			put(a6[j].key, a6[j].e)
		}
		e := t.v6[i]
		if j < len(a6) && a6[j].key == key {
			if newer(a6[j].e, e) {
				e = a6[j].e
			}
			j++
		}
		put(key, e)
	}
	for ; j < len(a6); j++ {
		put(a6[j].key, a6[j].e)
	}
	return keys, vals
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
	for _, p := range flatten(spans4, ord4{}, cutoff) {
		keys = append(keys, p.start)
		out.v4 = append(out.v4, p.e)
	}
	out.k4 = newKeys4(keys)
	spans6 := make([]span[addr6], 0, len(old.r6)+len(r6))
	for _, r := range append(old.r6, r6...) {
		spans6 = append(spans6, span[addr6](r))
	}
	for _, p := range flatten(spans6, ord6{}, cutoff) {
		out.k6 = append(out.k6, p.start.hi, p.start.lo)
		out.v6 = append(out.v6, p.e)
	}
	return out
}

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
