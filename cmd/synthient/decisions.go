package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// decisionHandler prints the SDK's retry-decision events as one readable
// line each:
//
//	attempt 1/3 GET /lookup/ip/{ip}: 429, Retry-After 1s -> retry in 1s
type decisionHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Level
	indent string
}

func newDecisionHandler(w io.Writer, level slog.Level) *decisionHandler {
	return &decisionHandler{mu: &sync.Mutex{}, w: w, level: level}
}

func (h *decisionHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *decisionHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *decisionHandler) WithGroup(string) slog.Handler                { return h }

func (h *decisionHandler) Handle(_ context.Context, r slog.Record) error {
	v := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool {
		v[a.Key] = a.Value.Resolve()
		return true
	})
	str := func(k string) string {
		if x, ok := v[k]; ok {
			return x.String()
		}
		return ""
	}
	dur := func(k string) (time.Duration, bool) {
		if x, ok := v[k]; ok && x.Kind() == slog.KindDuration {
			return x.Duration(), true
		}
		return 0, false
	}
	var b strings.Builder
	b.WriteString(h.indent)
	fmt.Fprintf(&b, "attempt %s/%s %s %s: ", str("attempt"), str("max_attempts"), str("method"), str("route"))
	if s := str("status"); s != "" {
		b.WriteString(s)
	} else if e := str("error"); e != "" {
		b.WriteString(e + " error")
	} else {
		b.WriteString("waiting")
	}
	if ra, ok := dur("retry_after"); ok {
		fmt.Fprintf(&b, ", Retry-After %s", ra)
	}
	if id := str("request_id"); id != "" {
		fmt.Fprintf(&b, ", request id %s", id)
	}
	switch str("decision") {
	case "retry":
		w, _ := dur("wait")
		fmt.Fprintf(&b, " -> retry in %s", w.Round(time.Millisecond))
	case "done":
		b.WriteString(" -> done")
	case "stop":
		fmt.Fprintf(&b, " -> stop: %s", str("reason"))
	default:
		b.WriteString(" " + r.Message)
	}
	if left, ok := dur("time_left"); ok {
		fmt.Fprintf(&b, " (%s left before the deadline)", left.Round(time.Millisecond))
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}
