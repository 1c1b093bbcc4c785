package feedindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient"
)

// The feeds an index holds, in the order of their slots.
const (
	slotProxies = iota
	slotJA4T
	slotAnonymizers
	numSlots
)

// Feeds are the feeds an index holds: those whose rows name addresses.
// Proxies and ja4t rows name an address each, anonymizers rows a range.
var Feeds = []synthient.Feed{synthient.FeedProxies, synthient.FeedJA4T, synthient.FeedAnonymizers}

// slotOf returns the slot of feed; false for a feed an index does not
// hold.
func slotOf(feed synthient.Feed) (int, bool) {
	for i, f := range Feeds {
		if f == feed {
			return i, true
		}
	}
	return 0, false
}

// Hit is what an index holds of an address in one feed: what the latest
// row holding it says (of rows seen at the same time, the one added
// last). For the anonymizers feed a row holds the addresses of its range.
type Hit struct {
	Feed        synthient.Feed
	Provider    string
	Type        string
	CountryCode string
	ASN         int
	// LastSeen is the row's timestamp, in UTC.
	LastSeen time.Time
}

// snapshot is what a lookup reads: it never changes once published. The
// delta tables hold what the streams added since the base tables were
// made; an address's entry is the later of the two.
type snapshot struct {
	dict  view
	base  [numSlots]table
	delta [numSlots]table
	meta  meta
	// file is the mapped file the tables may point into, or nil: every
	// snapshot made from one holds it, and it is unmapped once none is
	// reachable.
	file *mapping
}

// mapping is a mapped file.
type mapping struct{ data []byte }

// meta is what an index records of where its rows came from.
type meta struct {
	Feeds [numSlots]feedMeta `json:"feeds"`
}

// feedMeta is what an index records of one feed: the exports added
// (their ids, newest last, at most maxExportIDs) and the time of the
// latest row or event added.
type feedMeta struct {
	Exports []string `json:"exports,omitempty"`
	Updated int64    `json:"updated,omitempty"`
}

// maxExportIDs is how many export ids a feed's meta keeps.
const maxExportIDs = 64

// Index is an index of the feeds' addresses: for an address, which feeds
// hold it, with the provider, type, country, ASN and last-seen time of
// the latest row that holds it. Rows older than the maximum age
// (WithMaxAge) are left out.
//
// Lookup may be called from any number of goroutines, also while rows
// are added, a follower runs or the index is saved: a lookup reads an
// immutable snapshot, and an addition builds the next snapshot beside it
// and then publishes it, so that a lookup never waits. Additions are
// serialized among themselves.
//
// The zero Index is not usable: make one with New or Open.
type Index struct {
	cur    atomic.Pointer[snapshot]
	maxAge time.Duration
	clock  func() time.Time
	// start is when the index was made, with its monotonic reading: the
	// default clock is start plus the monotonic time since, which costs
	// one clock read where time.Now costs two.
	start  time.Time
	name   string // the path of Open, for errors
	closed atomic.Bool

	mu   sync.Mutex // held by additions
	dict *dict      // the writer's dictionary; nil until the first addition
}

// An Option configures New or Open.
type Option func(*settings) error

type settings struct {
	maxAge time.Duration
	clock  func() time.Time
}

// WithMaxAge sets the maximum age of a row: a lookup leaves out what was
// last seen more than d ago, and an addition drops it. 0, the default,
// keeps every row; a negative d is an error of New and Open.
func WithMaxAge(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return fmt.Errorf("feedindex: WithMaxAge(%v): a negative age", d)
		}
		s.maxAge = d
		return nil
	}
}

// WithClock sets the clock the maximum age is measured on (default: the
// system's). A nil clock is an error of New and Open.
func WithClock(now func() time.Time) Option {
	return func(s *settings) error {
		if now == nil {
			return errors.New("feedindex: WithClock(nil)")
		}
		s.clock = now
		return nil
	}
}

