package exports

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// MetaOptions are the options of exports meta.
type MetaOptions struct {
	Printer  *output.Printer
	Client   func(...synthient.Option) (*synthient.Client, error)
	Feed, ID string
}

// NewCmdMeta returns exports meta.
func NewCmdMeta(f *cmdutil.Factory) *cobra.Command {
	opts := &MetaOptions{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "meta FEED ID",
		Short: "Describe one export (ID: latest, YYYY-MM-DD or YYYY-MM-DD/HH)",
		Args:  cmdutil.ExactArgs("FEED", "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Feed, opts.ID = f.Printer, args[0], args[1]
			return metaRun(cmd.Context(), opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient exports meta proxies latest", "synthient exports meta anonymizers latest -o json")
	return cmdutil.TakesFeed(cmd)
}

func metaRun(ctx context.Context, o *MetaOptions) error {
	feed, err := cmdutil.ParseFeed(o.Feed)
	if err != nil {
		return err
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	m, err := c.ExportMeta(ctx, feed, o.ID)
	if err != nil {
		return err
	}
	p := o.Printer
	if p.JSON() {
		return p.Emit(m)
	}
	t := render.NewTable(p.Out)
	t.Row("Stream", m.Stream)
	t.Row("ID", m.ID)
	t.Row("Kind", m.Kind)
	t.Row("Format", m.Format)
	t.Row("Date", render.UnixDate(m.Date))
	t.Row("Created", render.UnixTime(m.CreatedAt))
	t.Row("Size", fmt.Sprintf("%s (%d bytes)", render.BytesHuman(m.Size), m.Size))
	t.Row("Rows", strconv.FormatInt(m.Rows, 10))
	t.Row("SHA-256", m.Checksum)
	var cols []string
	for _, f := range m.Schema.Fields {
		cols = append(cols, f.Name+" "+f.Type)
	}
	t.Row("Columns", render.List(cols))
	return t.Flush()
}
