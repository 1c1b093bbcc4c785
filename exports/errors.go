package exports

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// FormatError reports a file that could not be read as Parquet: it is
// truncated, corrupt or not Parquet at all, or a read of it failed. Open
// and NewFile return it for a footer they cannot read; a sequence yields
// it for a page it cannot read. Err is the cause: errors.Is(err,
// io.ErrUnexpectedEOF) may hold for a cut file, errors.Is(err,
// fs.ErrClosed) for a read after Close.
type FormatError struct {
	// Name is the path given to Open; "" for a File of NewFile.
	Name string
	Err  error
}

func (e *FormatError) Error() string {
	return prefix(e.Name) + "not a readable Parquet file: " + e.Err.Error()
}

// prefix opens the text of an error of the file name.
func prefix(name string) string {
	if name == "" {
		return "exports: "
	}
	return "exports: " + name + ": "
}

func (e *FormatError) Unwrap() error { return e.Err }

// formatError is the *FormatError of the file name for err. A bare io.EOF
// (a file that ends before it should) becomes io.ErrUnexpectedEOF, so
// that no error of a file is mistaken for the end of one.
func formatError(name string, err error) *FormatError {
	if errors.Is(err, io.EOF) {
		// Not %w for err: the point is that errors.Is(err, io.EOF) is false.
		err = fmt.Errorf("%w (%v)", io.ErrUnexpectedEOF, err) //nolint:errorlint // see above
	}
	return &FormatError{Name: name, Err: err}
}

// ColumnError reports a column that a typed sequence (File.Proxies and the
// others) needs and the file lacks, or has with a type that the row's
// field cannot hold. It is yielded before any row.
type ColumnError struct {
	// Name is the path given to Open; "" for a File of NewFile.
	Name string
	// Column is the column's name.
	Column string
	// Want is the type the row's field holds: "string", "binary", "int32"
	// or "int64".
	Want string
	// Got is the column's type in the file (see Column.Type); "" when the
	// file has no such column.
	Got string
}

func (e *ColumnError) Error() string {
	if e.Got == "" {
		return prefix(e.Name) + "the file has no column " + strconv.Quote(e.Column) + " (" + e.Want + ")"
	}
	return prefix(e.Name) + "column " + strconv.Quote(e.Column) + " is " + e.Got + ", not " + e.Want
}
