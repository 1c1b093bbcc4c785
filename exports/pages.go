package exports

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The pages of a file reach parquet-go through a chunkReader: parquet-go
// opens the file with a footer that calls every column chunk
// uncompressed, and reads each chunk through a chunkReader, which reads
// the real pages, checks what each one claims against its bytes and the
// limit, decompresses it, and hands parquet-go the page uncompressed,
// with a header that says so. parquet-go then decodes the values of pages
// whose sizes and counts are true; no codec of parquet-go runs, and so
// none of its bugs (parquet-go issue 608: LZ4_RAW pages read wrong).

// plainDictionary is the encoding PLAIN_DICTIONARY, which the format
// deprecates and DuckDB's V1 pages and older writers' files use.
//
//lint:ignore SA1019 the files of those writers are read
const plainDictionary = format.PlainDictionary //nolint:staticcheck // as above: those files are read

// virtualChunkSize is the size of every column chunk in the footer that
// parquet-go reads: the chunkReader ends a chunk with io.EOF where its
// pages end, which only it knows once it has read them.
const virtualChunkSize = 1 << 62

// virtualFooter returns the footer parquet-go reads: meta with every
// column chunk uncompressed, of virtualChunkSize bytes, and without page
// indexes or bloom filters (they are not read).
func virtualFooter(meta *format.FileMetaData) ([]byte, error) {
	v := *meta
	v.RowGroups = make([]format.RowGroup, len(meta.RowGroups))
	for i, rg := range meta.RowGroups {
		v.RowGroups[i] = rg
		v.RowGroups[i].Columns = make([]format.ColumnChunk, len(rg.Columns))
		for j, cc := range rg.Columns {
			cc.MetaData.Codec = format.Uncompressed
			cc.MetaData.TotalCompressedSize = virtualChunkSize
			cc.MetaData.BloomFilterOffset, cc.MetaData.BloomFilterLength = 0, 0
			cc.OffsetIndexOffset, cc.OffsetIndexLength = 0, 0
			cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0
			v.RowGroups[i].Columns[j] = cc
		}
	}
	return thrift.Marshal(new(thrift.CompactProtocol), &v)
}

// footerReader is the file parquet-go opens: the file's bytes up to its
// footer, then the virtual footer, its length and the closing magic.
type footerReader struct {
	r      io.ReaderAt
	at     int64 // where the file's footer starts
	footer []byte
}

func (f *footerReader) size() int64 { return f.at + int64(len(f.footer)) + 8 }

