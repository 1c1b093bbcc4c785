package render

import (
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
