package feedindex

import (
	"encoding/binary"
	"fmt"
	"iter"
	"net/netip"
	"slices"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

// Added is what an addition read.
type Added struct {
	// Rows is how many rows were read.
	Rows int64
	// Skipped is how many of them were left out because they hold no
	// address the index can keep: an address or a range bound that is
	// not an address (empty, malformed, with a zone), a range whose start
	// is above its end or whose bounds are of two families, a timestamp
	// before 1970 or after 2106 (Unix seconds past 1<<32), or a provider,
	// type or country longer than 1 KiB.
	Skipped int64
	// Expired is how many of them were older than the maximum age.
	Expired int64
}

// AddFile adds every row of the export file f of feed (FeedProxies,
// FeedJA4T or FeedAnonymizers) to the index, and records id (the export's
// id, "" for none) as an export of the feed the index holds. An address
// keeps the latest of its rows, old and new; of rows seen at the same
// time the one added last, and of a file's rows the one later in the
// file. Rows with no address the index can keep are counted as skipped
// (see Added), not added.
//
// The index changes only once the whole file was read: a file that fails
// to read (a *exports.FormatError or *exports.ColumnError) or a
// dictionary limit (ErrLimit) leaves it as it was. Lookups go on reading
// the previous snapshot meanwhile. A feed that is not an address feed
// matches synthient.ErrInvalidArgument.
func (ix *Index) AddFile(feed synthient.Feed, id string, f *exports.File) (Added, error) {
	slot, ok := slotOf(feed)
	if !ok {
		return Added{}, fmt.Errorf("%w: feedindex: feed %q names no addresses (the index holds %v)", synthient.ErrInvalidArgument, feed, Feeds)
	}
	return ix.add(slot, id, func(d *dict, b *batch, a *Added) error {
		cutoff := ix.cutoff()
		use := func(rows []rawRow) error { return b.addRows(slot, d, a, cutoff, rows) }
		switch slot {
		case slotProxies:
			return pipeRows(f.Proxies(), func(r exports.ProxyRow) rawRow {
				return addrRow(r.IP, textTuple{r.Provider, r.Type, r.CountryCode, uint32(r.ASN)}, r.Timestamp) //nolint:gosec // the ASN's bits
			}, use)
		case slotJA4T:
			return pipeRows(f.JA4T(), func(r exports.JA4TRow) rawRow {
				return addrRow(r.IP, textTuple{r.Provider, r.Type, r.CountryCode, uint32(r.ASN)}, r.Timestamp) //nolint:gosec // the ASN's bits
			}, use)
		}
		return pipeRows(f.Anonymizers(), func(r exports.AnonymizerRow) rawRow {
			return rangeRow(r.RangeStart, r.RangeEnd, textTuple{r.Provider, r.Type, r.CountryCode, uint32(r.ASN)}, r.Timestamp) //nolint:gosec // the ASN's bits
		}, use)
	})
}

// chunkRows is how many rows pipeRows hands over at a time.
const chunkRows = 4096

// pipeRows reads rows on a goroutine of its own, converted by conv (which
// parses their addresses), and hands them to use in chunks on the
// caller's goroutine: decoding the Parquet file and parsing its addresses
// take about the time indexing them takes, and run side by side. It returns the first error of use or of rows; the reading
// goroutine has ended when it returns.
func pipeRows[R any](rows iter.Seq2[R, error], conv func(R) rawRow, use func([]rawRow) error) error {
	chunks := make(chan []rawRow, 4)
	free := make(chan []rawRow, 6)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(chunks)
		buf := make([]rawRow, 0, chunkRows)
		for r, err := range rows {
			if err != nil {
				readErr = err
				break
			}
			if buf = append(buf, conv(r)); len(buf) < chunkRows {
				continue
			}
			select {
			case chunks <- buf:
			case <-stop:
				return
			}
			select {
			case buf = <-free:
				buf = buf[:0]
			default:
				buf = make([]rawRow, 0, chunkRows)
			}
		}
		if len(buf) > 0 {
			select {
			case chunks <- buf:
			case <-stop:
			}
		}
	}()
	var err error
	for c := range chunks {
		if err == nil {
			if err = use(c); err != nil {
				close(stop) // the reader ends; the loop drains what it sent
			}
		}
		select {
		case free <- c:
		default:
		}
	}
	if err != nil {
		return err
	}
	return readErr // written before chunks was closed
}

