package feedindex

import "slices"

// span is a range of keys, start to end inclusive, and its entry.
type span[K any] struct {
	start, end K
	e          entry
}

// piece is an interval of a flattened range table: from start to the next
// piece's start (or the family's last address), and its entry.
type piece[K any] struct {
	start K
	e     entry
}

// order is how flatten compares the keys of a family.
type order[K any] interface {
	less(a, b K) bool
	// succ returns a+1; false when a is the family's last address.
	succ(a K) (K, bool)
}

type ord4 struct{}

func (ord4) less(a, b uint32) bool { return a < b }

func (ord4) succ(a uint32) (uint32, bool) { return a + 1, a != ^uint32(0) }

type ord6 struct{}

func (ord6) less(a, b addr6) bool { return a.less(b) }

func (ord6) succ(a addr6) (addr6, bool) { return inc6(a) }

// flatten splits a family's address space into pieces, the first at the
// zero key, each holding the entry of the latest span that covers it (of
// spans seen at the same time, the one later in spans), or none; spans
// seen before cutoff are left out. Adjacent pieces of the same entry are
// one. spans is not changed.
func flatten[K comparable, O order[K]](spans []span[K], o O, cutoff uint32) []piece[K] {
	var zero K
	idx := make([]int32, 0, len(spans))
	for i, s := range spans {
		if live(s.e, cutoff) && !o.less(s.end, s.start) {
			idx = append(idx, int32(i))
		}
	}
	slices.SortFunc(idx, func(a, b int32) int {
		switch {
		case o.less(spans[a].start, spans[b].start):
			return -1
		case o.less(spans[b].start, spans[a].start):
			return 1
		}
		return int(a - b)
	})
	out := []piece[K]{{start: zero, e: entry{attr: noAttr}}}
	emit := func(at K, e entry) {
		last := &out[len(out)-1]
		switch {
		case last.start == at:
			last.e = e
			if n := len(out); n > 1 && out[n-2].e == e {
				out = out[:n-1]
			}
		case last.e != e:
			out = append(out, piece[K]{start: at, e: e})
		}
	}
	h := spanHeap[K]{spans: spans}
	for i := 0; i < len(idx); {
		at := spans[idx[i]].start
		i = h.pushFrom(idx, i, at)
		i = sweep(&h, o, idx, i, at, emit)
	}
	return out
}

// sweep emits the pieces from at on while a span covers them, pushing the
// spans that start on the way (idx from i); it returns the next i once no
// span covers the position reached (emitting a piece of none there), or
// once the last address is reached.
func sweep[K comparable, O order[K]](h *spanHeap[K], o O, idx []int32, i int, at K, emit func(K, entry)) int {
	for {
		for len(h.items) > 0 && o.less(h.top().end, at) {
			h.pop()
		}
		if len(h.items) == 0 {
			emit(at, entry{attr: noAttr})
			return i
		}
		top := h.top()
		emit(at, top.e)
		next, ok := o.succ(top.end)
		if i < len(idx) && (!ok || o.less(h.spans[idx[i]].start, next)) {
			next, ok = h.spans[idx[i]].start, true
		}
		if !ok {
			// The top span reaches the last address.
			h.items = h.items[:0]
			return i
		}
		at = next
		i = h.pushFrom(idx, i, at)
	}
}

// spanHeap is a max-heap of spans (indexes into spans) by their entry's
// last-seen time, then by their place in spans.
type spanHeap[K comparable] struct {
	spans []span[K]
	items []int32
}

// pushFrom pushes the spans idx[i:] that start at at and returns the
// position after them.
func (h *spanHeap[K]) pushFrom(idx []int32, i int, at K) int {
	for ; i < len(idx) && h.spans[idx[i]].start == at; i++ {
		h.push(idx[i])
	}
	return i
}

func (h *spanHeap[K]) above(a, b int32) bool {
	ea, eb := h.spans[a].e, h.spans[b].e
	return ea.seen > eb.seen || ea.seen == eb.seen && a > b
}

func (h *spanHeap[K]) top() span[K] { return h.spans[h.items[0]] }

func (h *spanHeap[K]) push(x int32) {
	h.items = append(h.items, x)
	for j := len(h.items) - 1; j > 0; {
		p := (j - 1) / 2
		if !h.above(h.items[j], h.items[p]) {
			break
		}
		h.items[j], h.items[p] = h.items[p], h.items[j]
		j = p
	}
}

func (h *spanHeap[K]) pop() {
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	for j := 0; ; {
		l, best := 2*j+1, j
		if l < n && h.above(h.items[l], h.items[best]) {
			best = l
		}
		if r := l + 1; r < n && h.above(h.items[r], h.items[best]) {
			best = r
		}
		if best == j {
			return
		}
		h.items[j], h.items[best] = h.items[best], h.items[j]
		j = best
	}
}
