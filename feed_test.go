package synthient_test

// Tests of feed.go: the stream methods, the NDJSON line reader and
// ReconnectDelay. The decoding of each feed's events is in events_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// startNDJSON sends the head of an NDJSON stream at once.
func startNDJSON(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

// sendLine writes one line of a stream and flushes it.
func sendLine(w http.ResponseWriter, line string) error {
	if _, err := w.Write([]byte(line)); err != nil {
		return err
	}
	w.(http.Flusher).Flush()
	return nil
}

// rawLines drains the raw stream of feed and returns its events as
// strings (nil for none), its errors, and whether an event came after an
// error.
func rawLines(ctx context.Context, c *synthient.Client, feed synthient.Feed) ([]string, []error, bool) {
	items, errs, after := drain(c.StreamRaw(ctx, feed), 0)
	var out []string
	for _, m := range items {
		out = append(out, string(m))
	}
	return out, errs, after
}

// jsonStringLine returns a line of JSON (a string) of exactly n bytes.
func jsonStringLine(n int) []byte {
	b := bytes.Repeat([]byte{'x'}, n)
	b[0], b[n-1] = '"', '"'
	return b
}

// mapItems returns seq with each item passed through f.
func mapItems[T, U any](seq iter.Seq2[T, error], f func(T) U) iter.Seq2[U, error] {
	return func(yield func(U, error) bool) {
		for v, err := range seq {
			var u U
			if err == nil {
				u = f(v)
			}
			if !yield(u, err) {
				return
			}
		}
	}
}

// onItem returns seq calling f with each item before it is yielded.
func onItem[T any](seq iter.Seq2[T, error], f func(T)) iter.Seq2[T, error] {
	return mapItems(seq, func(v T) T { f(v); return v })
}

// proxyStreams are the two ways to read the proxy feed, as strings: the
// typed events (their IP) and the raw lines. first is what each gives for
// the line {"ip":"192.0.2.1"}.
var proxyStreams = []struct {
	name  string
	open  func(context.Context, *synthient.Client) iter.Seq2[string, error]
	first string
}{
	{"typed=false", func(ctx context.Context, c *synthient.Client) iter.Seq2[string, error] {
		return mapItems(c.StreamRaw(ctx, synthient.FeedProxies), func(m json.RawMessage) string { return string(m) })
	}, `{"ip":"192.0.2.1"}`},
	{"typed=true", func(ctx context.Context, c *synthient.Client) iter.Seq2[string, error] {
		return mapItems(c.StreamProxies(ctx), func(e synthient.ProxyEvent) string { return e.IP })
	}, "192.0.2.1"},
}

// streamMethod is one stream method. open creates the sequence (without
// ranging over it) and returns a function that ranges over it and returns
// the number of events and the errors.
type streamMethod struct {
	name string
	seg  string
	open func(ctx context.Context, c *synthient.Client) func() (int, []error)
}

// countLater returns a function that drains seq and counts its events.
func countLater[T any](seq iter.Seq2[T, error]) func() (int, []error) {
	return func() (int, []error) {
		items, errs, _ := drain(seq, 0)
		return len(items), errs
	}
}

// streamMethods returns every typed stream method and StreamRaw of every
// feed.
func streamMethods() []streamMethod {
	type client = synthient.Client
	methods := []streamMethod{
		{"StreamProxies", "proxies", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamProxies(ctx))
		}},
		{"StreamAnonymizers", "anonymizers", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamAnonymizers(ctx))
		}},
		{"StreamTorrents", "torrents", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamTorrents(ctx))
		}},
		{"StreamJA4T", "ja4t", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamJA4T(ctx))
		}},
		{"StreamHoneypotHTTP", "helio/http", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamHoneypotHTTP(ctx))
		}},
		{"StreamHoneypotHTTPS", "helio/https", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamHoneypotHTTPS(ctx))
		}},
		{"StreamHoneypotDNS", "helio/dns", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamHoneypotDNS(ctx))
		}},
		{"StreamHoneypotADB", "helio/adb", func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamHoneypotADB(ctx))
		}},
	}
	for _, f := range feedSegments {
		methods = append(methods, streamMethod{"StreamRaw/" + string(f.feed), f.seg, func(ctx context.Context, c *client) func() (int, []error) {
			return countLater(c.StreamRaw(ctx, f.feed))
		}})
	}
	return methods
}

