package feedindex

import (
	"slices"
	"time"

	"github.com/synthient-go/synthient"
)

// Stats describes an index.
type Stats struct {
	// Feeds has one FeedStats a feed, in the order of Feeds.
	Feeds []FeedStats
	// Strings and Tuples are the sizes of the dictionary: its distinct
	// strings (providers, types, countries) and its distinct (provider,
	// type, country, ASN) tuples.
	Strings, Tuples int
	// Bytes is the size of the tables and the dictionary's tuples (not
	// its strings, nor Go's slice headers).
	Bytes int64
	// Mapped reports an index opened from a file whose tables are read in
	// place, from the mapping.
	Mapped bool
}

// FeedStats describes what an index holds of one feed.
type FeedStats struct {
	Feed synthient.Feed
	// IPv4 and IPv6 count the feed's entries: for proxies and ja4t the
	// addresses, for anonymizers the intervals of addresses that ranges
	// cover (overlapping ranges split into intervals, each of the latest
	// range covering it; adjacent ones of the same row are one). Entries
	// past the maximum age are counted until the next addition drops
	// them.
	IPv4, IPv6 int
	// Pending counts the entries a follower added from the feed's stream
	// and not yet merged into the rest (a lookup reads both).
	Pending int
	// Updated is the latest last-seen time of the rows added from the
	// feed; the zero Time if none was.
	Updated time.Time
	// Exports are the ids of the feed's exports added (at most 64, the
	// newest last).
	Exports []string
}

// Stats returns what the index holds; the zero Stats after Close.
func (ix *Index) Stats() Stats {
	s := ix.cur.Load()
	if s == nil {
		return Stats{}
	}
	st := Stats{Strings: len(s.dict.strs), Tuples: len(s.dict.tuples), Bytes: 16 * int64(len(s.dict.tuples)), Mapped: s.file != nil}
	for i, feed := range Feeds {
		fs := FeedStats{Feed: feed, Exports: slices.Clone(s.meta.Feeds[i].Exports)}
		if u := s.meta.Feeds[i].Updated; u > 0 {
			fs.Updated = time.Unix(u, 0).UTC()
		}
		for _, t := range []*table{&s.base[i], &s.delta[i]} {
			v4, v6 := t.k4.len(), t.k6.len()
			if i == slotAnonymizers {
				v4, v6 = covered(t.v4), covered(t.v6)
			}
			if t == &s.delta[i] {
				fs.Pending = v4 + v6
			} else {
				fs.IPv4, fs.IPv6 = v4, v6
			}
			st.Bytes += int64(4*len(t.k4.idx) + 2*len(t.k4.lo) + 8*len(t.v4) + 8*len(t.k6) + 8*len(t.v6))
		}
		st.Feeds = append(st.Feeds, fs)
	}
	return st
}

// covered counts the entries of a range table that a range covers.
func covered(es []entry) int {
	n := 0
	for _, e := range es {
		if e.attr != noAttr {
			n++
		}
	}
	return n
}
