// Package addrinput reads the addresses of a bulk lookup, numbering the
// lines and reporting the words that are not addresses; a read blocked on
// a pipe or a terminal gives way to an interrupt at once.
package addrinput

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

// Count counts the addresses of in, a regular file or the text of the
// addresses given as arguments, as the run will read them (the words that
// are not addresses included), and rewinds it; -1 if in is a file that is
// not regular (a pipe cannot be read twice).
func Count(in io.ReadSeeker) (int64, error) {
	if f, ok := in.(*os.File); ok && !isRegular(f) {
		return -1, nil
	}
	r := &Reader{br: bufio.NewReaderSize(in, MaxLine), report: func(int64, string) {}}
	var n int64
	for {
		_, ok, err := r.next()
		if ok {
			n++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			n = -1
			break
		}
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading the addresses: %w", err)
	}
	return n, nil
}

// isRegular reports whether f is a regular file. A file that cannot be
// stat'ed is not known to be one: the run reads it all the same, and
// reports the reading's error there.
func isRegular(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// Entry is one address of the input, as Addrs handed it out: its line,
// the address (the zero Addr for a word that is not one), and whether
// Skip kept it from the SDK.
type Entry struct {
	Line    int64
	IP      netip.Addr
	Skipped bool
}

// Reader reads the input line by line, numbering the lines, and reports
// every word that is not an address. A line holds addresses separated by
// white space (one per line, or several, as "echo a b" gives them); blank
// lines are skipped, and # starts a comment that runs to the end of the
// line. It reads through a ctxReader, so that an interrupt ends a read
// blocked on a pipe.
type Reader struct {
	// Skip, when not nil, reports an address that is not to be handed to
	// the SDK (one the journal settled): Addrs leaves it out, and Next
	// returns it as Skipped, in its place.
	Skip func(netip.Addr) bool

	src     *ctxReader
	br      *bufio.Reader // of MaxLine bytes: a longer line does not fit
	report  func(line int64, text string)
	line    int64        // the number of the last line read
	fields  []netip.Addr // the addresses of the line not handed out yet
	lineErr error        // the error that came with the line; returned once fields are out
	pending entryQueue   // the entries handed out and not answered
	err     error        // the reading's error, but the end of the input
}

// NewReader reads in until ctx ends, reporting each word that is not an
// address with report. Close ends its reading goroutine.
func NewReader(ctx context.Context, in io.Reader, report func(line int64, text string)) *Reader {
	src := newCtxReader(ctx, in)
	return &Reader{src: src, br: bufio.NewReaderSize(src, MaxLine), report: report}
}

// Close lets the reading goroutine end once its read returns.
func (r *Reader) Close() { r.src.close() }

// Addrs is the input's addresses, for the SDK: each word of a line yields
// its address, or the zero netip.Addr when it is not one (so that it has a
// result of its own, in order); an address Skip reports is left out. It
// ends at the end of the input, when reading fails (see End) or ctx ends.
func (r *Reader) Addrs() iter.Seq[netip.Addr] {
	return func(yield func(netip.Addr) bool) {
		for {
			ip, ok, err := r.next()
			if ok {
				e := r.entry(ip)
				r.pending.push(e)
				if !e.Skipped && !yield(ip) {
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

// entry is the entry of ip, read on the current line.
func (r *Reader) entry(ip netip.Addr) Entry {
	return Entry{Line: r.line, IP: ip, Skipped: ip.IsValid() && r.Skip != nil && r.Skip(ip)}
}

// Buffered is the addresses left in the reader's buffer after an
// interrupt, as Addrs would have handed them out: read from the input,
// never handed out.
func (r *Reader) Buffered() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for {
			ip, ok, err := r.next() // the ctxReader reads nothing more
			if ok && !yield(r.entry(ip)) || err != nil {
				return
			}
		}
	}
}

// Next returns the oldest entry Addrs handed out and Next did not return
// yet: the SDK answers in order, so the entries before the one of a
// result are skipped ones. ok is false when there is none.
func (r *Reader) Next() (e Entry, ok bool) { return r.pending.pop() }

// Line returns the number of the last line read.
func (r *Reader) Line() int64 { return r.line }

// setErr keeps the reading's error: none at the end of the input nor for
// an interrupt, which the run's context tells.
func (r *Reader) setErr(err error) {
	if !errors.Is(err, io.EOF) && !r.src.interrupted(err) && r.err == nil {
		r.err = fmt.Errorf("reading the addresses: %w", err)
	}
}

// End returns the reading's error, nil when the input ended or was
// interrupted.
func (r *Reader) End() error { return r.err }

// next returns the next address of the input (ok), or the zero Addr for a
// word that is not one (reported). err is nil, io.EOF at the end of the
// input, or the reading's error, returned once the addresses of the line
// it came with (a last line without a newline) are out.
func (r *Reader) next() (ip netip.Addr, ok bool, err error) {
	for {
		if len(r.fields) > 0 {
			ip, r.fields = r.fields[0], r.fields[1:]
			return ip, true, nil
		}
		if r.lineErr != nil {
			err, r.lineErr = r.lineErr, nil
			return netip.Addr{}, false, err
		}
		r.readLine()
	}
}

// readLine reads a line into fields, with its error in lineErr. A line
// that does not fit the buffer is one word that is not an address;
// whatever was read of a line with an error other than io.EOF is dropped.
func (r *Reader) readLine() {
	raw, err := r.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		r.line++
		r.report(r.line, string(raw))
		r.fields = append(r.fields[:0], netip.Addr{})
		r.lineErr = r.skipLine()
		return
	case err != nil && !errors.Is(err, io.EOF), len(raw) == 0:
		r.lineErr = err
		return
	}
	r.line++
	r.parse(raw)
	r.lineErr = err
}

// skipLine skips the rest of a line that does not fit the buffer. It
// returns nil, io.EOF when the input ends with that line, or the reading's
// error.
func (r *Reader) skipLine() error {
	err := bufio.ErrBufferFull
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = r.br.ReadSlice('\n')
	}
	return err
}

// parse sets fields to the addresses of raw, the line just read: a byte
// order mark opening the first line is dropped; a word that starts with #
// ends the line; any other word that is not an address, or is one with a
// zone, is reported and stands as the zero Addr.
func (r *Reader) parse(raw []byte) {
	if r.line == 1 {
		raw = bytes.TrimPrefix(raw, []byte("\ufeff")) // a UTF-8 byte order mark
	}
	r.fields = r.fields[:0]
	for _, word := range strings.Fields(string(raw)) {
		if strings.HasPrefix(word, "#") {
			break
		}
		ip, err := netip.ParseAddr(word)
		if err != nil || ip.Zone() != "" {
			r.report(r.line, word)
			ip = netip.Addr{}
		}
		r.fields = append(r.fields, ip)
	}
}

// entryQueue is a FIFO of entries: those handed to the SDK and not
// answered yet, which it holds no more of than its window, and the
// skipped ones among them.
type entryQueue struct {
	q    []Entry
	head int
}

func (l *entryQueue) push(e Entry) { l.q = append(l.q, e) }

// pop returns the oldest entry; ok is false if there is none.
func (l *entryQueue) pop() (Entry, bool) {
	if l.head == len(l.q) {
		return Entry{}, false
	}
	e := l.q[l.head]
	l.head++
	if l.head >= 1024 && l.head >= len(l.q)/2 { // reuse the spent front
		l.q = l.q[:copy(l.q, l.q[l.head:])]
		l.head = 0
	}
	return e, true
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
	return c.ctx.Err() != nil && errors.Is(err, c.ctx.Err())
}

// close ends the reading goroutine once its Read under way, if any,
// returns.
func (c *ctxReader) close() { close(c.ask) }