func TestStreamPathAcceptAndLaziness(t *testing.T) {
	t.Parallel()
	for _, tc := range streamMethods() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAPIServer(t, serveNDJSON("{}\n\n{}\n"))
			c := newClient(t, srv.Base)
			run := tc.open(context.Background(), c)
			require.Zero(t, srv.Arrivals(), "requests before the loop started")
			n, errs := run()
			require.Empty(t, errs)
			require.Equal(t, 2, n, "events")
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, http.MethodGet, reqs[0].Method)
			assert.Equal(t, "/api/v4/feeds/"+tc.seg+"/stream", reqs[0].Path)
			assert.Equal(t, "application/x-ndjson", reqs[0].Header.Get("Accept"))
			assert.Equal(t, testKey, reqs[0].Header.Get("X-Api-Key"))
		})
	}
}

func TestStreamLineFraming(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			srv := newAPIServer(t, serveNDJSON(tc.body))
			c := newClient(t, srv.Base)

			raw, errs, _ := rawLines(context.Background(), c, synthient.FeedProxies)
			require.Empty(t, errs, "StreamRaw")
			assert.Equal(t, tc.want, raw, "StreamRaw")

			evs, errs, _ := drain(c.StreamProxies(context.Background()), 0)
			require.Empty(t, errs, "StreamProxies")
			require.Len(t, evs, len(tc.want), "StreamProxies")
			for i, e := range evs {
				assert.Equal(t, tc.want[i][7:8], e.IP, "StreamProxies: event %d", i)
			}
			assert.Equal(t, 2, srv.Arrivals(), "requests (one per stream; a clean close does not reconnect)")
		})
	}
}

func TestStreamCleanCloseEndsWithoutError(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		startNDJSON(w)
		_ = sendLine(w, `{"ip":"192.0.2.1"}`+"\n")
		_ = sendLine(w, "\n")
		_ = sendLine(w, `{"ip":"192.0.2.2"}`+"\n")
	})
	c := newClient(t, srv.Base)
	evs, errs, _ := drain(c.StreamProxies(context.Background()), 0)
	require.Empty(t, errs)
	require.Len(t, evs, 2)
	assert.Equal(t, 1, srv.Arrivals(), "requests")
	wait, ok := synthient.ReconnectDelay(nil)
	assert.Zero(t, wait, "ReconnectDelay after a clean close")
	assert.True(t, ok, "ReconnectDelay after a clean close")
}

func TestStreamResetMidLine(t *testing.T) {
	t.Parallel()
	for _, s := range proxyStreams {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			got1 := make(chan struct{})
			srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				rc := takeOver(t, w, r)
				_, _ = fmt.Fprint(rc, "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
				_, _ = rc.Write(chunked([]byte(`{"ip":"192.0.2.1"}`+"\n"), []byte(`{"ip":"192.0.2.2","prov`)))
				select {
				case <-got1:
					rc.Reset()
				case <-r.Context().Done():
				}
			})
			c := newClient(t, srv.Base)
			var once sync.Once
			seq := onItem(s.open(context.Background(), c), func(string) { once.Do(func() { close(got1) }) })
			items, errs, after := drain(seq, 0)
			require.Equal(t, []string{s.first}, items, "want 1 event then exactly 1 error")
			require.Len(t, errs, 1, "want 1 event then exactly 1 error")
			assert.False(t, after, "an event came after the error")

			// A reset, not a timeout or a decode error.
			_ = requireConnErr(t, errs[0], false, false)
			var de *synthient.DecodeError
			assert.NotErrorAs(t, errs[0], &de, "err = %v (%T) is a *DecodeError, want a reset", errs[0], errs[0])
			assert.Equal(t, 1, srv.Arrivals(), "requests (a failure while reading is never retried)")
			wait, ok := synthient.ReconnectDelay(errs[0])
			assert.Equal(t, synthient.MinReconnectDelay, wait, "ReconnectDelay")
			assert.True(t, ok, "ReconnectDelay")
		})
	}
}

