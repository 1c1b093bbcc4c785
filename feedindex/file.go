package feedindex

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The index file (format version 1), all integers little-endian:
//
//	header     64 bytes: magic "SYNFIDX\n", version (u32), section count
//	           (u32), max age in seconds (u64), saved at (Unix seconds,
//	           i64), 24 reserved zero bytes, CRC-32C of the section table
//	           (u32), CRC-32C of the 60 bytes before it (u32)
//	sections   40 bytes each: kind (u32), slot (u32), count (u64), offset
//	           (u64), length (u64), CRC-32C of the section's bytes (u32),
//	           aux (u32: the bucket bits of a keys4 index)
//	data       each section at its offset, aligned to 8 bytes, in the
//	           order of the table, without overlaps
//
// The sections: the dictionary's strings (their bytes, and each string's
// end offset as a u32), its tuples (four u32 each), the meta (JSON), and
// for each feed's table the keys4 index (u32), low key bits (u16) and
// entries (two u32 each) of IPv4, and the keys (two u64 each) and entries
// of IPv6.

const (
	magic      = "SYNFIDX\n"
	version    = 1
	headerSize = 64
	secSize    = 40
	// maxSections bounds the section table: 4 of the dictionary and
	// meta, 5 a feed.
	maxSections = 4 + 5*numSlots
	// maxMeta bounds the meta section.
	maxMeta = 1 << 20
)

// The kinds of sections.
const (
	secStrings = 1 + iota
	secStringEnds
	secTuples
	secMeta
	secIdx4
	secLo4
	secVals4
	secKeys6
	secVals6
)

// elemSize is the size of an element of each kind of section.
var elemSize = map[uint32]uint64{secStrings: 1, secStringEnds: 4, secTuples: 16, secMeta: 1,
	secIdx4: 4, secLo4: 2, secVals4: 8, secKeys6: 16, secVals6: 8}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// section is an entry of the section table.
type section struct {
	kind, slot uint32
	count      uint64
	off, len   uint64
	crc        uint32
	aux        uint32
	data       []byte // when writing
}

