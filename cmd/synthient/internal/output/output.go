// Package output prints a command's results in the format the command
// line asks for: text (tables), json (one document per result) or csv
// (one header, one row per result, on the commands that print rows), and
// through --jq or --template, which reshape each JSON document whatever
// --output says short of csv.
package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/shape"
)

// The formats of --output.
const (
	Text = "text"
	JSON = "json"
	CSV  = "csv"
)

// Printer prints results on Out. Its methods may be called from one
// goroutine at a time.
type Printer struct {
	// Format is Text, JSON or CSV.
	Format string
	// Shape reshapes each JSON document; nil for none.
	Shape shape.Shape
	// Out is where results go: the command's stdout.
	Out io.Writer
	// Err is where a failure of Shape on one document of many is
	// reported, unless Quiet.
	Err   io.Writer
	Quiet bool
	// Describe renders an error as one line.
	Describe func(error) string

	failures atomic.Int64 // documents Shape failed on (Tolerate)
}

// JSON reports whether the command prints JSON documents: --output json,
// or --jq or --template, which reshape them.
func (p *Printer) JSON() bool { return p.Format == JSON || p.Shape != nil }

// CSV reports whether the command prints CSV.
func (p *Printer) CSV() bool { return p.Format == CSV }

// Emit prints v, a result, on Out: as one line of JSON, or reshaped by
// --jq or --template.
func (p *Printer) Emit(v any) error { return p.EmitTo(p.Out, v) }

// EmitTo prints v as Emit does, to w.
func (p *Printer) EmitTo(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return p.EmitJSON(w, b)
}

// EmitJSON prints doc, one JSON document (a result, a stream line), to w
// as Emit does. Its strings are escaped for a terminal
// (render.WriteJSONLine).
func (p *Printer) EmitJSON(w io.Writer, doc []byte) error {
	if p.Shape == nil {
		return render.WriteJSONLine(w, doc)
	}
	return p.Shape.Write(w, doc)
}

// Tolerate takes err, the error of printing document n of many (what n
// counts: "line", "event", "row"): a failure of --jq or --template is
// reported on Err after the document's place ("line 12"), counted, and
// dropped; any other error, or nil, is returned. The place is only
// formatted for a failure: Tolerate runs for every document printed.
func (p *Printer) Tolerate(err error, what string, n int64) error {
	var sf *shape.Failure
	if err == nil || !errors.As(err, &sf) {
		return err
	}
	p.failures.Add(1)
	if !p.Quiet {
		_, _ = fmt.Fprintf(p.Err, "synthient: %s %d: %s\n", what, n, p.Describe(sf)) // stderr: a failed write has nowhere to be reported
	}
	return nil
}

// FailuresError is the error of a command that printed many documents
// (what names them) when --jq or --template failed on some: exit 1; nil
// when none.
func (p *Printer) FailuresError(what string) error {
	n := p.failures.Load()
	if n == 0 || p.Shape == nil {
		return nil
	}
	where := " (listed above)"
	if p.Quiet {
		where = " (run without --quiet to list them)"
	}
	return clierr.New(clierr.Failure, fmt.Errorf("%s failed on %s of the %s printed%s",
		p.Shape.Flag(), render.Plural(n, "document", "documents"), what, where))
}