//nolint:paralleltest // it measures what the client allocates: a parallel test would add its own
func TestStreamLineTooLong(t *testing.T) {
	long := append(jsonStringLine(17<<20), '\n')
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		startNDJSON(w)
		if sendLine(w, "{\"first\":1}\n") != nil {
			return
		}
		if _, err := w.Write(long); err != nil {
			return
		}
		_ = sendLine(w, "{\"after\":1}\n")
	})
	c := newClient(t, srv.Base)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	raw, errs, itemAfter := rawLines(context.Background(), c, synthient.FeedProxies)
	runtime.ReadMemStats(&after)

	assert.Equal(t, []string{`{"first":1}`}, raw, "want only the line before the long one")
	require.Len(t, errs, 1, "want exactly 1 error, at the end")
	assert.False(t, itemAfter, "an event came after the error")
	require.ErrorIs(t, errs[0], synthient.ErrLineTooLong)
	var de *synthient.DecodeError
	require.ErrorAs(t, errs[0], &de, "the line, not the connection, is at fault")
	var ce *synthient.ConnectionError
	assert.NotErrorAs(t, errs[0], &ce, "err = %v is a *ConnectionError, want a *DecodeError", errs[0])
	assert.Equal(t, 1, srv.Arrivals(), "requests")
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB reading a 17 MiB line", alloc>>20)
	assert.LessOrEqual(t, alloc, uint64(40<<20),
		"allocated %d MiB reading a 17 MiB line, want memory bounded (< 40 MiB; a line is buffered up to 16 MiB)", alloc>>20)
}

//nolint:paralleltest // lines of megabytes, as the tests beside it: run at once they would add up
func TestStreamLineOf15MiBIsAccepted(t *testing.T) {
	// Not parallel, nor any test here that holds lines of megabytes: they
	// would add up. Lengths are compared, never the lines themselves, so
	// that a failure does not print them.
	line := jsonStringLine(15 << 20)
	body := "{\"first\":1}\n" + string(line) + "\n{\"after\":1}\n"
	srv := newAPIServer(t, serveNDJSON(body))
	c := newClient(t, srv.Base)
	items, errs, _ := drain(c.StreamRaw(context.Background(), synthient.FeedProxies), 0)
	require.Empty(t, errs)
	require.Equal(t, 3, len(items), "events, want 3 with the 15 MiB line whole") //nolint:testifylint // lengths, not the lines: Len would print megabytes
	assert.Equal(t, `{"first":1}`, string(items[0]))
	assertSameBytes(t, line, items[1], "the second event, want the 15 MiB line whole")
	assert.Equal(t, `{"after":1}`, string(items[2]))
}

//nolint:paralleltest // lines of 16 MiB: see TestStreamLineOf15MiBIsAccepted
func TestStreamLineLengthLimitIsExact(t *testing.T) {
	require.Equal(t, 16<<20, synthient.MaxLineSize, "docs/feeds.md: a stream line up to 16 MiB")
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
			srv := newAPIServer(t, serveNDJSON(string(jsonStringLine(tc.n))+tc.eol))
			c := newClient(t, srv.Base)
			items, errs, _ := drain(c.StreamRaw(context.Background(), synthient.FeedProxies), 0)
			if tc.tooLong {
				assert.Equal(t, 0, len(items), "events of a line of %d bytes", tc.n) //nolint:testifylint // lengths, not the lines: Len would print megabytes
				require.Len(t, errs, 1, "a line of %d bytes", tc.n)
				assert.ErrorIs(t, errs[0], synthient.ErrLineTooLong, "a line of %d bytes", tc.n)
				return
			}
			require.Empty(t, errs, "a line of %d bytes", tc.n)
			require.Equal(t, 1, len(items), "events of a line of %d bytes", tc.n)        //nolint:testifylint // lengths, not the lines: Len would print megabytes
			assert.Equal(t, tc.n, len(items[0]), "the line of %d bytes, accepted", tc.n) //nolint:testifylint // lengths, not the lines: Len would print megabytes
		})
	}
}

