// Package addrinput reads the addresses of a bulk lookup, one per line,
// numbering the lines and reporting those that are not addresses; a read
// blocked on a pipe or a terminal gives way to an interrupt at once.
package addrinput

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/netip"
	"os"
	"strings"
)

// MaxLine is the longest input line read; a longer one is reported as
// invalid and skipped.
const MaxLine = 64 << 10

// Count counts the address lines of a regular file as the run
// will read them (invalid ones included), and rewinds it; -1 if f is not
// a regular file.
func Count(f *os.File) (int64, error) {
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return -1, nil
	}
	r := &Reader{br: bufio.NewReaderSize(f, MaxLine), report: func(int64, string) {}}
	var n int64
	for {
		_, ok, err := r.next()
		if ok {
			n++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			n = -1
			break
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading the addresses: %w", err)
	}
	return n, nil
}

// addressText returns a line trimmed of spaces; ok is false for a blank
// line or a # comment, which hold no address.
func addressText(line string) (text string, ok bool) {
	text = strings.TrimSpace(line)
	return text, text != "" && !strings.HasPrefix(text, "#")
}

// Reader reads the input line by line, numbering the lines, and
// reports every line that is not an address. It reads through a
// ctxReader, so that an interrupt ends a read blocked on a pipe.
type Reader struct {
	src     *ctxReader
	br      *bufio.Reader // of MaxLine bytes: a longer line does not fit
	report  func(line int64, text string)
	line    int64     // the number of the last line read
	pending lineQueue // the lines of the addresses handed out and not answered
	err     error     // the reading's error, but the end of the input
}

// NewReader reads in until ctx ends, reporting each line that is not
// an address with report. close ends its reading goroutine.
func NewReader(ctx context.Context, in io.Reader, report func(line int64, text string)) *Reader {
	src := newCtxReader(ctx, in)
	return &Reader{src: src, br: bufio.NewReaderSize(src, MaxLine), report: report}
}

// Close lets the reading goroutine end once its read returns.
func (r *Reader) Close() { r.src.close() }

// Addrs is the input's addresses, for the SDK: an address-bearing line
// yields its address, or the zero netip.Addr when it is not one (so that
// it has a result of its own, in order); blank and comment lines yield
// nothing. It ends at the end of the input, when reading fails (see end)
// or ctx ends. Its error is End's.
func (r *Reader) Addrs() iter.Seq[netip.Addr] {
	return func(yield func(netip.Addr) bool) {
		for {
			ip, ok, err := r.next()
			if ok {
				r.pending.push(r.line)
				if !yield(ip) {
					return
				}
			}
			if err != nil {
				r.setErr(err)
				return
			}
		}
	}
}

// Buffered is the address lines left in the reader's buffer after an
// interrupt, as Addrs yields them: read from the input, never handed out.
func (r *Reader) Buffered() iter.Seq[netip.Addr] {
	return func(yield func(netip.Addr) bool) {
		for {
			ip, ok, err := r.next() // the ctxReader reads nothing more
			if ok && !yield(ip) || err != nil {
				return
			}
		}
	}
}

// Answered returns the input line of the next address handed out, which
// the SDK just answered (it answers in order).
func (r *Reader) Answered() int64 { return r.pending.pop() }

// setErr keeps the reading's error: none at the end of the input nor for
// an interrupt, which the run's context tells.
func (r *Reader) setErr(err error) {
	if err != io.EOF && !r.src.interrupted(err) && r.err == nil {
		r.err = fmt.Errorf("reading the addresses: %w", err)
	}
}

// End returns the reading's error, nil when the input ended or was
// interrupted.
func (r *Reader) End() error { return r.err }

// next reads a line and reports whether it holds an address (ok), which
// ip is (the zero Addr for a line that is not an address, which is
// reported). err is nil, io.EOF at the end of the input (which may come
// with a last line without a newline), or the reading's error (whatever
// was read of the line with it is dropped).
func (r *Reader) next() (ip netip.Addr, ok bool, err error) {
	raw, err := r.br.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull:
		r.line++
		r.report(r.line, string(raw))
		return netip.Addr{}, true, r.skipLine()
	case err != nil && err != io.EOF, len(raw) == 0:
		return netip.Addr{}, false, err
	}
	r.line++
	ip, ok = r.parse(raw)
	return ip, ok, err
}

