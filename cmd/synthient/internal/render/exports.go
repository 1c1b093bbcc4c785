package render

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/synthient-go/synthient"
)

// WriteExports prints exports as a table.
func WriteExports(w io.Writer, exports []synthient.Export) error {
	t := NewTable(w)
	t.Row("ID", "KIND", "SIZE", "ROWS", "CREATED", "SHA-256")
	for _, e := range exports {
		sum := e.Checksum
		if len(sum) > 12 {
			sum = sum[:12] + "…"
		}
		t.Row(e.ID, e.Kind, BytesHuman(e.SizeBytes), strconv.FormatInt(e.RowCount, 10), UnixTime(e.CreatedAt), sum)
	}
	return t.Flush()
}

// ExportCSVHeader is the CSV header of export listings.
var ExportCSVHeader = []string{"id", "kind", "date", "hour", "size_bytes", "row_count", "created_at", "checksum"}

// ExportCSVRow is an export's row under ExportCSVHeader.
func ExportCSVRow(e *synthient.Export) []string {
	hour, created := "", ""
	if e.Hour != nil {
		hour = strconv.Itoa(*e.Hour)
	}
	if e.CreatedAt != 0 {
		created = time.Unix(e.CreatedAt, 0).UTC().Format(time.RFC3339)
	}
	return []string{e.ID, e.Kind, e.Date, hour, strconv.FormatInt(e.SizeBytes, 10),
		strconv.FormatInt(e.RowCount, 10), created, e.Checksum}
}

// WriteExportsCSV writes exports as CSV.
func WriteExportsCSV(w io.Writer, exports []synthient.Export) error {
	rows := make([][]string, len(exports))
	for i := range exports {
		rows[i] = ExportCSVRow(&exports[i])
	}
	return WriteCSV(w, ExportCSVHeader, rows...)
}

// WriteExportMeta prints an export's meta as a two-column table.
func WriteExportMeta(w io.Writer, m *synthient.ExportMeta) error {
	t := NewTable(w)
	t.Row("Stream", m.Stream)
	t.Row("ID", m.ID)
	t.Row("Kind", m.Kind)
	t.Row("Format", m.Format)
	t.Row("Date", UnixDate(m.Date))
	t.Row("Created", UnixTime(m.CreatedAt))
	t.Row("Size", fmt.Sprintf("%s (%d bytes)", BytesHuman(m.Size), m.Size))
	t.Row("Rows", strconv.FormatInt(m.Rows, 10))
	t.Row("SHA-256", m.Checksum)
	var cols []string
	for _, f := range m.Schema.Fields {
		cols = append(cols, f.Name+" "+f.Type)
	}
	t.Row("Columns", List(cols))
	return t.Flush()
}
