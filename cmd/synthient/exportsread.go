package main

// exports head and exports schema: what an export file holds, from a file
// or from the API.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

// exportSource is the help both commands share on their arguments.
const exportSource = `FILE is a Parquet file, such as one that exports download wrote. With FEED ID
instead, the export is downloaded first, its SHA-256 verified, to a temporary
file that is removed afterwards.`

func (a *app) exportsHeadCommand() *cobra.Command {
	var rows int
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
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if rows < 1 {
				return usageError("--rows must be at least 1, not %d", rows)
			}
			f, done, err := a.openExport(cmd.Context(), args)
			if err != nil {
				return err
			}
			defer done()
			return a.printHead(f, rows)
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 10, "how many rows to print")
	cmd.ValidArgsFunction = a.completeExportSource
	return cmd
}

func (a *app) exportsSchemaCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schema {FILE | FEED ID}",
		Short: "Print the columns of an export (a file, or a feed's export by ID)",
		Long: `Print the columns of an export: each column's name, its type as the export meta
names it (string, binary, int32, int64, ...) and whether it may hold nulls,
then the file's rows and row groups; with --output json one object.

` + exportSource,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, done, err := a.openExport(cmd.Context(), args)
			if err != nil {
				return err
			}
			defer done()
			return a.printSchema(f)
		},
	}
	cmd.ValidArgsFunction = a.completeExportSource
	return cmd
}

// completeExportSource completes FILE with file names, and after a feed
// name the export ID.
func (a *app) completeExportSource(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	if _, err := synthient.ParseFeed(args[0]); err != nil || len(args) > 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.completeFeedAndID(cmd, args, typed)
}

// openExport opens the export that args name: FILE, or FEED ID, which it
// downloads first (see exportSource). done closes the file and removes
// the download.
func (a *app) openExport(ctx context.Context, args []string) (f *exports.File, done func(), err error) {
	if len(args) == 1 {
		f, err := openExportFile(args[0])
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	}
	if _, err := synthient.ParseFeed(args[0]); err != nil {
		return nil, nil, usageError("%q is not a feed: give one FILE, or a FEED (%s) and an export ID", args[0], strings.Join(feedNames(), ", "))
	}
	feed, err := parseFeed(args[0])
	if err != nil {
		return nil, nil, err
	}
	c, err := a.newClient()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "synthient-export-")
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dir, "export.parquet")
	p := &synthient.DownloadParams{Verify: true}
	finish := a.downloadProgress(p)
	_, err = c.DownloadExportFile(ctx, feed, args[1], path, p)
	finish()
	if err == nil {
		f, err = exports.Open(path)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return f, func() { f.Close(); os.RemoveAll(dir) }, nil
}

// openExportFile opens the export file name, given as FILE. A name that
// is no file, is not a regular file (Parquet is read from its end: a pipe
// cannot be), or is not a Parquet file, is a usage error (exit 2).
func openExportFile(name string) (*exports.File, error) {
	info, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, ferr := synthient.ParseFeed(name); ferr == nil {
			return nil, usageError("no file %s: for a feed's export, give its ID too (%s latest)", name, name)
		}
		return nil, usageError("no file %s", name)
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, usageError("%s is a directory, not an export file", name)
	case !info.Mode().IsRegular():
		return nil, usageError("%s is not a regular file: a Parquet file is read from its end, so save it first (exports download --out FILE)", name)
	}
	f, err := exports.Open(name)
	var fe *exports.FormatError
	if errors.As(err, &fe) {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return f, err
}

// printHead prints the first n rows of f: a table, CSV, or a JSON
// document per row (which --jq or --template may shape).
func (a *app) printHead(f *exports.File, n int) error {
	var names []string
	for _, c := range f.Columns() {
		names = append(names, c.Name)
	}
	var t *table
	var c *csvTable
	switch {
	case a.csv():
		c = newCSVTable(a.env.stdout, names...)
	case !a.json():
		t = newTable(a.env.stdout)
		t.row(names...)
	}
	i := 0
	for row, err := range f.Rows() {
		if err != nil {
			return err
		}
		i++
		switch {
		case c != nil:
			err = c.row(rowCells(row, 0)...)
		case t != nil:
			t.row(rowCells(row, maxCell)...)
		default:
			err = a.tolerate(a.emitJSON(a.env.stdout, rowJSON(row)), "row", int64(i))
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
		return c.flush()
	case t != nil:
		return t.flush()
	}
	return a.shapeFailuresError("rows")
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

// printSchema prints the columns of f, and its size in rows.
func (a *app) printSchema(f *exports.File) error {
	if a.json() {
		type column struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			Nullable bool   `json:"nullable"`
		}
		out := struct {
			Columns   []column `json:"columns"`
			Rows      int64    `json:"rows"`
			RowGroups int      `json:"row_groups"`
		}{Rows: f.NumRows(), RowGroups: f.NumRowGroups()}
		for _, c := range f.Columns() {
			out.Columns = append(out.Columns, column(c))
		}
		return a.emit(out)
	}
	t := newTable(a.env.stdout)
	t.row("COLUMN", "TYPE", "NULLABLE")
	for _, c := range f.Columns() {
		t.row(c.Name, c.Type, strconv.FormatBool(c.Nullable))
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(a.env.stdout, "\n%s in %s\n", plural(f.NumRows(), "row", "rows"),
		plural(int64(f.NumRowGroups()), "row group", "row groups"))
	return err
}
