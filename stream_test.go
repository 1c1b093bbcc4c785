package synthient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
)

// smCollect ranges over seq and returns the items, the errors, and
// whether an item came after an error.
func smCollect[T any](seq iter.Seq2[T, error]) (items []T, errs []error, itemAfterErr bool) {
	for v, err := range seq {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(errs) > 0 {
			itemAfterErr = true
		}
		items = append(items, v)
	}
	return items, errs, itemAfterErr
}

// smNDJSON returns a handler that answers with body as an NDJSON stream
// and closes it cleanly.
func smNDJSON(body string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(body))
	}
}

// smStart sends the headers of an NDJSON stream at once.
func smStart(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
}

// smLine writes one line and flushes it.
func smLine(w http.ResponseWriter, line string) error {
	if _, err := w.Write([]byte(line)); err != nil {
		return err
	}
	w.(http.Flusher).Flush()
	return nil
}

// smRaw ranges over the raw stream of feed.
func smRaw(ctx context.Context, c *synthient.Client, feed synthient.Feed) ([]string, []error, bool) {
	items, errs, after := smCollect(c.StreamRaw(ctx, feed))
	out := make([]string, len(items))
	for i, m := range items {
		out[i] = string(m)
	}
	return out, errs, after
}

// smGuard fails the test if ch is not closed soon: a guard against a hang,
// not a timing assertion (10 s is far beyond anything the check needs).
func smGuard(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("still waiting after 10s: %s", what)
	}
}

// smCase is one stream method.
type smCase struct {
	name string
	seg  string
	// open creates the sequence (without ranging over it) and returns a
	// function that ranges over it.
	open func(ctx context.Context, c *synthient.Client) func() (int, []error)
}

func smOpen[T any](seq iter.Seq2[T, error]) func() (int, []error) {
	return func() (int, []error) {
		items, errs, _ := smCollect(seq)
		return len(items), errs
	}
}

func smCases() []smCase {
	cases := []smCase{
		{"StreamProxies", "proxies", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamProxies(ctx))
		}},
		{"StreamAnonymizers", "anonymizers", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamAnonymizers(ctx))
		}},
		{"StreamTorrents", "torrents", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamTorrents(ctx))
		}},
		{"StreamJA4T", "ja4t", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamJA4T(ctx))
		}},
		{"StreamHoneypotHTTP", "helio/http", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamHoneypotHTTP(ctx))
		}},
		{"StreamHoneypotHTTPS", "helio/https", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamHoneypotHTTPS(ctx))
		}},
		{"StreamHoneypotDNS", "helio/dns", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamHoneypotDNS(ctx))
		}},
		{"StreamHoneypotADB", "helio/adb", func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamHoneypotADB(ctx))
		}},
	}
	for _, f := range fxSegments {
		cases = append(cases, smCase{"StreamRaw/" + string(f.feed), f.seg, func(ctx context.Context, c *synthient.Client) func() (int, []error) {
			return smOpen(c.StreamRaw(ctx, f.feed))
		}})
	}
	return cases
}

func TestStreamPathAcceptAndLaziness(t *testing.T) {
	for _, tc := range smCases() {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFXServer(t, false, smNDJSON("{}\n\n{}\n"))
			c := newClient(t, srv.Base)
			run := tc.open(context.Background(), c)
			if n := srv.Arrivals(); n != 0 {
				t.Fatalf("%d requests before the loop started, want 0", n)
			}
			n, errs := run()
			if n != 2 || len(errs) != 0 {
				t.Fatalf("%d events, errors %v; want 2 and none", n, errs)
			}
			reqs := srv.Reqs()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if want := "/api/v4/feeds/" + tc.seg + "/stream"; r.Method != http.MethodGet || r.Path != want {
				t.Errorf("request %s %s, want GET %s", r.Method, r.Path, want)
			}
			if got := r.Header.Get("Accept"); got != "application/x-ndjson" {
				t.Errorf("Accept = %q, want application/x-ndjson", got)
			}
			if got := r.Header.Get("X-Api-Key"); got != testKey {
				t.Errorf("X-Api-Key = %q, want the key", got)
			}
		})
	}
}

