package exports

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/exports"
)

// HeadOptions are the options of exports head.
type HeadOptions struct {
	Printer *output.Printer
	Source  Source
	Rows    int
}

// NewCmdHead returns exports head.
func NewCmdHead(f *cmdutil.Factory) *cobra.Command {
	opts := &HeadOptions{Source: Source{Client: f.Client}}
	cmd := &cobra.Command{
		Use:   "head {FILE | FEED ID} [--rows N]",
		Short: "Print the first rows of an export (a file, or a feed's export by ID)",
		Long: `Print the first rows of an export as a table, every column of the file with
its name, or with --output json as NDJSON: one object a row, its members in the
file's column order, binary values in base64, nulls as null. In the table a
null is "-", a binary value that is not text is shown in hex, and a value
longer than 80 characters is cut ("…"); -o json prints every value whole, and
so does -o csv (one header of the column names, a row per row, a null empty).

` + exportSource,
		Args: cmdutil.SourceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Source.Args, opts.Source.Bar = f.Printer, args, barWriter(f)
			if opts.Rows < 1 {
				return clierr.Usagef("--rows must be at least 1, not %d", opts.Rows)
			}
			return headRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Rows, "rows", 10, "how many rows to print")
	cmd.ValidArgsFunction = (&exportIDs{f: f}).completeSource
	cmdutil.SetExamples(cmd, "synthient exports head proxies latest --rows 5", "synthient exports head honeypot_http latest --rows 3 -o json")
	return cmd
}

func headRun(ctx context.Context, o *HeadOptions) error {
	f, done, err := o.Source.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	return printHead(o.Printer, f, o.Rows)
}

// printHead prints the first n rows of f: a table, CSV, or a JSON
// document per row (which --jq or --template may shape).
func printHead(p *output.Printer, f *exports.File, n int) error {
	var names []string
	for _, c := range f.Columns() {
		names = append(names, c.Name)
	}
	var t *render.Table
	var c *render.CSV
	switch {
	case p.CSV():
		c = render.NewCSV(p.Out, names...)
	case !p.JSON():
		t = render.NewTable(p.Out)
		t.Row(names...)
	}
	i := 0
	for row, err := range f.Rows() {
		if err != nil {
			return err
		}
		i++
		switch {
		case c != nil:
			err = c.Row(rowCells(row, 0)...)
		case t != nil:
			t.Row(rowCells(row, maxCell)...)
		default:
			err = p.Tolerate(p.EmitJSON(p.Out, rowJSON(row)), "row", int64(i))
		}
		if err != nil {
			return err
		}
		if i == n {
			break
		}
	}
	switch {
	case c != nil:
		return c.Flush()
	case t != nil:
		return t.Flush()
	}
	return p.FailuresError("rows")
}

// maxCell is the most characters a value takes in the table of head.
const maxCell = 80

// rowCells renders the values of an untyped row as cells (see cellText),
// each cut to max characters unless max is 0.
func rowCells(row exports.Row, max int) []string {
	cells := make([]string, len(row.Values))
	for i, v := range row.Values {
		cells[i] = cellText(v, max)
	}
	return cells
}

// cellText renders a value of an untyped row for a table or CSV: "-" for
// a null in a table, "" in CSV (max 0), a binary value as its text when it
// is UTF-8 and else in hex, cut to max characters unless max is 0. (The
// table and the CSV escape control characters.)
func cellText(v any, max int) string {
	var s string
	switch v := v.(type) {
	case nil:
		if max == 0 {
			return ""
		}
		return "-"
	case string:
		s = v
	case []byte:
		if utf8.Valid(v) {
			s = string(v)
		} else {
			s = fmt.Sprintf("0x%x", v)
		}
	default:
		s = fmt.Sprint(v)
	}
	if max == 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// rowJSON is a row as a JSON object, its members in the file's column
// order.
func rowJSON(row exports.Row) []byte {
	b := []byte{'{'}
	for i, c := range row.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(c.Name) // a string: it cannot fail
		v, err := json.Marshal(row.Values[i])
		if err != nil { // a NaN or an infinity, as text
			v, _ = json.Marshal(fmt.Sprint(row.Values[i]))
		}
		b = append(append(append(b, name...), ':'), v...)
	}
	return append(b, '}')
}
