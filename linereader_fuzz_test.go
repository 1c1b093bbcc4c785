package synthient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/synthient-go/synthient"
)

// fzJSONBlank reports whether b holds nothing but JSON white space.
func fzJSONBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// fzExpect is what the stream of body must give: the events (trimmed),
// whether it must end with a decode error, and whether the oracle could
// tell (a line of Unicode white space such as U+0085 may be skipped as
// blank or rejected as not JSON).
func fzExpect(body []byte) (events [][]byte, decodeErr, known bool) {
	lines := bytes.Split(body, []byte{'\n'})
	for _, line := range lines {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		switch {
		case fzJSONBlank(line):
			continue
		case json.Valid(line):
			events = append(events, bytes.TrimSpace(line))
		case len(bytes.TrimSpace(line)) == 0:
			return events, false, false
		default:
			return events, true, true
		}
	}
	return events, false, true
}

// FuzzStreamRaw serves each input as an NDJSON stream body and checks the
// line reader through StreamRaw: no panic, every event valid JSON, at most
// one error and nothing after it, and (where the oracle can tell) exactly
// the events and error the lines call for.
func FuzzStreamRaw(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n\n\n",
		"{}\n\n{\"a\":1}\n\n",
		" \t \n\t\n{\"a\":1}\n   \n",
		"{\"a\":1}\r\n{\"b\":2}\r\n",
		"{\"a\":1}\r\n\r\n{\"b\":2}",
		"{\"a\":1}\n{\"b\":2}",
		"{\"a\":1}\nnot json\n{\"b\":2}\n",
		"{\"a\":",
		"[1,2,3]\n\"s\"\n42\nnull\ntrue\n",
		"{\"a\":1} {\"b\":2}\n",
		"\r\r\n\r",
		"{\"a\":\"\u00e9\\u00e9\"}\n\u0085\n",
	} {
		f.Add([]byte(seed))
	}

	var mu sync.Mutex // one input at a time: the server serves the current one
	var body []byte
	srv := newFXServer(f, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		_, _ = w.Write(body)
	})
	c := newClient(f, srv.Base)

	f.Fuzz(func(t *testing.T, in []byte) {
		mu.Lock()
		defer mu.Unlock()
		body = in

		var events [][]byte
		var errs []error
		for m, err := range c.StreamRaw(context.Background(), synthient.FeedProxies) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if len(errs) > 0 {
				t.Fatalf("event %q yielded after the error %v", m, errs[0])
			}
			if !json.Valid(m) {
				t.Fatalf("event %q is not valid JSON", m)
			}
			events = append(events, bytes.TrimSpace(m))
		}
		if len(errs) > 1 {
			t.Fatalf("%d errors (%v), want at most one", len(errs), errs)
		}
		if len(errs) == 1 {
			var de *synthient.DecodeError
			if !errors.As(errs[0], &de) {
				t.Fatalf("err = %v (%T), want a *DecodeError", errs[0], errs[0])
			}
		}

		want, wantErr, known := fzExpect(in)
		if !known {
			return
		}
		if len(events) != len(want) {
			t.Fatalf("%d events %q, want %d %q", len(events), events, len(want), want)
		}
		for i := range want {
			if !bytes.Equal(events[i], want[i]) {
				t.Fatalf("event %d = %q, want %q", i, events[i], want[i])
			}
		}
		if wantErr != (len(errs) == 1) {
			t.Fatalf("errors %v, want a decode error: %v", errs, wantErr)
		}
	})
}
