// Package api is the api command: any path of the API, with the client's
// key and the retry class of its route, its JSON on stdout (as gh api).
package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
)

// maxBody bounds what api reads of a JSON answer, and of --input.
const maxBody = 32 << 20

// Options are the options of api.
type Options struct {
	Printer *output.Printer
	Client  func(...synthient.Option) (*synthient.Client, error)
	In      io.Reader // stdin, for --input -
	Err     io.Writer // stderr: the note of a redirect

	Path   string
	Method string
	Input  string // a file of the JSON body; "-" for stdin
}

// NewCmdAPI returns api. runF, when not nil, runs in place of the
// command's own run function.
func NewCmdAPI(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "api PATH [-X METHOD] [--input FILE]",
		Short: "Send any path of the API with the key, and print its JSON (as gh api)",
		Long: `Send one request to PATH, relative to the base URL ("account/me",
"/lookup/ip/8.8.8.8", "feeds/proxies/export?limit=5") or an absolute URL below it,
with the API key, and print the answer's JSON on stdout (each line of a
stream's NDJSON as it comes), which --jq and --template shape. A path outside
the base URL is refused. The retry class is the route's: the lookups are
billed (sent again only after a 429 with a usable Retry-After), the account,
listings, meta and streams standard, and a path the CLI does not know billed,
the careful class. -X sets the method (default GET, POST with --input);
--input FILE sends FILE's JSON as the body (- for stdin). A download's
redirect to the storage host is not followed: exports download fetches it.`,
		Args: cmdutil.ExactArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.In, opts.Err, opts.Path = f.Printer, f.IO.In, f.IO.ErrOut, args[0]
			if opts.Method == "" {
				opts.Method = http.MethodGet
				if opts.Input != "" {
					opts.Method = http.MethodPost
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Method, "method", "X", "", "the HTTP method (default GET, POST with --input)")
	cmd.Flags().StringVar(&opts.Input, "input", "", "send this file's JSON as the body (- for stdin)")
	cmdutil.SetExamples(cmd, "synthient api account/me", "synthient api lookup/ip/8.8.8.8 --jq .network.asn",
		"synthient api feeds/proxies/export?limit=2", "synthient api lookup/ips --input ips.json")
	return cmd
}

func run(ctx context.Context, o *Options) error {
	body, err := o.body(ctx)
	if err != nil {
		return err
	}
	c, err := o.Client()
	if err != nil {
		return err
	}
	r, err := c.Raw(ctx, o.Method, o.Path, body)
	if err != nil {
		return err
	}
	defer r.Body.Close() //nolint:errcheck // read to the end or given up: its Close reports nothing of the answer
	if r.Status >= 300 {
		_, err := fmt.Fprintf(o.Err, "synthient: %d %s: the answer is a redirect to the storage host, not followed (its presigned URL is not printed): 'synthient exports download' fetches the file\n",
			r.Status, http.StatusText(r.Status))
		return err
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-ndjson") {
		return o.printLines(ctx, r.Body)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		return err
	case len(b) > maxBody:
		return fmt.Errorf("the answer is larger than %d bytes", maxBody)
	case !json.Valid(b):
		_, err := o.Printer.Out.Write(append(b, '\n')) // text: escaped by stdout
		return err
	}
	return o.Printer.EmitJSON(o.Printer.Out, b)
}

// body reads --input: JSON, at most maxBody bytes.
func (o *Options) body(ctx context.Context) ([]byte, error) {
	if o.Input == "" {
		return nil, nil
	}
	b, err := interrupt.Do(ctx, func() ([]byte, error) {
		r := o.In
		if o.Input != "-" {
			f, err := os.Open(o.Input)
			if err != nil {
				return nil, clierr.Usagef("--input: %v", err)
			}
			defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
			r = f
		}
		return io.ReadAll(io.LimitReader(r, maxBody+1))
	}, nil)
	switch {
	case err != nil:
		return nil, err
	case len(b) > maxBody:
		return nil, clierr.Usagef("--input %s is larger than %d bytes", o.Input, maxBody)
	case !json.Valid(b):
		return nil, clierr.Usagef("--input %s is not JSON: the API takes a JSON body", o.Input)
	}
	return b, nil
}

// printLines prints each line of an NDJSON stream as it comes, until it
// ends or ctx does.
func (o *Options) printLines(ctx context.Context, body io.Reader) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := int64(0)
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue // a heartbeat
		}
		n++
		if err := o.Printer.Tolerate(o.Printer.EmitJSON(o.Printer.Out, line), "line", n); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return o.Printer.FailuresError("lines")
}
