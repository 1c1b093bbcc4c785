package batch

import (
	"fmt"
	"io"

	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// progress is the progress bar of a run: it counts every address line,
// invalid ones included, once its outcome is written out (a looked-up
// address of a text table once its row is). A nil *progress draws
// nothing.
type progress struct {
	w    io.Writer // where the bar draws
	bar  *iostreams.CountBar
	held int64 // addresses counted while table rows were held back
}

// newProgress returns the bar of a run of total address lines (-1:
// unknown), drawn on w.
func newProgress(w io.Writer, total int64) *progress {
	return &progress{w: w, bar: iostreams.NewCountBar(w, total, "looking up")}
}

// add counts one address; with hold, while rows of the table are held
// back, not before release: the bar never counts an address ahead of the
// rows before it.
func (p *progress) add(hold bool) {
	switch {
	case p == nil:
	case hold:
		p.held++
	default:
		p.bar.Add(1)
	}
}

// release counts the addresses held while the table's rows were held
// back, once they are written out.
func (p *progress) release() {
	if p != nil && p.held > 0 {
		p.bar.Add(p.held)
		p.held = 0
	}
}

// end ends the bar, which the terminal erases: the summary follows it.
// Once the input ended (not stopped), a bar of an unknown total learns
// it, n, and shows 100%.
func (p *progress) end(stopped bool, n int64) {
	if p == nil {
		return
	}
	if stopped {
		n = -1
	}
	p.bar.End(n)
	_, _ = fmt.Fprintln(p.w) // the bar only shows progress: a stderr gone stops nothing
}
