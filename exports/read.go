package exports

import (
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/parquet-go/parquet-go"
)

// batchSize is how many rows a sequence decodes at a time: its memory is
// a batch of rows and, per column it reads, the page being decoded.
const batchSize = 1024

// Row is a row in the untyped form.
type Row struct {
	// Columns are the file's columns, as File.Columns returns them. Every
	// row of a sequence shares the slice: do not modify it.
	Columns []Column
	// Values holds a value per column, in the order of Columns: a string
	// (for a "string" column), []byte ("binary", "fixed_len_byte_array"
	// and "int96"), int32, int64, bool, float32 or float64; nil for a null,
	// and for a "group" or "repeated" column, which is not read. The slice
	// is the row's own.
	Values []any
}

// Get returns the value of the column name; false when the row has no
// such column.
func (r Row) Get(name string) (any, bool) {
	for i, c := range r.Columns {
		if c.Name == name {
			return r.Values[i], true
		}
	}
	return nil, false
}

// Rows returns every row of the file in the untyped form, in the file's
// order, whatever its columns: it reads what a newer file adds, which the
// typed sequences (File.Proxies and the others) ignore. A file that cannot
// be read yields a *FormatError once and ends the sequence, after the rows
// read before it. Memory use is constant, whatever the file's size.
func (f *File) Rows() iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		var cols, pos []int // the leaf columns read, and their place in a row
		for i, c := range f.columns {
			if leaf, ok := f.pf.Schema().Lookup(c.Name); ok && c.Type != "group" && c.Type != "repeated" {
				cols, pos = append(cols, leaf.ColumnIndex), append(pos, i)
			}
		}
		batch := make([][]any, batchSize)
		for i := range batch {
			batch[i] = make([]any, len(f.columns))
		}
		put := func(col, off int, vals []parquet.Value) {
			for i, v := range vals {
				batch[off+i][pos[col]] = untyped(v, f.columns[pos[col]].Type)
			}
		}
		err := f.scan(cols, put, func(n int) bool {
			for i := range batch[:n] {
				if !yield(Row{Columns: f.columns, Values: batch[i]}, nil) {
					return false
				}
				batch[i] = make([]any, len(f.columns))
			}
			return true
		})
		if err != nil {
			yield(Row{}, err)
		}
	}
}

// untyped is the Go value of v, of a column of type typ (typeName).
func untyped(v parquet.Value, typ string) any {
	if v.IsNull() {
		return nil
	}
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean()
	case parquet.Int32:
		return v.Int32()
	case parquet.Int64:
		return v.Int64()
	case parquet.Float:
		return v.Float()
	case parquet.Double:
		return v.Double()
	}
	if typ == "string" {
		return string(v.ByteArray())
	}
	return append([]byte{}, v.ByteArray()...)
}

// readRows returns the sequence of a row type's rows, which reads the
// columns fields name.
func readRows[T any](f *File, fields []field[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		cols, err := bind(f, fields)
		if err != nil {
			yield(zero, err)
			return
		}
		rows := make([]T, batchSize)
		put := func(col, off int, vals []parquet.Value) {
			set := fields[col].set
			for i, v := range vals {
				set(&rows[off+i], v)
			}
		}
		err = f.scan(cols, put, func(n int) bool {
			for _, r := range rows[:n] {
				if !yield(r, nil) {
					return false
				}
			}
			return true
		})
		if err != nil {
			yield(zero, err)
		}
	}
}

// bind returns the leaf column index of each field's column, or a
// *ColumnError for the first one that is missing or of a type the field
// cannot hold.
func bind[T any](f *File, fields []field[T]) ([]int, error) {
	cols := make([]int, len(fields))
	for i, fl := range fields {
		var got string
		for _, c := range f.columns {
			if c.Name == fl.name {
				got = c.Type
				break
			}
		}
		leaf, ok := f.pf.Schema().Lookup(fl.name)
		if got == "" || !fl.kind.reads(got) || !ok {
			return nil, &ColumnError{Name: f.name, Column: fl.name, Want: fl.kind.String(), Got: got}
		}
		cols[i] = leaf.ColumnIndex
	}
	return cols, nil
}

// scan reads the leaf columns cols of every row group, a batch of rows at
// a time: put receives the values of one column for rows off to
// off+len(vals) of the batch (one value a row), then emit is called with
// the batch's row count, and returning false stops the scan. It returns
// the first *FormatError.
func (f *File) scan(cols []int, put func(col, off int, vals []parquet.Value), emit func(n int) bool) error {
	for i, rg := range f.pf.RowGroups() {
		stop, err := f.scanGroup(i, rg, cols, put, emit)
		if err != nil {
			return formatError(f.name, err)
		}
		if stop {
			return nil
		}
	}
	return nil
}

