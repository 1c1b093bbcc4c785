package render

import (
	"io"
	"strings"

	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// Column is a column of a Stream: its header, and the most characters it
// takes (0: no bound). A Long column's cells are never cut: a longer one
// pushes the rest of its row. Need, when set, is the width a cell asks
// for, in place of its own (an address column: room for any IPv6 address
// once one is there).
type Column struct {
	Header string
	Max    int
	Long   bool
	Need   func(cell string) int
}

// Stream is a table printed as its rows come, a block at a time (Flush),
// whose columns do not move: their widths are those of the first block
// (at least the header's, at most Max), kept for every later row; a later
// cell wider than its column is cut with "…", unless Long. The last
// column is neither padded nor cut. The header is printed with the first
// row, so a table without rows prints nothing. Cells are escaped
// (textsafe.EscapeCell), and measured without their colour marks.
type Stream struct {
	w       io.Writer
	cols    []Column
	widths  []int // nil until the first Flush with rows
	pending [][]string
}

// NewStream returns a Stream of cols that writes to w.
func NewStream(w io.Writer, cols ...Column) *Stream {
	return &Stream{w: w, cols: cols}
}

// Row adds a row, printed at the next Flush.
func (t *Stream) Row(cells ...string) {
	row := make([]string, len(t.cols))
	for i := range row {
		if i < len(cells) {
			row[i] = textsafe.EscapeCell(cells[i])
		}
	}
	t.pending = append(t.pending, row)
}

// Flush prints the rows added since the last Flush; the first Flush that
// has rows sets the widths and prints the header first.
func (t *Stream) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	var b strings.Builder
	if t.widths == nil {
		t.widths = make([]int, len(t.cols))
		for i, c := range t.cols {
			t.widths[i] = textsafe.Width(c.Header)
			for _, r := range t.pending {
				need := textsafe.Width(r[i])
				if c.Need != nil {
					need = c.Need(r[i])
				}
				t.widths[i] = max(t.widths[i], need)
			}
			if c.Max > 0 && !c.Long {
				t.widths[i] = min(t.widths[i], max(c.Max, textsafe.Width(c.Header)))
			}
		}
		header := make([]string, len(t.cols))
		for i, c := range t.cols {
			header[i] = c.Header
		}
		t.line(&b, header)
	}
	for _, r := range t.pending {
		t.line(&b, r)
	}
	t.pending = t.pending[:0]
	_, err := io.WriteString(t.w, b.String())
	return err
}

// line writes one row, its cells fitted to the widths, two spaces apart.
func (t *Stream) line(b *strings.Builder, row []string) {
	last := len(row) - 1
	for i, cell := range row {
		if i == last {
			b.WriteString(cell)
			break
		}
		w := t.widths[i]
		if n := textsafe.Width(cell); n > w && !t.cols[i].Long {
			cell = Clip(textsafe.Unpaint(cell), w)
		}
		b.WriteString(cell)
		b.WriteString(strings.Repeat(" ", max(0, w-textsafe.Width(cell))+2))
	}
	b.WriteByte('\n')
}