func TestStreamLineFraming(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string
	}{
		{"heartbeats and blank lines", "\n\n{\"ip\":\"a\"}\n\n\n{\"ip\":\"b\"}\n\n", []string{`{"ip":"a"}`, `{"ip":"b"}`}},
		{"white-space-only lines", " \n\t\n \t \n{\"ip\":\"a\"}\n   \n\t\t\n{\"ip\":\"b\"}\n", []string{`{"ip":"a"}`, `{"ip":"b"}`}},
		{"CRLF", "{\"ip\":\"a\"}\r\n\r\n \r\n{\"ip\":\"b\"}\r\n", []string{`{"ip":"a"}`, `{"ip":"b"}`}},
		{"final line without newline", "{\"ip\":\"a\"}\n{\"ip\":\"b\"}", []string{`{"ip":"a"}`, `{"ip":"b"}`}},
		{"final CRLF line without newline", "{\"ip\":\"a\"}\r\n{\"ip\":\"b\"}\r", []string{`{"ip":"a"}`, `{"ip":"b"}`}},
		{"final blank line without newline", "{\"ip\":\"a\"}\n \t ", []string{`{"ip":"a"}`}},
		{"only heartbeats", "\n\n\r\n \n", nil},
		{"empty", "", nil},
		{"mixed", "\r\n{\"ip\":\"a\"}\r\n\n\t\r\n{\"ip\":\"b\"}\n \n{\"ip\":\"c\"}", []string{`{"ip":"a"}`, `{"ip":"b"}`, `{"ip":"c"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFXServer(t, false, smNDJSON(tc.body))
			c := newClient(t, srv.Base)

			raw, errs, _ := smRaw(context.Background(), c, synthient.FeedProxies)
			if len(errs) != 0 {
				t.Fatalf("StreamRaw errors: %v", errs)
			}
			if !reflect.DeepEqual(raw, tc.want) && !(len(raw) == 0 && len(tc.want) == 0) {
				t.Errorf("StreamRaw = %q, want %q", raw, tc.want)
			}

			evs, errs, _ := smCollect(c.StreamProxies(context.Background()))
			if len(errs) != 0 {
				t.Fatalf("StreamProxies errors: %v", errs)
			}
			if len(evs) != len(tc.want) {
				t.Fatalf("StreamProxies: %d events, want %d", len(evs), len(tc.want))
			}
			for i, e := range evs {
				if want := tc.want[i][7:8]; e.IP != want {
					t.Errorf("event %d: IP %q, want %q", i, e.IP, want)
				}
			}
			if n := srv.Arrivals(); n != 2 {
				t.Errorf("%d requests, want 2 (one per stream; a clean close does not reconnect)", n)
			}
		})
	}
}

func TestStreamCleanCloseEndsWithoutError(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		smStart(w)
		smLine(w, `{"ip":"192.0.2.1"}`+"\n")
		smLine(w, "\n")
		smLine(w, `{"ip":"192.0.2.2"}`+"\n")
	})
	c := newClient(t, srv.Base)
	evs, errs, _ := smCollect(c.StreamProxies(context.Background()))
	if len(evs) != 2 || len(errs) != 0 {
		t.Fatalf("%d events, errors %v; want 2 and none", len(evs), errs)
	}
	if n := srv.Arrivals(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if wait, ok := synthient.ReconnectDelay(nil); wait != 0 || !ok {
		t.Errorf("ReconnectDelay after a clean close = %v, %v; want 0, true", wait, ok)
	}
}

// smChunk writes s as one chunk of a chunked body.
func smChunk(c net.Conn, s string) error {
	_, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(s), s)
	return err
}

func TestStreamResetMidLine(t *testing.T) {
	for _, typed := range []bool{false, true} {
		t.Run(fmt.Sprintf("typed=%v", typed), func(t *testing.T) {
			got1 := make(chan struct{})
			srv := newFXRaw(t, func(c *net.TCPConn, _ *http.Request, quit <-chan struct{}) {
				fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
				smChunk(c, `{"ip":"192.0.2.1"}`+"\n")
				smChunk(c, `{"ip":"192.0.2.2","prov`)
				if fxWait(got1, quit) {
					fxReset(c)
				}
			})
			c := newClient(t, srv.URL+"/api/v4")
			var once sync.Once
			n, errs, after := 0, []error(nil), false
			if typed {
				for ev, err := range c.StreamProxies(context.Background()) {
					if err != nil {
						errs = append(errs, err)
						continue
					}
					after = after || len(errs) > 0
					n++
					if ev.IP != "192.0.2.1" {
						t.Errorf("event %+v", ev)
					}
					once.Do(func() { close(got1) })
				}
			} else {
				for m, err := range c.StreamRaw(context.Background(), synthient.FeedProxies) {
					if err != nil {
						errs = append(errs, err)
						continue
					}
					after = after || len(errs) > 0
					n++
					if string(m) != `{"ip":"192.0.2.1"}` {
						t.Errorf("event %s", m)
					}
					once.Do(func() { close(got1) })
				}
			}
			if n != 1 || len(errs) != 1 || after {
				t.Fatalf("%d events, errors %v (event after error: %v); want 1 event then exactly 1 error", n, errs, after)
			}
			var ce *synthient.ConnectionError
			if !errors.As(errs[0], &ce) {
				t.Errorf("err = %v (%T), want a *ConnectionError", errs[0], errs[0])
			}
			var te *synthient.TimeoutError
			var de *synthient.DecodeError
			if errors.As(errs[0], &te) || errors.As(errs[0], &de) {
				t.Errorf("err = %v (%T), want a reset, not a timeout or a decode error", errs[0], errs[0])
			}
			if a := srv.Arrivals(); a != 1 {
				t.Errorf("%d requests, want 1 (a failure while reading is never retried)", a)
			}
			if wait, ok := synthient.ReconnectDelay(errs[0]); wait != synthient.MinReconnectDelay || !ok {
				t.Errorf("ReconnectDelay = %v, %v; want %v, true", wait, ok, synthient.MinReconnectDelay)
			}
		})
	}
}

