package feedindex

import (
	"net/netip"

	"github.com/synthient-go/synthient"
)

// rawRow is a row, or a stream event, as the index reads it: an address
// (s, and e == s) or a range (s to e), parsed; ok is false when they are
// not an address or range the index can keep (see Added). Then its tuple
// and its time.
type rawRow struct {
	s, e netip.Addr
	ok   bool
	t    textTuple
	ts   int64
}

// addrRow returns the row of the address ip.
func addrRow(ip string, t textTuple, ts int64) rawRow {
	a, ok := parseAddr(ip)
	return rawRow{s: a, e: a, ok: ok, t: t, ts: ts}
}

// rangeRow returns the row of the range start to end: not ok unless both
// are addresses of one family, start first.
func rangeRow(start, end string, t textTuple, ts int64) rawRow {
	s, ok1 := parseAddr(start)
	e, ok2 := parseAddr(end)
	return rawRow{s: s, e: e, ok: ok1 && ok2 && s.Is4() == e.Is4() && !e.Less(s), t: t, ts: ts}
}

func proxyRow(e synthient.ProxyEvent) rawRow {
	return addrRow(e.IP, textTuple{e.Provider, e.Type, e.CountryCode, uint32(int32(e.ASN))}, e.Timestamp) //nolint:gosec // the ASN's bits, as an export's int32
}

func ja4tRow(e synthient.JA4TEvent) rawRow {
	return addrRow(e.IP, textTuple{e.Provider, e.Type, e.CountryCode, uint32(int32(e.ASN))}, e.Timestamp) //nolint:gosec // as above
}

func anonymizerRow(e synthient.AnonymizerEvent) rawRow {
	return rangeRow(e.RangeStart, e.RangeEnd, textTuple{e.Provider, e.Type, e.CountryCode, uint32(int32(e.ASN))}, e.Timestamp) //nolint:gosec // as above
}

// deltaThreshold is the smallest size of a delta table that is merged
// into its base table: a delta is merged once it holds more than this or
// an eighth of the base, so that adding an event costs about the delta's
// size and merging the base is rare.
const deltaThreshold = 1 << 16

// addEvents adds stream events of the feed of slot to its delta table,
// merging the delta into the base table when it grew large (see
// deltaThreshold). Rows the index cannot keep are counted in the Added.
func (ix *Index) addEvents(slot int, rows []rawRow) (Added, error) {
	read := func(d *dict, b *batch, a *Added) error { return b.addRows(slot, d, a, ix.cutoff(), rows) }
	return ix.change(slot, read, func(s, next *snapshot, b *batch, cutoff uint32) {
		next.delta[slot] = merge(slot, &s.delta[slot], cutoff, b)
		if n := next.delta[slot].size(); n > deltaThreshold && n > s.base[slot].size()/8 {
			next.base[slot] = merge(slot, &s.base[slot], cutoff, tableBatch(slot, &next.delta[slot]))
			next.delta[slot] = table{}
		}
		next.meta.Feeds[slot] = s.meta.Feeds[slot].added("", b.newest())
	})
}
