// Package download is the engine under a download's body: the copy of the
// bytes to the caller's writer, and the temporary file that
// DownloadExportFile writes beside its target.
//
// The copy (Copy) reads at most one byte more than expected and writes at
// most what is expected: a body that sends more ends the copy (over), and
// one that sends less leaves it short, which the caller checks. It goes
// through a buffer of 256 KiB from a pool, and hides any ReaderFrom of the
// writer (io.Discard's reads 8 KiB at a time), so the connection is read
// in large pieces; it tells a failure to read (the body's) from a failure
// to write (the writer's, or a writer that reports a byte count it cannot
// have written). Checked passes the bytes on, hashing them and reporting
// progress.
//
// The file (CreatePart, Commit) is new, made beside the target, named
// target.<digits>.part (.synthient-<digits>.part when the target's name
// is too long to take the suffix), opened with O_EXCL, so that no existing
// name, symbolic link or not, is opened, and no two downloads share one.
// When the download is whole, Commit moves it to the target: with a rename
// when the target may be replaced, else with a hard link, which fails
// rather than replace a file that appeared meanwhile (ErrAppeared); where
// there are no hard links, it checks, then renames.
package download

import (
	"errors"
	"hash"
	"io"
	"sync"
)

// ErrInvalidWrite is the error of a writer that reported writing fewer
// than none or more than all of the bytes it was given.
var ErrInvalidWrite = errors.New("the writer reported an invalid byte count")

// errOver is what a cappedWriter returns for the bytes past its cap.
var errOver = errors.New("more bytes than expected")

// Copy copies body to w: with want >= 0, it reads at most want+1 bytes
// and writes at most want. It returns the bytes written, and why it
// stopped early: over, body had more than want; readErr, reading body
// failed (with that error); writeErr, writing failed. A body that ends
// before want bytes is no failure here.
func Copy(w io.Writer, body io.Reader, want int64) (n int64, over bool, readErr, writeErr error) {
	src := &readErrReader{r: body}
	var r io.Reader = src
	if want >= 0 {
		r = io.LimitReader(src, want+1)
	}
	dst := &cappedWriter{w: w, left: want}
	buf := buffers.Get().(*[]byte)
	defer buffers.Put(buf)
	n, err := io.CopyBuffer(dst, r, *buf)
	switch {
	case err == nil:
		return n, false, nil, nil
	case dst.over:
		return n, true, nil, nil
	case src.err != nil:
		return n, false, src.err, nil
	}
	return n, false, nil, err
}

// buffers holds the buffers downloads are copied through.
var buffers = sync.Pool{New: func() any {
	b := make([]byte, 256<<10)
	return &b
}}

// readErrReader records the error of the reader it wraps, to tell a
// failed read from a failed write.
type readErrReader struct {
	r   io.Reader
	err error
}

func (r *readErrReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// cappedWriter writes at most left bytes to w (no cap when left < 0) and
// fails on the first byte past them, setting over.
type cappedWriter struct {
	w    io.Writer
	left int64
	over bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if c.left < 0 || int64(len(p)) <= c.left {
		n, err := c.w.Write(p)
		if n < 0 || n > len(p) {
			return 0, ErrInvalidWrite
		}
		if c.left >= 0 {
			c.left -= int64(n)
		}
		return n, err
	}
	n, err := c.w.Write(p[:c.left])
	if n < 0 || int64(n) > c.left {
		return 0, ErrInvalidWrite
	}
	c.left -= int64(n)
	if err != nil {
		return n, err
	}
	c.over = true
	return n, errOver
}

// Checked passes the bytes on to W, hashing them (when Hash is set) and
// reporting progress (when Progress is set): Done bytes of Total so far.
type Checked struct {
	W        io.Writer
	Hash     hash.Hash
	Done     int64
	Total    int64
	Progress func(done, total int64)
}

func (w *Checked) Write(p []byte) (int, error) {
	n, err := w.W.Write(p)
	if n < 0 || n > len(p) {
		return 0, ErrInvalidWrite
	}
	if w.Hash != nil {
		w.Hash.Write(p[:n])
	}
	w.Done += int64(n)
	if w.Progress != nil && n > 0 {
		w.Progress(w.Done, w.Total)
	}
	return n, err
}