// smLongLine returns a line of JSON (a string) of exactly n bytes.
func smLongLine(n int) []byte {
	b := bytes.Repeat([]byte{'x'}, n)
	b[0], b[n-1] = '"', '"'
	return b
}

func TestStreamLineTooLong(t *testing.T) {
	long := append(smLongLine(17<<20), '\n')
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		smStart(w)
		if smLine(w, "{\"first\":1}\n") != nil {
			return
		}
		if _, err := w.Write(long); err != nil {
			return
		}
		smLine(w, "{\"after\":1}\n")
	})
	c := newClient(t, srv.Base)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	raw, errs, itemAfter := smRaw(context.Background(), c, synthient.FeedProxies)
	runtime.ReadMemStats(&after)

	if !reflect.DeepEqual(raw, []string{`{"first":1}`}) {
		t.Errorf("events %q, want only the line before the long one", raw)
	}
	if len(errs) != 1 || itemAfter {
		t.Fatalf("errors %v (event after error: %v), want exactly 1 at the end", errs, itemAfter)
	}
	if !errors.Is(errs[0], synthient.ErrLineTooLong) {
		t.Errorf("err = %v (%T), want one matching ErrLineTooLong", errs[0], errs[0])
	}
	var de *synthient.DecodeError
	if !errors.As(errs[0], &de) {
		t.Errorf("err = %v (%T), want a *DecodeError (the line, not the connection, is at fault)", errs[0], errs[0])
	}
	var ce *synthient.ConnectionError
	if errors.As(errs[0], &ce) {
		t.Errorf("err = %v is a *ConnectionError, want a *DecodeError", errs[0])
	}
	if n := srv.Arrivals(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB reading a 17 MiB line", alloc>>20)
	if alloc > 40<<20 {
		t.Errorf("allocated %d MiB reading a 17 MiB line, want memory bounded (< 40 MiB; a line is buffered up to 16 MiB)", alloc>>20)
	}
}

func TestStreamLineOf15MiBIsAccepted(t *testing.T) {
	line := smLongLine(15 << 20)
	body := "{\"first\":1}\n" + string(line) + "\n{\"after\":1}\n"
	srv := newFXServer(t, false, smNDJSON(body))
	c := newClient(t, srv.Base)
	items, errs, _ := smCollect(c.StreamRaw(context.Background(), synthient.FeedProxies))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if len(items) != 3 || string(items[0]) != `{"first":1}` || !bytes.Equal(items[1], line) || string(items[2]) != `{"after":1}` {
		t.Errorf("got %d events (the second of %d bytes), want 3 with the 15 MiB line whole", len(items), func() int {
			if len(items) > 1 {
				return len(items[1])
			}
			return -1
		}())
	}
}

func TestStreamLineLengthLimitIsExact(t *testing.T) {
	if synthient.MaxLineSize != 16<<20 {
		t.Fatalf("MaxLineSize = %d, want 16 MiB (retry-rules.md: a stream line up to 16 MiB)", synthient.MaxLineSize)
	}
	cases := []struct {
		name    string
		n       int
		eol     string
		tooLong bool
	}{
		{"MaxLineSize with LF", synthient.MaxLineSize, "\n", false},
		{"MaxLineSize with CRLF", synthient.MaxLineSize, "\r\n", false},
		{"MaxLineSize at the end", synthient.MaxLineSize, "", false},
		{"MaxLineSize+1 with LF", synthient.MaxLineSize + 1, "\n", true},
		{"MaxLineSize+1 with CRLF", synthient.MaxLineSize + 1, "\r\n", true},
		{"MaxLineSize+1 at the end", synthient.MaxLineSize + 1, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line := smLongLine(tc.n)
			body := string(line) + tc.eol
			srv := newFXServer(t, false, smNDJSON(body))
			c := newClient(t, srv.Base)
			items, errs, _ := smCollect(c.StreamRaw(context.Background(), synthient.FeedProxies))
			if tc.tooLong {
				if len(items) != 0 || len(errs) != 1 || !errors.Is(errs[0], synthient.ErrLineTooLong) {
					t.Errorf("line of %d bytes: %d events, errors %v; want one error matching ErrLineTooLong", tc.n, len(items), errs)
				}
				return
			}
			if len(errs) != 0 || len(items) != 1 || len(items[0]) != tc.n {
				t.Errorf("line of %d bytes: %d events, errors %v; want it accepted", tc.n, len(items), errs)
			}
		})
	}
}