// skipLine skips the rest of a line that does not fit the buffer. It
// returns nil, io.EOF when the input ends with that line, or the reading's
// error.
func (r *Reader) skipLine() error {
	err := bufio.ErrBufferFull
	for err == bufio.ErrBufferFull {
		_, err = r.br.ReadSlice('\n')
	}
	return err
}

// parse returns the address that raw, the line just read, holds, and
// whether the line holds one at all (ok). A byte order mark opening the
// first line is dropped; a blank line or a # comment holds none; any
// other line that is not an address, or is one with a zone, is reported
// and returned as the zero Addr.
func (r *Reader) parse(raw []byte) (netip.Addr, bool) {
	if r.line == 1 {
		raw = bytes.TrimPrefix(raw, []byte("\ufeff")) // a UTF-8 byte order mark
	}
	text, ok := addressText(string(raw))
	if !ok {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(text)
	if err != nil || ip.Zone() != "" {
		r.report(r.line, text)
		return netip.Addr{}, true
	}
	return ip, true
}

// Line returns the number of the last line read.
func (r *Reader) Line() int64 { return r.line }

// lineQueue is a FIFO of input line numbers: those of the addresses
// handed to the SDK and not answered yet, which it holds no more of than
// its window.
type lineQueue struct {
	q    []int64
	head int
}

func (l *lineQueue) push(n int64) { l.q = append(l.q, n) }

// pop returns the oldest line number; 0 if there is none.
func (l *lineQueue) pop() int64 {
	if l.head == len(l.q) {
		return 0
	}
	n := l.q[l.head]
	l.head++
	if l.head >= 1024 && l.head >= len(l.q)/2 { // reuse the spent front
		l.q = l.q[:copy(l.q, l.q[l.head:])]
		l.head = 0
	}
	return n
}

// ctxReader reads r on a goroutine of its own, one Read when asked, so
// that a Read blocked on a pipe or a terminal gives way to ctx's end at
// once: it then returns ctx's error, and whatever the abandoned Read
// returns is dropped. What an earlier Read returned is still handed out.
type ctxReader struct {
	ctx   context.Context
	ask   chan struct{}   // a Read wanted
	got   chan readResult // its result
	asked bool            // a Read is under way
	left  []byte          // what the last Read returned and was not handed out
	err   error           // the last Read's error, handed out after left
}

// readResult is what one Read of a ctxReader's source returned.
type readResult struct {
	b   []byte
	err error
}

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	c := &ctxReader{ctx: ctx, ask: make(chan struct{}, 1), got: make(chan readResult, 1)}
	go func() {
		buf := make([]byte, 32<<10) // the goroutine's until got hands it over
		for range c.ask {
			n, err := r.Read(buf)
			c.got <- readResult{buf[:n], err}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(c.left) == 0 && c.err == nil {
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	if len(c.left) > 0 {
		n := copy(p, c.left)
		c.left = c.left[n:]
		return n, nil
	}
	return 0, c.err
}

// fill waits for the next Read of the source, unless ctx ends first.
// After ctx ended it only takes a Read that has already returned.
func (c *ctxReader) fill() error {
	if err := c.ctx.Err(); err != nil {
		select {
		case r := <-c.got:
			c.asked, c.left, c.err = false, r.b, r.err
			return nil
		default:
			return err
		}
	}
	if !c.asked {
		c.ask <- struct{}{}
		c.asked = true
	}
	select {
	case r := <-c.got:
		c.asked, c.left, c.err = false, r.b, r.err
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// interrupted reports whether err is the one Read returns once ctx ended.
func (c *ctxReader) interrupted(err error) bool {
	return c.ctx.Err() != nil && err == c.ctx.Err()
}

// close ends the reading goroutine once its Read under way, if any,
// returns.
func (c *ctxReader) close() { close(c.ask) }
