package iostreams

import (
	"bytes"
	"io"
	"sync"
)

// eraseLine moves to the start of the line and erases it.
const eraseLine = "\r\x1b[K"

// terminal keeps a progress bar and the lines written to one terminal
// apart, as cargo and pip do: the bar is drawn on a line of its own,
// erased before each write of output or a message to the terminal, and
// drawn again after it, so that no line holds both. It is safe for
// concurrent use.
type terminal struct {
	mu    sync.Mutex
	w     io.Writer // the terminal, where the bar is drawn
	frame []byte    // the bar as last drawn; nil when none is shown
}

// text returns a writer to w, a stream shown on the terminal (stderr
// itself, or stdout on the same terminal), whose writes erase the bar
// first and draw it again after a whole line.
func (t *terminal) text(w io.Writer) io.Writer { return &termText{t: t, w: w} }

type termText struct {
	t *terminal
	w io.Writer
}

func (x *termText) Write(p []byte) (int, error) {
	t := x.t
	t.mu.Lock()
	defer t.mu.Unlock()
	// Erasing and drawing the bar is decoration: its errors are not the
	// text's, which are p's write's.
	if t.frame != nil {
		_, _ = io.WriteString(t.w, eraseLine)
	}
	n, err := x.w.Write(p)
	if t.frame != nil && bytes.HasSuffix(p, []byte("\n")) {
		_, _ = t.w.Write(t.frame)
	}
	return n, err
}

// barWriter is where a progress bar draws: each frame replaces the last
// one on the bar's line; what the bar writes to clear itself is dropped,
// since each frame erases the line first. A newline alone, which ends a
// bar elsewhere, ends it here too: the bar is erased (see done).
type barWriter struct{ t *terminal }

func (b barWriter) Write(p []byte) (int, error) {
	if string(p) == "\n" {
		b.t.done()
		return 1, nil
	}
	frame := bytes.Trim(bytes.ReplaceAll(p, []byte("\x1b[2K"), nil), "\r")
	if len(bytes.TrimSpace(frame)) == 0 {
		return len(p), nil
	}
	t := b.t
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frame = append(append(t.frame[:0], eraseLine...), frame...)
	if _, err := t.w.Write(t.frame); err != nil {
		return 0, err
	}
	return len(p), nil
}

// done erases the bar, which is not drawn again.
func (t *terminal) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.frame != nil {
		_, _ = io.WriteString(t.w, eraseLine) // decoration, as in termText.Write
		t.frame = nil
	}
}
