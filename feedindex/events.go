package feedindex

import "github.com/synthient-go/synthient"

// rawRow is a stream event as the index reads it: an address (end "")
// or a range, its tuple and its time.
type rawRow struct {
	start, end string
	t          textTuple
	ts         int64
}

func proxyRow(e synthient.ProxyEvent) rawRow {
	return rawRow{start: e.IP, t: textTuple{e.Provider, e.Type, e.CountryCode, uint32(int32(e.ASN))}, ts: e.Timestamp} //nolint:gosec // the ASN's bits, as an export's int32
}

func ja4tRow(e synthient.JA4TEvent) rawRow {
	return rawRow{start: e.IP, t: textTuple{e.Provider, e.Type, e.CountryCode, uint32(int32(e.ASN))}, ts: e.Timestamp} //nolint:gosec // as above
}

func anonymizerRow(e synthient.AnonymizerEvent) rawRow {
	return rawRow{start: e.RangeStart, end: e.RangeEnd, t: textTuple{e.Provider, e.Type, e.CountryCode, uint32(int32(e.ASN))}, ts: e.Timestamp} //nolint:gosec // as above
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
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var a Added
	s := ix.cur.Load()
	if s == nil || ix.closed.Load() {
		return a, ErrClosed
	}
	d := ix.writerDict(s)
	cutoff := ix.cutoff()
	var b batch
	if err := b.addRows(slot, d, &a, cutoff, rows); err != nil {
		ix.dict = nil
		return a, err
	}
	next := *s
	next.dict = d.view
	next.delta[slot] = merge(slot, &s.delta[slot], cutoff, &b)
	if n := next.delta[slot].size(); n > deltaThreshold && n > s.base[slot].size()/8 {
		next.base[slot] = merge(slot, &s.base[slot], cutoff, tableBatch(slot, &next.delta[slot]))
		next.delta[slot] = table{}
	}
	next.meta.Feeds[slot] = s.meta.Feeds[slot].added("", b.newest())
	ix.cur.Store(&next)
	return a, nil
}
