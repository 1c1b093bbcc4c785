package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// WriteJSONLine writes the JSON text b as one line, with every control
// character, C1 control, U+2028 and U+2029 in its strings \u-escaped
// (textsafe.AppendJSON): encoding/json leaves C1 controls and DEL raw,
// and a stream line is the server's own text.
func WriteJSONLine(w io.Writer, b []byte) error {
	line := make([]byte, 0, len(b)+1)
	if textsafe.NeedsEscape(b) {
		line = textsafe.AppendJSON(line, b)
	} else {
		line = append(line, b...)
	}
	_, err := w.Write(append(line, '\n'))
	return err
}

// Table writes aligned columns, two spaces apart, once flushed.
type Table struct {
	tw  *tabwriter.Writer
	err error // the first error of a Row, which Flush returns
}

// NewTable returns a Table that writes to w.
func NewTable(w io.Writer) *Table {
	return &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

// Row adds a row; a cell's control characters, tab and newline included,
// are escaped first, so that a value cannot break the columns or forge a
// line (and the columns are measured on what is printed). An error
// writing the output is kept for Flush.
func (t *Table) Row(cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = textsafe.EscapeCell(c)
	}
	if _, err := fmt.Fprintln(t.tw, strings.Join(safe, "\t")); err != nil && t.err == nil {
		t.err = err
	}
}

// Flush writes the rows added so far, aligned among themselves, and
// returns the first error writing the output, of a Row or of the flush.
func (t *Table) Flush() error {
	err := t.tw.Flush()
	if t.err != nil {
		return t.err
	}
	return err
}

// CSV writes CSV: a header, then rows. A cell that a spreadsheet would
// run as a formula (it starts with =, +, -, @, a tab or a carriage
// return, and is not a number) gets a leading ': the text is the
// server's.
type CSV struct{ w *csv.Writer }

// NewCSV returns a CSV that writes to w, its header first (none when
// header is empty).
func NewCSV(w io.Writer, header ...string) *CSV {
	t := &CSV{w: csv.NewWriter(w)}
	if len(header) > 0 {
		_ = t.Row(header...) // an error here comes back from the next row or flush: csv.Writer keeps it
	}
	return t
}

// CSVLine returns the line a CSV writes for the row cells.
func CSVLine(cells ...string) []byte {
	var b bytes.Buffer
	t := NewCSV(&b)
	_ = t.Row(cells...) // a bytes.Buffer takes every write
	_ = t.Flush()
	return b.Bytes()
}

// Row writes one row; an error is the output's.
func (t *CSV) Row(cells ...string) error {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = CSVCell(c)
	}
	return t.w.Write(safe)
}

// Flush writes what is buffered, and returns the first write error.
func (t *CSV) Flush() error {
	t.w.Flush()
	return t.w.Error()
}

// WriteCSV writes a header and rows.
func WriteCSV(w io.Writer, header []string, rows ...[]string) error {
	t := NewCSV(w, header...)
	for _, r := range rows {
		if err := t.Row(r...); err != nil {
			return err
		}
	}
	return t.Flush()
}

// CSVCell defuses a cell a spreadsheet would read as a formula.
func CSVCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// formatFloat renders f as a program reads it: as few digits as make it.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