func TestStreamOpenRetriesLikeTheStandardClass(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= 2 {
			writeProblem(w, http.StatusServiceUnavailable)
			return
		}
		serveNDJSON("{\"ip\":\"192.0.2.1\"}\n{\"ip\":\"192.0.2.2\"}\n")(n, w, r)
	})
	c := newClient(t, srv.Base)
	evs, errs, _ := drain(c.StreamProxies(context.Background()), 0)
	require.Empty(t, errs)
	require.Len(t, evs, 2)
	assert.Equal(t, 3, srv.Arrivals(), "requests (503, 503, 200)")
}

func TestStreamOpenErrorsAtOnce(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			srv := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeProblem(w, tc.status, tc.kv...) })
			c := newClient(t, srv.Base)
			evs, errs, _ := drain(c.StreamHoneypotDNS(context.Background()), 0)
			require.Empty(t, evs)
			require.Len(t, errs, 1)
			ae := requireAPIErr(t, errs[0], tc.status)
			assert.Nil(t, ae.RetryAfter, "RetryAfter")
			assert.Equal(t, 1, srv.Arrivals(), "requests (returned at once)")
		})
	}
}

func TestStreamBreakClosesTheConnection(t *testing.T) {
	t.Parallel()
	for _, s := range proxyStreams {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			gone := make(chan struct{})
			srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				defer close(gone)
				startNDJSON(w)
				_ = sendLine(w, `{"ip":"192.0.2.1"}`+"\n")
				<-r.Context().Done() // the client went away (or the test ended)
			})
			// No timeout of the client's ends the connection: only the break.
			c := newClient(t, srv.Base, synthient.WithTimeout(time.Hour))
			items, errs, _ := drain(s.open(context.Background(), c), 1) // break after the first
			require.Empty(t, errs)
			require.Equal(t, []string{s.first}, items)
			require.Eventually(t, func() bool {
				select {
				case <-gone:
					return true
				default:
					return false
				}
			}, time.Minute, 5*time.Millisecond, "the server to see the connection closed after break")
		})
	}
}

func TestStreamCancelMidStream(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		startNDJSON(w)
		_ = sendLine(w, `{"ip":"192.0.2.1"}`+"\n")
		<-r.Context().Done()
	})
	c := newClient(t, srv.Base)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evs, errs, _ := drain(onItem(c.StreamProxies(ctx), func(synthient.ProxyEvent) { cancel() }), 0)
	require.Len(t, evs, 1, "want 1 event and exactly 1 error")
	require.Len(t, errs, 1, "want 1 event and exactly 1 error")
	require.ErrorIs(t, errs[0], context.Canceled)
	wait, ok := synthient.ReconnectDelay(errs[0])
	assert.False(t, ok, "ReconnectDelay after a cancel = %v, true; want ok false", wait)
	assert.Equal(t, 1, srv.Arrivals(), "requests")
}

