// Package api is the api command: any path of the API, with the client's
// key and the retry class of its route, its JSON on stdout (as gh api).
package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/net/http/httpguts"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmdutil"
	"github.com/synthient-go/synthient/cmd/synthient/internal/interrupt"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
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
	// Fields and RawFields are the KEY=VALUE of -F/--field and
	// --raw-field.
	Fields, RawFields []string
	// Pretty indents the JSON answer, as on a terminal.
	Pretty bool
	// MaxCredits is --max-credits: the request's credit budget.
	MaxCredits cmdutil.MaxCredits

	fields []field // Fields and RawFields, parsed by check
}

// NewCmdAPI returns api. runF, when not nil, runs in place of the
// command's own run function.
func NewCmdAPI(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Client: f.Client}
	cmd := &cobra.Command{
		Use:   "api PATH [-X METHOD] [-F KEY=VALUE]... [--input FILE]",
		Short: "Send any path of the API with the key, and print its JSON (as gh api)",
		Long: `Send one request to PATH, relative to the base URL ("account/me",
"/lookup/ip/8.8.8.8", "feeds/proxies/export?limit=5") or an absolute URL below it,
with the API key, and print the answer's JSON on stdout: indented on a
terminal, one compact line otherwise (each line of a stream's NDJSON as it
comes), which --jq and --template shape. A path outside the base URL is
refused. The retry class is the route's: the lookups are billed (sent again
only after a 429 with a usable Retry-After), the account, listings, meta and
streams standard, and a path the CLI does not know billed, the careful class.

-F/--field KEY=VALUE and --raw-field KEY=VALUE add a parameter, as gh api's
do: to the query of a GET (and with --input), to the JSON body of any other
method. --raw-field's VALUE is a string; -F's is true, false, null, an
integer, the text of a file with @FILE (@- for stdin), or else a string. KEY
is a name, then any [sub] for an object's member, then at most one [] to add
to a list: -F 'ips[]=1.1.1.1' -F 'ips[]=8.8.8.8'. (-f is the output format
here, not --raw-field.)

-X sets the method, an HTTP token (default GET; POST with --input, or with
fields on lookup/ips, the API's one POST route); --input FILE sends FILE's
JSON as the body (- for stdin). A download's redirect to the storage host is
not followed: exports download fetches it.

--max-credits N sends a lookup route only when its cost fits in N: 1 for
lookup/ip and lookup/domain, ceil(0.9 n) for the n distinct entries of a
lookup/ips body (900 when the body holds no "ips" list); otherwise nothing is
sent (exit 3). Every other route is free, a path the CLI does not know too.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.ExactArgs("PATH")(cmd, args); err != nil {
				return err
			}
			return opts.check(cmd.Flags().Changed("method"))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Printer, opts.In, opts.Err, opts.Path = f.Printer, f.IO.In, f.IO.ErrOut, args[0]
			opts.Pretty = f.IO.StdoutIsTerminal()
			if opts.Method == "" {
				opts.Method = opts.defaultMethod()
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Method, "method", "X", "", "the HTTP method (default GET; POST with --input, or with fields on lookup/ips)")
	cmd.Flags().StringVar(&opts.Input, "input", "", "send this file's JSON as the body (- for stdin)")
	cmd.Flags().StringArrayVarP(&opts.Fields, "field", "F", nil, "add a typed parameter KEY=VALUE (true, false, null, integers, @FILE)")
	cmd.Flags().StringArrayVar(&opts.RawFields, "raw-field", nil, "add a string parameter KEY=VALUE")
	cmdutil.AddMaxCredits(cmd.Flags(), &opts.MaxCredits)
	cmdutil.SetExamples(cmd, "synthient api account/me", "synthient api lookup/ip/8.8.8.8 --jq .network.asn",
		"synthient api feeds/proxies/export -F limit=2", "synthient api lookup/ips --input ips.json")
	return cmd
}

func run(ctx context.Context, o *Options) error {
	path, body, err := o.request(ctx)
	if err != nil {
		return err
	}
	c, err := o.Client(o.MaxCredits.Options()...)
	if err != nil {
		return err
	}
	r, err := c.Raw(ctx, o.Method, path, body)
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
	case len(b) == 0: // a HEAD, a 204: nothing to print
		return nil
	case !json.Valid(b):
		_, err := o.Printer.Out.Write(append(b, '\n')) // text: escaped by stdout
		return err
	}
	return o.writeDoc(b)
}

// writeDoc prints doc, one JSON document: reshaped by --jq or --template,
// else indented when Pretty and on one compact line otherwise. Its
// strings are escaped for a terminal either way (render.WriteJSONLine).
func (o *Options) writeDoc(doc []byte) error {
	if o.Printer.Shape != nil {
		return o.Printer.EmitJSON(o.Printer.Out, doc)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		return err
	}
	if !o.Pretty {
		return o.Printer.EmitJSON(o.Printer.Out, compact.Bytes())
	}
	var line, out bytes.Buffer
	if err := render.WriteJSONLine(&line, compact.Bytes()); err != nil {
		return err
	}
	if err := json.Indent(&out, bytes.TrimSuffix(line.Bytes(), []byte("\n")), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := o.Printer.Out.Write(out.Bytes())
	return err
}

// check refuses, before anything is read or sent, a method that is not
// an HTTP token (given: whether -X was), a field that is not KEY=VALUE,
// stdin read twice, and a key given both as a value and as an object or
// list (in a query as in a body); it parses the fields.
func (o *Options) check(methodGiven bool) error {
	if methodGiven && !httpguts.ValidHeaderFieldName(o.Method) { // a token, as a header name is
		return clierr.Usagef("-X %q is not an HTTP method: a method is letters, digits and !#$%%&'*+-.^_`|~, such as GET or POST", o.Method)
	}
	o.fields = o.fields[:0]
	stdin := 0
	if o.Input == "-" {
		stdin++
	}
	for _, group := range []struct {
		flag  string
		args  []string
		typed bool
	}{{"--raw-field", o.RawFields, false}, {"-F", o.Fields, true}} {
		for _, arg := range group.args {
			fd, err := parseField(group.flag, arg, group.typed)
			if err != nil {
				return err
			}
			if fd.typed && fd.value == "@-" {
				stdin++
			}
			o.fields = append(o.fields, fd)
		}
	}
	if stdin > 1 {
		return clierr.Usagef("stdin is read once: by one of --input - and -F KEY=@-")
	}
	_, err := nest(o.fields, nil)
	return err
}