// addRows adds rows of the feed of slot to b, or counts them in a.
func (b *batch) addRows(slot int, d *dict, a *Added, cutoff uint32, rows []rawRow) error {
	for i := range rows {
		r := &rows[i]
		if err := b.add(slot == slotAnonymizers, d, a, cutoff, r); err != nil {
			return err
		}
	}
	return nil
}

// add runs read, which fills a batch of the feed of slot, and merges the
// batch into the base tables, with the delta tables; id, when not empty,
// is recorded as an export of the feed.
func (ix *Index) add(slot int, id string, read func(*dict, *batch, *Added) error) (Added, error) {
	return ix.change(slot, read, func(s, next *snapshot, b *batch, cutoff uint32) {
		next.base[slot] = merge(slot, &s.base[slot], cutoff, tableBatch(slot, &s.delta[slot]), b)
		next.delta[slot] = table{}
		next.meta.Feeds[slot] = s.meta.Feeds[slot].added(id, b.newest())
	})
}

// change runs read, which fills a batch of the feed of slot, then apply,
// which sets the tables of next, a copy of the current snapshot s, from
// the batch, and publishes next. A failed read publishes nothing.
func (ix *Index) change(slot int, read func(*dict, *batch, *Added) error, apply func(s, next *snapshot, b *batch, cutoff uint32)) (Added, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var a Added
	s := ix.cur.Load()
	if s == nil || ix.closed.Load() {
		return a, ErrClosed
	}
	d := ix.writerDict(s)
	var b batch
	if err := read(d, &b, &a); err != nil {
		ix.dict = nil // drop what the failed read added; rebuilt from the snapshot
		return a, err
	}
	next := *s
	next.dict = d.view
	apply(s, &next, &b, ix.cutoff())
	ix.cur.Store(&next)
	return a, nil
}

// writerDict returns the writer's dictionary, made from s's view if
// there is none.
func (ix *Index) writerDict(s *snapshot) *dict {
	if ix.dict == nil {
		ix.dict = newDict(view{strs: slices.Clip(s.dict.strs), tuples: slices.Clip(s.dict.tuples)})
	}
	return ix.dict
}

// added returns m with the export id (unless empty) recorded and newest,
// the latest time of the rows added, taken into Updated.
func (m feedMeta) added(id string, newest uint32) feedMeta {
	if id != "" && !slices.Contains(m.Exports, id) {
		m.Exports = append(slices.Clip(m.Exports), id)
		if len(m.Exports) > maxExportIDs {
			m.Exports = m.Exports[len(m.Exports)-maxExportIDs:]
		}
	}
	m.Updated = max(m.Updated, int64(newest))
	return m
}

// merge returns the table t of slot with the batches merged in, earlier
// first, leaving out what was seen before cutoff.
func merge(slot int, t *table, cutoff uint32, bs ...*batch) table {
	var all batch
	for _, b := range bs {
		all.a4 = append(all.a4, b.a4...)
		all.a6 = append(all.a6, b.a6...)
		all.r4 = append(all.r4, b.r4...)
		all.r6 = append(all.r6, b.r6...)
	}
	return mergeBatch(slot, t, &all, cutoff)
}

// mergeBatch returns t with b merged in, leaving out what was seen before
// cutoff.
func mergeBatch(slot int, t *table, b *batch, cutoff uint32) table {
	if slot == slotAnonymizers {
		return mergeRanges(t, b.r4, b.r6, cutoff)
	}
	return mergeAddrs(t, sortRecs4(b.a4), sortRecs6(b.a6), cutoff)
}