// Save writes the index to the file at path, replacing it whole: the
// bytes go to a new temporary file in path's directory, which is synced
// and then renamed over path, so that path holds the old index or the
// new one, never a part, and a process that mapped the old file
// (Open) goes on reading it unharmed. It fails with ErrClosed after Close.
func (ix *Index) Save(path string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()           // the error that matters is err
			_ = os.Remove(tmp.Name()) // a leftover temporary file is all that is lost
		}
	}()
	if _, err = ix.WriteTo(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteTo writes the index in its file format to w (see Save) and
// returns the bytes written. The delta a follower keeps is written
// merged into the rest; the rows past the maximum age are left out. It
// fails with ErrClosed after Close.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	s := ix.cur.Load()
	if s == nil {
		return 0, ErrClosed
	}
	secs, err := sections(s, ix.cutoff())
	if err != nil {
		return 0, err
	}
	head := header(secs, ix.maxAge, time.Unix(ix.now(), 0))
	bw := bufio.NewWriterSize(w, 1<<20)
	n, err := bw.Write(head)
	written := int64(n)
	for _, sec := range secs {
		if err != nil {
			break
		}
		if pad := int64(sec.off) - written; pad > 0 { //nolint:gosec // offsets are file positions
			n, err = bw.Write(make([]byte, pad))
			written += int64(n)
		}
		if err == nil {
			n, err = bw.Write(sec.data)
			written += int64(n)
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	return written, err
}

// sections returns the sections of s, its deltas merged into its base
// tables, without the rows seen before cutoff, laid out after the
// header and the section table.
func sections(s *snapshot, cutoff uint32) ([]section, error) {
	var blob []byte
	ends := make([]uint32, len(s.dict.strs))
	for i, str := range s.dict.strs {
		blob = append(blob, str...)
		ends[i] = uint32(len(blob)) //nolint:gosec // strings are short and few
	}
	tuples := make([]uint32, 0, 4*len(s.dict.tuples))
	for _, t := range s.dict.tuples {
		tuples = append(tuples, t.provider, t.typ, t.country, t.asn)
	}
	m, err := json.Marshal(s.meta)
	if err != nil {
		return nil, err
	}
	secs := []section{
		{kind: secStrings, data: blob}, {kind: secStringEnds, data: bytesOf(ends)},
		{kind: secTuples, data: bytesOf(tuples)}, {kind: secMeta, data: m},
	}
	for slot := range numSlots {
		t := &s.base[slot]
		if s.delta[slot].size() > 0 || cutoff > 0 {
			folded := merge(slot, t, cutoff, tableBatch(slot, &s.delta[slot]))
			t = &folded
		}
		if t.k4.len() > 0 {
			secs = append(secs,
				section{kind: secIdx4, slot: uint32(slot), aux: uint32(t.k4.bits), data: bytesOf(t.k4.idx)},
				section{kind: secLo4, slot: uint32(slot), data: bytesOf(t.k4.lo)},
				section{kind: secVals4, slot: uint32(slot), data: bytesOf(t.v4)})
		}
		if t.k6.len() > 0 {
			secs = append(secs,
				section{kind: secKeys6, slot: uint32(slot), data: bytesOf([]uint64(t.k6))},
				section{kind: secVals6, slot: uint32(slot), data: bytesOf(t.v6)})
		}
	}
	off := uint64(headerSize + secSize*len(secs))
	for i := range secs {
		sec := &secs[i]
		off = (off + 7) &^ 7
		sec.off, sec.len = off, uint64(len(sec.data))
		sec.count = sec.len / elemSize[sec.kind]
		sec.crc = crc32.Checksum(sec.data, castagnoli)
		off += sec.len
	}
	return secs, nil
}

// header returns the header and section table of a file of secs.
func header(secs []section, maxAge time.Duration, saved time.Time) []byte {
	b := make([]byte, headerSize, headerSize+secSize*len(secs))
	copy(b, magic)
	binary.LittleEndian.PutUint32(b[8:], version)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(secs)))          //nolint:gosec // at most maxSections
	binary.LittleEndian.PutUint64(b[16:], uint64(maxAge/time.Second)) //nolint:gosec // not negative
	binary.LittleEndian.PutUint64(b[24:], uint64(saved.Unix()))       //nolint:gosec // the bits of the time
	for _, s := range secs {
		var e [secSize]byte
		binary.LittleEndian.PutUint32(e[0:], s.kind)
		binary.LittleEndian.PutUint32(e[4:], s.slot)
		binary.LittleEndian.PutUint64(e[8:], s.count)
		binary.LittleEndian.PutUint64(e[16:], s.off)
		binary.LittleEndian.PutUint64(e[24:], s.len)
		binary.LittleEndian.PutUint32(e[32:], s.crc)
		binary.LittleEndian.PutUint32(e[36:], s.aux)
		b = append(b, e[:]...)
	}
	binary.LittleEndian.PutUint32(b[56:], crc32.Checksum(b[headerSize:], castagnoli))
	binary.LittleEndian.PutUint32(b[60:], crc32.Checksum(b[:60], castagnoli))
	return b
}

// Open opens the index file at path (as Save writes it), mapping it into
// memory where the system allows (Linux, macOS and the other Unix
// systems; elsewhere it is read into memory): the processes of a host
// that open one file share its pages, and opening copies only the
// dictionary. Every part of the file is checked before Open returns, in
// time and memory proportional to the file's size: its checksums, and
// that its tables are what Save writes (sorted keys, bounds that hold,
// entries that name the dictionary's tuples). A file that fails a check
// is a *FormatError; one that cannot be opened the *fs.PathError of
// os.Open; an invalid Option an error of its own.
//
// The maximum age is WithMaxAge's when given, else the one the file was
// saved with. The file must not be written while it is open: Save
// replaces a file by renaming a new one over it, which leaves an open
// one intact; a file truncated in place while mapped ends the process
// with SIGBUS, as for any mapped file. Close the index to unmap it.
func Open(path string, opts ...Option) (*Index, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	data, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	ix, err := load(data, path, s, opts)
	if err != nil {
		unmap(data)
		return nil, err
	}
	m := &mapping{data: data}
	ix.cur.Load().file = m
	attachUnmap(m)
	return ix, nil
}

// Load returns the index held in data, as Save writes it, checked as
// Open checks a file (a *FormatError when it fails). The index reads
// data in place: data must not change while the index is in use.
func Load(data []byte, opts ...Option) (*Index, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return load(data, "", s, opts)
}

