package batch

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"

	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// progress is the progress bar of a run: it counts every address line,
// invalid ones included. A nil *progress draws nothing. The bar only
// shows progress: a failure to draw it (stderr gone) stops nothing, and
// the run's outcome does not depend on it.
type progress struct {
	w     io.Writer // where the bar draws
	bar   *progressbar.ProgressBar
	total int64 // the address lines; -1 if unknown
}

// newProgress returns the bar of a run of total address lines (-1:
// unknown), drawn on w.
func newProgress(w io.Writer, total int64) *progress {
	return &progress{w: w, bar: iostreams.NewCountBar(w, total, "looking up"), total: total}
}

// add counts one address.
func (p *progress) add() {
	if p != nil {
		_ = p.bar.Add(1) // see progress
	}
}

// end ends the bar, which the terminal erases: the summary follows it.
// Once the input ended (not stopped), a bar of an unknown total learns
// it, n, and shows 100%.
func (p *progress) end(stopped bool, n int64) {
	if p == nil {
		return
	}
	if !stopped && n > 0 && p.total < 0 {
		p.bar.ChangeMax64(n)
		_ = p.bar.Finish() // see progress
	}
	_ = p.bar.Exit()
	_, _ = fmt.Fprintln(p.w)
}