func TestStreamOpenRetriesLikeTheStandardClass(t *testing.T) {
	srv := newFXServer(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			fxProblem(w, 503)
			return
		}
		smNDJSON("{\"ip\":\"192.0.2.1\"}\n{\"ip\":\"192.0.2.2\"}\n")(n, w, r)
	})
	c := newClient(t, srv.Base)
	evs, errs, _ := smCollect(c.StreamProxies(context.Background()))
	if len(evs) != 2 || len(errs) != 0 {
		t.Fatalf("%d events, errors %v; want 2 and none", len(evs), errs)
	}
	if n := srv.Arrivals(); n != 3 {
		t.Errorf("%d requests, want 3 (503, 503, 200)", n)
	}
}

func TestStreamOpenErrorsAtOnce(t *testing.T) {
	cases := []struct {
		name   string
		status int
		kv     []string
	}{
		{"429 without Retry-After", 429, nil},
		{"429 with an unusable Retry-After", 429, []string{"Retry-After", "soon"}},
		{"401", 401, nil},
		{"403", 403, nil},
		{"404", 404, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { fxProblem(w, tc.status, tc.kv...) })
			c := newClient(t, srv.Base)
			evs, errs, _ := smCollect(c.StreamHoneypotDNS(context.Background()))
			if len(evs) != 0 || len(errs) != 1 {
				t.Fatalf("%d events, errors %v; want exactly one error", len(evs), errs)
			}
			var ae *synthient.APIError
			if !errors.As(errs[0], &ae) || ae.Status != tc.status {
				t.Fatalf("err = %v (%T), want an *APIError %d", errs[0], errs[0], tc.status)
			}
			if ae.RetryAfter != nil {
				t.Errorf("RetryAfter = %v, want nil", *ae.RetryAfter)
			}
			if n := srv.Arrivals(); n != 1 {
				t.Errorf("%d requests, want 1 (returned at once)", n)
			}
		})
	}
}

func TestStreamBreakClosesTheConnection(t *testing.T) {
	for _, typed := range []bool{false, true} {
		t.Run(fmt.Sprintf("typed=%v", typed), func(t *testing.T) {
			gone := make(chan struct{})
			srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
				defer close(gone)
				smStart(w)
				smLine(w, `{"ip":"192.0.2.1"}`+"\n")
				<-r.Context().Done() // the client went away (or the test ended)
			})
			c := newClient(t, srv.Base)
			n := 0
			if typed {
				for _, err := range c.StreamProxies(context.Background()) {
					if err != nil {
						t.Fatalf("err: %v", err)
					}
					n++
					break
				}
			} else {
				for _, err := range c.StreamRaw(context.Background(), synthient.FeedProxies) {
					if err != nil {
						t.Fatalf("err: %v", err)
					}
					n++
					break
				}
			}
			if n != 1 {
				t.Fatalf("%d events", n)
			}
			smGuard(t, gone, "the server to see the connection closed after break")
		})
	}
}

func TestStreamCancelMidStream(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		smStart(w)
		smLine(w, `{"ip":"192.0.2.1"}`+"\n")
		<-r.Context().Done()
	})
	c := newClient(t, srv.Base)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var evs int
	var errs []error
	for _, err := range c.StreamProxies(ctx) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		evs++
		cancel()
	}
	if evs != 1 || len(errs) != 1 {
		t.Fatalf("%d events, errors %v; want 1 event and exactly 1 error", evs, errs)
	}
	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("err = %v (%T), want one matching context.Canceled", errs[0], errs[0])
	}
	if wait, ok := synthient.ReconnectDelay(errs[0]); ok {
		t.Errorf("ReconnectDelay after a cancel = %v, true; want ok false", wait)
	}
	if n := srv.Arrivals(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestStreamCancelledBeforeRangingSendsNothing(t *testing.T) {
	srv := newFXServer(t, false, smNDJSON("{}\n"))
	c := newClient(t, srv.Base)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	items, errs, _ := smCollect(c.StreamRaw(ctx, synthient.FeedProxies))
	if len(items) != 0 || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("%d events, errors %v; want one error matching context.Canceled", len(items), errs)
	}
	if n := srv.Arrivals(); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}
}

func TestStreamUnknownFeed(t *testing.T) {
	srv := newFXServer(t, false, smNDJSON("{}\n"))
	c := newClient(t, srv.Base)
	for _, f := range []synthient.Feed{"nope", "", "helio/http"} {
		items, errs, _ := smCollect(c.StreamRaw(context.Background(), f))
		if len(items) != 0 || len(errs) != 1 {
			t.Fatalf("StreamRaw(%q): %d events, errors %v; want one error", f, len(items), errs)
		}
		fxCheckInvalid(t, errs[0])
	}
	if n := srv.Arrivals(); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}
}