func load(data []byte, name string, s settings, opts []Option) (*Index, error) {
	snap, maxAge, err := decode(data)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Name = name
		}
		return nil, err
	}
	if !hasMaxAge(opts) {
		s.maxAge = maxAge
	}
	ix := newIndex(s, name)
	ix.cur.Store(snap)
	return ix, nil
}

// hasMaxAge reports whether opts set the maximum age.
func hasMaxAge(opts []Option) bool {
	var probe settings
	probe.maxAge = -1
	for _, o := range opts {
		_ = o(&probe) // the options were checked before
	}
	return probe.maxAge != -1
}

// decode checks data and returns its snapshot, reading its tables in
// place, and the maximum age it was saved with.
func decode(data []byte) (*snapshot, time.Duration, error) {
	secs, maxAge, err := readHeader(data)
	if err != nil {
		return nil, 0, err
	}
	byKind := make(map[[2]uint32]section, len(secs))
	for _, sec := range secs {
		byKind[[2]uint32{sec.kind, sec.slot}] = sec
	}
	part := func(kind uint32, slot int) []byte {
		sec, ok := byKind[[2]uint32{kind, uint32(slot)}] //nolint:gosec // a slot
		if !ok {
			return nil
		}
		return data[sec.off : sec.off+sec.len]
	}
	s := &snapshot{}
	if s.dict, err = readDict(part(secStrings, 0), part(secStringEnds, 0), part(secTuples, 0)); err != nil {
		return nil, 0, err
	}
	if s.meta, err = readMeta(part(secMeta, 0)); err != nil {
		return nil, 0, err
	}
	for slot := range numSlots {
		idx := byKind[[2]uint32{secIdx4, uint32(slot)}]
		t, err := readTable(slot, idx.aux, part(secIdx4, slot), part(secLo4, slot), part(secVals4, slot),
			part(secKeys6, slot), part(secVals6, slot), len(s.dict.tuples))
		if err != nil {
			return nil, 0, formatError("", int64(idx.off), fmt.Errorf("the table of %s: %w", Feeds[slot], err)) //nolint:gosec // a file offset
		}
		s.base[slot] = t
	}
	return s, maxAge, nil
}

