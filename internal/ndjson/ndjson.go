// Package ndjson reads the lines of an NDJSON stream (a feed's events) in
// bounded memory.
//
// The model. A Reader reads through a buffer of 64 KiB, and hands out a
// line that fits it without a copy, valid until the next line. A longer
// line is put together in a buffer of its own, doubled as it grows, up to
// the longest line allowed (and its line ending) and no further: a longer
// one is ErrTooLong, never read into memory whole. Blank lines (the
// stream's heartbeats) are skipped; "\n" and "\r\n" both end a line, and a
// last line without one is a line. At the stream's clean end Next returns
// io.EOF.
package ndjson

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrTooLong is the error of a line longer than the Reader allows.
var ErrTooLong = errors.New("ndjson: line too long")

// Reader reads the lines of an NDJSON stream. It is not safe for
// concurrent use.
type Reader struct {
	br   *bufio.Reader
	max  int    // the longest line allowed, its ending aside
	long []byte // a line longer than the bufio buffer, put together
	eof  bool
}

// NewReader returns a Reader of r whose lines are at most max bytes long,
// their endings aside.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line that is not blank, without its line ending.
// The line is valid until the next call. At a clean end it returns io.EOF;
// a line longer than the Reader allows gives ErrTooLong; a failure to
// read, the reader's error.
func (r *Reader) Next() ([]byte, error) {
	for {
		if r.eof {
			return nil, io.EOF
		}
		line, err := r.readLine()
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

// readLine reads one line, or the rest of the stream before io.EOF.
func (r *Reader) readLine() ([]byte, error) {
	frag, err := r.br.ReadSlice('\n')
	if err == nil { // the common case: no copy
		if line := trimEOL(frag); len(line) <= r.max {
			return line, nil
		}
		return nil, ErrTooLong
	}
	r.long = r.long[:0]
	for errors.Is(err, bufio.ErrBufferFull) {
		if !r.appendLong(frag) {
			return nil, ErrTooLong
		}
		frag, err = r.br.ReadSlice('\n')
	}
	if !r.appendLong(frag) {
		return nil, ErrTooLong
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	line := trimEOL(r.long)
	if len(line) > r.max {
		return nil, ErrTooLong
	}
	return line, err
}

// appendLong adds frag to the line being put together, doubling the buffer
// up to the longest line (and its line ending) and no further: it reports
// false, dropping the buffer, for a line longer than that.
func (r *Reader) appendLong(frag []byte) bool {
	limit := r.max + 2 // "\r\n"
	n := len(r.long) + len(frag)
	if n > limit {
		r.long = nil
		return false
	}
	if n > cap(r.long) {
		grown := make([]byte, len(r.long), min(max(2*cap(r.long), n, 64<<10), limit))
		copy(grown, r.long)
		r.long = grown
	}
	r.long = append(r.long, frag...)
	return true
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