func (f *footerReader) ReadAt(p []byte, off int64) (int, error) {
	tail := append(f.footer[:len(f.footer):len(f.footer)], byte(len(f.footer)), byte(len(f.footer)>>8), //nolint:gosec // the footer's length, little-endian: it was read from 4 bytes
		byte(len(f.footer)>>16), byte(len(f.footer)>>24), 'P', 'A', 'R', '1') //nolint:gosec // as above
	n := 0
	if off < f.at {
		k, err := f.r.ReadAt(p[:min(int64(len(p)), f.at-off)], off)
		if n = k; err != nil || n == len(p) {
			return n, err
		}
	}
	i := off + int64(n) - f.at
	if i >= int64(len(tail)) {
		return n, io.EOF
	}
	n += copy(p[n:], tail[i:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// leaf is what a chunkReader needs of a leaf column.
type leaf struct {
	path           string
	kind           parquet.Kind
	length         int // of a FIXED_LEN_BYTE_ARRAY
	maxDef, maxRep int
}

// leaves returns the leaf columns of pf, by their index.
func leaves(pf *parquet.File) []leaf {
	var out []leaf
	var walk func(c *parquet.Column)
	walk = func(c *parquet.Column) {
		if c.Leaf() {
			for len(out) <= c.Index() {
				out = append(out, leaf{})
			}
			out[c.Index()] = leaf{strings.Join(c.Path(), "."), c.Type().Kind(), c.Type().Length(), c.MaxDefinitionLevel(), c.MaxRepetitionLevel()}
			return
		}
		for _, child := range c.Columns() {
			walk(child)
		}
	}
	walk(pf.Root())
	return out
}

// width is the bytes of a value of the column decoded, an offset for a
// byte array.
func (l leaf) width() int64 {
	switch l.kind {
	case parquet.Boolean:
		return 1
	case parquet.Int32, parquet.Float, parquet.ByteArray:
		return 4
	case parquet.Int64, parquet.Double:
		return 8
	case parquet.Int96:
		return 12
	}
	return int64(max(l.length, 1))
}

// chunkReader is the io.ReaderAt through which parquet-go reads a column
// chunk (see the top of this file). Its offsets are the file's, from the
// chunk's first page; it holds one page at a time, and is used by one
// goroutine.
type chunkReader struct {
	r     io.ReaderAt
	limit int64
	col   leaf
	codec format.CompressionCodec
	base  int64 // the file offset of the chunk's first page
	end   int64 // the file offset past its last
	want  int64 // the values its metadata announces

	next  int64 // the file offset of the next page's header
	vnext int64 // where the next page starts in what parquet-go reads
	read  int64 // the values of the pages read
	dict  bool  // a dictionary page was read
	data  bool  // a data page was read

	vstart       int64  // where the current page starts
	header, body []byte // the current page, as parquet-go reads it
	raw, out     []byte // buffers of the page read and decompressed
	plain        []byte // the buffer of a page encoded anew

	err error // the first error, which every later read returns
}

// newChunkReader returns the reader of column c of row group rg, of
// file f, or an error for a chunk that announces what it cannot hold.
func (f *File) newChunkReader(rg *format.RowGroup, c int) (*chunkReader, error) {
	if c < 0 || c >= len(rg.Columns) || c >= len(f.leaves) {
		return nil, fmt.Errorf("row group has no column %d", c)
	}
	cc, col := &rg.Columns[c], f.leaves[c]
	md := &cc.MetaData
	fail := func(format string, args ...any) error {
		return fmt.Errorf("column %q (%s): %s", col.path, codecName(md.Codec), fmt.Sprintf(format, args...))
	}
	base := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		base = md.DictionaryPageOffset
	}
	switch {
	case cc.FilePath != "":
		return nil, fail("its pages are in another file, %q", cc.FilePath)
	case cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0:
		return nil, fail("it is encrypted")
	case !readable(md.Codec):
		return nil, fail("a codec this reader does not read (it reads UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW and BROTLI)")
	case rg.NumRows < 0 || md.NumValues < 0:
		return nil, fail("%d values in a row group of %d rows", md.NumValues, rg.NumRows)
	case col.maxRep == 0 && md.NumValues != rg.NumRows:
		return nil, fail("%d values in a row group of %d rows", md.NumValues, rg.NumRows)
	case base < 4 || md.TotalCompressedSize < 0 || md.TotalCompressedSize > f.dataEnd-base:
		return nil, fail("%d bytes at %d, past the %d bytes before the footer", md.TotalCompressedSize, base, f.dataEnd)
	}
	return &chunkReader{r: f.r, limit: f.maxPage, col: col, codec: md.Codec, base: base, end: base + md.TotalCompressedSize,
		want: md.NumValues, next: base}, nil
}

// fail records err, of the page at the file offset at, as the reader's
// error and returns it.
func (c *chunkReader) fail(at int64, err error) error {
	if c.err == nil {
		c.err = fmt.Errorf("column %q (%s): the page at byte %d: %w", c.col.path, codecName(c.codec), at, err)
	}
	return c.err
}

func (c *chunkReader) ReadAt(p []byte, off int64) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n := 0
	for n < len(p) {
		at := off - c.base + int64(n)
		if at < c.vstart { // parquet-go went back: read the chunk again
			*c = chunkReader{r: c.r, limit: c.limit, col: c.col, codec: c.codec, base: c.base, end: c.end, want: c.want,
				next: c.base, raw: c.raw, out: c.out, plain: c.plain}
		}
		for at >= c.vstart+int64(len(c.header)+len(c.body)) {
			if c.next >= c.end {
				if c.read != c.want {
					return n, c.fail(c.next, fmt.Errorf("the column chunk ends after %d values, its metadata announces %d", c.read, c.want))
				}
				return n, io.EOF
			}
			if err := c.load(); err != nil {
				return n, err
			}
		}
		if i := at - c.vstart; i < int64(len(c.header)) {
			n += copy(p[n:], c.header[i:])
		} else {
			n += copy(p[n:], c.body[i-int64(len(c.header)):])
		}
	}
	return n, nil
}

// load reads the next page, skipping the pages that hold no values (index
// pages), and makes it the current one.
func (c *chunkReader) load() error {
	for c.next < c.end {
		at := c.next
		h, size, err := c.readHeader(at)
		if err != nil {
			return c.fail(at, err)
		}
		bodyAt := at + size
		if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > c.end-bodyAt {
			return c.fail(at, fmt.Errorf("%d bytes, past the end of its column chunk (%d bytes left)", h.CompressedPageSize, c.end-bodyAt))
		}
		c.next = bodyAt + int64(h.CompressedPageSize)
		if h.Type != format.DictionaryPage && h.Type != format.DataPage && h.Type != format.DataPageV2 {
			continue
		}
		body, err := c.page(&h, bodyAt)
		if err != nil {
			return c.fail(at, err)
		}
		if h.DataPageHeader.Valid {
			c.read += int64(h.DataPageHeader.V.NumValues)
		} else if h.DataPageHeaderV2.Valid {
			c.read += int64(h.DataPageHeaderV2.V.NumValues)
		}
		h.UncompressedPageSize, h.CompressedPageSize, h.CRC = int32(len(body)), int32(len(body)), 0 //nolint:gosec // body has the header's int32 UncompressedPageSize bytes
		if h.DataPageHeaderV2.Valid {
			h.DataPageHeaderV2.V.IsCompressed = thrift.New(false)
			h.DataPageHeaderV2.V.Statistics = format.Statistics{}
		}
		h.DataPageHeader.V.Statistics = format.Statistics{}
		header, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		if err != nil {
			return c.fail(at, err)
		}
		c.vstart, c.header, c.body = c.vnext, header, body
		c.vnext += int64(len(header) + len(body))
		return nil
	}
	return nil
}

// readHeader reads the page header at the file offset at, and returns it
// with its length. It reads 4 KiB, then more when the header is longer,
// up to the limit and the chunk's end.
func (c *chunkReader) readHeader(at int64) (format.PageHeader, int64, error) {
	var h format.PageHeader
	most := min(c.end-at, c.limit)
	for window := min(4<<10, most); ; window = min(window*4, most) {
		buf := c.buffer(&c.raw, window)
		if err := readFull(c.r, buf, at); err != nil {
			return h, 0, err
		}
		n, err := thriftSize(buf)
		if errors.Is(err, errShortThrift) && window < most {
			continue
		}
		if err != nil {
			return h, 0, fmt.Errorf("not a page header: %w", err)
		}
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), buf[:n], &h); err != nil {
			return h, 0, fmt.Errorf("not a page header: %w", err)
		}
		return h, int64(n), nil
	}
}

