// Package shape runs --jq and --template: each JSON document a command
// would print becomes what the expression or the template makes of it.
package shape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/template"

	"github.com/itchyny/gojq"

	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// Shape reshapes the JSON documents a command prints.
type Shape interface {
	// Write writes what doc, one JSON document, becomes. A failure of the
	// expression or the template on doc is a *Failure.
	Write(w io.Writer, doc []byte) error
	// Flag is the command-line flag of the shape: "--jq" or "--template".
	Flag() string
}

// Compile compiles the jq expression jq or the Go template tmpl (one of
// them may be set): nil, nil for neither. ctx bounds each run of a jq
// expression (Ctrl-C stops one that does not end). The error of an
// expression or template that does not compile names the flag.
func Compile(ctx context.Context, jq, tmpl string) (Shape, error) {
	switch {
	case jq == "" && tmpl == "":
		return nil, nil
	case jq != "" && tmpl != "":
		return nil, errors.New("--jq and --template cannot be combined: pick one")
	case jq != "":
		q, err := gojq.Parse(jq)
		if err != nil {
			return nil, fmt.Errorf("--jq %s: %w", render.ShellWord(jq), err)
		}
		code, err := gojq.Compile(q)
		if err != nil {
			return nil, fmt.Errorf("--jq %s: %w", render.ShellWord(jq), err)
		}
		return &jqShape{ctx: ctx, code: code}, nil
	}
	t, err := template.New("--template").Funcs(templateFuncs).Parse(tmpl)
	if err != nil {
		return nil, err
	}
	return &templateShape{t: t}, nil
}

// Failure is the failure of --jq or --template on one document. A
// command that prints many documents reports it and goes on with the
// next, as jq does.
type Failure struct {
	Flag string // --jq or --template
	Err  error
}

func (e *Failure) Error() string { return e.Flag + ": " + e.Err.Error() }
func (e *Failure) Unwrap() error { return e.Err }

func failure(flag string, err error) error { return &Failure{Flag: flag, Err: err} }

// DecodeDocument decodes doc keeping its numbers as written
// (json.Number).
func DecodeDocument(doc []byte) (any, error) {
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

func (s *jqShape) Flag() string { return "--jq" }

func (s *jqShape) Write(w io.Writer, doc []byte) error {
	v, err := DecodeDocument(doc)
	if err != nil {
		return failure("--jq", err)
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
	return failure("--jq", err)
}

// writeJQValue writes one value of a jq expression on a line.
func writeJQValue(w io.Writer, v any) error {
	if s, ok := v.(string); ok {
		_, err := io.WriteString(w, s+"\n")
		return err
	}
	b, err := gojq.Marshal(v)
	if err != nil {
		return failure("--jq", err)
	}
	return render.WriteJSONLine(w, b)
}

// templateShape executes a Go template on each document, which ends with
// a newline when the template's text does not: one line (at least) per
// document, also when the template renders nothing.
type templateShape struct{ t *template.Template }

func (s *templateShape) Flag() string { return "--template" }

func (s *templateShape) Write(w io.Writer, doc []byte) error {
	v, err := DecodeDocument(doc)
	if err != nil {
		return failure("--template", err)
	}
	var buf bytes.Buffer
	if err := s.t.Execute(&buf, TemplateNumbers(v)); err != nil {
		return failure("--template", err)
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

// TemplateNumbers returns v, a document from DecodeDocument, with its
// numbers (json.Number, as the document wrote them) as a template
// compares them: an integer that fits in an int64 as one, a number with a
// fraction or an exponent as a float64; an integer past int64 or a number
// past float64 stays a json.Number, which prints as written. It changes v
// in place.
func TemplateNumbers(v any) any {
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
			x[i] = TemplateNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = TemplateNumbers(x[k])
		}
	}
	return v
}

// isInteger reports whether the JSON number s has no fraction and no
// exponent.
func isInteger(s string) bool { return !strings.ContainsAny(s, ".eE") }
