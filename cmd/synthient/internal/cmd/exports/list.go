package exports

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// ListOptions are the options of exports list.
type ListOptions struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
	Err     io.Writer // stderr: the more: hint of CSV
	Quiet   bool
	Fake    bool // each run starts a new fake: a cursor means nothing to the next

	Feed   string
	Limit  int
	All    bool
	Cursor string
}

// NewCmdList returns exports list.
func NewCmdList(f *cmdutil.Factory) *cobra.Command {
	opts := &ListOptions{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "list FEED",
		Short: "List a feed's exports, newest first",
		Args:  cmdutil.ExactArgs("FEED"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Err, opts.Quiet, opts.Fake, opts.Feed = f.Printer, f.IO.ErrOut, f.Flags.Quiet, f.Flags.Fake, args[0]
			if _, err := cmdutil.ParseFeed(opts.Feed); err != nil {
				return err
			}
			if err := cmdutil.CheckLimit(cmd, opts.Limit, 500); err != nil {
				return err
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "page size, 1 to 500 (default: the API's, 100)")
	cmd.Flags().BoolVar(&opts.All, "all", false, "follow every page (JSON: one export per line)")
	cmd.Flags().StringVar(&opts.Cursor, "cursor", "", "start at this page's cursor")
	cmdutil.SetExamples(cmd, "synthient exports list proxies --limit 5", "synthient exports list honeypot_dns --all -o json", "synthient exports list proxies --all -o csv")
	return cmdutil.TakesFeed(cmd)
}

func listRun(ctx context.Context, o *ListOptions) error {
	feed, err := cmdutil.ParseFeed(o.Feed)
	if err != nil {
		return err
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	p := &synthient.ListExportsParams{Limit: o.Limit, Cursor: o.Cursor}
	if o.All {
		return o.listAll(ctx, c, feed, p)
	}
	return o.listPage(ctx, c, feed, p)
}

// listPage prints one page of exports: in JSON the page as it is, in
// text a table and, when there are more pages, the --cursor to ask for
// the next.
func (o *ListOptions) listPage(ctx context.Context, c *synthient.Client, feed synthient.Feed, p *synthient.ListExportsParams) error {
	page, err := c.ListExports(ctx, feed, p)
	if err != nil {
		return err
	}
	pr := o.Printer
	switch {
	case pr.JSON():
		return pr.Emit(page)
	case pr.CSV():
		// The hint goes to stderr: stdout is the CSV.
		if err := render.WriteExportsCSV(pr.Out, page.Exports); err != nil {
			return err
		}
		if !o.Quiet {
			_ = o.moreHint(o.Err, page.NextCursor, "synthient: ") // stderr: a failed write has nowhere to be reported
		}
		return nil
	}
	if err := render.WriteExports(pr.Out, page.Exports); err != nil {
		return err
	}
	return o.moreHint(pr.Out, page.NextCursor, "\n")
}

// moreHint says how to list the next page, after prefix, when there is
// one (cursor not empty). It returns the error writing w.
func (o *ListOptions) moreHint(w io.Writer, cursor, prefix string) error {
	var err error
	switch {
	case cursor == "":
	case o.Fake:
		// Each run starts a new fake API: a cursor of this one means
		// nothing to the next.
		_, err = fmt.Fprintln(w, prefix+"more: --all (with --fake each run starts a new fake API, which a --cursor from this one does not reach)")
	default:
		// One line: a newline in the cursor must not forge another.
		_, err = fmt.Fprintf(w, "%smore: --cursor %s (or --all)\n", prefix, render.ShellWord(textsafe.EscapeCell(cursor)))
	}
	return err
}

// listAll prints the exports of every page: in JSON one export per line
// as it comes, in text one table once the last page came (nothing when a
// page fails).
func (o *ListOptions) listAll(ctx context.Context, c *synthient.Client, feed synthient.Feed, p *synthient.ListExportsParams) error {
	pr := o.Printer
	var exports []synthient.Export
	for e, err := range c.AllExports(ctx, feed, p) {
		if err != nil {
			return err
		}
		if pr.JSON() {
			if err := pr.Emit(e); err != nil {
				return err
			}
			continue
		}
		exports = append(exports, e)
	}
	switch {
	case pr.JSON():
		return nil
	case pr.CSV():
		return render.WriteExportsCSV(pr.Out, exports)
	}
	return render.WriteExports(pr.Out, exports)
}
