package trace

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DecisionHandler prints the SDK's retry-decision events as one readable
// line each, and each pacing hold in the words of --trace:
//
//	attempt 1/3 GET /lookup/ip/{ip}: 429, Retry-After 1s -> retry in 1s
//	hold 8ms before attempt 1 (lookup rate limit)
type DecisionHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Level
	// Indent opens every line (the demo's "   | ").
	Indent string
}

// NewDecisionHandler returns a handler that writes the records of level
// and above to w.
func NewDecisionHandler(w io.Writer, level slog.Level) *DecisionHandler {
	return &DecisionHandler{mu: &sync.Mutex{}, w: w, level: level}
}

// Enabled reports whether l is the handler's level or above.
func (h *DecisionHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

// WithAttrs returns h: a line shows the attributes of its record only.
func (h *DecisionHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup returns h: the records' attributes are read by name, in no
// group.
func (h *DecisionHandler) WithGroup(string) slog.Handler { return h }

// pacingMessage is the message of the SDK's records of a pacing hold.
const pacingMessage = "synthient: pacing"

// Handle writes the record as one line. A pacing hold is written as
// --trace writes it (holdLine); an attempt in its steps: the attempt and
// its route, what the attempt came to (writeOutcome), the decision
// (writeDecision), and the time left before the deadline.
func (h *DecisionHandler) Handle(_ context.Context, r slog.Record) error {
	v := recordAttrs(r)
	var b strings.Builder
	b.WriteString(h.Indent)
	if r.Message == pacingMessage {
		wait, _ := v.dur("wait")
		attempt, _ := strconv.Atoi(v.str("attempt"))
		b.WriteString(holdLine(v.str("bucket"), attempt, wait, v.str("reason")))
	} else {
		fmt.Fprintf(&b, "attempt %s/%s %s %s: ", v.str("attempt"), v.str("max_attempts"), v.str("method"), v.str("route"))
		v.writeOutcome(&b)
		v.writeDecision(&b, r.Message)
		if left, ok := v.dur("time_left"); ok {
			fmt.Fprintf(&b, " (%s left before the deadline)", left.Round(time.Millisecond))
		}
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// attrs are a record's attributes by key, resolved.
type attrs map[string]slog.Value

func recordAttrs(r slog.Record) attrs {
	v := attrs{}
	r.Attrs(func(a slog.Attr) bool {
		v[a.Key] = a.Value.Resolve()
		return true
	})
	return v
}

// str returns the attribute k as text; "" when the record has none.
func (v attrs) str(k string) string {
	if x, ok := v[k]; ok {
		return x.String()
	}
	return ""
}

// dur returns the attribute k when it is a duration.
func (v attrs) dur(k string) (time.Duration, bool) {
	if x, ok := v[k]; ok && x.Kind() == slog.KindDuration {
		return x.Duration(), true
	}
	return 0, false
}

// writeOutcome writes what the attempt came to: its status, else its
// error, else "waiting"; then the Retry-After and the request id it
// brought.
func (v attrs) writeOutcome(b *strings.Builder) {
	if s := v.str("status"); s != "" {
		b.WriteString(s)
	} else if e := v.str("error"); e != "" {
		b.WriteString(e + " error")
	} else {
		b.WriteString("waiting")
	}
	if ra, ok := v.dur("retry_after"); ok {
		fmt.Fprintf(b, ", Retry-After %s", ra)
	}
	if id := v.str("request_id"); id != "" {
		fmt.Fprintf(b, ", request id %s", id)
	}
}

// writeDecision writes the decision: a retry and its wait, done, or a
// stop and its reason; for any other record, its message.
func (v attrs) writeDecision(b *strings.Builder, message string) {
	switch v.str("decision") {
	case "retry":
		w, _ := v.dur("wait")
		fmt.Fprintf(b, " -> retry in %s", w.Round(time.Millisecond))
	case "done":
		b.WriteString(" -> done")
	case "stop":
		fmt.Fprintf(b, " -> stop: %s", v.str("reason"))
	default:
		b.WriteString(" " + message)
	}
}