// buffer returns *b resized to n bytes, reusing its array, or one of
// pageBuffers.
func (c *chunkReader) buffer(b *[]byte, n int64) []byte {
	if *b == nil {
		if p, ok := pageBuffers.Get().(*[]byte); ok {
			*b = *p
		}
	}
	if int64(cap(*b)) < n {
		*b = make([]byte, n)
	}
	return (*b)[:n]
}

// release gives the reader's buffers to pageBuffers, for the chunk readers
// after it; the reader is not used after.
func (c *chunkReader) release() {
	for _, b := range [][]byte{c.raw, c.out, c.plain} {
		if b != nil {
			pageBuffers.Put(&b)
		}
	}
	*c = chunkReader{err: c.err}
}

// pageBuffers are the buffers of pages read and decompressed that no chunk
// reader holds: those of a row group serve the next one.
var pageBuffers sync.Pool

// readFull reads len(p) bytes at off; a short read with no error is an
// io.ErrUnexpectedEOF.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%d bytes at %d: %w", len(p), off, io.ErrUnexpectedEOF)
	}
	return err
}

// page reads the body of the page h, at the file offset at, checks what h
// claims, and returns the body uncompressed, as parquet-go reads it; it
// edits h where the body is encoded anew.
func (c *chunkReader) page(h *format.PageHeader, at int64) ([]byte, error) {
	compressed, size := int64(h.CompressedPageSize), int64(h.UncompressedPageSize)
	if size < 0 || size > c.limit {
		return nil, fmt.Errorf("%d bytes uncompressed, over the limit of %d (WithMaxPageSize)", size, c.limit)
	}
	// No codec grows data by a quarter: a page that says it shrank
	// that much when compressed is not read (nor allocated).
	if compressed > size+size/4+1<<10 {
		return nil, fmt.Errorf("%d bytes compressed, %d uncompressed", compressed, size)
	}
	raw := c.buffer(&c.raw, compressed)
	if err := readFull(c.r, raw, at); err != nil {
		return nil, err
	}
	if h.CRC != 0 && crc32.ChecksumIEEE(raw) != uint32(h.CRC) { //nolint:gosec // the format stores the CRC-32 as an i32: the same bits
		return nil, errors.New("its checksum does not match its bytes")
	}
	switch h.Type {
	case format.DictionaryPage:
		return c.dictionaryPage(h, raw)
	case format.DataPage:
		return c.dataPageV1(h, raw)
	}
	return c.dataPageV2(h, raw)
}

