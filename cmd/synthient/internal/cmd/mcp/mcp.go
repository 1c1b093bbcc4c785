// Package mcp is the mcp command: a Model Context Protocol server, on
// github.com/modelcontextprotocol/go-sdk, that gives an agent the API's
// lookups, account, exports and streams as tools, over stdio or
// streamable HTTP. It is a face over the SDK: one client serves every
// session, so its cache and its request sharing make repeats free across
// sessions.
package mcp

import (
	"context"
	"fmt"
	"io"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/trace"
)

// Options are the options of mcp.
type Options struct {
	IO       *iostreams.IOStreams
	Secrets  *redact.Redactor
	Client   func(...synthient.Option) (*synthient.Client, error)
	Describe func(error) string
	Trace    bool // --trace: each call's tree on stderr
	Quiet    bool

	HTTP                 string
	TokenFile            string
	AllowHosts           []string
	MaxCreditsPerSession int64
	CacheTTL             time.Duration
}

// NewCmdMCP returns mcp.
func NewCmdMCP(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Client: f.Client, Describe: f.Describe, Secrets: f.Secrets}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the API's tools to an agent (Model Context Protocol)",
		Long: `mcp serves the Model Context Protocol on stdin and stdout, the way an agent
(Claude Code, Claude Desktop, Cursor, VS Code) starts a local server, or with
--http ADDR as streamable HTTP at http://ADDR/mcp. Its tools are those of the
official Synthient CLI, with its names and arguments: lookup_ip, lookup_domain,
get_account, list_feed_streams, list_feed_snapshots, feed_snapshot_meta and
sample_stream.

Every result says the credits it spent. --max-credits-per-session N gives
each session a budget of N credits: every result then says credits_left,
and a call whose cost does not fit is refused before anything is sent, with
an error that says so (answers from the cache stay free). One cache (--cache-ttl) and one
sharing of identical lookups in flight serve every session of the server: a
repeat is free, and says how old its answer is. An error is a tool result
that says the API's status, problem, request id, Retry-After and whether the
lookup may have been charged.

--http listens on loopback unless the address names another interface, which
needs --token-file: a file holding a bearer token (16 characters or more)
that every request must send (Authorization: Bearer TOKEN). Requests whose
Host or Origin is not the server's are refused (DNS rebinding); --allow-host
names a host name the server is reached by. With --fake it serves an
in-process fake API, to try an agent without a key.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.IO, opts.Trace, opts.Quiet = f.IO, f.Flags.Trace, f.Flags.Quiet
			return run(cmd.Context(), opts)
		},
		Annotations: map[string]string{cmdutil.StdinAnnotation: "its MCP messages"},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.HTTP, "http", "", "serve streamable HTTP at http://ADDR/mcp instead of stdio (ADDR as :8080 listens on loopback)")
	fl.StringVar(&opts.TokenFile, "token-file", "", "with --http: a file holding the bearer token every request must send (needed off loopback)")
	fl.StringArrayVar(&opts.AllowHosts, "allow-host", nil, "with --http: a host name the server is reached by, accepted in Host and Origin (repeatable)")
	fl.Int64Var(&opts.MaxCreditsPerSession, "max-credits-per-session", 0, "the credits each session may spend (0: no limit); a call that does not fit is refused, nothing sent")
	fl.DurationVar(&opts.CacheTTL, "cache-ttl", time.Hour, "keep lookup answers this long for every session (0: no cache; at most 24h, 1h for domains)")
	cmdutil.SetExamples(cmd, "synthient mcp --fake", "synthient mcp --http 127.0.0.1:8765", "synthient mcp --http 0.0.0.0:8765 --token-file token.txt")
	return cmd
}

// run checks the flags, builds the client every session shares, and
// serves until ctx ends (an interrupt) or, on stdio, stdin closes.
func run(ctx context.Context, o *Options) error {
	if err := o.check(); err != nil {
		return err
	}
	var token string
	if o.HTTP != "" && o.TokenFile != "" {
		var err error
		if token, err = readToken(ctx, o.TokenFile); err != nil {
			return err
		}
		o.Secrets.Add(token)
	}
	c, err := o.Client(o.clientOptions()...)
	if err != nil {
		return err
	}
	t := &tools{client: c, describe: o.Describe, redact: o.Secrets.RedactString, log: o.logf}
	if o.MaxCreditsPerSession > 0 {
		t.budgets = newSessionBudgets(o.MaxCreditsPerSession).of
	}
	srv := newServer(t)
	if o.HTTP == "" {
		return serveStdio(ctx, srv, o)
	}
	return serveHTTP(ctx, srv, o, token)
}

// check refuses flags that cannot be honoured.
func (o *Options) check() error {
	switch {
	case o.MaxCreditsPerSession < 0:
		return clierr.Usagef("--max-credits-per-session must not be negative")
	case o.CacheTTL < 0:
		return clierr.Usagef("--cache-ttl must not be negative")
	case o.HTTP == "" && (o.TokenFile != "" || len(o.AllowHosts) > 0):
		return clierr.Usagef("--token-file and --allow-host apply to --http")
	}
	return nil
}

// clientOptions are the options of the client every session shares: the
// cache, the observer that tells a lookup that shared a request (and
// prints --trace) and, with --max-credits-per-session, the credit budget
// that draws each call on its session's (sessionRouter).
func (o *Options) clientOptions() []synthient.Option {
	var next synthient.Observer
	if o.Trace {
		next = trace.New(o.IO.ErrOut)
	}
	opts := []synthient.Option{synthient.WithObserver(costObserver{next: next})}
	if o.CacheTTL > 0 {
		opts = append(opts, synthient.WithCache(synthient.NewMemoryCache(synthient.DefaultMemoryCacheSize, o.CacheTTL)))
	}
	if o.MaxCreditsPerSession > 0 {
		opts = append(opts, synthient.WithCreditBudget(sessionRouter{}))
	}
	return opts
}

// logf writes a line of the server's log on stderr.
func (o *Options) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(o.IO.ErrOut, "synthient mcp: "+format+"\n", args...) // stderr: nowhere to report its failure
}

// notice writes a line on stderr, unless --quiet.
func (o *Options) notice(format string, args ...any) {
	if !o.Quiet {
		o.logf(format, args...)
	}
}

// serveStdio serves one session on stdin and stdout until the client
// closes stdin or ctx ends.
func serveStdio(ctx context.Context, srv *gomcp.Server, o *Options) error {
	t := &gomcp.IOTransport{Reader: stdinReader{o.IO.In}, Writer: nopWriteCloser{o.IO.RawOut}}
	o.notice("serving MCP on stdio until stdin closes")
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil {
		return err
	}
	return nil // stdin closed, or interrupted: a clean stop
}

// stdinReader is the command's stdin (not os.Stdin itself: a test runs
// the command in-process). Closing it closes stdin when it can be closed,
// which ends a read blocked on it.
type stdinReader struct{ io.Reader }

func (r stdinReader) Close() error {
	if c, ok := r.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// nopWriteCloser is stdout, which the server leaves open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