// tableBatch returns the rows of t as a batch.
func tableBatch(slot int, t *table) *batch {
	var b batch
	if slot == slotAnonymizers {
		keys := make([]uint32, 0, t.k4.len())
		t.k4.all(func(_ int, key uint32) { keys = append(keys, key) })
		for i, key := range keys {
			if t.v4[i].attr != noAttr {
				end := ^uint32(0)
				if i+1 < len(keys) {
					end = keys[i+1] - 1
				}
				b.r4 = append(b.r4, span4{key, end, t.v4[i]})
			}
		}
		for i := range t.k6.len() {
			if t.v6[i].attr != noAttr {
				end := addr6{^uint64(0), ^uint64(0)}
				if i+1 < t.k6.len() {
					end = dec6(t.k6.at(i + 1))
				}
				b.r6 = append(b.r6, span6{t.k6.at(i), end, t.v6[i]})
			}
		}
		return &b
	}
	t.k4.all(func(i int, key uint32) { b.a4 = append(b.a4, rec4{key, t.v4[i]}) })
	for i := range t.k6.len() {
		b.a6 = append(b.a6, rec6{t.k6.at(i), t.v6[i]})
	}
	return &b
}

// newest returns the latest time of b's rows (0 for none).
func (b *batch) newest() uint32 {
	var n uint32
	for _, r := range b.a4 {
		n = max(n, r.e.seen)
	}
	for _, r := range b.a6 {
		n = max(n, r.e.seen)
	}
	for _, r := range b.r4 {
		n = max(n, r.e.seen)
	}
	for _, r := range b.r6 {
		n = max(n, r.e.seen)
	}
	return n
}

// entryOf returns the entry of a row of tuple t seen at ts; ok is false
// for a row the index cannot keep (see Added).
func entryOf(d *dict, t textTuple, ts int64) (entry, bool, error) {
	if ts < 0 || ts > int64(^uint32(0)) || len(t.provider) > maxString || len(t.typ) > maxString || len(t.country) > maxString {
		return entry{}, false, nil
	}
	id, err := d.id(t)
	return entry{attr: id, seen: uint32(ts)}, err == nil, err
}

// parseAddr returns the address s names, unmapped; false when s is not an
// address without a zone.
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func key4(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

func key6(a netip.Addr) addr6 {
	b := a.As16()
	return addr6{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// add adds r, a row of a range feed or not, to b, or counts it in a.
func (b *batch) add(ranges bool, d *dict, a *Added, cutoff uint32, r *rawRow) error {
	a.Rows++
	if !r.ok {
		a.Skipped++
		return nil
	}
	e, ok, err := entryOf(d, r.t, r.ts)
	switch {
	case err != nil:
		return err
	case !ok:
		a.Skipped++
	case !live(e, cutoff):
		a.Expired++
	case ranges && r.s.Is4():
		b.r4 = append(b.r4, span4{key4(r.s), key4(r.e), e})
	case ranges:
		b.r6 = append(b.r6, span6{key6(r.s), key6(r.e), e})
	case r.s.Is4():
		b.a4 = append(b.a4, rec4{key4(r.s), e})
	default:
		b.a6 = append(b.a6, rec6{key6(r.s), e})
	}
	return nil
}

// DetectFeed returns the feed whose export f is, by its columns: a file
// with range_start and range_end columns is an anonymizers export, one
// with ip and ja4t a ja4t export, one with ip (and not ja4t) a proxies
// export. false for any other file.
func DetectFeed(f *exports.File) (synthient.Feed, bool) {
	has := map[string]bool{}
	for _, c := range f.Columns() {
		has[c.Name] = true
	}
	switch {
	case has["range_start"] && has["range_end"]:
		return synthient.FeedAnonymizers, true
	case has["ip"] && has["ja4t"]:
		return synthient.FeedJA4T, true
	case has["ip"]:
		return synthient.FeedProxies, true
	}
	return "", false
}