// defaultMethod is the method when -X is not given: POST with --input or
// with fields on lookup/ips, the API's one POST route; else GET.
func (o *Options) defaultMethod() string {
	path, _, _ := strings.Cut(o.Path, "?")
	path = strings.TrimSuffix(path, "/")
	lookupIPs := path == "lookup/ips" || strings.HasSuffix(path, "/lookup/ips")
	if o.Input != "" || len(o.fields) > 0 && lookupIPs {
		return http.MethodPost
	}
	return http.MethodGet
}

// request returns the path and the body to send: --input's JSON, or the
// fields as a JSON object; the fields go to the query instead for a GET
// or a HEAD, and with --input.
func (o *Options) request(ctx context.Context) (path string, body []byte, err error) {
	var fs fields
	for _, fd := range o.fields {
		v, err := fd.resolve(ctx, o.read)
		if err != nil {
			return "", nil, err
		}
		fs.list, fs.values = append(fs.list, fd), append(fs.values, v)
	}
	path = o.Path
	if o.Input != "" {
		if body, err = o.read(ctx, o.Input, "--input"); err != nil {
			return "", nil, err
		}
		if !json.Valid(body) {
			return "", nil, clierr.Usagef("--input %s is not JSON: the API takes a JSON body", o.Input)
		}
	}
	method := strings.ToUpper(o.Method)
	switch {
	case len(fs.list) == 0:
	case o.Input != "" || method == http.MethodGet || method == http.MethodHead:
		q := url.Values{}
		fs.query(q)
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + q.Encode()
	default:
		body, err = fs.body()
	}
	return path, body, err
}

// read returns what the file name holds ("-": stdin), at most maxBody
// bytes; what names it in errors (--input, -F KEY=@FILE).
func (o *Options) read(ctx context.Context, name, what string) ([]byte, error) {
	b, err := interrupt.Do(ctx, func() ([]byte, error) {
		r := o.In
		if name != "-" {
			f, err := os.Open(name) //nolint:gosec // the file the user named: --input FILE, -F KEY=@FILE
			if err != nil {
				return nil, clierr.Usagef("%s: %v", what, err)
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
		return nil, clierr.Usagef("%s: %s is larger than %d bytes", what, name, maxBody)
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