// count checks n, the values of a page, against the values the chunk has
// left and the limit.
func (c *chunkReader) count(n int64) error {
	switch {
	case n < 0:
		return fmt.Errorf("%d values", n)
	case n > c.want-c.read:
		return fmt.Errorf("%d values, past the %d its column chunk announces", n, c.want)
	case n > c.limit/(c.col.width()+6):
		return fmt.Errorf("%d values, which decode into more than the limit of %d bytes (WithMaxPageSize)", n, c.limit)
	}
	return nil
}

// inflate decompresses raw into size bytes of c.out.
func (c *chunkReader) inflate(raw []byte, size int64) ([]byte, error) {
	if c.codec == format.Uncompressed {
		if int64(len(raw)) != size {
			return nil, fmt.Errorf("%d bytes, not the %d of an uncompressed page", len(raw), size)
		}
		return raw, nil
	}
	out := c.buffer(&c.out, size)
	return out, decompress(c.codec, out, raw)
}

func (c *chunkReader) dictionaryPage(h *format.PageHeader, raw []byte) ([]byte, error) {
	if !h.DictionaryPageHeader.Valid {
		return nil, errors.New("a dictionary page without its header")
	}
	d := h.DictionaryPageHeader.V
	n, size := int64(d.NumValues), int64(h.UncompressedPageSize)
	switch {
	case c.dict || c.data:
		return nil, errors.New("a dictionary page after the column chunk's first page")
	case d.Encoding != format.Plain && d.Encoding != plainDictionary:
		return nil, fmt.Errorf("a dictionary of encoding %s", d.Encoding)
	case n < 0 || n > c.limit/(c.col.width()+6):
		return nil, fmt.Errorf("a dictionary of %d values, over the limit of %d bytes (WithMaxPageSize)", n, c.limit)
	}
	// A PLAIN value takes its width, a byte array 4 bytes of length at
	// least, a boolean a bit.
	least := n * c.col.width()
	if c.col.kind == parquet.Boolean {
		least = (n + 7) / 8
	}
	if least > size {
		return nil, fmt.Errorf("a dictionary of %d values in %d bytes", n, size)
	}
	c.dict = true
	return c.inflate(raw, size)
}

func (c *chunkReader) dataPageV1(h *format.PageHeader, raw []byte) ([]byte, error) {
	if !h.DataPageHeader.Valid {
		return nil, errors.New("a data page without its header")
	}
	d := &h.DataPageHeader.V
	n := int64(d.NumValues)
	if err := c.count(n); err != nil {
		return nil, err
	}
	body, err := c.inflate(raw, int64(h.UncompressedPageSize))
	if err != nil {
		return nil, err
	}
	levels := 0
	for _, l := range []struct {
		max int
		enc format.Encoding
	}{{c.col.maxRep, d.RepetitionLevelEncoding}, {c.col.maxDef, d.DefinitionLevelEncoding}} {
		if l.max == 0 {
			continue
		}
		k, err := levelsV1(body[levels:], l.enc, levelWidth(l.max), n)
		if err != nil {
			return nil, err
		}
		levels += k
	}
	plain, err := c.values(d.Encoding, body, levels, n)
	if err != nil || plain == nil {
		return body, err
	}
	d.Encoding = format.Plain
	return plain, nil
}

