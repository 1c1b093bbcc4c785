package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"

	"github.com/synthient-go/synthient"
)

// The output formats. --output picks text (tables), json (one document
// per result) or csv (one header, one row per result, on the commands
// that print rows); --jq and --template reshape each JSON document a
// command would print, whatever --output says short of csv.

// csvAnnotation marks a command that can print CSV: its value names the
// rows ("one row per address looked up").
const csvAnnotation = "synthient/csv"

// withCSV marks cmd as printing CSV rows of what rows describes.
func withCSV(cmd *cobra.Command, rows string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[csvAnnotation] = rows
	return cmd
}

// checkOutputFlag refuses an --output format the command cannot print,
// and --jq or --template that do not compile or are given together or
// with csv; on a command that writes a file (--out), it says that -o is
// not --out.
func (a *app) checkOutputFlag(cmd *cobra.Command) error {
	switch a.output {
	case "text", "json":
	case "csv":
		if _, ok := cmd.Annotations[csvAnnotation]; !ok {
			return usageError("--output csv applies to %s; here use json, or --jq with @csv", csvCommands(cmd.Root()))
		}
	default:
		if cmd.Flags().Lookup("out") != nil {
			return usageError("--output (-o) is the output format, text, json or csv, not %q: to write a file, use --out %s", a.output, a.output)
		}
		return usageError("--output must be text, json or csv, not %q", a.output)
	}
	for _, name := range []string{"jq", "template"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed && f.Value.String() == "" {
			// An unset variable in --jq "$EXPR" must not print the table.
			return usageError("--%s is empty: give an expression, or leave the flag out", name)
		}
	}
	return a.compileShape(cmd.Context())
}

