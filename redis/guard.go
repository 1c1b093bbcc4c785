package redis

// The guard between Redis and go-redis's reader. go-redis allocates what a
// reply's header announces before it reads a byte of it (a string of 64
// GiB, an array of 2^40 elements) and recurses into nested arrays: a
// server that answers garbage can make it panic, or make the runtime fail
// an allocation or overflow a stack, which ends the process whatever
// recovers. go-redis has no option that bounds a reply, so the cache's
// hook wraps each connection its client dials in a checkedConn, which
// follows the framing of what Redis sends and refuses a reply over the
// limits below before go-redis reads it.

import (
	"context"
	"fmt"
	"net"
	"syscall"

	goredis "github.com/redis/go-redis/v9"
)

// Limits of a reply, far above what the cache's commands get from a real
// Redis (a value is a few kilobytes), far below what a process cannot
// allocate.
const (
	// maxString bounds a string: bulk, verbatim or an error.
	maxString = 64 << 20
	// maxOpen bounds the elements announced and yet to come of a reply's
	// arrays, sets and maps (a map's pair counts two): what go-redis has
	// allocated ahead of the bytes.
	maxOpen = 1 << 20
	// maxDepth bounds the nesting of arrays, sets and maps.
	maxDepth = 64
	// maxLine bounds a line: a header, a simple string, an error, a number.
	maxLine = 64 << 10
)

// refused returns the error of a connection whose reply the guard
// refused. It wraps nothing: go-redis unwraps a handshake's error once.
func refused(format string, args ...any) error {
	return fmt.Errorf("synthient/redis: refused Redis's reply: "+format, args...)
}

// guard adds the hook to rdb: to each node of a cluster or ring (those it
// makes later, and a ring's present ones), to rdb itself otherwise.
func guard(rdb goredis.UniversalClient) {
	hook := func(c *goredis.Client) { c.AddHook(replyGuard{}) }
	switch r := rdb.(type) {
	case *goredis.ClusterClient:
		r.OnNewNode(hook)
	case *goredis.Ring:
		r.OnNewNode(hook)
		_ = r.ForEachShard(context.Background(), func(_ context.Context, c *goredis.Client) error {
			hook(c)
			return nil
		})
	default:
		rdb.AddHook(replyGuard{})
	}
}

// replyGuard is a go-redis hook that wraps each connection it dials in a
// checkedConn.
type replyGuard struct{}

func (replyGuard) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := &checkedConn{Conn: conn}
		if _, ok := conn.(syscall.Conn); ok {
			// go-redis peeks at the descriptor to find a connection
			// Redis closed while it was idle.
			return checkedSysConn{c}, nil
		}
		return c, nil
	}
}

func (replyGuard) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }

func (replyGuard) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// checkedConn is a connection whose Read fails, for good, at the first
// reply over the limits; the bytes of that read are not returned. Like any
// net.Conn, one goroutine reads at a time.
type checkedConn struct {
	net.Conn
	frames frames
	err    error
}

func (c *checkedConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if ferr := c.frames.scan(p[:n]); ferr != nil {
		c.err = ferr
		return 0, ferr
	}
	return n, err
}

// checkedSysConn is a checkedConn on a connection that is a syscall.Conn.
type checkedSysConn struct{ *checkedConn }

func (c checkedSysConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// frames follows the framing of a stream of RESP replies, a chunk at a
// time, and refuses what is over the limits. Anything else (a malformed
// line, a type it does not know) it passes on for go-redis to refuse.
type frames struct {
	skip int64 // bytes to come of a string's payload and its CRLF
	kind byte  // the type of the line under way; 0 between lines
	line int   // bytes of the line under way, past its type
	n    int64 // the length it announces, so far
	neg  bool  // the length is negative (a nil)
	open []agg // the aggregates under way, innermost last
	left int64 // the sum of their elements to come
}

// agg is an array, set, map or attribute under way.
type agg struct {
	left int64 // elements to come
	attr bool  // an attribute, which is no element of its parent
}

// scan takes the next chunk of the stream.
func (f *frames) scan(b []byte) error {
	for len(b) > 0 {
		if f.skip > 0 {
			k := min(f.skip, int64(len(b)))
			f.skip -= k
			b = b[k:]
			if f.skip == 0 {
				f.done()
			}
			continue
		}
		c := b[0]
		b = b[1:]
		if f.kind == 0 {
			f.kind, f.line, f.n, f.neg = c, 0, 0, false
			continue
		}
		if err := f.take(c); err != nil {
			return err
		}
	}
	return nil
}

// take takes c, the next byte of a line past its type.
func (f *frames) take(c byte) error {
	f.line++
	if f.line > maxLine {
		return refused("a line of over %d bytes", maxLine)
	}
	limit := lengthLimit(f.kind)
	switch {
	case c == '\n':
		k := f.kind
		f.kind = 0
		return f.end(k)
	case limit == 0 || c == '\r':
	case c == '-' && f.line == 1:
		f.neg = true
	case '0' <= c && c <= '9':
		f.n = f.n*10 + int64(c-'0')
		if f.n > limit {
			return refused("a length over %d after %q", limit, f.kind)
		}
	default:
		return refused("%q in a length after %q", c, f.kind)
	}
	return nil
}

// end ends a line of type kind.
func (f *frames) end(kind byte) error {
	switch limit := lengthLimit(kind); {
	case limit == 0 || f.neg:
		f.done() // a line of its own, or a nil
	case limit == maxString:
		f.skip = f.n + 2
	case f.n == 0:
		f.done() // an empty aggregate
	default:
		return f.push(kind, f.n)
	}
	return nil
}

// push opens an aggregate of type kind announcing n elements.
func (f *frames) push(kind byte, n int64) error {
	if kind == '%' || kind == '|' {
		n *= 2
	}
	if len(f.open) == maxDepth {
		return refused("aggregates nested over %d deep", maxDepth)
	}
	if f.left+n > maxOpen {
		return refused("over %d elements announced", maxOpen)
	}
	f.open = append(f.open, agg{left: n, attr: kind == '|'})
	f.left += n
	return nil
}

// done counts an element complete: in its aggregate, and so on out for
// each aggregate it completes.
func (f *frames) done() {
	for len(f.open) > 0 {
		top := &f.open[len(f.open)-1]
		top.left--
		f.left--
		if top.left > 0 {
			return
		}
		attr := top.attr
		f.open = f.open[:len(f.open)-1]
		if attr {
			return
		}
	}
}

// lengthLimit returns the limit of the length a line of type kind
// announces, 0 for a type that announces none.
func lengthLimit(kind byte) int64 {
	switch kind {
	case '$', '!', '=': // bulk string, bulk error, verbatim string
		return maxString
	case '*', '~', '>', '%', '|': // array, set, push, map, attribute
		return maxOpen
	}
	return 0
}