func TestStreamHeartbeatsKeepItAlive(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		smStart(w)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 10; i++ { // 500 ms of heartbeats only
			select {
			case <-tick.C:
				if smLine(w, "\n") != nil {
					return
				}
			case <-r.Context().Done():
				return
			}
		}
		smLine(w, `{"ip":"192.0.2.1"}`+"\n")
	})
	c := newClient(t, srv.Base, synthient.WithTimeout(150*time.Millisecond))
	evs, errs, _ := smCollect(c.StreamProxies(context.Background()))
	if len(errs) != 0 || len(evs) != 1 || evs[0].IP != "192.0.2.1" {
		t.Fatalf("events %+v, errors %v; want the event after the heartbeats and no error", evs, errs)
	}
	if n := srv.Arrivals(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestStreamSilenceTimesOut(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		smStart(w)
		smLine(w, `{"ip":"192.0.2.1"}`+"\n")
		<-r.Context().Done() // silence until the client gives up
	})
	c := newClient(t, srv.Base, synthient.WithTimeout(150*time.Millisecond))
	evs, errs, after := smCollect(c.StreamProxies(context.Background()))
	if len(evs) != 1 || len(errs) != 1 || after {
		t.Fatalf("%d events, errors %v; want 1 event then exactly 1 error", len(evs), errs)
	}
	var te *synthient.TimeoutError
	if !errors.As(errs[0], &te) || !te.Timeout() {
		t.Fatalf("err = %v (%T), want a *TimeoutError", errs[0], errs[0])
	}
	var ce *synthient.ConnectionError
	if !errors.As(errs[0], &ce) {
		t.Errorf("err = %v does not match *ConnectionError", errs[0])
	}
	if n := srv.Arrivals(); n != 1 {
		t.Errorf("%d requests, want 1 (never retried)", n)
	}
}

