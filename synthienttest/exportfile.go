package synthienttest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

// Export files are real Parquet files, written with parquet-go from the
// row types of package exports: dictionary-encoded columns of
// few distinct values, snappy pages (the default of pyarrow, DuckDB and
// Spark), row groups of at most groupRows rows. A file's rows
// are events of the feed's stream generator, re-dated evenly over the
// snapshot's hour or day: the generator is slow for some feeds (an address
// is drawn until its lookup has a category of the feed), so each feed's
// events are made once per process, poolSize of them at most, and a file
// takes them in turn from an offset of its own, over again when it has
// more rows.
const (
	poolSize  = 8192
	groupRows = 122_880 // DuckDB's default
	// groupBytes bounds a row group's compressed size, and so the memory
	// of a file being written: groupRows rows of the larger rows
	// (honeypot_https) would be tens of MiB.
	groupBytes = 8 << 20
)

// exportFile names one export file's bytes: its feed, its id and the
// size asked for (WithExportSize).
type exportFile struct {
	feed synthient.Feed
	id   string
	size int64
}

// fileInfo is what the meta says of a file.
type fileInfo struct {
	size, rows int64
	checksum   string // lowercase hex SHA-256
}

// fileInfos caches the fileInfo of each exportFile: a file depends on
// nothing else, so servers share it.
var fileInfos sync.Map // exportFile -> *fileEntry

type fileEntry struct {
	once sync.Once
	info fileInfo
}

// describe returns the size, row count and checksum of f, writing it once
// per process to find them.
func describe(f exportFile) fileInfo {
	v, _ := fileInfos.LoadOrStore(f, &fileEntry{})
	e := v.(*fileEntry)
	e.once.Do(func() {
		h := sha256.New()
		cw := &countingWriter{w: h}
		rows := rowCount(f)
		if err := writeExport(cw, f, rows); err != nil {
			panic("synthienttest: writing an export to a hash: " + err.Error()) // cannot fail
		}
		e.info = fileInfo{size: cw.n, rows: rows, checksum: hex.EncodeToString(h.Sum(nil))}
	})
	return e.info
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// rowBytes is about how many bytes a row of each feed takes in a file:
// one of its first poolSize rows, and one of the rows after them, which
// repeat the pool's events and compress better. fileOverhead is about the
// bytes of a file's footer. Measured on files of 64 KiB to 16 MiB; a file
// asked to be 64 KiB or more comes out within about 25% of it.
var rowBytes = map[synthient.Feed]struct{ first, more int64 }{
	synthient.FeedProxies: {19, 10}, synthient.FeedAnonymizers: {26, 14}, synthient.FeedTorrents: {98, 90},
	synthient.FeedHoneypotHTTP: {30, 24}, synthient.FeedHoneypotHTTPS: {226, 205}, synthient.FeedHoneypotDNS: {13, 7},
	synthient.FeedHoneypotADB: {25, 26}, synthient.FeedJA4T: {20, 10},
}

const fileOverhead = 2 << 10

// rowCount is the number of rows of f: as many as make about f.size
// bytes, at least one.
func rowCount(f exportFile) int64 {
	b := rowBytes[f.feed]
	n := f.size - fileOverhead
	if n <= poolSize*b.first {
		return max(1, n/b.first)
	}
	return poolSize + (n-poolSize*b.first)/b.more
}

// writeExport writes the file f, of rows rows, to w, as it goes: a row
// group at a time.
func writeExport(w io.Writer, f exportFile, rows int64) error {
	src, ok := rowSources[f.feed]
	if !ok {
		return fmt.Errorf("no exports for feed %q", f.feed)
	}
	start, span := snapshotSpan(f.id)
	return src.write(w, fileRows{file: f, rows: rows, start: start, span: span})
}

// snapshotSpan returns the start and length of the time an export id
// ("2026-06-09" or "2026-06-10/13") covers.
func snapshotSpan(id string) (time.Time, time.Duration) {
	date, hour, hourly := strings.Cut(id, "/")
	day, _ := time.Parse(time.DateOnly, date) // ids are checked before
	if !hourly {
		return day, 24 * time.Hour
	}
	h, _ := strconv.Atoi(hour)
	return day.Add(time.Duration(h) * time.Hour), time.Hour
}

// fileRows is what the rows of one file are made of.
type fileRows struct {
	file  exportFile
	rows  int64
	start time.Time
	span  time.Duration
}

// at is the time of row i: the rows spread evenly over the span.
func (fr fileRows) at(i int64) eventTime {
	ms := fr.start.UnixMilli() + i*fr.span.Milliseconds()/fr.rows
	return eventTime{now: time.UnixMilli(ms).UTC(), ms: ms}
}

// offset is the pool event the file's first row takes: chosen from the
// file's name so that different files start at different events, and so
// that a file shorter than the pool needs no event past its last row.
func (fr fileRows) offset() int64 {
	h := fnv.New64a()
	h.Write([]byte(string(fr.file.feed) + "/" + fr.file.id))
	return int64(h.Sum64() % uint64(poolSize-min(fr.rows, poolSize)+1)) //nolint:gosec // below poolSize+1
}

// rowSource makes the rows of one feed's export files, of row type T.
type rowSource[T any] struct {
	feed synthient.Feed
	row  func(ev any) T          // the row of a stream event
	date func(r *T, t eventTime) // sets a row's time
	mu   sync.Mutex
	gen  *eventGen
	pool []T
}

// events returns the first n events of the feed's pool, made as far as
// needed, once per process.
func (s *rowSource[T]) events(n int) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == nil {
		s.gen = &eventGen{feed: s.feed, r: rng("export", string(s.feed)), form: DetailsObject}
	}
	gen := feedEvents[s.feed]
	for len(s.pool) < n {
		// Rows are dated when they are written: the time here is unused.
		s.pool = append(s.pool, s.row(gen(s.gen, eventTime{})))
	}
	return s.pool[:n:n]
}