// scanGroup scans row group i, rg (see scan); stop reports that emit
// stopped it.
func (f *File) scanGroup(i int, rg parquet.RowGroup, cols []int, put func(col, off int, vals []parquet.Value), emit func(n int) bool) (stop bool, err error) {
	g := &groupReader{left: rg.NumRows(), vals: make([]parquet.Value, batchSize)}
	defer g.close()
	err = guard(func() error {
		chunks := rg.ColumnChunks()
		for _, c := range cols {
			if c < 0 || c >= len(chunks) {
				return fmt.Errorf("row group has no column %d", c)
			}
			cr, err := f.newChunkReader(&f.meta.RowGroups[i], c)
			if err != nil {
				return err
			}
			fc, ok := chunks[c].(*parquet.FileColumnChunk)
			if !ok {
				return fmt.Errorf("column %d is a %T", c, chunks[c])
			}
			pages := pagedChunk{ColumnChunk: fc, pages: fc.PagesFrom(cr)}
			g.readers = append(g.readers, parquet.NewColumnChunkValueReader(pages))
			g.chunks = append(g.chunks, cr)
		}
		return nil
	})
	for err == nil {
		var n int
		err = guard(func() (err error) {
			n, err = g.next(put)
			return err
		})
		if err == nil && !emit(n) {
			return true, nil
		}
	}
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	return false, err
}

// groupReader reads the values of some columns of a row group.
type groupReader struct {
	readers []parquet.ColumnChunkValueReader
	chunks  []*chunkReader // the pages of each reader
	left    int64          // the rows not read yet
	vals    []parquet.Value
}

// next reads the next batch of rows (see scan) and returns its size; 0
// and io.EOF after the last row. A column with fewer values than the row
// group has rows is an error; so is a page its chunkReader refused,
// whose error is the chunkReader's own, which names the column, whatever
// parquet-go made of it.
func (g *groupReader) next(put func(col, off int, vals []parquet.Value)) (int, error) {
	n := int(min(int64(len(g.vals)), g.left))
	if n <= 0 {
		return 0, io.EOF
	}
	for col, r := range g.readers {
		for off := 0; off < n; {
			// The values are used before the next read: it may recycle
			// the page they point into.
			k, err := r.ReadValues(g.vals[:n-off])
			if cerr := g.chunks[col].err; cerr != nil {
				return 0, cerr
			}
			put(col, off, g.vals[:k])
			off += k
			switch {
			case err != nil && !errors.Is(err, io.EOF):
				return 0, err
			case k == 0:
				return 0, errors.New("a column has fewer values than its row group has rows")
			}
		}
	}
	g.left -= int64(n)
	return n, nil
}

func (g *groupReader) close() {
	for _, r := range g.readers {
		_ = guard(r.Close)
	}
	for _, c := range g.chunks {
		c.release()
	}
}

// guard runs fn, turning a panic in it into an error: the Parquet decoder
// is not hardened against every corrupt file, and a corrupt file must not
// crash the program that reads it.
func guard(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt file (the decoder failed: %v)", p)
		}
	}()
	return fn()
}

// kind is the type of a row field.
type kind uint8

const (
	kindText kind = iota
	kindBinary
	kindInt32
	kindInt64
)

func (k kind) String() string {
	return [...]string{kindText: "string", kindBinary: "binary", kindInt32: "int32", kindInt64: "int64"}[k]
}

// reads reports whether a field of kind k can hold the values of a column
// of type typ (typeName) as they mean: text and binary fields read a byte
// array of text or bytes (not a fixed-length one, such as a UUID), an
// int64 field a signed int32 or int64 column, an int32 field a signed
// int32 column. An annotated integer (unsigned, a timestamp, a date) is
// not read: its values would be read wrong.
func (k kind) reads(typ string) bool {
	switch k {
	case kindText, kindBinary:
		return typ == "string" || typ == "binary"
	case kindInt64:
		return typ == "int64" || typ == "int32"
	}
	return typ == "int32"
}

// field is a column a row type reads, and how a value of it is set in a
// row. A null sets the zero value (nil for []byte).
type field[T any] struct {
	name string
	kind kind
	set  func(row *T, v parquet.Value)
}

func textCol[T any](name string, at func(*T) *string) field[T] {
	return field[T]{name, kindText, func(r *T, v parquet.Value) { *at(r) = string(v.ByteArray()) }}
}

func binaryCol[T any](name string, at func(*T) *[]byte) field[T] {
	return field[T]{name, kindBinary, func(r *T, v parquet.Value) {
		if v.IsNull() {
			*at(r) = nil
			return
		}
		*at(r) = append([]byte{}, v.ByteArray()...)
	}}
}

func int32Col[T any](name string, at func(*T) *int32) field[T] {
	return field[T]{name, kindInt32, func(r *T, v parquet.Value) { *at(r) = v.Int32() }}
}

func int64Col[T any](name string, at func(*T) *int64) field[T] {
	return field[T]{name, kindInt64, func(r *T, v parquet.Value) {
		if v.Kind() == parquet.Int32 {
			*at(r) = int64(v.Int32())
			return
		}
		*at(r) = v.Int64()
	}}
}