// csvCommands lists the commands that print CSV.
func csvCommands(root *cobra.Command) string {
	var names []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if _, ok := c.Annotations[csvAnnotation]; ok {
			names = append(names, strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return strings.Join(names, ", ")
}

// compileShape compiles --jq or --template, before anything is sent.
func (a *app) compileShape(ctx context.Context) error {
	switch {
	case a.jq == "" && a.template == "":
		return nil
	case a.jq != "" && a.template != "":
		return usageError("--jq and --template cannot be combined: pick one")
	case a.output == "csv":
		return usageError("--output csv cannot be combined with --jq or --template, which shape JSON: use --jq with @csv")
	case a.jq != "":
		q, err := gojq.Parse(a.jq)
		if err != nil {
			return usageError("--jq %s: %v", shellWord(a.jq), err)
		}
		code, err := gojq.Compile(q)
		if err != nil {
			return usageError("--jq %s: %v", shellWord(a.jq), err)
		}
		a.shape = &jqShape{ctx: ctx, code: code}
	default:
		t, err := template.New("--template").Funcs(templateFuncs).Parse(a.template)
		if err != nil {
			return usageError("%v", err)
		}
		a.shape = &templateShape{t: t}
	}
	return nil
}

// shape reshapes the JSON documents a command prints (--jq, --template).
type shape interface {
	// write writes what doc, one JSON document, becomes.
	write(w io.Writer, doc []byte) error
}

// emit prints v, a result, on stdout: as one line of JSON, or reshaped
// by --jq or --template.
func (a *app) emit(v any) error { return a.emitTo(a.env.stdout, v) }

// emitTo prints v as emit does, to w.
func (a *app) emitTo(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return a.emitJSON(w, b)
}

// emitJSON prints doc, one JSON document (a result, a stream line), to w
// as emit does. Its strings are escaped for a terminal (writeJSONLine).
func (a *app) emitJSON(w io.Writer, doc []byte) error {
	if a.shape == nil {
		return writeJSONLine(w, doc)
	}
	return a.shape.write(w, doc)
}

// shapeFailure is the failure of --jq or --template on one document
// (exit 1). A command that prints many documents reports it and goes on
// with the next, as jq does (see app.tolerate).
type shapeFailure struct {
	flag string // --jq or --template
	err  error
}

func (e *shapeFailure) Error() string { return e.flag + ": " + e.err.Error() }
func (e *shapeFailure) Unwrap() error { return e.err }

func shapeError(flag string, err error) error { return &shapeFailure{flag: flag, err: err} }

// tolerate takes err, the error of printing document n of many (what n
// counts: "line", "event", "row"): a failure of --jq or --template is
// reported on stderr after the document's place ("line 12"), counted,
// and dropped; any other error, or nil, is returned. The place is only
// formatted for a failure: tolerate runs for every document printed.
func (a *app) tolerate(err error, what string, n int64) error {
	var sf *shapeFailure
	if err == nil || !errors.As(err, &sf) {
		return err
	}
	a.shapeFailures++
	if !a.quiet {
		fmt.Fprintf(a.env.stderr, "synthient: %s %d: %s\n", what, n, a.describe(sf))
	}
	return nil
}

// shapeFailuresError is the error of a command that printed many
// documents (what names them) when --jq or --template failed on some:
// exit 1; nil when none.
func (a *app) shapeFailuresError(what string) error {
	if a.shapeFailures == 0 {
		return nil
	}
	flag := "--jq"
	if a.template != "" {
		flag = "--template"
	}
	where := " (listed above)"
	if a.quiet {
		where = " (run without --quiet to list them)"
	}
	return &exitError{code: exitFailure, err: fmt.Errorf("%s failed on %s of the %s printed%s",
		flag, plural(a.shapeFailures, "document", "documents"), what, where)}
}

// decodeDocument decodes doc keeping its numbers as written.
func decodeDocument(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// jqShape runs a jq expression on each document, printing each value it
// yields on a line of its own: a string as it is (jq's -r), anything else
// as JSON.
type jqShape struct {
	ctx  context.Context // Ctrl-C stops an expression that does not end
	code *gojq.Code
}

func (s *jqShape) write(w io.Writer, doc []byte) error {
	v, err := decodeDocument(doc)
	if err != nil {
		return shapeError("--jq", err)
	}
	iter := s.code.RunWithContext(s.ctx, v)
	for {
		out, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := out.(error); ok {
			return jqError(err)
		}
		if err := writeJQValue(w, out); err != nil {
			return err
		}
	}
}

// jqError is the command's error for an error of the expression: none
// for a halt, the message for halt_error, else the jq error.
func jqError(err error) error {
	var halt *gojq.HaltError
	if errors.As(err, &halt) && halt.Value() == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return shapeError("--jq", err)
}

// writeJQValue writes one value of a jq expression on a line.
func writeJQValue(w io.Writer, v any) error {
	if s, ok := v.(string); ok {
		_, err := io.WriteString(w, s+"\n")
		return err
	}
	b, err := gojq.Marshal(v)
	if err != nil {
		return shapeError("--jq", err)
	}
	return writeJSONLine(w, b)
}

// templateShape executes a Go template on each document, which ends with
// a newline when the template's text does not: one line (at least) per
// document, also when the template renders nothing.
type templateShape struct{ t *template.Template }

func (s *templateShape) write(w io.Writer, doc []byte) error {
	v, err := decodeDocument(doc)
	if err != nil {
		return shapeError("--template", err)
	}
	var buf bytes.Buffer
	if err := s.t.Execute(&buf, templateNumbers(v)); err != nil {
		return shapeError("--template", err)
	}
	if n := buf.Len(); n == 0 || buf.Bytes()[n-1] != '\n' {
		buf.WriteByte('\n') // one line per document, also an empty one
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// templateFuncs are the functions a --template has beside Go's own.
var templateFuncs = template.FuncMap{
	// json renders a value as JSON (<, > and & as they are).
	"json": func(v any) (string, error) {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		err := e.Encode(v)
		return strings.TrimSuffix(b.String(), "\n"), err
	},
	// join joins the items of a list with sep.
	"join": func(sep string, v []any) string {
		items := make([]string, len(v))
		for i, x := range v {
			items[i] = fmt.Sprint(x)
		}
		return strings.Join(items, sep)
	},
}

// templateNumbers returns v with its numbers (json.Number, as the
// document wrote them) as a template compares them: an integer that fits
// in an int64 as one, a number with a fraction or an exponent as a
// float64; an integer past int64 or a number past float64 stays a
// json.Number, which prints as written.
func templateNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil && !isInteger(string(x)) {
			return f
		}
		return x
	case []any:
		for i := range x {
			x[i] = templateNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = templateNumbers(x[k])
		}
	}
	return v
}

// isInteger reports whether the JSON number s has no fraction and no
// exponent.
func isInteger(s string) bool { return !strings.ContainsAny(s, ".eE") }

// csvTable writes CSV: a header, then rows. A cell that a spreadsheet
// would run as a formula (it starts with =, +, -, @, a tab or a carriage
// return, and is not a number) gets a leading ': the text is the
// server's.
type csvTable struct{ w *csv.Writer }

func newCSVTable(w io.Writer, header ...string) *csvTable {
	t := &csvTable{w: csv.NewWriter(w)}
	t.row(header...) // an error here comes back from the next row or flush
	return t
}

// row writes one row; an error is the output's.
func (t *csvTable) row(cells ...string) error {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = csvCell(c)
	}
	return t.w.Write(safe)
}

func (t *csvTable) flush() error {
	t.w.Flush()
	return t.w.Error()
}

// writeCSV writes a header and rows.
func writeCSV(w io.Writer, header []string, rows ...[]string) error {
	t := newCSVTable(w, header...)
	for _, r := range rows {
		if err := t.row(r...); err != nil {
			return err
		}
	}
	return t.flush()
}

// csvCell defuses a cell a spreadsheet would read as a formula.
func csvCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// The CSV columns: raw values for machines (numbers as numbers, times
// in RFC 3339, lists joined with ";"), an empty cell for a missing value.

var ipCSVHeader = []string{"ip", "asn", "isp", "network_type", "org", "domain",
	"country", "state", "city", "timezone", "latitude", "longitude",
	"risk_score", "categories", "behavior", "providers", "devices"}

// ipCSVRow is a lookup's row under ipCSVHeader.
func ipCSVRow(r *synthient.IPLookup) []string {
	row := make([]string, 0, len(ipCSVHeader))
	row = append(row, r.IP.String())
	if n := r.Network; n != nil {
		row = append(row, strconv.Itoa(n.ASN), n.ISP, n.Type, deref(n.Org), deref(n.Domain))
	} else {
		row = append(row, "", "", "", "", "")
	}
	if l := r.Location; l != nil {
		row = append(row, l.Country, l.State, l.City, l.Timezone, formatFloat(l.Latitude), formatFloat(l.Longitude))
	} else {
		row = append(row, "", "", "", "", "", "")
	}
	if in := r.Intelligence; in != nil {
		var providers, devices []string
		for _, p := range in.Providers {
			providers = append(providers, p.Provider)
		}
		for _, d := range in.Devices {
			devices = append(devices, strings.TrimSpace(d.OS+" "+d.Version))
		}
		row = append(row, strconv.Itoa(in.RiskScore), strings.Join(in.Categories, ";"),
			strings.Join(in.Behavior, ";"), strings.Join(providers, ";"), strings.Join(devices, ";"))
	} else {
		row = append(row, "", "", "", "", "")
	}
	return row
}

var domainCSVHeader = []string{"domain", "status", "events_24h", "events_30d",
	"unique_ips_24h", "unique_ips_30d", "top_asn", "top_subdomains", "top_ports", "cadence"}

// domainCSVRow is a domain lookup's row under domainCSVHeader.
func domainCSVRow(r *synthient.DomainLookup) []string {
	asn := ""
	if r.TopASN != nil {
		asn = strconv.Itoa(r.TopASN.ASN)
	}
	var subs, ports []string
	for _, s := range r.TopSubdomains {
		subs = append(subs, s.Subdomain)
	}
	for _, p := range r.TopPorts {
		ports = append(ports, strconv.Itoa(p.Port))
	}
	return []string{r.Domain, r.Status,
		strconv.FormatInt(r.Stats.Events24h, 10), strconv.FormatInt(r.Stats.TotalEvents30d, 10),
		strconv.FormatInt(r.UniqueIPs.Value24h, 10), strconv.FormatInt(r.UniqueIPs.Value30d, 10),
		asn, strings.Join(subs, ";"), strings.Join(ports, ";"), r.ActivityStats.Cadence}
}

var exportCSVHeader = []string{"id", "kind", "date", "hour", "size_bytes", "row_count", "created_at", "checksum"}

// exportCSVRow is an export's row under exportCSVHeader.
func exportCSVRow(e *synthient.Export) []string {
	hour, created := "", ""
	if e.Hour != nil {
		hour = strconv.Itoa(*e.Hour)
	}
	if e.CreatedAt != 0 {
		created = time.Unix(e.CreatedAt, 0).UTC().Format(time.RFC3339)
	}
	return []string{e.ID, e.Kind, e.Date, hour, strconv.FormatInt(e.SizeBytes, 10),
		strconv.FormatInt(e.RowCount, 10), created, e.Checksum}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// writeExportsCSV writes exports as CSV.
func writeExportsCSV(w io.Writer, exports []synthient.Export) error {
	rows := make([][]string, len(exports))
	for i := range exports {
		rows[i] = exportCSVRow(&exports[i])
	}
	return writeCSV(w, exportCSVHeader, rows...)
}

var planCSVHeader = []string{"addresses", "invalid", "duplicates", "distinct", "requests", "credits", "credits_left", "fits"}

// planCSVRow is a dry run's row under planCSVHeader: the last two cells
// are empty without a key.
func planCSVRow(p *dryRunPlan) []string {
	left, fits := "", ""
	if p.CreditsLeft != nil {
		left, fits = strconv.FormatInt(*p.CreditsLeft, 10), strconv.FormatBool(*p.Fits)
	}
	return []string{strconv.FormatInt(p.Addresses, 10), strconv.FormatInt(p.Invalid, 10),
		strconv.FormatInt(p.Duplicates, 10), strconv.FormatInt(p.Distinct, 10),
		strconv.FormatInt(p.Requests, 10), strconv.FormatInt(p.Credits, 10), left, fits}
}