// rows returns the rows of the file of fr, in order.
func (s *rowSource[T]) rows(fr fileRows) iter.Seq[T] {
	return func(yield func(T) bool) {
		off := fr.offset()
		pool := s.events(int(min(off+fr.rows, poolSize)))
		for i := range fr.rows {
			r := pool[(off+i)%int64(len(pool))]
			s.date(&r, fr.at(i))
			if !yield(r) {
				return
			}
		}
	}
}

// write writes the Parquet file of fr to w.
func (s *rowSource[T]) write(w io.Writer, fr fileRows) error {
	pw := parquet.NewGenericWriter[T](w,
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(min(groupRows, groupBytes/rowBytes[s.feed].more)),
		&parquet.WriterConfig{CreatedBy: "synthienttest (github.com/synthient-go/synthient)"},
	)
	batch := make([]T, 0, 1024)
	for r := range s.rows(fr) {
		batch = append(batch, r)
		if len(batch) == cap(batch) {
			if _, err := pw.Write(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if _, err := pw.Write(batch); err != nil {
		return err
	}
	return pw.Close()
}

// fileWriter writes a feed's export files.
type fileWriter interface {
	write(w io.Writer, fr fileRows) error
}

// rowSources are the fileWriter of each feed: its stream's events, as
// the export's row type.
var rowSources = map[synthient.Feed]fileWriter{
	synthient.FeedProxies: &rowSource[exports.ProxyRow]{feed: synthient.FeedProxies,
		row: func(ev any) exports.ProxyRow {
			e := ev.(synthient.ProxyEvent)
			return exports.ProxyRow{IP: e.IP, Provider: e.Provider, Type: e.Type, CountryCode: e.CountryCode, ASN: int32(e.ASN)}
		},
		date: func(r *exports.ProxyRow, t eventTime) { r.Timestamp = t.now.Unix() }},
	synthient.FeedAnonymizers: &rowSource[exports.AnonymizerRow]{feed: synthient.FeedAnonymizers,
		row: func(ev any) exports.AnonymizerRow {
			e := ev.(synthient.AnonymizerEvent)
			return exports.AnonymizerRow{RangeStart: e.RangeStart, RangeEnd: e.RangeEnd, Provider: e.Provider, Type: e.Type,
				CountryCode: e.CountryCode, ASN: int32(e.ASN)}
		},
		date: func(r *exports.AnonymizerRow, t eventTime) { r.Timestamp = t.now.Unix() }},
	synthient.FeedTorrents: &rowSource[exports.TorrentRow]{feed: synthient.FeedTorrents,
		row: func(ev any) exports.TorrentRow {
			e := ev.(synthient.TorrentEvent)
			return exports.TorrentRow{InfoHash: e.InfoHash, Name: e.Name, MagnetURI: e.MagnetURI, TotalSize: e.TotalSize,
				PieceLength: int32(e.PieceLength), FileCount: int32(e.FileCount)}
		},
		date: func(r *exports.TorrentRow, t eventTime) { r.Timestamp = t.now.Unix() }},
	synthient.FeedHoneypotHTTP: &rowSource[exports.HoneypotHTTPRow]{feed: synthient.FeedHoneypotHTTP,
		row: func(ev any) exports.HoneypotHTTPRow {
			e := ev.(synthient.HoneypotHTTPEvent)
			return exports.HoneypotHTTPRow{TunnelID: e.TunnelID, Domain: e.Domain, Port: int32(e.Port),
				Method: e.Details.Method, URI: e.Details.URI, Version: e.Details.Version, Raw: e.Raw}
		},
		date: func(r *exports.HoneypotHTTPRow, t eventTime) { r.Timestamp = t.ms }},
	synthient.FeedHoneypotHTTPS: &rowSource[exports.HoneypotHTTPSRow]{feed: synthient.FeedHoneypotHTTPS,
		row: func(ev any) exports.HoneypotHTTPSRow {
			e := ev.(httpsEvent)
			var raw []byte // nil, a null, when the handshake was not captured
			if e.Raw != "" {
				raw, _ = base64.StdEncoding.DecodeString(e.Raw) // the generator's own base64
			}
			return exports.HoneypotHTTPSRow{TunnelID: e.TunnelID, Domain: e.Domain, Port: int32(e.Port), Details: string(e.Details), Raw: raw}
		},
		date: func(r *exports.HoneypotHTTPSRow, t eventTime) { r.Timestamp = t.ms }},
	synthient.FeedHoneypotDNS: &rowSource[exports.HoneypotDNSRow]{feed: synthient.FeedHoneypotDNS,
		row: func(ev any) exports.HoneypotDNSRow {
			e := ev.(synthient.HoneypotDNSEvent)
			return exports.HoneypotDNSRow{TunnelID: e.TunnelID, Domain: e.Domain, Port: int32(e.Port)}
		},
		date: func(r *exports.HoneypotDNSRow, t eventTime) { r.Timestamp = t.ms }},
	synthient.FeedHoneypotADB: &rowSource[exports.HoneypotADBRow]{feed: synthient.FeedHoneypotADB,
		row: func(ev any) exports.HoneypotADBRow {
			e := ev.(synthient.HoneypotADBEvent)
			return exports.HoneypotADBRow{Session: e.Session, SequentialID: int32(e.SequentialID), Command: e.Command, Hash: e.Hash}
		},
		date: func(*exports.HoneypotADBRow, eventTime) {}}, // the feed has no time
	synthient.FeedJA4T: &rowSource[exports.JA4TRow]{feed: synthient.FeedJA4T,
		row: func(ev any) exports.JA4TRow {
			e := ev.(synthient.JA4TEvent)
			return exports.JA4TRow{IP: e.IP, JA4T: e.JA4T, Provider: e.Provider, Type: e.Type, CountryCode: e.CountryCode, ASN: int32(e.ASN)}
		},
		date: func(r *exports.JA4TRow, t eventTime) { r.Timestamp = t.now.Unix() }},
}
