package feedindex_test

// The package's test harness: export files written with parquet-go from
// rows a test makes, a model that answers a lookup by reading every row,
// and fakes on a fixed clock.

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/feedindex"
)

// testNow is the fixed time of the tests: 14:20 UTC, so the latest export
// of a fake is 2026-06-10/13.
var testNow = time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC)

// writeRows writes rows to a new Parquet file and returns its path.
func writeRows[T any](t testing.TB, rows []T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("rows-%d.parquet", rand.Uint64())) //nolint:gosec // a name in a new directory, not a secret
	require.NoError(t, parquet.WriteFile(path, rows))
	return path
}

// addRows writes rows to a file and adds it to ix as an export of feed.
func addRows[T any](t testing.TB, ix *feedindex.Index, feed synthient.Feed, rows []T) feedindex.Added {
	t.Helper()
	f, err := exports.Open(writeRows(t, rows))
	require.NoError(t, err)
	defer f.Close()
	a, err := ix.AddFile(feed, "", f)
	require.NoError(t, err)
	return a
}

// modelRow is a row as the model keeps it: the addresses it holds, start
// to end, and its Hit.
type modelRow struct {
	start, end netip.Addr
	hit        feedindex.Hit
}

// model answers a lookup by reading every row added, in order: for each
// feed, the latest row holding the address (of equal times the later),
// if it is within maxAge of now.
type model struct {
	rows   []modelRow
	maxAge time.Duration
	now    time.Time
}

func (m *model) lookup(a netip.Addr) []feedindex.Hit {
	var out []feedindex.Hit
	for _, feed := range feedindex.Feeds {
		var best *modelRow
		for i := range m.rows {
			r := &m.rows[i]
			if r.hit.Feed != feed || a.Less(r.start) || r.end.Less(a) || a.Is4() != r.start.Is4() {
				continue
			}
			if best == nil || !r.hit.LastSeen.Before(best.hit.LastSeen) {
				best = r
			}
		}
		if best != nil && (m.maxAge == 0 || !best.hit.LastSeen.Before(m.now.Add(-m.maxAge).Truncate(time.Second))) {
			out = append(out, best.hit)
		}
	}
	return out
}

// universe is the addresses random rows draw from: few, so that rows
// share addresses and ranges overlap, at both ends of both families.
var universe = func() []netip.Addr {
	var out []netip.Addr
	for i := range 24 {
		out = append(out, netip.AddrFrom4([4]byte{0, 0, 0, byte(i)}), netip.AddrFrom4([4]byte{10, 1, 0, byte(i)}),
			netip.AddrFrom4([4]byte{255, 255, 255, byte(232 + i)}),
			netip.AddrFrom16([16]byte{15: byte(i)}), netip.MustParseAddr(fmt.Sprintf("2001:db8::%x", i)),
			netip.AddrFrom16([16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, byte(232 + i)}))
	}
	return out
}()

var (
	providers = []string{"BRIGHTDATA", "OXYLABS", "NORDVPN", ""}
	types     = []string{"RESIDENTIAL_PROXY", "COMMERCIAL_VPN", "TOR_NODE"}
	countries = []string{"US", "DE", ""}
)

// randomRows returns n random rows of each feed, seen on one of 24 hours
// before testNow (so that rows of equal times are common), and adds them
// to m.
func randomRows(r *rand.Rand, n int, m *model) ([]exports.ProxyRow, []exports.JA4TRow, []exports.AnonymizerRow) {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	hit := func(feed synthient.Feed) feedindex.Hit {
		return feedindex.Hit{Feed: feed, Provider: pick(providers), Type: pick(types), CountryCode: pick(countries),
			ASN: []int{0, 13335, -7}[r.IntN(3)], LastSeen: testNow.Add(-time.Duration(r.IntN(24)) * time.Hour)}
	}
	var px []exports.ProxyRow
	var ja []exports.JA4TRow
	var an []exports.AnonymizerRow
	for range n {
		a := universe[r.IntN(len(universe))]
		h := hit(synthient.FeedProxies)
		px = append(px, exports.ProxyRow{IP: a.String(), Provider: h.Provider, Type: h.Type, Timestamp: h.LastSeen.Unix(), CountryCode: h.CountryCode, ASN: int32(h.ASN)}) //nolint:gosec // the ASNs of hit, in int32
		m.rows = append(m.rows, modelRow{a, a, h})
		a = universe[r.IntN(len(universe))]
		h = hit(synthient.FeedJA4T)
		ja = append(ja, exports.JA4TRow{IP: a.String(), JA4T: "64240_2-1-3-1-1-4_1460_8", Provider: h.Provider, Type: h.Type, Timestamp: h.LastSeen.Unix(), CountryCode: h.CountryCode, ASN: int32(h.ASN)}) //nolint:gosec // the ASNs of hit, in int32
		m.rows = append(m.rows, modelRow{a, a, h})
		s, e := universe[r.IntN(len(universe))], universe[r.IntN(len(universe))]
		for s.Is4() != e.Is4() {
			e = universe[r.IntN(len(universe))]
		}
		if e.Less(s) {
			s, e = e, s
		}
		h = hit(synthient.FeedAnonymizers)
		an = append(an, exports.AnonymizerRow{RangeStart: s.String(), RangeEnd: e.String(), Provider: h.Provider, Type: h.Type, CountryCode: h.CountryCode, ASN: int32(h.ASN), Timestamp: h.LastSeen.Unix()}) //nolint:gosec // the ASNs of hit, in int32
		m.rows = append(m.rows, modelRow{s, e, h})
	}
	return px, ja, an
}

// probes are the addresses a test looks up: the universe, its
// neighbours, and others.
func probes() []netip.Addr {
	out := append([]netip.Addr{}, universe...)
	for _, a := range universe {
		out = append(out, a.Next(), a.Prev())
	}
	return append(out, netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("::ffff:10.1.0.3"), netip.MustParseAddr("fe80::1%eth0"))
}

// openExport opens the export file at path, closed with the test.
func openExport(t testing.TB, path string) *exports.File {
	t.Helper()
	f, err := exports.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// resum makes the checksums of an index file b match its content, as far
// as its header and section table can be read, so that a damage reaches
// the checks beyond the checksums. It returns b.
func resum(b []byte) []byte {
	if len(b) < 64 {
		return b
	}
	n := min(int(binary.LittleEndian.Uint32(b[12:])), (len(b)-64)/40, 19) // 19: the most sections a file has
	crc := func(p []byte) uint32 { return crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli)) }
	for i := range n {
		e := b[64+40*i:]
		off, l := binary.LittleEndian.Uint64(e[16:]), binary.LittleEndian.Uint64(e[24:])
		if off <= uint64(len(b)) && l <= uint64(len(b))-off {
			binary.LittleEndian.PutUint32(e[32:], crc(b[off:off+l]))
		}
	}
	binary.LittleEndian.PutUint32(b[56:], crc(b[64:64+40*n]))
	binary.LittleEndian.PutUint32(b[60:], crc(b[:60]))
	return b
}
