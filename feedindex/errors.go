package feedindex

import (
	"errors"
	"strconv"
)

// FormatError reports an index file that Open refuses: not an index file,
// one of a version this package does not read, a damaged one (a checksum
// that does not match) or one whose content is not what a saved index
// holds. Err says which: errors.Is(err, ErrNotIndex), ErrVersion or
// ErrChecksum hold for the first three; other causes are described in
// its text. Offset is where in the file the fault is, -1 when it is the
// file as a whole.
type FormatError struct {
	// Name is the path given to Open; "" for an index read with Read.
	Name   string
	Offset int64
	Err    error
}

func (e *FormatError) Error() string {
	s := "feedindex: "
	if e.Name != "" {
		s += e.Name + ": "
	}
	s += "not a readable index file"
	if e.Offset >= 0 {
		s += " (at byte " + strconv.FormatInt(e.Offset, 10) + ")"
	}
	return s + ": " + e.Err.Error()
}

func (e *FormatError) Unwrap() error { return e.Err }

// The causes of a FormatError that errors.Is tells apart.
var (
	// ErrNotIndex: the file does not start as an index file does.
	ErrNotIndex = errors.New("not an index file")
	// ErrVersion: an index file of a format version this package does
	// not read.
	ErrVersion = errors.New("an index file of another format version")
	// ErrChecksum: a part of the file does not match its checksum.
	ErrChecksum = errors.New("a checksum does not match")
)

// ErrLimit is matched (errors.Is) by the error of an addition that would
// make the index hold more distinct values than it may: more than
// 16,777,216 distinct (provider, type, country, ASN) tuples or 1,048,576
// distinct strings. The index is left as it was.
var ErrLimit = errors.New("feedindex: too many distinct values")

// ErrClosed is matched by the error of a method called on a closed Index.
var ErrClosed = errors.New("feedindex: the index is closed")

// formatError is the *FormatError of name at offset off for err.
func formatError(name string, off int64, err error) *FormatError {
	return &FormatError{Name: name, Offset: off, Err: err}
}