// A stream open at Close ends at once with an error matching ErrClosed,
// and yields no event after Close returns: while events flow, while the
// stream is silent (nothing else ends it: its read timeout is an hour),
// and while it waits for the response's head. Its connection is closed.
func TestStreamEndsAtClose(t *testing.T) {
	t.Parallel()
	event := `{"ip":"192.0.2.1"}` + "\n"
	tests := []struct {
		name string
		// serve serves the stream until the client goes away.
		serve func(w http.ResponseWriter, r *http.Request)
		// closeIn closes c on the first event (in the loop), or from
		// another goroutine once the request arrived.
		closeIn string
	}{
		{"events flowing, closed in the loop", func(w http.ResponseWriter, r *http.Request) {
			startNDJSON(w)
			for r.Context().Err() == nil && sendLine(w, event) == nil {
			}
		}, "loop"},
		{"silent, closed meanwhile", func(w http.ResponseWriter, r *http.Request) {
			startNDJSON(w)
			_ = sendLine(w, event)
			<-r.Context().Done()
		}, "first event"},
		{"waiting for the head, closed meanwhile", func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, "arrival"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			arrived := make(chan struct{}, 8)
			srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				tt.serve(w, r)
			})
			c := newClient(t, srv.Base, synthient.WithTimeout(time.Hour))
			firstEvent := make(chan struct{})
			closed := make(chan struct{})
			if tt.closeIn != "loop" {
				go func() {
					defer close(closed)
					if tt.closeIn == "arrival" {
						<-arrived
					} else {
						<-firstEvent
					}
					c.Close()
				}()
			}
			events, afterClose := 0, 0
			var errs []error
			for _, err := range c.StreamRaw(context.Background(), synthient.FeedProxies) {
				if err != nil {
					errs = append(errs, err)
					continue
				}
				// An event yielded after Close returned. Checked before the
				// first event lets the goroutine close c: that one was
				// yielded before.
				select {
				case <-closed:
					afterClose++
				default:
				}
				if events++; events == 1 {
					close(firstEvent)
					if tt.closeIn == "loop" {
						require.NoError(t, c.Close())
						close(closed)
						continue
					}
				}
				if afterClose == 1000 {
					break // the stream goes on after Close
				}
			}
			assert.Zero(t, afterClose, "events yielded after Close")
			require.Len(t, errs, 1, "the stream's end")
			require.ErrorIs(t, errs[0], synthient.ErrClosed)
			var timeout *synthient.TimeoutError
			assert.NotErrorAs(t, errs[0], &timeout, "the stream ended by its read timeout, not by Close: %v", errs[0])
			_, again := synthient.ReconnectDelay(errs[0])
			assert.False(t, again, "ReconnectDelay says to reopen a stream of a closed client")
			assert.Equal(t, 1, srv.Arrivals(), "requests")
			srv.RequireNoConnOpen(t)
		})
	}
}

// Lines that arrived together are read together, but once the caller
// cancels, none of those read already is yielded: the next value is the
// context's error.
func TestStreamCancelYieldsNothingReadBefore(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		startNDJSON(w)
		_ = sendLine(w, `{"ip":"192.0.2.1"}`+"\n"+`{"ip":"192.0.2.2"}`+"\n"+`{"ip":"192.0.2.3"}`+"\n")
		<-r.Context().Done()
	})
	c := newClient(t, srv.Base)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evs, errs, _ := drain(onItem(c.StreamProxies(ctx), func(synthient.ProxyEvent) { cancel() }), 0)
	assert.Len(t, evs, 1, "events after the cancel")
	if assert.Len(t, errs, 1) {
		assert.ErrorIs(t, errs[0], context.Canceled)
	}
}

func TestStreamCancelledBeforeRangingSendsNothing(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, serveNDJSON("{}\n"))
	c := newClient(t, srv.Base)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	items, errs, _ := drain(c.StreamRaw(ctx, synthient.FeedProxies), 0)
	assert.Empty(t, items)
	if assert.Len(t, errs, 1) {
		assert.ErrorIs(t, errs[0], context.Canceled)
	}
	assert.Zero(t, srv.Arrivals(), "requests")
}

//nolint:tparallel // the subtests share one fake, whose requests are counted after them
func TestStreamUnknownFeed(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, serveNDJSON("{}\n"))
	c := newClient(t, srv.Base)
	for _, f := range []synthient.Feed{"nope", "", "helio/http"} {
		t.Run(fmt.Sprintf("%q", f), func(t *testing.T) {
			items, errs, _ := drain(c.StreamRaw(context.Background(), f), 0)
			require.Empty(t, items)
			require.Len(t, errs, 1)
			requireInvalid(t, errs[0])
		})
	}
	assert.Zero(t, srv.Arrivals(), "requests")
}

