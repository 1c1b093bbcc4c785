package exports

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/exports"
)

// SchemaOptions are the options of exports schema.
type SchemaOptions struct {
	Printer *output.Printer
	Source  Source
}

// NewCmdSchema returns exports schema.
func NewCmdSchema(f *cmdutil.Factory) *cobra.Command {
	opts := &SchemaOptions{Source: Source{Client: f.Client}}
	cmd := &cobra.Command{
		Use:   "schema {FILE | FEED ID}",
		Short: "Print the columns of an export (a file, or a feed's export by ID)",
		Long: `Print the columns of an export: each column's name, its type as the export meta
names it (string, binary, int32, int64, ...) and whether it may hold nulls,
then the file's rows and row groups; with --output json one object.

` + exportSource,
		Args: cmdutil.SourceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Source.Args, opts.Source.Bar = f.Printer, args, barWriter(f)
			return schemaRun(cmd.Context(), opts)
		},
	}
	cmd.ValidArgsFunction = (&exportIDs{f: f}).completeSource
	cmdutil.SetExamples(cmd, "synthient exports schema anonymizers latest", "synthient exports schema torrents latest -o json")
	return cmd
}

func schemaRun(ctx context.Context, o *SchemaOptions) error {
	f, done, err := o.Source.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	return printSchema(o.Printer, f)
}

// printSchema prints the columns of f, and its size in rows.
func printSchema(p *output.Printer, f *exports.File) error {
	if p.JSON() {
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
		return p.Emit(out)
	}
	t := render.NewTable(p.Out)
	t.Row("COLUMN", "TYPE", "NULLABLE")
	for _, c := range f.Columns() {
		t.Row(c.Name, c.Type, strconv.FormatBool(c.Nullable))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(p.Out, "\n%s in %s\n", render.Plural(f.NumRows(), "row", "rows"),
		render.Plural(int64(f.NumRowGroups()), "row group", "row groups"))
	return err
}