func newSettings(opts []Option) (settings, error) {
	var s settings
	for _, o := range opts {
		if o == nil {
			return s, errors.New("feedindex: a nil Option")
		}
		if err := o(&s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// New returns an empty index. An invalid Option is an error.
func New(opts ...Option) (*Index, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	ix := newIndex(s, "")
	ix.cur.Store(&snapshot{})
	return ix, nil
}

func newIndex(s settings, name string) *Index {
	return &Index{maxAge: s.maxAge, clock: s.clock, start: time.Now(), name: name}
}

// MaxAge returns the maximum age of a row (0: none).
func (ix *Index) MaxAge() time.Duration { return ix.maxAge }

// now returns the time in Unix seconds.
func (ix *Index) now() int64 {
	if ix.clock != nil {
		return ix.clock().Unix()
	}
	return ix.start.Unix() + int64(time.Since(ix.start)/time.Second)
}

// cutoff returns the earliest last-seen time (Unix seconds) of a row
// within the maximum age: 0 when there is no maximum age.
func (ix *Index) cutoff() uint32 {
	if ix.maxAge <= 0 {
		return 0
	}
	c := ix.now() - int64(ix.maxAge/time.Second)
	return uint32(min(max(c, 0), int64(^uint32(0))))
}

// Lookup appends to dst the feeds that hold a, one Hit a feed, in the
// order of Feeds, and returns the extended slice: dst unchanged when no
// feed holds a. An IPv4-mapped IPv6 address is looked up as its IPv4
// address, and a zone is ignored; the zero Addr is in no feed. Lookup
// allocates nothing when dst has room for len(Feeds) more hits, and is
// safe to call from any number of goroutines, also during an addition.
// After Close it finds nothing.
func (ix *Index) Lookup(dst []Hit, a netip.Addr) []Hit {
	s := ix.cur.Load()
	if s == nil || !a.IsValid() {
		return dst
	}
	var es [numSlots]entry
	var found [numSlots]bool
	some := false
	if a = a.Unmap(); a.Is4() {
		b := a.As4()
		k := binary.BigEndian.Uint32(b[:])
		for i := range numSlots {
			es[i], found[i] = s.get4(i, k)
			some = some || found[i]
		}
	} else {
		b := a.As16()
		k := addr6{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
		for i := range numSlots {
			es[i], found[i] = s.get6(i, k)
			some = some || found[i]
		}
	}
	if some {
		cutoff := ix.cutoff()
		for i := range numSlots {
			if found[i] && live(es[i], cutoff) {
				if h, ok := s.hit(i, es[i]); ok {
					dst = append(dst, h)
				}
			}
		}
	}
	runtime.KeepAlive(s) // the tables may point into its mapping
	return dst
}

// get4 returns the entry of the IPv4 address k in the feed of slot i:
// the later of its base and delta entries.
func (s *snapshot) get4(i int, k uint32) (entry, bool) {
	e, ok := s.base[i].lookup4(k, i == slotAnonymizers)
	if s.delta[i].k4.len() == 0 {
		return e, ok
	}
	d, dok := s.delta[i].lookup4(k, i == slotAnonymizers)
	return later(e, ok, d, dok)
}

// get6 is get4 for the IPv6 address k.
func (s *snapshot) get6(i int, k addr6) (entry, bool) {
	e, ok := s.base[i].lookup6(k, i == slotAnonymizers)
	if s.delta[i].k6.len() == 0 {
		return e, ok
	}
	d, dok := s.delta[i].lookup6(k, i == slotAnonymizers)
	return later(e, ok, d, dok)
}

// later returns the later of the entry e of a base table and d of its
// delta table (ok and dok say whether each was found).
func later(e entry, ok bool, d entry, dok bool) (entry, bool) {
	if dok && (!ok || newer(d, e)) {
		return d, true
	}
	return e, ok
}

// hit returns the Hit of e in the feed of slot i; false when e names no
// tuple of the dictionary.
func (s *snapshot) hit(i int, e entry) (Hit, bool) {
	if int(e.attr) >= len(s.dict.tuples) {
		return Hit{}, false
	}
	t := s.dict.tuples[e.attr]
	n := uint32(len(s.dict.strs)) //nolint:gosec // fewer than maxStrings
	if t.provider >= n || t.typ >= n || t.country >= n {
		return Hit{}, false
	}
	return Hit{
		Feed: Feeds[i], Provider: s.dict.strs[t.provider], Type: s.dict.strs[t.typ], CountryCode: s.dict.strs[t.country],
		ASN: int(int32(t.asn)), LastSeen: time.Unix(int64(e.seen), 0).UTC(), //nolint:gosec // the ASN as the row gave it
	}, true
}

// Close releases the index: later lookups find nothing, and later
// additions and saves return an error matching ErrClosed. A file that
// Open mapped is unmapped once no lookup still reads it. Close is safe
// to call more than once; it always returns nil.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.closed.Store(true)
	ix.cur.Store(nil)
	ix.dict = nil
	return nil
}