//nolint:paralleltest // on real time: heartbeats 50 ms apart must beat a 150 ms timeout
func TestStreamHeartbeatsKeepItAlive(t *testing.T) {
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		startNDJSON(w)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for range 10 { // 500 ms of heartbeats only
			select {
			case <-tick.C:
				if sendLine(w, "\n") != nil {
					return
				}
			case <-r.Context().Done():
				return
			}
		}
		_ = sendLine(w, `{"ip":"192.0.2.1"}`+"\n")
	})
	c := newClient(t, srv.Base, synthient.WithTimeout(150*time.Millisecond))
	evs, errs, _ := drain(c.StreamProxies(context.Background()), 0)
	require.Empty(t, errs)
	require.Len(t, evs, 1, "want the event after the heartbeats")
	assert.Equal(t, "192.0.2.1", evs[0].IP)
	assert.Equal(t, 1, srv.Arrivals(), "requests")
}

func TestStreamSilenceTimesOut(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		startNDJSON(w)
		_ = sendLine(w, `{"ip":"192.0.2.1"}`+"\n")
		<-r.Context().Done() // silence until the client gives up
	})
	c := newClient(t, srv.Base, synthient.WithTimeout(150*time.Millisecond))
	evs, errs, after := drain(c.StreamProxies(context.Background()), 0)
	require.Len(t, evs, 1, "want 1 event then exactly 1 error")
	require.Len(t, errs, 1, "want 1 event then exactly 1 error")
	require.False(t, after, "an event came after the error")
	_ = requireConnErr(t, errs[0], false, true)
	assert.Equal(t, 1, srv.Arrivals(), "requests (never retried)")
}

func TestStreamNotJSONLineIsADecodeError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, bad string
		// validJSON: the line is JSON but not an event, which StreamRaw
		// yields.
		validJSON bool
	}{
		{"garbage", "not json\n", false},
		{"cut short at the end", `{"ip":"192.0.2.9"`, false},
		{"two values on a line", `{"ip":"a"} {"ip":"b"}` + "\n", false},
		{"wrong type", `{"ip":42}` + "\n", true},
		{"an array", `[1,2]` + "\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := `{"ip":"192.0.2.1"}` + "\n" + tc.bad + "\n" + `{"ip":"192.0.2.2"}` + "\n"
			srv := newAPIServer(t, serveNDJSON(body))
			c := newClient(t, srv.Base)
			evs, errs, after := drain(c.StreamProxies(context.Background()), 0)
			require.Equal(t, []synthient.ProxyEvent{{IP: "192.0.2.1"}}, evs, "want the first event, then exactly one error")
			require.Len(t, errs, 1, "want the first event, then exactly one error")
			require.False(t, after, "an event came after the error")
			var de *synthient.DecodeError
			require.ErrorAs(t, errs[0], &de)
			var base *synthient.Error
			require.ErrorAs(t, errs[0], &base)
			if tc.validJSON {
				return
			}
			raw, errs, after := rawLines(context.Background(), c, synthient.FeedProxies)
			require.Equal(t, []string{`{"ip":"192.0.2.1"}`}, raw, "StreamRaw: want the first event and exactly one error")
			require.Len(t, errs, 1, "StreamRaw: want the first event and exactly one error")
			require.False(t, after, "StreamRaw: an event came after the error")
			assert.ErrorAs(t, errs[0], &de, "StreamRaw")
		})
	}
}

// ---------------------------------------------------------------------
// ReconnectDelay
// ---------------------------------------------------------------------

