package demo

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// width is the most columns a line of the demo takes.
const width = 100

// wrapWriter writes whole lines to w, each longer than width broken at
// spaces into lines that fit (see wrapLine); Flush writes a last line
// that has no newline. It is used from one goroutine at a time (the
// decision handler holds its own lock).
type wrapWriter struct {
	w   io.Writer
	buf []byte // a line not yet ended
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := bytes.IndexByte(ww.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		if _, err := io.WriteString(ww.w, strings.Join(wrapLine(line), "\n")+"\n"); err != nil {
			return len(p), err
		}
	}
}

// Flush writes what is left of an unended line.
func (ww *wrapWriter) Flush() error {
	if len(ww.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(ww.w, strings.Join(wrapLine(string(ww.buf)), "\n"))
	ww.buf = nil
	return err
}

// wrapLine breaks line, when it is wider than width, at spaces into
// lines that fit, each after the first indented as the line's kind asks:
// a decision ("   | ...") keeps its bar, a result ("   => ...") and a
// table row ("   Key   value, value") align under their text. A word
// wider than a line is cut.
func wrapLine(line string) []string {
	if utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	hang := hangOf(line)
	var out []string
	for first := true; utf8.RuneCountInString(line) > width; first = false {
		cut := breakAt(line, hang, first)
		out = append(out, strings.TrimRight(line[:cut], " "))
		line = hang + strings.TrimLeft(line[cut:], " ")
	}
	return append(out, line)
}

// hangOf returns what starts each line that continues line: at most
// half the width, so that every line holds text.
func hangOf(line string) string {
	if hang := hangFor(line); len(hang) <= width/2 {
		return hang
	}
	return "  "
}

// hangFor returns the indentation that the kind of line asks for.
func hangFor(line string) string {
	text := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(text)]
	switch {
	case strings.HasPrefix(text, "| "):
		return indent + "|   "
	case strings.HasPrefix(text, "=> "):
		return indent + "   "
	}
	// A table row: the column after the first run of two spaces.
	if word, rest, ok := strings.Cut(text, "  "); ok && !strings.Contains(word, " ") {
		value := strings.TrimLeft(rest, " ")
		return strings.Repeat(" ", utf8.RuneCountInString(line)-utf8.RuneCountInString(value))
	}
	return indent + "  "
}

// breakAt returns the byte offset at which to break line: after the last
// space that leaves at most width columns before it (and, past the first
// line, after hang), else at width columns.
func breakAt(line, hang string, first bool) int {
	limit, col := 0, 0
	for i := range line {
		if col == width {
			limit = i
			break
		}
		col++
	}
	floor := 0
	if !first {
		floor = len(hang)
	}
	if i := strings.LastIndexByte(line[:limit], ' '); i > floor {
		return i + 1
	}
	return limit
}

// withoutRequestIDs is a slog.Handler that passes each record on to h
// without its request_id: a decision line of the demo then fits its
// width, and the demo prints the ids that matter (those of errors) whole.
type withoutRequestIDs struct{ slog.Handler }

func (w withoutRequestIDs) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "request_id" {
			out.AddAttrs(a)
		}
		return true
	})
	return w.Handler.Handle(ctx, out)
}
