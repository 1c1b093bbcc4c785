package index

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// StatsOptions are the options of index stats.
type StatsOptions struct {
	Printer *output.Printer
	Index   string
}

// NewCmdStats returns index stats. runF, when not nil, runs in place of
// the command's own run function.
func NewCmdStats(f *cmdutil.Factory, runF func(context.Context, *StatsOptions) error) *cobra.Command {
	opts := &StatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats FILE",
		Short: "Describe an index file: its feeds, entries and exports",
		Long: `Describe an index file: its size and maximum age, and for each feed the IPv4
and IPv6 entries (addresses; for anonymizers the intervals of addresses that
ranges cover), the time of the latest row, and the exports added. The file is
checked whole (its checksums and tables) as every command that opens it does;
a damaged file is refused.

` + indexHelp,
		Args: cmdutil.ExactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.Index = f.Printer, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return statsRun(opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient index stats feeds.synidx", "synthient index stats feeds.synidx -o json")
	return cmd
}

type feedStatsJSON struct {
	Feed    string   `json:"feed"`
	IPv4    int      `json:"ipv4"`
	IPv6    int      `json:"ipv6"`
	Updated *int64   `json:"updated"`
	Exports []string `json:"exports"`
}

type statsJSON struct {
	File       string          `json:"file"`
	Size       int64           `json:"size"`
	MaxAge     string          `json:"max_age"`
	Strings    int             `json:"strings"`
	Tuples     int             `json:"tuples"`
	TableBytes int64           `json:"table_bytes"`
	Feeds      []feedStatsJSON `json:"feeds"`
}

func statsRun(o *StatsOptions) error {
	ix, err := openIndex(o.Index, -1)
	if err != nil {
		return err
	}
	defer ix.Close()
	fi, err := os.Stat(o.Index)
	if err != nil {
		return err
	}
	st := ix.Stats()
	doc := statsJSON{File: o.Index, Size: fi.Size(), MaxAge: ix.MaxAge().String(), Strings: st.Strings, Tuples: st.Tuples, TableBytes: st.Bytes}
	for _, fs := range st.Feeds {
		fj := feedStatsJSON{Feed: string(fs.Feed), IPv4: fs.IPv4 + fs.Pending, IPv6: fs.IPv6, Exports: fs.Exports}
		if fj.Exports == nil {
			fj.Exports = []string{}
		}
		if !fs.Updated.IsZero() {
			u := fs.Updated.Unix()
			fj.Updated = &u
		}
		doc.Feeds = append(doc.Feeds, fj)
	}
	if o.Printer.JSON() {
		return o.Printer.Emit(doc)
	}
	t := render.NewTable(o.Printer.Out)
	t.Row("FILE", doc.File)
	t.Row("SIZE", strconv.FormatInt(doc.Size, 10)+" bytes")
	t.Row("MAX AGE", doc.MaxAge)
	t.Row("DICTIONARY", strconv.Itoa(doc.Strings)+" strings, "+strconv.Itoa(doc.Tuples)+" tuples")
	if err := t.Flush(); err != nil {
		return err
	}
	if _, err := io.WriteString(o.Printer.Out, "\n"); err != nil {
		return err
	}
	t = render.NewTable(o.Printer.Out)
	t.Row("FEED", "IPV4", "IPV6", "LATEST ROW", "EXPORTS")
	for _, f := range doc.Feeds {
		latest := "-"
		if f.Updated != nil {
			latest = time.Unix(*f.Updated, 0).UTC().Format(time.RFC3339)
		}
		exports := strings.Join(f.Exports, " ")
		if exports == "" {
			exports = "-"
		}
		t.Row(f.Feed, strconv.Itoa(f.IPv4), strconv.Itoa(f.IPv6), latest, exports)
	}
	return t.Flush()
}
