package index

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/addrinput"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/feedindex"
)

// CheckOptions are the options of index check.
type CheckOptions struct {
	Printer *output.Printer
	In      io.Reader // stdin
	Err     io.Writer // stderr: the words that are not addresses

	Index  string
	Addrs  []string // ADDR..., or "-" for stdin
	All    bool
	MaxAge time.Duration // negative: the file's
}

// NewCmdCheck returns index check. runF, when not nil, runs in place of
// the command's own run function.
func NewCmdCheck(f *cmdutil.Factory, runF func(context.Context, *CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{}
	cmd := &cobra.Command{
		Use:   "check --index FILE [ADDR... | -]",
		Short: "Look addresses up in an index file (no credit spent)",
		Long: `Look addresses up in an index file, which index build or index follow wrote.
The addresses are the arguments, or with - (or none, when stdin is not a
terminal) the words of stdin, one or more a line; # starts a comment.

Each address a feed holds prints its hits: with -o json one object a line,
{"ip", "feeds": [{"feed", "provider", "type", "country_code", "asn",
"last_seen"}]} (last_seen in Unix seconds); in text and csv one row a feed.
An address no feed holds prints nothing, unless --all, which prints it with
no feeds. A word that is not an address is reported on stderr, and the
command then exits 2 once every address was checked.

` + indexHelp,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.In, opts.Err, opts.Addrs = f.Printer, f.IO.In, f.IO.ErrOut, args
			if opts.Index == "" {
				return clierr.Usagef("--index FILE is required: the index file to read")
			}
			if len(args) == 0 && f.IO.StdinIsTerminal() {
				return clierr.Usagef("give ADDR... or - (stdin)")
			}
			if !cmd.Flags().Changed("max-age") {
				opts.MaxAge = -1
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Index, "index", "", "the index file to read")
	cmd.Flags().BoolVar(&opts.All, "all", false, "also print the addresses no feed holds")
	cmd.Flags().DurationVar(&opts.MaxAge, "max-age", 0, "leave out rows last seen longer ago than this (default: the file's)")
	cmdutil.SetExamples(cmd, "synthient index check --index feeds.synidx 203.0.113.7 192.0.2.1 --all -o json",
		"synthient index check --index feeds.synidx - --all -o csv < addresses.txt")
	return cmd
}

// hitJSON is a feed holding an address, as index check prints it.
type hitJSON struct {
	Feed        string `json:"feed"`
	Provider    string `json:"provider"`
	Type        string `json:"type"`
	CountryCode string `json:"country_code"`
	ASN         int    `json:"asn"`
	LastSeen    int64  `json:"last_seen"`
}

type resultJSON struct {
	IP    string    `json:"ip"`
	Feeds []hitJSON `json:"feeds"`
}

// checkPrinter prints the results of index check in a format.
type checkPrinter struct {
	p   *output.Printer
	t   *render.Table
	csv *render.CSV
}

var checkColumns = []string{"ip", "feed", "provider", "type", "country_code", "asn", "last_seen"}

func newCheckPrinter(p *output.Printer) *checkPrinter {
	cp := &checkPrinter{p: p}
	switch {
	case p.CSV():
		cp.csv = render.NewCSV(p.Out, checkColumns...)
	case !p.JSON():
		cp.t = render.NewTable(p.Out)
		cp.t.Row("IP", "FEED", "PROVIDER", "TYPE", "COUNTRY", "ASN", "LAST SEEN")
	}
	return cp
}

// print prints the hits of ip (none: a miss).
func (cp *checkPrinter) print(ip netip.Addr, hits []feedindex.Hit, n int64) error {
	if cp.t == nil && cp.csv == nil {
		r := resultJSON{IP: ip.String(), Feeds: []hitJSON{}}
		for _, h := range hits {
			r.Feeds = append(r.Feeds, hitJSON{string(h.Feed), h.Provider, h.Type, h.CountryCode, h.ASN, h.LastSeen.Unix()})
		}
		doc, err := json.Marshal(r)
		if err != nil {
			return err
		}
		return cp.p.Tolerate(cp.p.EmitJSON(cp.p.Out, doc), "address", n)
	}
	rows := [][]string{{ip.String(), "-", "", "", "", "", ""}}
	if len(hits) > 0 {
		rows = rows[:0]
	}
	for _, h := range hits {
		seen := h.LastSeen.Format(time.RFC3339)
		if cp.csv != nil {
			seen = strconv.FormatInt(h.LastSeen.Unix(), 10)
		}
		rows = append(rows, []string{ip.String(), string(h.Feed), h.Provider, h.Type, h.CountryCode, strconv.Itoa(h.ASN), seen})
	}
	for _, r := range rows {
		if cp.csv != nil {
			if err := cp.csv.Row(r...); err != nil {
				return err
			}
			continue
		}
		cp.t.Row(r...)
	}
	return nil
}

func (cp *checkPrinter) flush() error {
	switch {
	case cp.csv != nil:
		return cp.csv.Flush()
	case cp.t != nil:
		return cp.t.Flush()
	}
	return cp.p.FailuresError("addresses")
}

func checkRun(ctx context.Context, o *CheckOptions) error {
	ix, err := openIndex(o.Index, o.MaxAge)
	if err != nil {
		return err
	}
	defer ix.Close()
	cp := newCheckPrinter(o.Printer)
	check := func(ip netip.Addr, n int64) error {
		hits := ix.Lookup(nil, ip)
		if len(hits) == 0 && !o.All {
			return nil
		}
		return cp.print(ip, hits, n)
	}
	read := o.checkArgs
	if len(o.Addrs) == 0 || len(o.Addrs) == 1 && o.Addrs[0] == "-" {
		read = o.checkStdin
	}
	bad, err := read(ctx, check)
	if err != nil {
		return err
	}
	if err := cp.flush(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if bad > 0 {
		return clierr.Usagef("%d of the words given are not IP addresses", bad)
	}
	return nil
}

// checkArgs checks the addresses of the arguments, and returns how many
// are not addresses.
func (o *CheckOptions) checkArgs(_ context.Context, check func(netip.Addr, int64) error) (int, error) {
	bad := 0
	for i, s := range o.Addrs {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			bad++
			_, _ = fmt.Fprintf(o.Err, "%q is not an IP address\n", s) // a failed report leaves the exit code to say it
			continue
		}
		if err := check(ip, int64(i+1)); err != nil {
			return bad, err
		}
	}
	return bad, nil
}

// checkStdin checks the addresses of stdin, and returns how many words
// are not addresses.
func (o *CheckOptions) checkStdin(ctx context.Context, check func(netip.Addr, int64) error) (int, error) {
	bad := 0
	r := addrinput.NewReader(ctx, o.In, func(line int64, text string) {
		bad++
		_, _ = fmt.Fprintf(o.Err, "line %d: %q is not an IP address\n", line, text) // as above
	})
	defer r.Close()
	var n int64
	for ip := range r.Addrs() {
		if n++; ip.IsValid() {
			if err := check(ip, n); err != nil {
				return bad, err
			}
		}
	}
	return bad, r.End()
}