func TestStreamNotJSONLineIsADecodeError(t *testing.T) {
	cases := []struct{ name, bad string }{
		{"garbage", "not json\n"},
		{"cut short at the end", `{"ip":"192.0.2.9"`},
		{"two values on a line", `{"ip":"a"} {"ip":"b"}` + "\n"},
		{"wrong type", `{"ip":42}` + "\n"},
		{"an array", `[1,2]` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"ip":"192.0.2.1"}` + "\n" + tc.bad + "\n" + `{"ip":"192.0.2.2"}` + "\n"
			srv := newFXServer(t, false, smNDJSON(body))
			c := newClient(t, srv.Base)
			evs, errs, after := smCollect(c.StreamProxies(context.Background()))
			if len(evs) != 1 || evs[0].IP != "192.0.2.1" || len(errs) != 1 || after {
				t.Fatalf("events %+v, errors %v; want the first event, then exactly one error and nothing after", evs, errs)
			}
			var de *synthient.DecodeError
			if !errors.As(errs[0], &de) {
				t.Errorf("err = %v (%T), want a *DecodeError", errs[0], errs[0])
			}
			var base *synthient.Error
			if !errors.As(errs[0], &base) {
				t.Errorf("err = %v does not reach *Error", errs[0])
			}
			if tc.name == "wrong type" || tc.name == "an array" {
				return // valid JSON: StreamRaw yields it
			}
			raw, errs, after := smRaw(context.Background(), c, synthient.FeedProxies)
			if !reflect.DeepEqual(raw, []string{`{"ip":"192.0.2.1"}`}) || len(errs) != 1 || after {
				t.Fatalf("StreamRaw: events %q, errors %v; want the first event and exactly one error", raw, errs)
			}
			if !errors.As(errs[0], &de) {
				t.Errorf("StreamRaw: err = %v (%T), want a *DecodeError", errs[0], errs[0])
			}
		})
	}
}

// ---------------------------------------------------------------------
// Event decoding
// ---------------------------------------------------------------------

func smDecode[T any](t *testing.T, seq func(*synthient.Client, context.Context) iter.Seq2[T, error], body string) []T {
	t.Helper()
	srv := newFXServer(t, false, smNDJSON(body))
	c := newClient(t, srv.Base)
	evs, errs, _ := smCollect(seq(c, context.Background()))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	return evs
}

func TestStreamDecodesSecondsFeeds(t *testing.T) {
	// The proxy stream excerpt of api-v4.md §7, heartbeat included.
	proxies := smDecode(t, (*synthient.Client).StreamProxies,
		`{"ip":"192.0.2.44","provider":"EXAMPLEPROXY","type":"RESIDENTIAL_PROXY","timestamp":1781136001,"country_code":"US","asn":64496}
{"ip":"2001:db8:5::9","provider":"EXAMPLEPROXY","type":"MOBILE_PROXY","timestamp":1781136001,"country_code":"GB","asn":64497}

{"ip":"198.51.100.200","provider":"OTHERPROXY","type":"DATACENTER_PROXY","timestamp":1781136017,"country_code":"DE","asn":64498}
`)
	wantProxies := []synthient.ProxyEvent{
		{IP: "192.0.2.44", Provider: "EXAMPLEPROXY", Type: "RESIDENTIAL_PROXY", Timestamp: 1781136001, CountryCode: "US", ASN: 64496},
		{IP: "2001:db8:5::9", Provider: "EXAMPLEPROXY", Type: "MOBILE_PROXY", Timestamp: 1781136001, CountryCode: "GB", ASN: 64497},
		{IP: "198.51.100.200", Provider: "OTHERPROXY", Type: "DATACENTER_PROXY", Timestamp: 1781136017, CountryCode: "DE", ASN: 64498},
	}
	if !reflect.DeepEqual(proxies, wantProxies) {
		t.Errorf("proxies = %+v\nwant %+v", proxies, wantProxies)
	}
	if got := synthient.UnixTime(proxies[2].Timestamp, false); !got.Equal(time.Unix(1781136017, 0)) || got.Location() != time.UTC {
		t.Errorf("UnixTime(seconds) = %v", got)
	}

	anon := smDecode(t, (*synthient.Client).StreamAnonymizers,
		`{"range_start":"198.51.100.0","range_end":"198.51.100.255","provider":"EXAMPLEVPN","type":"commercial_vpn","timestamp":1781136002,"country_code":"NL","asn":64501}`+"\n")
	wantAnon := []synthient.AnonymizerEvent{{RangeStart: "198.51.100.0", RangeEnd: "198.51.100.255", Provider: "EXAMPLEVPN",
		Type: "commercial_vpn", Timestamp: 1781136002, CountryCode: "NL", ASN: 64501}}
	if !reflect.DeepEqual(anon, wantAnon) {
		t.Errorf("anonymizers = %+v\nwant %+v", anon, wantAnon)
	}

	tor := smDecode(t, (*synthient.Client).StreamTorrents,
		`{"info_hash":"0123456789abcdef0123456789abcdef01234567","name":"debian.iso","magnet_uri":"magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567",`+
			`"total_size":4000000000,"piece_length":262144,"file_count":2,"files":[{"path":"d/debian.iso","length":3999999000},{"path":"d/README","length":1000}],`+
			`"peers":[{"ip":"203.0.113.9","port":6881,"source":"DHT","encrypted":true},{"ip":"2001:db8::7","port":51413,"source":"udp://tracker.example:1337","encrypted":false}],`+
			`"timestamp":1781136003}`+"\n")
	wantTor := []synthient.TorrentEvent{{
		InfoHash: "0123456789abcdef0123456789abcdef01234567", Name: "debian.iso",
		MagnetURI: "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567",
		TotalSize: 4000000000, PieceLength: 262144, FileCount: 2,
		Files: []synthient.TorrentFile{{Path: "d/debian.iso", Length: 3999999000}, {Path: "d/README", Length: 1000}},
		Peers: []synthient.TorrentPeer{
			{IP: "203.0.113.9", Port: 6881, Source: "DHT", Encrypted: true},
			{IP: "2001:db8::7", Port: 51413, Source: "udp://tracker.example:1337", Encrypted: false},
		},
		Timestamp: 1781136003,
	}}
	if !reflect.DeepEqual(tor, wantTor) {
		t.Errorf("torrents = %+v\nwant %+v", tor, wantTor)
	}

	ja4t := smDecode(t, (*synthient.Client).StreamJA4T,
		`{"ip":"192.0.2.10","ja4t":"43080_2-4-8-1-3_1436_9","provider":"EXAMPLEPROXY","type":"DATACENTER_PROXY","timestamp":1781136004,"country_code":"US","asn":64502}`+"\n")
	wantJA4T := []synthient.JA4TEvent{{IP: "192.0.2.10", JA4T: "43080_2-4-8-1-3_1436_9", Provider: "EXAMPLEPROXY",
		Type: "DATACENTER_PROXY", Timestamp: 1781136004, CountryCode: "US", ASN: 64502}}
	if !reflect.DeepEqual(ja4t, wantJA4T) {
		t.Errorf("ja4t = %+v\nwant %+v", ja4t, wantJA4T)
	}

	// Missing and unknown fields are tolerated.
	sparse := smDecode(t, (*synthient.Client).StreamProxies, `{"ip":"192.0.2.1","future_field":{"x":[1,2]}}`+"\n")
	if !reflect.DeepEqual(sparse, []synthient.ProxyEvent{{IP: "192.0.2.1"}}) {
		t.Errorf("sparse event = %+v", sparse)
	}
}

func TestStreamDecodesHoneypotHTTP(t *testing.T) {
	evs := smDecode(t, (*synthient.Client).StreamHoneypotHTTP,
		`{"timestamp":1781136005123,"tunnel_id":9007199254740993,"domain":"example.org","port":8080,`+
			`"details":{"method":"GET","uri":"/wp-login.php","version":"HTTP/1.1","headers":{"Host":"example.org","User-Agent":"curl/8.0"}},`+
			`"raw":"GET /wp-login.php HTTP/1.1\r\nHost: example.org\r\n\r\n",`+
			`"meta":{"pool_id":17,"provider":"EXAMPLEPROXY","proxy_ip":"198.51.100.77","server":"hp-3"}}`+"\n"+
			`{"timestamp":1781136006000,"domain":"example.net","details":null,"meta":{"pool_id":"pool-a","provider":null}}`+"\n")
	want := []synthient.HoneypotHTTPEvent{
		{
			Timestamp: 1781136005123, TunnelID: 9007199254740993, Domain: "example.org", Port: 8080,
			Details: &synthient.HTTPRequestDetails{Method: "GET", URI: "/wp-login.php", Version: "HTTP/1.1",
				Headers: map[string]string{"Host": "example.org", "User-Agent": "curl/8.0"}},
			Raw:  "GET /wp-login.php HTTP/1.1\r\nHost: example.org\r\n\r\n",
			Meta: &synthient.HoneypotMeta{PoolID: "17", Provider: "EXAMPLEPROXY", ProxyIP: "198.51.100.77", Server: "hp-3"},
		},
		{
			Timestamp: 1781136006000, Domain: "example.net",
			Meta: &synthient.HoneypotMeta{PoolID: "pool-a"},
		},
	}
	if !reflect.DeepEqual(evs, want) {
		t.Errorf("events = %+v\nwant %+v", evs, want)
	}
	if len(evs) > 0 {
		got := synthient.UnixTime(evs[0].Timestamp, true)
		if !got.Equal(time.Unix(1781136005, 123e6)) || got.Location() != time.UTC || got.Year() != 2026 {
			t.Errorf("UnixTime(ms) = %v, want 2026-06-11 00:00:05.123 UTC", got)
		}
	}
}

func TestStreamDecodesHoneypotHTTPSDetails(t *testing.T) {
	const object = `{"sni":"example.org","ciphers":[4865,4866],"alpn":["h2","http/1.1"]}`
	encoded, _ := json.Marshal(object)
	cases := []struct {
		name    string
		details string
		want    string // "" for nil
	}{
		{"JSON-encoded string", string(encoded), object},
		{"object", object, object},
		{"null", "null", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := smDecode(t, (*synthient.Client).StreamHoneypotHTTPS,
				`{"timestamp":1781136007001,"tunnel_id":5,"domain":"example.org","port":443,"details":`+tc.details+
					`,"raw":"FgMBAAEBAA==","meta":{"pool_id":3,"provider":"P","proxy_ip":"198.51.100.1","server":"s"}}`+"\n")
			if len(evs) != 1 {
				t.Fatalf("%d events", len(evs))
			}
			e := evs[0]
			if e.Timestamp != 1781136007001 || e.TunnelID != 5 || e.Domain != "example.org" || e.Port != 443 || e.Raw != "FgMBAAEBAA==" {
				t.Errorf("event = %+v", e)
			}
			if e.Meta == nil || *e.Meta != (synthient.HoneypotMeta{PoolID: "3", Provider: "P", ProxyIP: "198.51.100.1", Server: "s"}) {
				t.Errorf("meta = %+v", e.Meta)
			}
			if tc.want == "" {
				if e.Details != nil {
					t.Errorf("Details = %s, want nil", e.Details)
				}
				return
			}
			var got, want any
			if err := json.Unmarshal(e.Details, &got); err != nil {
				t.Fatalf("Details %s is not JSON: %v", e.Details, err)
			}
			json.Unmarshal([]byte(tc.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Details = %s, want the object %s", e.Details, tc.want)
			}
			if _, isString := got.(string); isString {
				t.Errorf("Details is still a JSON string: %s", e.Details)
			}
		})
	}
	t.Run("absent", func(t *testing.T) {
		evs := smDecode(t, (*synthient.Client).StreamHoneypotHTTPS, `{"timestamp":1,"domain":"x"}`+"\n")
		if len(evs) != 1 || evs[0].Details != nil || evs[0].Meta != nil {
			t.Errorf("events = %+v, want nil Details and Meta", evs)
		}
	})
}

func TestStreamDecodesHoneypotDNSAndADB(t *testing.T) {
	dns := smDecode(t, (*synthient.Client).StreamHoneypotDNS,
		`{"timestamp":1781136008000,"tunnel_id":42,"domain":"x.example.org","port":853,"meta":{"pool_id":12.5,"provider":"P","proxy_ip":"2001:db8::53","server":"dns-1"}}`+"\n")
	wantDNS := []synthient.HoneypotDNSEvent{{Timestamp: 1781136008000, TunnelID: 42, Domain: "x.example.org", Port: 853,
		Meta: &synthient.HoneypotMeta{PoolID: "12.5", Provider: "P", ProxyIP: "2001:db8::53", Server: "dns-1"}}}
	if !reflect.DeepEqual(dns, wantDNS) {
		t.Errorf("dns = %+v\nwant %+v", dns, wantDNS)
	}
	if got := synthient.UnixTime(dns[0].Timestamp, true); !got.Equal(time.Unix(1781136008, 0)) {
		t.Errorf("UnixTime(ms) = %v", got)
	}

	adb := smDecode(t, (*synthient.Client).StreamHoneypotADB,
		`{"session":"sha256:9b74c9897bac770ffc029102a200c5de","sequential_id":3,"command":"aWQ7IHVuYW1lIC1h","hash":"sha256:ef01"}`+"\n"+
			`{"session":"sha256:9b74c9897bac770ffc029102a200c5de","sequential_id":4,"command":"AAEC/w==","hash":"sha256:ef02"}`+"\n")
	wantADB := []synthient.HoneypotADBEvent{
		{Session: "sha256:9b74c9897bac770ffc029102a200c5de", SequentialID: 3, Command: []byte("id; uname -a"), Hash: "sha256:ef01"},
		{Session: "sha256:9b74c9897bac770ffc029102a200c5de", SequentialID: 4, Command: []byte{0, 1, 2, 0xff}, Hash: "sha256:ef02"},
	}
	if !reflect.DeepEqual(adb, wantADB) {
		t.Errorf("adb = %+v\nwant %+v", adb, wantADB)
	}

	// A command that is not base64 does not decode.
	srv := newFXServer(t, false, smNDJSON(`{"session":"s","command":"not base64!"}`+"\n"))
	c := newClient(t, srv.Base)
	_, errs, _ := smCollect(c.StreamHoneypotADB(context.Background()))
	var de *synthient.DecodeError
	if len(errs) != 1 || !errors.As(errs[0], &de) {
		t.Errorf("errors %v, want one *DecodeError", errs)
	}
}

// ---------------------------------------------------------------------
// ReconnectDelay
// ---------------------------------------------------------------------

func TestReconnectDelay(t *testing.T) {
	d := func(d time.Duration) *time.Duration { return &d }
	cases := []struct {
		name string
		err  error
		wait time.Duration
		ok   bool
	}{
		{"nil (clean close)", nil, 0, true},
		{"401", &synthient.APIError{Status: 401}, 0, false},
		{"403", &synthient.APIError{Status: 403}, 0, false},
		{"403 wrapped", fmt.Errorf("stream: %w", &synthient.APIError{Status: 403, RetryAfter: d(time.Second)}), 0, false},
		{"503 Retry-After 5s", &synthient.APIError{Status: 503, RetryAfter: d(5 * time.Second)}, 5 * time.Second, true},
		{"503 Retry-After 1s", &synthient.APIError{Status: 503, RetryAfter: d(time.Second)}, 2 * time.Second, true},
		{"503 Retry-After 2s", &synthient.APIError{Status: 503, RetryAfter: d(2 * time.Second)}, 2 * time.Second, true},
		{"503 without Retry-After", &synthient.APIError{Status: 503}, 2 * time.Second, true},
		{"429 without Retry-After", &synthient.APIError{Status: 429}, 2 * time.Second, true},
		{"429 Retry-After 30s", &synthient.APIError{Status: 429, RetryAfter: d(30 * time.Second)}, 30 * time.Second, true},
		{"ConnectionError", &synthient.ConnectionError{Err: errors.New("connection reset by peer")}, 2 * time.Second, true},
		{"TimeoutError", &synthient.TimeoutError{}, 2 * time.Second, true},
		{"DecodeError", &synthient.DecodeError{Status: 200, Err: synthient.ErrLineTooLong}, 2 * time.Second, true},
		{"context.Canceled", context.Canceled, 0, false},
		{"context.Canceled wrapped", &synthient.Error{Op: "StreamProxies", Err: context.Canceled}, 0, false},
		{"context.DeadlineExceeded", fmt.Errorf("x: %w", context.DeadlineExceeded), 0, false},
		{"invalid argument", fmt.Errorf("x: %w", synthient.ErrInvalidArgument), 0, false},
	}
	for _, tc := range cases {
		wait, ok := synthient.ReconnectDelay(tc.err)
		if wait != tc.wait || ok != tc.ok {
			t.Errorf("%s: ReconnectDelay = %v, %v; want %v, %v", tc.name, wait, ok, tc.wait, tc.ok)
		}
	}
	if synthient.MinReconnectDelay != 2*time.Second {
		t.Errorf("MinReconnectDelay = %v, want 2s", synthient.MinReconnectDelay)
	}
}

// The reconnect recipe on a real stream error from the API.
func TestReconnectDelayOnAStreamThatCannotOpen(t *testing.T) {
	srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		fxProblem(w, 503, "Retry-After", "5")
	})
	c := newClient(t, srv.Base, synthient.WithMaxRetries(0))
	_, errs, _ := smCollect(c.StreamProxies(context.Background()))
	if len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	if wait, ok := synthient.ReconnectDelay(errs[0]); wait != 5*time.Second || !ok {
		t.Errorf("ReconnectDelay = %v, %v; want 5s, true", wait, ok)
	}
	if strings.Contains(errs[0].Error(), testKey) {
		t.Errorf("error holds the key: %v", errs[0])
	}
}