// readHeader checks the header, the section table and every section's
// bounds and checksum, and returns the sections and the maximum age.
func readHeader(data []byte) ([]section, time.Duration, error) {
	if len(data) < headerSize || string(data[:8]) != magic {
		return nil, 0, formatError("", 0, ErrNotIndex)
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != version {
		return nil, 0, formatError("", 8, fmt.Errorf("%w: version %d, this package reads version %d", ErrVersion, v, version))
	}
	if crc32.Checksum(data[:60], castagnoli) != binary.LittleEndian.Uint32(data[60:]) {
		return nil, 0, formatError("", 0, fmt.Errorf("%w: the header", ErrChecksum))
	}
	n := binary.LittleEndian.Uint32(data[12:])
	if n > maxSections || uint64(len(data)) < headerSize+secSize*uint64(n) {
		return nil, 0, formatError("", 12, fmt.Errorf("a table of %d sections, in a file of %d bytes", n, len(data)))
	}
	table := data[headerSize : headerSize+secSize*int(n)]
	if crc32.Checksum(table, castagnoli) != binary.LittleEndian.Uint32(data[56:]) {
		return nil, 0, formatError("", headerSize, fmt.Errorf("%w: the section table", ErrChecksum))
	}
	maxAge := binary.LittleEndian.Uint64(data[16:])
	if maxAge > uint64(1<<62/time.Second) {
		return nil, 0, formatError("", 16, fmt.Errorf("a maximum age of %d seconds", maxAge))
	}
	secs := make([]section, n)
	end := uint64(headerSize) + secSize*uint64(n)
	seen := make(map[[2]uint32]bool, n)
	for i := range secs {
		e := table[secSize*i:]
		s := section{kind: binary.LittleEndian.Uint32(e[0:]), slot: binary.LittleEndian.Uint32(e[4:]),
			count: binary.LittleEndian.Uint64(e[8:]), off: binary.LittleEndian.Uint64(e[16:]), len: binary.LittleEndian.Uint64(e[24:]),
			crc: binary.LittleEndian.Uint32(e[32:]), aux: binary.LittleEndian.Uint32(e[36:])}
		at := int64(headerSize + secSize*i)
		if err := checkSection(s, end, uint64(len(data)), seen); err != nil {
			return nil, 0, formatError("", at, err)
		}
		if crc32.Checksum(data[s.off:s.off+s.len], castagnoli) != s.crc {
			return nil, 0, formatError("", int64(s.off), fmt.Errorf("%w: section %d (kind %d)", ErrChecksum, i, s.kind)) //nolint:gosec // within the file
		}
		end = s.off + s.len
		secs[i] = s
	}
	return secs, time.Duration(maxAge) * time.Second, nil
}

// checkSection checks a section's kind, slot, bounds and size: it starts
// at or after end (the end of the one before it), aligned, and ends
// within size bytes; seen holds the kinds and slots before it.
func checkSection(s section, end, size uint64, seen map[[2]uint32]bool) error {
	es, ok := elemSize[s.kind]
	switch {
	case !ok:
		return fmt.Errorf("a section of unknown kind %d", s.kind)
	case s.slot >= numSlots || s.kind <= secMeta && s.slot != 0:
		return fmt.Errorf("a section of kind %d for slot %d", s.kind, s.slot)
	case seen[[2]uint32{s.kind, s.slot}]:
		return fmt.Errorf("a second section of kind %d for slot %d", s.kind, s.slot)
	case s.off < end || s.off%8 != 0 || s.off > size || s.len > size-s.off:
		return fmt.Errorf("a section at byte %d of %d bytes, in a file of %d bytes", s.off, s.len, size)
	case s.count > s.len || s.count*es != s.len:
		return fmt.Errorf("a section of %d bytes holding %d elements of %d bytes", s.len, s.count, es)
	}
	seen[[2]uint32{s.kind, s.slot}] = true
	return nil
}

// readDict reads and checks the dictionary: its strings are copied, so
// that a Hit never points into a file.
func readDict(blob, endsData, tupleData []byte) (view, error) {
	ends := asUint32s(endsData)
	if len(ends) > maxStrings {
		return view{}, formatError("", -1, fmt.Errorf("%d strings, more than %d", len(ends), maxStrings))
	}
	var v view
	v.strs = make([]string, len(ends))
	start := uint32(0)
	for i, end := range ends {
		if end < start || int(end) > len(blob) || end-start > maxString {
			return view{}, formatError("", -1, fmt.Errorf("string %d ends at byte %d of %d, after %d", i, end, len(blob), start))
		}
		v.strs[i] = string(blob[start:end])
		start = end
	}
	if int(start) != len(blob) {
		return view{}, formatError("", -1, fmt.Errorf("the strings take %d of their %d bytes", start, len(blob)))
	}
	tu := asUint32s(tupleData)
	if len(tu)/4 > maxTuples {
		return view{}, formatError("", -1, fmt.Errorf("%d tuples, more than %d", len(tu)/4, maxTuples))
	}
	v.tuples = make([]tuple, len(tu)/4)
	for i := range v.tuples {
		t := tuple{tu[4*i], tu[4*i+1], tu[4*i+2], tu[4*i+3]}
		if n := uint32(len(v.strs)); t.provider >= n || t.typ >= n || t.country >= n { //nolint:gosec // at most maxStrings
			return view{}, formatError("", -1, fmt.Errorf("tuple %d names a string past the %d there are", i, n))
		}
		v.tuples[i] = t
	}
	return v, nil
}

// readMeta reads the meta section.
func readMeta(data []byte) (meta, error) {
	var m meta
	if len(data) == 0 {
		return m, nil
	}
	if len(data) > maxMeta {
		return m, formatError("", -1, fmt.Errorf("a meta section of %d bytes, more than %d", len(data), maxMeta))
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, formatError("", -1, fmt.Errorf("the meta section: %w", err))
	}
	for _, f := range m.Feeds {
		if len(f.Exports) > maxExportIDs || slices.ContainsFunc(f.Exports, func(id string) bool { return len(id) > 64 }) {
			return m, formatError("", -1, errors.New("the meta section lists too many exports, or too long ids"))
		}
	}
	return m, nil
}
