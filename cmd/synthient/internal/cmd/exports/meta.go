package exports

import (
	"context"

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
	return render.WriteExportMeta(p.Out, m)
}
