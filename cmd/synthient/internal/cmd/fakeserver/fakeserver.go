// Package fakeserver is the fake-server command: the fake Synthient API
// (and its export storage host) that the demo and --fake use, served
// until interrupted, for other programs and for people.
package fakeserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/synthienttest"
)

// Options are the options of fake-server.
type Options struct {
	Printer *output.Printer
	Secrets *redact.Redactor

	Listen     string
	Credits    int64
	Latency    time.Duration
	Seed       uint64
	RateLimit  string   // on or off
	ExportSize string   // bytes, or 64K, 4M, 1G; "" for the fake's own sizes
	Faults     []string // ROUTE=FAULT[@N]
}

// NewCmdFakeServer returns fake-server.
func NewCmdFakeServer(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Secrets: f.Secrets}
	cmd := &cobra.Command{
		Use:   "fake-server",
		Short: "Serve the fake Synthient API until interrupted",
		Long: `fake-server runs the fake Synthient API (and its export storage host) that the
demo and --fake use, and prints its base URL and an API key with every scope:

  synthient fake-server --listen 127.0.0.1:8080
  SYNTHIENT_BASE_URL=http://127.0.0.1:8080/api/v4 SYNTHIENT_API_KEY=<key> synthient account

--credits sets the key's lookup credits (a 100,000-address enrichment needs
more than the 50,000 of the default); --latency holds every answer of the API
(a run slow enough to interrupt); --seed gives other, as deterministic, lookup
answers and stream events; --rate-limit off answers no 429 for rate;
--export-size sets the size of every export file; --fault ROUTE=FAULT[@N]
(repeatable) makes the next N requests of a route (N all: every one) fail:
FAULT is an HTTP status (503), a status with its Retry-After (429:2), or one of
close-after-request, reset-mid-body, slow-headers[:WAIT], slow-body,
truncated-body. ROUTE is one of health, account, lookup-ip, lookup-ips,
lookup-domain, exports, meta, download, stream, storage.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Printer = f.Printer
			return run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "127.0.0.1:0", "address of the API (the storage host takes a free port)")
	fl.Int64Var(&opts.Credits, "credits", synthienttest.DefaultCredits, "lookup credits of the key")
	fl.DurationVar(&opts.Latency, "latency", 0, "hold every answer of the API this long")
	fl.Uint64Var(&opts.Seed, "seed", 0, "the seed of the made-up lookups and stream events (0: the default data)")
	fl.StringVar(&opts.RateLimit, "rate-limit", "on", "on, or off for no rate limits (no 429 for rate, no RateLimit-* headers)")
	fl.StringVar(&opts.ExportSize, "export-size", "", "approximate size of every export file: bytes, or 64K, 4M, 1G")
	fl.StringArrayVar(&opts.Faults, "fault", nil, "ROUTE=FAULT[@N]: fail the next N requests of ROUTE (repeatable; see above)")
	cmdutil.SetExamples(cmd, "synthient fake-server --listen 127.0.0.1:8080",
		"synthient fake-server --credits 200000 --latency 200ms --fault lookup-ips=503@2 --fault stream=reset-mid-body")
	return cmd
}

// serverOptions are the fake's options for o, and its faults to inject.
func (o *Options) serverOptions() ([]synthienttest.Option, []fault, error) {
	if o.Credits < 0 || o.Latency < 0 {
		return nil, nil, clierr.Usagef("--credits and --latency must not be negative")
	}
	opts := []synthienttest.Option{synthienttest.WithListenAddr(o.Listen), synthienttest.WithCredits(o.Credits),
		synthienttest.WithLatency(o.Latency), synthienttest.WithSeed(o.Seed)}
	switch o.RateLimit {
	case "on":
	case "off":
		opts = append(opts, synthienttest.WithoutRateLimits())
	default:
		return nil, nil, clierr.Usagef("--rate-limit is on or off, not %q", o.RateLimit)
	}
	if o.ExportSize != "" {
		n, err := parseSize(o.ExportSize)
		if err != nil {
			return nil, nil, clierr.Usagef("--export-size %s: %v", o.ExportSize, err)
		}
		opts = append(opts, synthienttest.WithExportSize(n))
	}
	var faults []fault
	for _, s := range o.Faults {
		fl, err := parseFault(s)
		if err != nil {
			return nil, nil, err
		}
		faults = append(faults, fl)
	}
	return opts, faults, nil
}

func run(ctx context.Context, o *Options) error {
	opts, faults, err := o.serverOptions()
	if err != nil {
		return err
	}
	srv, err := synthienttest.Start(opts...) //nolint:contextcheck // the fake takes no context: it serves until ctx ends, then the Close below
	if err != nil {
		return clierr.Usagef("cannot listen on %s: %v", o.Listen, err)
	}
	defer srv.Close()
	for _, fl := range faults {
		srv.Inject(fl.route, fl.n, fl.f)
	}
	// The fake's key (the same in every run) is printed on purpose, also
	// when SYNTHIENT_API_KEY holds it from an earlier run.
	o.Secrets.Forget(srv.APIKey)
	if err := o.notice(srv); err != nil {
		return err // nobody can learn the URL and the key: no use serving
	}
	<-ctx.Done()
	return ctx.Err() // interrupted: exit 130, as every command
}

// notice prints where the fake is, its key, and how it was set up.
func (o *Options) notice(srv *synthienttest.Server) error {
	p := o.Printer
	if p.JSON() {
		return p.Emit(map[string]any{
			"base_url": srv.URL, "api_key": srv.APIKey, "storage_url": srv.StorageURL,
			"credits": o.Credits, "latency": o.Latency.String(), "seed": o.Seed, "rate_limit": o.RateLimit, "faults": o.Faults,
		})
	}
	setup := fmt.Sprintf("credits %d, latency %s, seed %d, rate limits %s", o.Credits, o.Latency, o.Seed, o.RateLimit)
	if o.ExportSize != "" {
		setup += ", exports of about " + o.ExportSize
	}
	if len(o.Faults) > 0 {
		setup += ", faults " + strings.Join(o.Faults, " ")
	}
	_, err := fmt.Fprintf(p.Out, "base URL:    %s\nAPI key:     %s\nstorage URL: %s\nsetup:       %s\n"+
		"\nexport SYNTHIENT_BASE_URL=%s SYNTHIENT_API_KEY=%s\nServing until interrupted (Ctrl-C).\n",
		srv.URL, srv.APIKey, srv.StorageURL, setup, srv.URL, srv.APIKey)
	return err
}