func TestReconnectDelay(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 2*time.Second, synthient.MinReconnectDelay, "MinReconnectDelay")
	cases := []struct {
		name string
		err  error
		wait time.Duration
		ok   bool
	}{
		{"nil (clean close)", nil, 0, true},
		{"401", &synthient.APIError{Status: 401}, 0, false},
		{"403", &synthient.APIError{Status: 403}, 0, false},
		{"403 wrapped", fmt.Errorf("stream: %w", &synthient.APIError{Status: 403, RetryAfter: ptr(time.Second)}), 0, false},
		{"503 Retry-After 5s", &synthient.APIError{Status: 503, RetryAfter: ptr(5 * time.Second)}, 5 * time.Second, true},
		{"503 Retry-After 1s", &synthient.APIError{Status: 503, RetryAfter: ptr(time.Second)}, 2 * time.Second, true},
		{"503 Retry-After 2s", &synthient.APIError{Status: 503, RetryAfter: ptr(2 * time.Second)}, 2 * time.Second, true},
		{"503 without Retry-After", &synthient.APIError{Status: 503}, 2 * time.Second, true},
		{"429 without Retry-After", &synthient.APIError{Status: 429}, 2 * time.Second, true},
		{"429 Retry-After 30s", &synthient.APIError{Status: 429, RetryAfter: ptr(30 * time.Second)}, 30 * time.Second, true},
		{"ConnectionError", &synthient.ConnectionError{Err: errors.New("connection reset by peer")}, 2 * time.Second, true},
		{"TimeoutError", &synthient.TimeoutError{}, 2 * time.Second, true},
		{"DecodeError", &synthient.DecodeError{Status: 200, Err: synthient.ErrLineTooLong}, 2 * time.Second, true},
		{"context.Canceled", context.Canceled, 0, false},
		{"context.Canceled wrapped", &synthient.Error{Op: "StreamProxies", Err: context.Canceled}, 0, false},
		{"context.DeadlineExceeded", fmt.Errorf("x: %w", context.DeadlineExceeded), 0, false},
		{"invalid argument", fmt.Errorf("x: %w", synthient.ErrInvalidArgument), 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wait, ok := synthient.ReconnectDelay(tc.err)
			assert.Equal(t, tc.wait, wait, "wait")
			assert.Equal(t, tc.ok, ok, "ok")
		})
	}
}

// The reconnect recipe on a real stream error from the API.
func TestReconnectDelayOnAStreamThatCannotOpen(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, http.StatusServiceUnavailable, "Retry-After", "5")
	})
	c := newClient(t, srv.Base, synthient.WithMaxRetries(0))
	_, errs, _ := drain(c.StreamProxies(context.Background()), 0)
	require.Len(t, errs, 1)
	wait, ok := synthient.ReconnectDelay(errs[0])
	assert.Equal(t, 5*time.Second, wait, "ReconnectDelay")
	assert.True(t, ok, "ReconnectDelay")
	assertNoSecret(t, errs[0], nil)
}

// ---------------------------------------------------------------------
// The line reader, fuzzed
// ---------------------------------------------------------------------

// isJSONBlank reports whether b holds nothing but JSON white space.
func isJSONBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// expectLines is what the stream of body must give: the events (trimmed),
// whether it must end with a decode error, and whether the oracle could
// tell (a line of Unicode white space such as U+0085 may be skipped as
// blank or rejected as not JSON).
func expectLines(body []byte) (events [][]byte, decodeErr, known bool) {
	lines := bytes.Split(body, []byte{'\n'})
	for _, line := range lines {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		switch {
		case isJSONBlank(line):
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
	srv := newAPIServer(f, func(n int, w http.ResponseWriter, r *http.Request) {
		serveNDJSON(string(body))(n, w, r)
	}, withoutLog())
	c := newClient(f, srv.Base)

	f.Fuzz(func(t *testing.T, in []byte) {
		mu.Lock()
		defer mu.Unlock()
		body = in

		items, errs, after := drain(c.StreamRaw(context.Background(), synthient.FeedProxies), 0)
		require.False(t, after, "an event was yielded after the error %v", errs)
		events := make([][]byte, len(items))
		for i, m := range items {
			require.True(t, json.Valid(m), "event %q is not valid JSON", m)
			events[i] = bytes.TrimSpace(m)
		}
		require.LessOrEqual(t, len(errs), 1, "errors %v, want at most one", errs)
		if len(errs) == 1 {
			var de *synthient.DecodeError
			require.ErrorAs(t, errs[0], &de)
		}

		want, wantErr, known := expectLines(in)
		if !known {
			return
		}
		require.Len(t, events, len(want), "events %q, want %q", events, want)
		for i := range want {
			require.Equal(t, string(want[i]), string(events[i]), "event %d", i)
		}
		require.Equal(t, wantErr, len(errs) == 1, "errors %v; want a decode error", errs)
	})
}
