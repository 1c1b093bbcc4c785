// Package feedindex keeps a local index of the Synthient feeds whose rows
// name addresses, so that checking an address against them costs no
// request and no credit: the proxies and ja4t feeds (an address a row)
// and the anonymizers feed (a range a row, range_start to range_end, IPv4
// or IPv6, ranges that may overlap).
//
//	ix, err := feedindex.New(feedindex.WithMaxAge(24 * time.Hour))
//	...
//	f, err := exports.Open("proxies.parquet")
//	...
//	added, err := ix.AddFile(synthient.FeedProxies, "2026-06-10/13", f)
//	...
//	hits := ix.Lookup(nil, netip.MustParseAddr("203.0.113.7"))
//
// # What a lookup answers
//
// Index.Lookup appends a Hit for each feed that holds the address, in the
// order of Feeds: the provider, type, country code, ASN and last-seen
// time of the latest row that holds it (of rows seen at the same time,
// the one added last: in a file, the later row). A row last seen longer
// ago than the maximum age (WithMaxAge) is left out, at once, and is
// dropped from the tables by the next addition. An IPv4-mapped IPv6
// address is its IPv4 address, in rows and in lookups.
//
// # Adding rows, and keeping them fresh
//
// Index.AddFile adds an export file read with package exports;
// DetectFeed tells a file's feed by its columns. A Follower keeps an index
// fresh with the feeds' streams and hourly exports, closing with exports
// the gaps a stream leaves when it ends (see Follower).
//
// # Concurrency
//
// A lookup reads an immutable snapshot behind an atomic pointer: it takes
// no lock, allocates nothing (given room in dst) and never waits, from any
// number of goroutines, also while rows are added. An addition builds the
// next snapshot beside the current one, then publishes it; additions
// (AddFile, a Follower) are serialized among themselves.
//
// # Layout
//
// Each feed has a table per address family: IPv4 keys sorted in buckets of
// their top 16 to 24 bits (a bucket table of about one offset per 8
// keys) with each key's low 16 bits, IPv6 keys as sorted pairs of
// uint64, and an entry per key of 8 bytes: the index of the row's
// (provider, type, country, ASN) tuple in a dictionary, and the last-seen
// time in Unix seconds. The anonymizers' ranges are split into intervals,
// each holding the entry of the latest range that covers it. An IPv4
// address takes about 10.5 bytes of its table, and a share of the
// dictionary; docs/performance.md has the measurements beside a map and
// github.com/gaissmai/bart.
//
// # Files
//
// Index.Save writes the index in a versioned, checksummed file, and Open
// maps one so that the processes of a host share its pages; what a file
// holds is checked before it is used, and a file that fails a check is a
// *FormatError (see Open).
package feedindex
