package feedindex

// The tables a lookup searches. A table holds one feed's keys of one
// address family, sorted, and an entry per key:
//
//   - for a feed of addresses (proxies, ja4t), a key is an address and
//     its entry what the latest row of that address says;
//   - for a feed of ranges (anonymizers), the keys split the family's
//     address space into intervals, the first starting at the lowest
//     address, and a key's entry is that of the latest range covering
//     its interval, or none (attr == noAttr) where no range does.
//
// IPv4 keys are bucketed by their top bits (keys4); IPv6 keys are pairs
// of uint64 searched by bisection (keys6). docs/performance.md has the
// measurements that chose this layout.

// noAttr is the attr of an interval no range covers.
const noAttr = ^uint32(0)

// entry is what a key holds: attr, the index of its tuple in the
// dictionary (noAttr for none), and seen, its last-seen time in Unix
// seconds.
type entry struct {
	attr uint32
	seen uint32
}

// The bucket table of keys4 has 1<<bits entries, bits from minBits to
// maxBits: a key's top bits pick its bucket, and its low 32-bits bits,
// at most 16, are what the bucket keeps.
const (
	minBits = 16
	maxBits = 24
)

// tableBits is the bucket table size for n keys: about 8 keys a bucket.
func tableBits(n int) uint8 {
	b := uint8(minBits)
	for b < maxBits && n>>(b+3) > 0 {
		b++
	}
	return b
}

// keys4 is a sorted set of IPv4 keys (as uint32): idx[b] is where bucket
// b starts in lo, idx[1<<bits] == len(lo); lo holds each key's low
// 32-bits bits, increasing within a bucket. The zero keys4 is empty.
type keys4 struct {
	bits uint8
	idx  []uint32
	lo   []uint16
}

// bucket returns the bucket of a and its bounds in lo; ok is false for an
// empty table, and for bounds that are not in order (a table is checked
// when read from a file; the test keeps a damaged one from panicking).
func (k *keys4) bucket(a uint32) (s, e uint32, lo uint16, ok bool) {
	if len(k.idx) == 0 {
		return 0, 0, 0, false
	}
	b := a >> (32 - k.bits)
	if int(b)+1 >= len(k.idx) {
		return 0, 0, 0, false
	}
	s, e = k.idx[b], k.idx[b+1]
	if s > e || int(e) > len(k.lo) {
		return 0, 0, 0, false
	}
	return s, e, uint16(a & (1<<(32-k.bits) - 1)), true //nolint:gosec // masked to at most 16 bits
}

// find returns the position of key a; false when a is not a key.
func (k *keys4) find(a uint32) (int, bool) {
	s, e, lo, ok := k.bucket(a)
	if !ok || s == e {
		return 0, false
	}
	i := int(s) + below16(k.lo[s:e], lo)
	return i, k.lo[i] == lo
}

// floor returns the position of the largest key at most a; false when
// there is none.
func (k *keys4) floor(a uint32) (int, bool) {
	s, e, lo, ok := k.bucket(a)
	if !ok {
		return 0, false
	}
	if s < e {
		i := int(s) + below16(k.lo[s:e], lo)
		if k.lo[i] <= lo {
			return i, true
		}
	}
	// Every key of the bucket is above a: the key before the bucket.
	return int(s) - 1, s > 0
}

// below16 returns the position of the last key at most x in keys, sorted
// and not empty, or 0 when every key is above x. (A version that does not
// branch on the keys measured no faster: a bucket holds a few keys.)
func below16(keys []uint16, x uint16) int {
	base, n := 0, len(keys)
	for n > 1 {
		half := n / 2
		if keys[base+half] <= x {
			base += half
		}
		n -= half
	}
	return base
}

// len returns how many keys k holds.
func (k *keys4) len() int { return len(k.lo) }

// all calls fn with every key of k, in order, and its position.
func (k *keys4) all(fn func(i int, key uint32)) {
	for b := 0; b+1 < len(k.idx); b++ {
		hi := uint32(b) << (32 - k.bits)
		for i := k.idx[b]; i < k.idx[b+1]; i++ {
			fn(int(i), hi|uint32(k.lo[i]))
		}
	}
}

// newKeys4 returns the keys4 of keys, sorted and distinct.
func newKeys4(keys []uint32) keys4 {
	if len(keys) == 0 {
		return keys4{}
	}
	bits := tableBits(len(keys))
	k := keys4{bits: bits, idx: make([]uint32, 1<<bits+1), lo: make([]uint16, len(keys))}
	mask := uint32(1)<<(32-bits) - 1
	for i, a := range keys {
		k.lo[i] = uint16(a & mask) //nolint:gosec // masked to at most 16 bits
		k.idx[a>>(32-bits)+1]++
	}
	for b := 1; b < len(k.idx); b++ {
		k.idx[b] += k.idx[b-1]
	}
	return k
}

// addr6 is an IPv6 address as two uint64, high half first.
type addr6 struct{ hi, lo uint64 }

func (a addr6) less(b addr6) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

// keys6 is a sorted set of IPv6 keys: key i is (k[2i], k[2i+1]), high
// half first, the halves side by side so that a probe reads one cache
// line.
type keys6 []uint64

func (k keys6) len() int { return len(k) / 2 }

func (k keys6) at(i int) addr6 { return addr6{k[2*i], k[2*i+1]} }

// floor returns the position of the largest key at most a; false when
// there is none.
func (k keys6) floor(a addr6) (int, bool) {
	n := k.len()
	if n == 0 {
		return 0, false
	}
	base := 0
	for n > 1 {
		half := n / 2
		if !a.less(k.at(base + half)) {
			base += half
		}
		n -= half
	}
	return base, !a.less(k.at(base))
}

// find returns the position of key a; false when a is not a key.
func (k keys6) find(a addr6) (int, bool) {
	i, ok := k.floor(a)
	return i, ok && k.at(i) == a
}

// table is one feed's keys of both families and their entries.
type table struct {
	k4 keys4
	v4 []entry
	k6 keys6
	v6 []entry
}

// size returns the keys of the table.
func (t *table) size() int { return t.k4.len() + t.k6.len() }

// lookup4 returns the entry of the IPv4 address a: of a key equal to a
// in an address table, of the interval holding a in a range table
// (cover).
func (t *table) lookup4(a uint32, cover bool) (entry, bool) {
	var i int
	var ok bool
	if cover {
		i, ok = t.k4.floor(a)
	} else {
		i, ok = t.k4.find(a)
	}
	return t.at(t.v4, i, ok)
}

// lookup6 is lookup4 for the IPv6 address a.
func (t *table) lookup6(a addr6, cover bool) (entry, bool) {
	var i int
	var ok bool
	if cover {
		i, ok = t.k6.floor(a)
	} else {
		i, ok = t.k6.find(a)
	}
	return t.at(t.v6, i, ok)
}

// at returns entry i of vs, if found and a range covers it.
func (t *table) at(vs []entry, i int, found bool) (entry, bool) {
	if !found || i >= len(vs) || vs[i].attr == noAttr {
		return entry{}, false
	}
	return vs[i], true
}
