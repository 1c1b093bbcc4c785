package exports

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// File is an open export file. Its methods may be called concurrently;
// each sequence reads on its own, through the io.ReaderAt, which must then
// allow concurrent reads (an *os.File does).
type File struct {
	pf      *parquet.File // opened on the virtual footer (see pages.go)
	meta    *format.FileMetaData
	leaves  []leaf
	r       io.ReaderAt
	dataEnd int64 // where the footer starts
	maxPage int64
	name    string    // the path Open opened; "" for NewFile
	closer  io.Closer // the file Open opened; nil for NewFile
	columns []Column
}

// Column is a top-level column of a file.
type Column struct {
	Name string
	// Type is the column's type as the export meta names it: "string" (a
	// byte array of UTF-8 text), "binary" (other byte arrays), "int32",
	// "int64", "boolean", "float", "double", "int96" or
	// "fixed_len_byte_array"; "group" for a nested column and "repeated"
	// for a repeated one, which no sequence reads. An integer or byte
	// array column whose annotation changes what its values mean is named
	// by it: "uint8" to "uint64", "timestamp", "date", "time", "decimal",
	// "uuid", "interval"; a typed row refuses them (a *ColumnError) where
	// its field would read them wrong (a uint32 as a negative int32, a
	// timestamp in milliseconds as seconds).
	Type string
	// Nullable reports an optional column: its values may be null.
	Nullable bool
}

// DefaultMaxPageSize is the page limit of a File when WithMaxPageSize does
// not set one: 256 MiB.
const DefaultMaxPageSize = 256 << 20

// minMaxPageSize is the smallest limit WithMaxPageSize takes.
const minMaxPageSize = 1 << 10

// An Option configures how Open and NewFile read a file.
type Option func(*settings) error

type settings struct {
	maxPage int64
}

// WithMaxPageSize sets the memory limit of a page, DefaultMaxPageSize
// (256 MiB) if not given: a page whose uncompressed size, or whose values
// once decoded (its value count times the value's width and 6 bytes of
// levels and offsets), or whose DELTA_BYTE_ARRAY values' total length,
// exceed n bytes is refused with a *FormatError, before anything that
// size is allocated. The limit also bounds a page header. n below 1 KiB
// is an error of Open and NewFile.
func WithMaxPageSize(n int64) Option {
	return func(s *settings) error {
		if n < minMaxPageSize {
			return fmt.Errorf("exports: WithMaxPageSize(%d): the limit must be at least %d bytes", n, minMaxPageSize)
		}
		s.maxPage = n
		return nil
	}
}

