// Package demo is the demo command: a guided tour of the SDK on an
// in-process fake API, its retry decisions printed as they are made.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/trace"
	"github.com/synthient-go/synthient/exports"
	"github.com/synthient-go/synthient/synthienttest"
)

// Options are the options of demo.
type Options struct {
	Printer    *output.Printer
	Progress   io.Writer // where a progress bar goes; nil for none
	MaxRetries int
}

// NewCmdDemo returns demo.
func NewCmdDemo(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "A guided tour of the SDK on an in-process fake API (no key, no network)",
		Long: `demo starts a fake Synthient API in this process, scripts a few faults into
it, and walks through what the SDK does: a lookup, a 429 that is waited out
and retried, a 503 on a billed lookup that is not retried, an account call
retried after a 502, a Retry-After past the maximum returned at once, a
bulk lookup in which one batch's outcome is unknown, export pages, a
verified download read back as Parquet, and a few stream events. Every retry
decision is printed as it is made.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer, opts.MaxRetries = f.Printer, f.Flags.MaxRetries
			if f.ShowProgress() {
				opts.Progress = f.IO.Progress
			}
			return run(cmd.Context(), opts)
		},
	}
	cmdutil.SetExamples(cmd, "synthient demo")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	if opts.Printer.JSON() {
		return clierr.Usagef("demo prints a narrated tour as text: --output json does not apply to it")
	}
	out := &wrapWriter{w: opts.Printer.Out}
	d := &demo{out: out, progressTo: opts.Progress, maxRetries: opts.MaxRetries}
	err := d.run(ctx)
	_ = out.Flush() // every line ends with a newline: nothing is left
	return err
}

type demo struct {
	out        io.Writer
	progressTo io.Writer // where a progress bar goes; nil for none
	maxRetries int

	srv    *synthienttest.Server
	client *synthient.Client
	step   int
}

// printf narrates on stdout. Its writer keeps its first error, which
// root.Run reports when the command ends: the demo does not stop for it.
func (d *demo) printf(format string, args ...any) { _, _ = fmt.Fprintf(d.out, format, args...) }

func (d *demo) section(title, why string) {
	d.step++
	d.printf("\n%d. %s\n", d.step, title)
	for _, line := range strings.Split(why, "\n") {
		d.printf("   %s\n", line)
	}
}

func (d *demo) run(ctx context.Context) error {
	start := time.Now()
	d.srv = synthienttest.NewServer() //nolint:contextcheck // the fake takes no context: it lives until the Close below
	defer d.srv.Close()
	h := trace.NewDecisionHandler(d.out, slog.LevelDebug)
	h.Indent = "   | "
	c, err := d.srv.NewClient(
		synthient.WithMaxRetries(d.maxRetries),
		synthient.WithLogger(slog.New(withoutRequestIDs{h})),
		synthient.WithUserAgent("synthient-cli-demo"),
	)
	if err != nil {
		return err
	}
	defer c.Close()
	d.client = c

	d.printf("synthient demo: the Go SDK against a fake Synthient API running in this process\n")
	d.printf("(API %s, storage %s; no key or network needed)\n", d.srv.URL, d.srv.StorageURL)
	d.printf("Lines starting with '|' are the SDK's retry decisions, as WithLogger reports them\n")
	d.printf("(without their request ids, which each answer carries; an error's is shown).\n")

	for _, step := range []func(context.Context) error{
		d.lookup, d.rateLimited, d.billed503, d.account502, d.retryAfterTooLong,
		d.bulk, d.exportPages, d.download, d.stream,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	d.printf("\nDone in %.1fs. Next: 'synthient --fake lookup ip 1.1.1.1', 'go test -race ./...'.\n", time.Since(start).Seconds())
	return nil
}

// expectError reports an error the step wanted, with its request id, stop
// reason and attempt count.
func (d *demo) expectError(err error) error {
	if err == nil {
		return errors.New("demo: expected an error, the call succeeded")
	}
	var apiErr *synthient.APIError
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("demo: unexpected error: %w", err)
	}
	var base *synthient.Error
	errors.As(err, &base)
	d.printf("   => error %q after %s, stop reason %s\n", apiErr.Error(), render.Plural(int64(base.Attempts), "attempt", "attempts"), base.StopReason)
	d.printf("      request id %s\n", render.OrDash(apiErr.RequestID))
	if apiErr.RetryAfter != nil {
		d.printf("      APIError.RetryAfter = %s\n", *apiErr.RetryAfter)
	}
	return nil
}

func (d *demo) lookup(ctx context.Context) error {
	d.section("A lookup (billed: 1 credit)", "client.LookupIP(ctx, 203.0.113.7):")
	r, err := d.client.LookupIP(ctx, netip.MustParseAddr("203.0.113.7"))
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := render.WriteIPLookup(&b, r); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		d.printf("   %s\n", line)
	}
	return nil
}

func (d *demo) rateLimited(ctx context.Context) error {
	d.section("A 429 with Retry-After is waited out and retried",
		"The fake answers the next lookup with 429 and Retry-After: 1. The rate limiter\n"+
			"turned the request away before any work, so even a billed lookup is sent again,\n"+
			"after max(backoff, Retry-After).")
	d.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "1"})
	before, arrivals := d.srv.Credits(d.srv.APIKey), d.srv.Arrivals(synthienttest.RouteLookupIP)
	t0 := time.Now()
	r, err := d.client.LookupIP(ctx, netip.MustParseAddr("1.1.1.1"))
	if err != nil {
		return err
	}
	d.printf("   => %s answered after %.1fs; the server saw %d requests; credits charged: %d\n",
		r.IP, time.Since(t0).Seconds(), d.srv.Arrivals(synthienttest.RouteLookupIP)-arrivals, before-d.srv.Credits(d.srv.APIKey))
	return nil
}

func (d *demo) billed503(ctx context.Context) error {
	d.section("A 503 on a billed lookup is not retried",
		"A 503 may come after the API did the lookup and charged for it. Sending it again\n"+
			"could charge twice, so the SDK returns the error at once, with its request id.")
	d.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 503})
	_, err := d.client.LookupIP(ctx, netip.MustParseAddr("9.9.9.9"))
	return d.expectError(err)
}

func (d *demo) account502(ctx context.Context) error {
	d.section("A free account call is retried after a 502",
		"Account is in the standard class: nothing is charged, so a 500, 502, 503, 504 or\n"+
			"a network failure is retried with jittered exponential backoff (1s, 2s, ... 30s).")
	d.srv.Inject(synthienttest.RouteAccount, 1, synthienttest.Fault{Status: 502})
	acct, err := d.client.Account(ctx)
	if err != nil {
		return err
	}
	d.printf("   => %s %s <%s>, %d credits left\n", acct.FirstName, acct.LastName, acct.Email, acct.LookupQuota.Credits)
	return nil
}

func (d *demo) retryAfterTooLong(ctx context.Context) error {
	d.section("A Retry-After past the maximum is returned at once",
		"The fake asks for Retry-After: 120, over the 60s maximum (WithMaxRetryAfter).\n"+
			"The SDK does not hold the caller for two minutes: it returns the error at once.")
	d.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "120"})
	_, err := d.client.LookupIP(ctx, netip.MustParseAddr("4.4.4.4"))
	return d.expectError(err)
}

// bulk looks up demoBulkInput with LookupIPsAll, the first batch cut
// after it was written, and counts what became of each address.
func (d *demo) bulk(ctx context.Context) error {
	d.section("A bulk lookup: every address accounted for, none charged twice",
		"client.LookupIPsAll reads 2,500 addresses lazily (one invalid, 249 repeats) and sends\n"+
			"the distinct ones in batches of 1000, in input order (a bulk address costs 0.9 credit,\n"+
			"ceil(0.9 n) for a request of n, where LookupIP costs 1). The fake cuts the connection\n"+
			"after the first batch was written: its addresses may have been charged, so they are\n"+
			"\"unknown\", not \"failed\", and never sent again blindly.")
	d.srv.Inject(synthienttest.RouteLookupIPs, 1, synthienttest.Fault{Kind: synthienttest.FaultCloseAfterRequest})
	before := d.srv.Credits(d.srv.APIKey)
	count := map[synthient.BulkOutcome]int{}
	spent, maybe, repeats := 0, 0, 0
	for r, err := range d.client.LookupIPsAll(ctx, demoBulkInput, &synthient.BulkParams{Concurrency: 1}) {
		if r.Index < 0 { // the parameters refused: nothing was sent
			return err
		}
		if r.Duplicate {
			repeats++ // the outcome of its first occurrence, not sent again
			continue
		}
		count[r.Outcome]++
		switch r.Outcome {
		case synthient.LookedUp:
			spent += r.Credits
		case synthient.Unknown:
			maybe += r.Credits
		}
	}
	d.printf("   => distinct addresses: %d looked up, %d unknown, %d not sent; %d invalid; %d repeats answered\n"+
		"      from their first occurrence\n",
		count[synthient.LookedUp], count[synthient.Unknown], count[synthient.NotSent], count[synthient.Invalid], repeats)
	d.printf("      credits: %d spent, %d possibly spent; the fake charged %d\n", spent, maybe, before-d.srv.Credits(d.srv.APIKey))
	d.printf("      (0.9 × %d = %d, 0.9 × %d = %d: the batches' ceil(0.9 n), added up)\n",
		count[synthient.LookedUp], spent, count[synthient.Unknown], maybe)
	return nil
}

// demoBulkInput is the input of the demo's bulk lookup, 2,500 addresses:
// 2,250 distinct ones, after each ninth a repeat of an earlier one (249),
// and the zero netip.Addr, which is invalid.
func demoBulkInput(yield func(netip.Addr) bool) {
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}) } //nolint:gosec // i < 2250: its two low bytes
	for i := range 2250 {
		if !yield(addr(i)) {
			return
		}
		if i%9 == 8 && i < 2249 && !yield(addr(i/2)) {
			return
		}
	}
	yield(netip.Addr{})
}

func (d *demo) exportPages(ctx context.Context) error {
	d.section("Export pages", "client.ListExports(ctx, FeedProxies, &ListExportsParams{Limit: 3}):")
	page, err := d.client.ListExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 3})
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := render.WriteExports(&b, page.Exports); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		d.printf("   %s\n", line)
	}
	n, pages := 0, d.srv.Arrivals(synthienttest.RouteExports)
	for _, err := range d.client.AllExports(ctx, synthient.FeedProxies, &synthient.ListExportsParams{Limit: 10}) {
		if err != nil {
			return err
		}
		n++
	}
	d.printf("   => AllExports walked %s in %s of 10, lazily, following next_cursor\n",
		render.Plural(int64(n), "export", "exports"), render.Plural(int64(d.srv.Arrivals(synthienttest.RouteExports)-pages), "page", "pages"))
	return nil
}

func (d *demo) download(ctx context.Context) error {
	d.section("A verified download",
		"DownloadExportFile follows the API's 307 to the storage host without the API key,\n"+
			"streams the bytes to a new FILE.<digits>.part while hashing them, checks the size\n"+
			"and SHA-256 against the meta, then renames the file; package exports reads it.")
	dir, err := os.MkdirTemp("", "synthient-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir) //nolint:errcheck // a temporary directory: one left behind changes no result the demo shows
	path := filepath.Join(dir, "proxies-latest.parquet")
	var bar *iostreams.BytesBar
	var last int64
	p := &synthient.DownloadParams{Verify: true, Progress: func(done, total int64) {
		last = done
		if d.progressTo == nil {
			return
		}
		if bar == nil {
			bar = iostreams.NewBytesBar(d.progressTo, total, "   downloading")
		}
		_ = bar.Set64(done) // the bar only shows progress: a failed draw stops nothing
	}}
	m, err := d.client.DownloadExportFile(ctx, synthient.FeedProxies, "latest", path, p)
	if bar != nil {
		_ = bar.Finish() // as above
		_, _ = fmt.Fprintln(d.progressTo)
	}
	if err != nil {
		return err
	}
	if bar != nil { // erased once done, as every finished bar on a terminal
		d.printf("   DownloadParams.Progress drew a bar while the bytes came: %d of %d bytes\n", last, m.Size)
	} else {
		d.printf("   DownloadParams.Progress reported %d of %d bytes (drawn as a bar on a terminal)\n", last, m.Size)
	}
	keySent := false
	for _, r := range d.srv.Requests() {
		if r.Route == synthienttest.RouteStorage && (r.APIKey || r.Authorization || r.Cookie) {
			keySent = true
		}
	}
	d.printf("   => %s %s, %d rows, SHA-256 %s… verified; API key sent to storage: %v\n",
		m.Stream, m.ID, m.Rows, m.Checksum[:8], keySent)
	return d.readBack(path)
}

// readBack opens the downloaded Parquet file with package exports and
// prints its first row, typed: the file is real Parquet.
func (d *demo) readBack(path string) error {
	f, err := exports.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for row, err := range f.Proxies() {
		if err != nil {
			return err
		}
		d.printf("   exports.Open(path).Proxies(), the first of %d rows:\n", f.NumRows())
		d.printf("   %s %s %s %s AS%d\n", row.IP, row.Provider, row.Type, row.CountryCode, row.ASN)
		break
	}
	return nil
}

func (d *demo) stream(ctx context.Context) error {
	d.section("A few stream events", "client.StreamProxies(ctx), stopping after 3 events (break closes the connection):")
	n := 0
	var b strings.Builder
	t := render.NewTable(&b)
	for ev, err := range d.client.StreamProxies(ctx) {
		if err != nil {
			return err
		}
		t.Row(synthient.UnixTime(ev.Timestamp, false).Format(time.TimeOnly), ev.IP, ev.Provider, ev.Type, ev.CountryCode, fmt.Sprintf("AS%d", ev.ASN))
		if n++; n == 3 {
			break
		}
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		d.printf("   %s\n", line)
	}
	return nil
}
