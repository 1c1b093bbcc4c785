package iostreams

import (
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// rateAfter is how long a transfer runs before its bar shows its rate: a
// rate taken over less (a download from a server on the same host, done
// in microseconds, shows "38 GB/s") means nothing.
const rateAfter = time.Second

// BytesBar is a progress bar of a transfer of bytes: how much of it is
// done, and its rate once it has run a second (rateAfter). Its methods
// must be called from one goroutine at a time.
type BytesBar struct {
	bar   *progressbar.ProgressBar
	now   func() time.Time
	start time.Time // of the first Set64; zero before it
	rate  bool      // the rate is shown
}

// NewBytesBar returns a progress bar on w for a transfer of total bytes.
func NewBytesBar(w io.Writer, total int64, desc string) *BytesBar {
	return &BytesBar{now: time.Now, bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(50*time.Millisecond),
	)}
}

// SetClock makes b time the transfer with now, for tests.
func (b *BytesBar) SetClock(now func() time.Time) { b.now = now }

// Set64 draws done bytes of the transfer (at most every 50 ms). An error
// drawing the bar is the writer's.
func (b *BytesBar) Set64(done int64) error {
	if b.start.IsZero() {
		b.start = b.now()
	}
	b.showRate()
	return b.bar.Set64(done)
}

// Finish draws the transfer done.
func (b *BytesBar) Finish() error {
	b.showRate()
	return b.bar.Finish()
}

// showRate turns the rate on once the transfer has run rateAfter.
func (b *BytesBar) showRate() {
	if !b.rate && !b.start.IsZero() && b.now().Sub(b.start) >= rateAfter {
		b.rate = true
		progressbar.OptionShowBytes(true)(b.bar) // an Option is a setting of the bar, applied to it
	}
}

// barInterval is the shortest time between two frames of a CountBar.
const barInterval = 50 * time.Millisecond

// CountBar is a progress bar that counts up to a total. It draws a frame
// at most every 50 ms, and draws a count it held back once counting
// pauses that long, so that a bar at rest (waiting for an answer, say)
// shows the exact count. Its methods are safe for concurrent use.
type CountBar struct {
	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	total   int64       // -1: unknown
	n       int64       // the count
	drawn   int64       // the count last drawn
	last    time.Time   // when it was drawn
	pending *time.Timer // the draw of a count held back; nil for none
	ended   bool
}

// NewCountBar returns a bar on w that counts up to total (-1: unknown),
// drawing no spinner of its own.
func NewCountBar(w io.Writer, total int64, desc string) *CountBar {
	return &CountBar{total: total, bar: progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetSpinnerChangeInterval(0), // no spinner goroutine
	)}
}

// Add counts n more. An error drawing the bar is dropped: the bar only
// shows progress, and a stderr that is gone stops nothing.
func (b *CountBar) Add(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return
	}
	b.n += n
	if wait := barInterval - time.Since(b.last); wait > 0 {
		if b.pending == nil {
			b.pending = time.AfterFunc(wait, b.drawHeld)
		}
		return
	}
	b.draw()
}

// drawHeld draws the count that Add held back.
func (b *CountBar) drawHeld() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = nil
	if !b.ended && b.drawn != b.n {
		b.draw()
	}
}

// draw draws the count; b.mu is held.
func (b *CountBar) draw() {
	_ = b.bar.Set64(b.n) // see Add
	b.drawn, b.last = b.n, time.Now()
}

// End draws the count held back, if any, and stops the bar: nothing is
// drawn after it. When total is not -1, a bar of an unknown total learns
// it, and shows 100% first. The caller erases the bar (a newline on the
// terminal's bar writer).
func (b *CountBar) End(total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending != nil {
		b.pending.Stop() // drawHeld, if it runs anyway, sees ended
	}
	if b.drawn != b.n {
		b.draw()
	}
	if total > 0 && b.total < 0 {
		b.bar.ChangeMax64(total)
		_ = b.bar.Finish() // see Add
	}
	b.ended = true
	_ = b.bar.Exit() // see Add
}