func newSettings(opts []Option) (settings, error) {
	s := settings{maxPage: DefaultMaxPageSize}
	for _, o := range opts {
		if o == nil {
			return s, errors.New("exports: a nil Option")
		}
		if err := o(&s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Open opens the export file at path, reading its footer only. A file
// that cannot be opened gives the *fs.PathError of os.Open; one that is not
// a readable Parquet file a *FormatError; an invalid Option an error of
// its own. The caller closes the File.
func Open(path string, opts ...Option) (*File, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	osf, err := os.Open(path) //nolint:gosec // the caller names the file to read: that is what Open is for
	if err != nil {
		return nil, err
	}
	fi, err := osf.Stat()
	if err != nil {
		_ = osf.Close() // opened read-only: err is what went wrong
		return nil, err
	}
	f, err := open(osf, fi.Size(), path, s)
	if err != nil {
		_ = osf.Close() // opened read-only: err is what went wrong
		return nil, err
	}
	f.closer = osf
	return f, nil
}

// NewFile reads the export file of size bytes that r holds, such as a
// download kept in memory (bytes.NewReader) or an object store's reader.
// It reads the footer only; the rows are read as a sequence asks for
// them. A file that is not a readable Parquet file (truncated, corrupt,
// or not Parquet at all) gives a *FormatError; an invalid Option an error
// of its own. r must stay readable while the File is used; Close does not
// close it.
func NewFile(r io.ReaderAt, size int64, opts ...Option) (*File, error) {
	if r == nil {
		return nil, errors.New("exports: NewFile: nil reader")
	}
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return open(r, size, "", s)
}

func open(r io.ReaderAt, size int64, name string, s settings) (*File, error) {
	if size < 0 {
		return nil, formatError(name, fmt.Errorf("negative size %d", size))
	}
	f := &File{r: r, name: name, maxPage: s.maxPage}
	err := guard(func() (err error) {
		footer, err := readFooter(r, size)
		if err != nil {
			return err
		}
		f.dataEnd = size - 8 - int64(len(footer))
		if f.meta, err = decodeFooter(footer); err != nil {
			return err
		}
		virtual, err := virtualFooter(f.meta)
		if err != nil {
			return err
		}
		fr := &footerReader{r: r, at: f.dataEnd, footer: virtual}
		f.pf, err = parquet.OpenFile(fr, fr.size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		return err
	})
	if err != nil {
		return nil, formatError(name, err)
	}
	if err := checkRowCount(f.pf); err != nil {
		return nil, formatError(name, err)
	}
	f.leaves = leaves(f.pf)
	for _, fl := range f.pf.Schema().Fields() {
		f.columns = append(f.columns, Column{Name: fl.Name(), Type: typeName(fl), Nullable: fl.Optional()})
	}
	return f, nil
}

// readFooter returns the footer of the file of size bytes that r holds.
// The footer's length is checked against the file's before the footer is
// read: a length longer than the file is refused, not allocated.
func readFooter(r io.ReaderAt, size int64) ([]byte, error) {
	const magic = 4 // "PAR1", which also opens the file
	if size < 2*magic+4 {
		return nil, fmt.Errorf("%d bytes are too few for a Parquet file", size)
	}
	var tail [8]byte
	if n, err := r.ReadAt(tail[:], size-8); n < len(tail) {
		if err == nil {
			err = io.ErrUnexpectedEOF // a short read must say why; this one did not
		}
		return nil, fmt.Errorf("reading the footer's length: %w", err)
	}
	if string(tail[4:]) != "PAR1" {
		return nil, errors.New("it does not end in PAR1: not Parquet, or cut short")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-2*magic-4 {
		return nil, fmt.Errorf("the footer's length, %d bytes, exceeds the file's %d", n, size)
	}
	footer := make([]byte, n)
	if err := readFull(r, footer, size-8-n); err != nil {
		return nil, fmt.Errorf("reading the footer: %w", err)
	}
	return footer, nil
}

// decodeFooter decodes a footer, whose every length is checked against
// its bytes first (thriftSize): a list the footer announces is never
// longer than the footer, which bounds what decoding it allocates to a
// few hundred times the footer's length.
func decodeFooter(footer []byte) (*format.FileMetaData, error) {
	n, err := thriftSize(footer)
	if err == nil && n != len(footer) {
		err = fmt.Errorf("%d bytes after its end", len(footer)-n)
	}
	if err != nil {
		return nil, fmt.Errorf("not a footer: %w", err)
	}
	var meta format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &meta); err != nil {
		return nil, fmt.Errorf("not a footer: %w", err)
	}
	return &meta, nil
}

// checkRowCount refuses a footer whose row count is not the sum of its
// row groups': NumRows would announce rows that no sequence yields.
func checkRowCount(pf *parquet.File) error {
	var sum int64
	for _, rg := range pf.RowGroups() {
		sum += rg.NumRows()
	}
	if sum != pf.NumRows() {
		return fmt.Errorf("the footer announces %d rows, its row groups hold %d", pf.NumRows(), sum)
	}
	return nil
}

// Close closes the file Open opened; for a File of NewFile it does
// nothing. A sequence that reads after Close yields a *FormatError.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// NumRows returns the number of rows the footer announces.
func (f *File) NumRows() int64 { return f.pf.NumRows() }

// NumRowGroups returns the number of row groups.
func (f *File) NumRowGroups() int { return len(f.pf.RowGroups()) }

// Columns returns the file's top-level columns, in the file's order. The
// slice is the caller's.
func (f *File) Columns() []Column { return append([]Column(nil), f.columns...) }

// typeName names the type of a column as the export meta does.
func typeName(n parquet.Node) string {
	switch {
	case !n.Leaf():
		return "group"
	case n.Repeated():
		return "repeated"
	}
	switch t := n.Type(); t.Kind() {
	case parquet.Boolean:
		return "boolean"
	case parquet.Int32:
		return annotated(t, "int32")
	case parquet.Int64:
		return annotated(t, "int64")
	case parquet.Int96:
		return "int96"
	case parquet.Float:
		return "float"
	case parquet.Double:
		return "double"
	case parquet.FixedLenByteArray:
		return annotated(t, "fixed_len_byte_array")
	default:
		if isText(t) {
			return "string"
		}
		return annotated(t, "binary")
	}
}

// annotated names a column of physical type physical by the annotation
// that changes what its values mean, as a logical type or (from older
// writers) a converted type: physical when there is none, or it is a
// signed integer of any width (its values are read as they are).
func annotated(t parquet.Type, physical string) string {
	if lt := t.LogicalType(); lt != nil {
		switch v := lt.Value.(type) {
		case *format.IntType:
			if !v.IsSigned {
				return fmt.Sprintf("uint%d", v.BitWidth)
			}
		case *format.TimestampType:
			return "timestamp"
		case *format.DateType:
			return "date"
		case *format.TimeType:
			return "time"
		case *format.DecimalType:
			return "decimal"
		case *format.UUIDType:
			return "uuid"
		}
		return physical
	}
	if ct := t.ConvertedType(); ct != nil {
		if name, ok := convertedNames[*ct]; ok {
			return name
		}
	}
	return physical
}

// convertedNames name the converted types that change what a column's
// values mean.
var convertedNames = map[deprecated.ConvertedType]string{
	deprecated.Uint8: "uint8", deprecated.Uint16: "uint16", deprecated.Uint32: "uint32", deprecated.Uint64: "uint64",
	deprecated.TimestampMillis: "timestamp", deprecated.TimestampMicros: "timestamp",
	deprecated.Date: "date", deprecated.TimeMillis: "time", deprecated.TimeMicros: "time",
	deprecated.Decimal: "decimal", deprecated.Interval: "interval",
}

// isText reports a byte array column of UTF-8 text: STRING, ENUM or JSON,
// as a logical type or (from older writers) a converted type.
func isText(t parquet.Type) bool {
	if lt := t.LogicalType(); lt != nil {
		switch lt.Value.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return true
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.UTF8, deprecated.Enum, deprecated.Json:
			return true
		}
	}
	return false
}