// levelsV1 checks the levels of n values at the start of b, of encoding
// enc and width bits, and returns their length.
func levelsV1(b []byte, enc format.Encoding, width int, n int64) (int, error) {
	switch enc {
	case format.RLE:
		if len(b) < 4 {
			return 0, errors.New("levels cut short")
		}
		size := int64(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		if size > int64(len(b)-4) {
			return 0, fmt.Errorf("levels of %d bytes in %d", size, len(b)-4)
		}
		return 4 + int(size), checkRLE(b[4:4+size], width, n)
	case format.BitPacked:
		size := (n*int64(width) + 7) / 8
		if size > int64(len(b)) {
			return 0, fmt.Errorf("levels of %d bytes in %d", size, len(b))
		}
		return int(size), nil
	}
	return 0, fmt.Errorf("levels of encoding %s", enc)
}

func (c *chunkReader) dataPageV2(h *format.PageHeader, raw []byte) ([]byte, error) {
	if !h.DataPageHeaderV2.Valid {
		return nil, errors.New("a data page without its header")
	}
	d := &h.DataPageHeaderV2.V
	n, size := int64(d.NumValues), int64(h.UncompressedPageSize)
	rep, def := int64(d.RepetitionLevelsByteLength), int64(d.DefinitionLevelsByteLength)
	levels := rep + def
	switch err := c.count(n); {
	case err != nil:
		return nil, err
	case d.NumNulls < 0 || int64(d.NumNulls) > n || d.NumRows < 0 || int64(d.NumRows) > n:
		return nil, fmt.Errorf("%d values, %d of them null, in %d rows", n, d.NumNulls, d.NumRows)
	case rep < 0 || def < 0 || levels > int64(len(raw)) || levels > size:
		return nil, fmt.Errorf("levels of %d and %d bytes in a page of %d", rep, def, len(raw))
	}
	var body []byte
	if c.codec != format.Uncompressed && (!d.IsCompressed.Valid || d.IsCompressed.V) {
		body = c.buffer(&c.out, size)
		copy(body, raw[:levels])
		if err := decompress(c.codec, body[levels:], raw[levels:]); err != nil {
			return nil, err
		}
	} else if int64(len(raw)) != size {
		return nil, fmt.Errorf("%d bytes, not the %d of an uncompressed page", len(raw), size)
	} else {
		body = raw
	}
	if c.col.maxRep > 0 {
		if err := checkRLE(body[:rep], levelWidth(c.col.maxRep), n); err != nil {
			return nil, err
		}
	}
	if c.col.maxDef > 0 {
		if err := checkRLE(body[rep:levels], levelWidth(c.col.maxDef), n); err != nil {
			return nil, err
		}
	}
	plain, err := c.values(d.Encoding, body, int(levels), n-int64(d.NumNulls))
	if err != nil || plain == nil {
		return body, err
	}
	d.Encoding = format.Plain
	return plain, nil
}

// values checks the encoded values of a data page, at most n of them,
// which follow its levels in body; for a DELTA_BINARY_PACKED page of an
// INT32 column, it returns the page's body with the values encoded anew
// as PLAIN, for parquet-go to read (see encodings.go).
func (c *chunkReader) values(enc format.Encoding, body []byte, levels int, n int64) ([]byte, error) {
	b := body[levels:]
	c.data = true
	switch enc {
	case format.RLEDictionary, plainDictionary:
		if !c.dict {
			return nil, errors.New("a dictionary-encoded page without a dictionary page before it")
		}
		if len(b) == 0 {
			if n > 0 {
				return nil, errors.New("dictionary indexes cut short")
			}
			return nil, nil
		}
		return nil, checkRLE(b[1:], int(b[0]), n)
	case format.RLE:
		if c.col.kind != parquet.Boolean {
			break
		}
		if len(b) < 4 {
			return nil, errors.New("RLE values cut short")
		}
		size := int64(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		if size > int64(len(b)-4) {
			return nil, fmt.Errorf("RLE values of %d bytes in %d", size, len(b)-4)
		}
		return nil, checkRLE(b[4:4+size], 1, n)
	case format.DeltaBinaryPacked:
		switch c.col.kind {
		case parquet.Int32:
			plain, err := plainInt32(append(c.plain[:0], body[:levels]...), b, n)
			c.plain = plain
			return plain, err
		case parquet.Int64:
			_, _, err := readDeltaHeader(b, n)
			return nil, err
		}
	case format.DeltaLengthByteArray:
		return nil, checkDeltaLengthByteArray(b, n)
	case format.DeltaByteArray:
		return nil, checkDeltaByteArray(b, n, c.limit)
	}
	return nil, nil
}

// pagedChunk is a column chunk whose pages parquet-go reads through a
// chunkReader.
type pagedChunk struct {
	parquet.ColumnChunk
	pages parquet.Pages
}

func (p pagedChunk) Pages() parquet.Pages { return p.pages }
