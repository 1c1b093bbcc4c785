package synthient_test

// Tests of download.go: DownloadExport, DownloadExportTo and
// DownloadExportFile. The API leg is an apiServer answering a 307 to a
// presigned URL (presigned, in helpers_test.go) on a storage host: another
// apiServer, or a rawServer for what net/http's server cannot send
// (resets, truncated or malformed answers).

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/nettest"
	"github.com/synthient-go/synthient/retry"
)

// exportBytes returns n deterministic bytes that are not all alike.
func exportBytes(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x) //nolint:gosec // x's low byte, cut on purpose
	}
	return b
}

// sha256Hex returns the lowercase hex SHA-256 of b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// redirectServer answers every request with status and Location loc (no
// Location header when loc is ""): the API's download endpoint, or a
// storage host that redirects.
func redirectServer(t *testing.T, status int, loc string, opts ...serverOption) *apiServer {
	return newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if loc != "" {
			w.Header().Set("Location", loc)
		}
		w.Header().Set("X-Request-Id", "req-redirect")
		w.WriteHeader(status)
	}, opts...)
}

// storageServer serves data as serveFile does.
func storageServer(t *testing.T, data []byte, opts ...serverOption) *apiServer {
	return newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { serveFile(w, data) }, opts...)
}

// serveFile answers 200 with data, a Content-Length and an X-Storage
// header, in four flushed pieces.
func serveFile(w http.ResponseWriter, data []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("X-Storage", "yes")
	w.WriteHeader(200)
	q := (len(data) + 3) / 4
	for off := 0; off < len(data); off += q {
		if _, err := w.Write(data[off:min(off+q, len(data))]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// assertStorageRequest checks that the storage request carried no
// credentials and the presigned URL as it was.
func assertStorageRequest(t *testing.T, r request) {
	t.Helper()
	for _, h := range []string{"X-Api-Key", "Authorization", "Cookie", "Proxy-Authorization"} {
		assert.NotContains(t, r.Header, h, "storage request carries %s", h)
	}
	assert.NotContains(t, fmt.Sprint(r.Header), testKey, "storage request headers hold the API key")
	assert.Equal(t, http.MethodGet, r.Method, "storage request method")
	assert.Equal(t, presignObject, r.Path, "storage request path")
	assert.Equal(t, presignQuery, r.RawQuery, "storage request query")
}

// signalWriter collects the bytes and closes reached once it holds at
// least at bytes.
type signalWriter struct {
	buf     bytes.Buffer
	at      int
	once    sync.Once
	reached chan struct{}
}

func newSignalWriter(at int) *signalWriter {
	return &signalWriter{at: at, reached: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	n, _ := w.buf.Write(p)
	if w.buf.Len() >= w.at {
		w.once.Do(func() { close(w.reached) })
	}
	return n, nil
}

// rawStorage is a storage host that reads a request, sends the headers of
// a body of len(data) bytes and its first part bytes, then waits for wait
// (if not nil) and ends the connection: with an RST when reset, else with
// a FIN.
func rawStorage(t *testing.T, data []byte, part int, wait <-chan struct{}, reset bool) *apiServer {
	return newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		c := takeOver(t, w, r)
		_, _ = fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", len(data))
		if _, err := c.Write(data[:part]); err != nil {
			return
		}
		if wait != nil {
			select {
			case <-wait:
			case <-r.Context().Done():
				return
			}
		}
		if reset {
			c.Reset()
		}
	})
}

func TestDownloadExportFollows307ToStorage(t *testing.T) {
	t.Parallel()
	data := exportBytes(300 << 10)
	storage := storageServer(t, data)
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))

	var buf bytes.Buffer
	n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
	require.NoError(t, err)
	assert.EqualValues(t, len(data), n, "bytes returned")
	assertSameBytes(t, data, buf.Bytes(), "bytes written")
	areqs := api.Requests()
	require.Len(t, areqs, 1, "API requests")
	assert.Equal(t, http.MethodGet, areqs[0].Method)
	assert.Equal(t, "/api/v4/feeds/proxies/export/2026-06-10/14", areqs[0].Path)
	assert.Equal(t, testKey, areqs[0].Header.Get("X-Api-Key"), "API request X-Api-Key")
	sreqs := storage.Requests()
	require.Len(t, sreqs, 1, "storage requests")
	assertStorageRequest(t, sreqs[0])
	assertNoSecret(t, err, logs)
}

func TestDownloadExportPathForEveryFeed(t *testing.T) {
	t.Parallel()
	data := []byte("PAR1...PAR1")
	storage := storageServer(t, data)
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	c := newClient(t, api.Base)
	i := 0
	for _, f := range feedSegments {
		for _, id := range []string{"latest", "2026-06-10", "2026-06-10/5"} {
			var buf bytes.Buffer
			_, err := c.DownloadExport(callCtx(t), f.feed, id, &buf)
			require.NoError(t, err, "DownloadExport(%s, %q)", f.feed, id)
			paths := api.Paths()
			require.Len(t, paths, i+1, "API requests in all")
			assert.Equal(t, "/api/v4/feeds/"+f.seg+"/export/"+id, paths[i], "DownloadExport(%s, %q) asked the API for", f.feed, id)
			assert.Equal(t, data, buf.Bytes(), "DownloadExport(%s, %q) wrote", f.feed, id)
			i++
		}
	}
}

//nolint:tparallel // the subtests share one fake, whose requests are counted after them
func TestDownloadExportInvalidArguments(t *testing.T) {
	t.Parallel()
	storage := storageServer(t, []byte("x"))
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	c := newClient(t, api.Base)
	var buf bytes.Buffer
	cases := []struct {
		name string
		feed synthient.Feed
		id   string
		w    io.Writer
	}{
		{"nil writer", synthient.FeedProxies, "2026-06-10/14", nil},
		{"no such day", synthient.FeedProxies, "2026-02-30", &buf},
		{"latest with an hour", synthient.FeedProxies, "latest/3", &buf},
		{"traversal", synthient.FeedProxies, "../x", &buf},
		{"empty id", synthient.FeedProxies, "", &buf},
		{"unknown feed", synthient.Feed("nope"), "latest", &buf},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := c.DownloadExport(callCtx(t), tc.feed, tc.id, tc.w)
			requireInvalid(t, err)
			assert.Zero(t, n)
		})
	}
	assert.Zero(t, api.Arrivals(), "API requests")
	assert.Zero(t, storage.Arrivals(), "storage requests")
}

func TestDownloadExportRelativeLocation(t *testing.T) {
	t.Parallel()
	data := exportBytes(10 << 10)
	cases := []struct{ name, loc, path string }{
		{"absolute path", "/storage/file.parquet?" + presignQuery, "/storage/file.parquet"},
		{"relative path", "file.parquet?" + presignQuery, "/api/v4/feeds/proxies/export/2026-06-10/file.parquet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/v4/feeds/proxies/export/2026-06-10/14" {
					w.Header().Set("Location", tc.loc)
					w.WriteHeader(http.StatusTemporaryRedirect)
					return
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(data)))
				_, _ = w.Write(data)
			})
			var buf bytes.Buffer
			n, err := newClient(t, srv.Base).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
			require.NoError(t, err)
			assert.EqualValues(t, len(data), n)
			assertSameBytes(t, data, buf.Bytes())
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, tc.path, reqs[1].Path, "second request")
			assert.Equal(t, presignQuery, reqs[1].RawQuery, "second request")
		})
	}
}

func TestDownloadExportFollows308(t *testing.T) {
	t.Parallel()
	data := exportBytes(5000)
	storage := storageServer(t, data)
	api := redirectServer(t, http.StatusPermanentRedirect, presigned(storage.URL))
	var buf bytes.Buffer
	n, err := newClient(t, api.Base).DownloadExport(callCtx(t), synthient.FeedTorrents, "2026-06-10", &buf)
	require.NoError(t, err)
	require.EqualValues(t, len(data), n)
	assertSameBytes(t, data, buf.Bytes())
	require.Equal(t, 1, storage.Arrivals(), "storage requests")
	assertStorageRequest(t, storage.Requests()[0])
}

func TestDownloadExportRedirectFromStorageIsAnError(t *testing.T) {
	t.Parallel()
	for _, status := range []int{302, 301, 303, 307, 308} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			third := storageServer(t, []byte("never"))
			storage := redirectServer(t, status, presigned(third.URL))
			api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			var buf bytes.Buffer
			n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
			_ = requirePlainError(t, err)
			assert.Zero(t, n, "bytes returned")
			assert.Zero(t, buf.Len(), "bytes written")
			assert.Equal(t, []int{1, 1, 0}, []int{api.Arrivals(), storage.Arrivals(), third.Arrivals()}, "arrivals: API, storage, third")
			assertNoSecret(t, err, logs)
		})
	}
}

func TestDownloadExportAPIRedirectOtherThan307Or308IsAnError(t *testing.T) {
	t.Parallel()
	for _, status := range []int{301, 302, 303, 300} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			storage := storageServer(t, []byte("never"))
			api := redirectServer(t, status, presigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			_ = requirePlainError(t, err)
			assert.Zero(t, n)
			assert.Equal(t, []int{1, 0}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
			assertNoSecret(t, err, logs)
		})
	}
}

func TestDownloadExportHTTPSToHTTPDowngradeIsAnError(t *testing.T) {
	t.Parallel()
	data := exportBytes(4096)
	t.Run("https to http", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, data)
		api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL), withTLS())
		logger, logs := newLogger()
		c := newClient(t, api.Base, trustServer(api), synthient.WithLogger(logger))
		n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		_ = requirePlainError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, []int{1, 0}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
		assertNoSecret(t, err, logs)
	})
	t.Run("https to https", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, data, withTLS())
		api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL), withTLS())
		var buf bytes.Buffer
		n, err := newClient(t, api.Base, trustServer(api)).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
		require.NoError(t, err)
		require.EqualValues(t, len(data), n)
		assertSameBytes(t, data, buf.Bytes())
		require.Len(t, storage.Requests(), 1)
		assertStorageRequest(t, storage.Requests()[0])
	})
}

//nolint:tparallel // the subtests share one fake, whose requests are counted after them
func TestDownloadExportRedirectItCannotFollow(t *testing.T) {
	t.Parallel()
	storage := storageServer(t, []byte("never"))
	cases := map[string]string{
		"no Location":              "",
		"Location does not parse":  "http://127.0.0.1:1/%zz?" + presignQuery,
		"Location is not http(s)":  "ftp://" + strings.TrimPrefix(storage.URL, "http://") + presignObject + "?" + presignQuery,
		"Location without a host":  "http:///bucket/x?" + presignQuery,
		"Location is a javascript": "javascript:alert(1)//?" + presignQuery,
	}
	for name, loc := range cases {
		t.Run(name, func(t *testing.T) {
			api := redirectServer(t, http.StatusTemporaryRedirect, loc)
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			_ = requirePlainError(t, err)
			assert.Zero(t, n)
			assert.Equal(t, 1, api.Arrivals(), "API arrivals (not retried)")
			assertNoSecret(t, err, logs)
		})
	}
	assert.Zero(t, storage.Arrivals(), "storage requests")
}

func TestDownloadExportRetriesTheAPILeg(t *testing.T) {
	t.Parallel()
	data := exportBytes(2048)
	storage := storageServer(t, data)
	api := newAPIServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			writeProblem(w, 503, "Retry-After", "0")
			return
		}
		w.Header().Set("Location", presigned(storage.URL))
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	var buf bytes.Buffer
	n, err := newClient(t, api.Base).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
	require.NoError(t, err)
	require.EqualValues(t, len(data), n)
	assertSameBytes(t, data, buf.Bytes())
	assert.Equal(t, []int{2, 1}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
	for i, r := range api.Requests() {
		assert.Equal(t, testKey, r.Header.Get("X-Api-Key"), "API attempt %d carries no key", i+1)
	}
	require.Len(t, storage.Requests(), 1)
	assertStorageRequest(t, storage.Requests()[0])
}

func TestDownloadExportStorageErrorIsAnAPIErrorNeverRetried(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		ctype, body   string
		title, detail string
	}{
		{"problem+json", "application/problem+json",
			`{"type":"https://storage.example/errors/unavailable","title":"Slow Down","status":503,"detail":"try later","instance":"inst-1"}`,
			"Slow Down", "try later"},
		{"text/plain", "text/plain; charset=utf-8", "storage backend unavailable", "", "storage backend unavailable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storage := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.Header().Set("Retry-After", "0")
				w.Header().Set("X-Request-Id", "storage-req-9")
				w.WriteHeader(503)
				_, _ = io.WriteString(w, tc.body)
			})
			api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			ae := requireAPIErr(t, err, 503)
			assert.Equal(t, tc.title, ae.Title)
			assert.Equal(t, tc.detail, ae.Detail)
			assert.Equal(t, "storage-req-9", ae.RequestID)
			assert.Equal(t, "503 Service Unavailable", ae.Error())
			assert.Zero(t, n)
			assert.Equal(t, []int{1, 1}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage (the storage leg is never retried)")
			assertNoSecret(t, err, logs)
		})
	}
}

func TestDownloadExportStorageResetMidBody(t *testing.T) {
	t.Parallel()
	data := exportBytes(1 << 20)
	const part = 64 << 10
	w := newSignalWriter(part)
	storage := rawStorage(t, data, part, w.reached, true)
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", w)
	_ = requireConnErr(t, err, false, false) // a reset, not a timeout
	assert.EqualValues(t, part, n, "bytes returned: those received before the reset")
	assertSameBytes(t, data[:part], w.buf.Bytes(), "bytes written: those received before the reset")
	assert.Equal(t, []int{1, 1}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage (a read failure is never retried)")
	for _, r := range storage.Requests() {
		assertStorageRequest(t, r)
	}
	assertNoSecret(t, err, logs)
}

func TestDownloadExportTruncatedBody(t *testing.T) {
	t.Parallel()
	data := exportBytes(1000)
	storage := rawStorage(t, data, 500, nil, false)
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	var buf bytes.Buffer
	n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
	require.Error(t, err, "DownloadExport of a body cut short")
	_ = requireConnErr(t, err, false, false)
	assert.EqualValues(t, 500, n, "bytes returned")
	assertSameBytes(t, data[:500], buf.Bytes(), "bytes written")
	assert.Equal(t, []int{1, 1}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
	assertNoSecret(t, err, logs)
}

func TestDownloadExportStorageUnreachable(t *testing.T) {
	t.Parallel()
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned("http://"+nettest.DeadAddr(t)))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	_, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
	// The API leg was answered: the call reached the server, although
	// this last request never left.
	_ = requireConnErr(t, err, false, false)
	assert.NotContains(t, err.Error(), "not sent", "the API leg reached the server")
	assert.Contains(t, err.Error(), "an earlier attempt reached the server",
		"the error says that the earlier attempt, not this one, reached the server")
	assert.Equal(t, 1, api.Arrivals(), "API arrivals")
	assertNoSecret(t, err, logs)
}

// A storage host that reads the request and closes the connection without
// an answer: an unknown outcome, and the storage leg is never sent again.
func TestDownloadExportStorageClosesAfterRequest(t *testing.T) {
	t.Parallel()
	storage := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) { takeOver(t, w, r) })
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	_, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
	_ = requireConnErr(t, err, false, false)
	storage.Finish()
	assert.Equal(t, []int{1, 1}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
	assertNoSecret(t, err, logs)
}

func TestDownloadExportCancelledDuringTheBody(t *testing.T) {
	t.Parallel()
	data := exportBytes(1 << 20)
	storage := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		_, _ = w.Write(data[:1000])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	w := newSignalWriter(1000)
	go func() {
		<-w.reached
		cancel()
	}()
	_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/14", w)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, storage.Arrivals(), "storage arrivals")
	assertNoSecret(t, err, logs)
}

func TestDownloadExportResponseHook(t *testing.T) {
	t.Parallel()
	type seen struct {
		status  int
		storage bool
		loc     string
	}
	newHook := func() (synthient.Option, func() []seen) {
		var mu sync.Mutex
		var got []seen
		return synthient.WithResponseHook(func(ri *synthient.ResponseInfo) error {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, seen{ri.Status, ri.Header.Get("X-Storage") != "", ri.Header.Get("Location")})
				return nil
			}), func() []seen {
				mu.Lock()
				defer mu.Unlock()
				return append([]seen(nil), got...)
			}
	}

	t.Run("503 then 307, storage 200", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, []byte("bytes"))
		api := newAPIServer(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				writeProblem(w, 503, "Retry-After", "0")
				return
			}
			w.Header().Set("Location", presigned(storage.URL))
			w.WriteHeader(http.StatusTemporaryRedirect)
		})
		hook, got := newHook()
		_, err := newClient(t, api.Base, hook).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		require.NoError(t, err)
		assert.Equal(t, []seen{{503, false, ""}, {307, false, presigned(storage.URL)}}, got(),
			"the hook sees the API's responses, never storage's")
	})
	t.Run("storage 503", func(t *testing.T) {
		t.Parallel()
		storage := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Storage", "yes")
			writeProblem(w, 503)
		})
		api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
		hook, got := newHook()
		_, err := newClient(t, api.Base, hook).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		_ = requireAPIErr(t, err, 503)
		assert.Equal(t, []seen{{307, false, presigned(storage.URL)}}, got(), "the hook sees only the API's 307")
	})
	t.Run("hook error on the 307", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, []byte("bytes"))
		api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
		hookErr := errors.New("hook says no")
		c := newClient(t, api.Base, synthient.WithResponseHook(func(*synthient.ResponseInfo) error { return hookErr }))
		n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		assert.Same(t, hookErr, err, "want the hook's error unchanged")
		assert.Zero(t, n)
		assert.Equal(t, []int{1, 0}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
	})
}

//nolint:paralleltest // it measures the bytes the process allocates: a parallel test would add its own
func TestDownloadExportConstantMemory(t *testing.T) {
	const size = 64 << 20
	chunk := exportBytes(64 << 10)
	storage := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for i := 0; i < size/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
	c := newClient(t, api.Base)
	ctx := callCtx(t)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10", io.Discard)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.EqualValues(t, size, n)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB to download %d MiB", alloc>>10, size>>20)
	assert.Less(t, alloc, uint64(4<<20), "bytes allocated to download %d bytes, want far less than the file (< 4 MiB)", size)
}

// ---------------------------------------------------------------------
// DownloadExportFile
// ---------------------------------------------------------------------

// latestID is the id a fileAPI gives "latest".
const latestID = "2026-06-10/14"

// fileAPI answers meta requests (for "latest" with the id latestID) with
// the size of data and checksum, and download requests with a 307 to
// storageURL.
func fileAPI(t *testing.T, data []byte, checksum string, storageURL func() string) *apiServer {
	return filesAPI(t, func(string) (int, string) { return len(data), checksum }, func(string) string { return storageURL() })
}

// filesAPI answers meta requests for an id (for "latest" the id latestID)
// with the size and checksum meta gives, and download requests with a 307
// to storageURL(id).
func filesAPI(t *testing.T, meta func(id string) (int, string), storageURL func(id string) string) *apiServer {
	return newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/v4/feeds/proxies/export/")
		if !ok {
			writeProblem(w, 404)
			return
		}
		if id, ok := strings.CutSuffix(rest, "/meta"); ok {
			if id == "latest" {
				id = latestID
			}
			hour := ""
			if _, h, ok := strings.Cut(id, "/"); ok {
				hour = `"hour":` + h + `,`
			}
			size, checksum := meta(id)
			writeJSON(w, 200, fmt.Sprintf(`{"stream":"proxies","kind":"hourly","id":%q,"format":"parquet","date":1781049600,%s`+
				`"created_at":1781103600,"size":%d,"rows":12,"checksum":%q,"schema":{"fields":[{"name":"ip","type":"string"}]}}`,
				id, hour, size, checksum))
			return
		}
		w.Header().Set("Location", storageURL(rest))
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
}

// storedFileAPI is a storageServer of data and a fileAPI that redirects
// to it, with the right checksum.
func storedFileAPI(t *testing.T, data []byte) (api, storage *apiServer) {
	storage = storageServer(t, data)
	api = fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
	return api, storage
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// partFiles returns the temporary files of a download to path: the names
// path.<digits>.part.
func partFiles(t *testing.T, path string) []string {
	t.Helper()
	matches, err := filepath.Glob(path + ".*.part")
	require.NoError(t, err)
	var parts []string
	for _, m := range matches {
		digits := strings.TrimSuffix(strings.TrimPrefix(m, path+"."), ".part")
		if _, err := strconv.ParseUint(digits, 10, 32); err == nil {
			parts = append(parts, m)
		}
	}
	return parts
}

func pathExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestDownloadExportFileWritesPartThenRenames(t *testing.T) {
	t.Parallel()
	data := exportBytes(512 << 10)
	api, storage := storedFileAPI(t, data)
	c := newClient(t, api.Base)
	dir := t.TempDir()
	path := filepath.Join(dir, "proxies.parquet")

	// Progress runs on the caller's goroutine: the bytes so far are in
	// path.<digits>.part; path does not exist yet.
	progress := func(done, _ int64) {
		parts := partFiles(t, path)
		if assert.Len(t, parts, 1, "at %d bytes: temporary files", done) {
			st, err := os.Lstat(parts[0])
			if assert.NoError(t, err, "at %d bytes", done) {
				assert.True(t, st.Mode().IsRegular(), "at %d bytes: %s is %v, want a regular file", done, parts[0], st.Mode())
				assert.Equal(t, done, st.Size(), "at %d bytes: size of %s", done, parts[0])
			}
		}
		assert.False(t, pathExists(path), "at %d bytes: %s exists before the download ended", done, path)
	}
	m, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path,
		&synthient.DownloadParams{Progress: progress})
	require.NoError(t, err)
	require.NotNil(t, m)
	assert.Equal(t, "2026-06-10/14", m.ID)
	assert.EqualValues(t, len(data), m.Size)
	assert.Equal(t, sha256Hex(data), m.Checksum)
	got, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	assertSameBytes(t, data, got, "the file")
	assert.Equal(t, []string{"proxies.parquet"}, dirEntries(t, dir), "the directory holds the file alone (no .part)")
	assert.Equal(t, []string{"/api/v4/feeds/proxies/export/2026-06-10/14/meta", "/api/v4/feeds/proxies/export/2026-06-10/14"},
		api.Paths(), "API requests: meta, then the download")
	require.Equal(t, 1, storage.Arrivals(), "storage requests")
	assertStorageRequest(t, storage.Requests()[0])
}

func TestDownloadExportFileStorageFailureLeavesNoFile(t *testing.T) {
	t.Parallel()
	data := exportBytes(1 << 20)
	const part = 64 << 10
	t.Run("reset mid-body", func(t *testing.T) {
		t.Parallel()
		reached := make(chan struct{})
		var once sync.Once
		storage := rawStorage(t, data, part, reached, true)
		api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
		dir := t.TempDir()
		m, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out.parquet"),
			&synthient.DownloadParams{Progress: func(done, _ int64) {
				if done >= part {
					once.Do(func() { close(reached) })
				}
			}})
		_ = requireConnErr(t, err, false, false)
		assert.Nil(t, m)
		assert.Empty(t, dirEntries(t, dir), "after a failed download: no file, no .part")
		assert.Equal(t, 1, storage.Arrivals(), "storage arrivals")
	})
	t.Run("storage 503", func(t *testing.T) {
		t.Parallel()
		storage := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeProblem(w, 503) })
		api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
		dir := t.TempDir()
		_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"), nil)
		_ = requireAPIErr(t, err, 503)
		assert.Empty(t, dirEntries(t, dir))
	})
	t.Run("truncated", func(t *testing.T) {
		t.Parallel()
		storage := rawStorage(t, data, part, nil, false)
		api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
		dir := t.TempDir()
		_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"), nil)
		require.Error(t, err, "a body cut short")
		assert.Empty(t, dirEntries(t, dir))
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		storage := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			_, _ = w.Write(data[:part])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(callCtx(t))
		defer cancel()
		_, err := newClient(t, api.Base).DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
			&synthient.DownloadParams{Progress: func(int64, int64) { cancel() }})
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, dirEntries(t, dir))
	})
}

func TestDownloadExportFileExistingFile(t *testing.T) {
	t.Parallel()
	data := exportBytes(4096)
	api, storage := storedFileAPI(t, data)
	c := newClient(t, api.Base)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))

	for _, p := range []*synthient.DownloadParams{nil, {}, {Verify: true}} {
		m, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path, p)
		require.ErrorIs(t, err, fs.ErrExist, "params %+v: DownloadExportFile over an existing file", p)
		assert.Nil(t, m, "params %+v", p)
	}
	assert.Equal(t, []int{0, 0}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage (checked before sending)")
	got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	assert.Equal(t, "old", string(got), "the existing file is untouched")
	assert.Equal(t, []string{"out.parquet"}, dirEntries(t, dir))

	m, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path,
		&synthient.DownloadParams{Overwrite: true})
	require.NoError(t, err, "with Overwrite")
	require.NotNil(t, m, "with Overwrite")
	got, _ = os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	assertSameBytes(t, data, got, "the file after an overwrite")
	assert.Equal(t, []string{"out.parquet"}, dirEntries(t, dir), "the directory holds the file alone")
}

// A file that appears at the path while the download runs is not replaced
// (without Overwrite): the call fails with fs.ErrExist and leaves it and no
// .part.
func TestDownloadExportFileRaceWithAnotherWriter(t *testing.T) {
	t.Parallel()
	data := exportBytes(4096)
	api, _ := storedFileAPI(t, data)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	hook := func(ri *synthient.ResponseInfo) error {
		if ri.Status == http.StatusTemporaryRedirect {
			return os.WriteFile(path, []byte("theirs"), 0o600)
		}
		return nil
	}
	c := newClient(t, api.Base, synthient.WithResponseHook(hook))
	_, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path, nil)
	require.ErrorIs(t, err, fs.ErrExist)
	// Found after every request: an *Error that counts them (meta, API,
	// storage).
	var base *synthient.Error
	if assert.ErrorAs(t, err, &base) {
		assert.Equal(t, 3, base.Attempts, "attempts: meta, API, storage")
	}
	got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	assert.Equal(t, "theirs", string(got), "the other writer's file is untouched")
	assert.Equal(t, []string{"out.parquet"}, dirEntries(t, dir))
}

// downloadVerified downloads 2026-06-10/14 with Verify to a new file and
// checks that it holds want.
func downloadVerified(t *testing.T, c *synthient.Client, want []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out")
	_, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path, &synthient.DownloadParams{Verify: true})
	require.NoError(t, err)
	got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	assertSameBytes(t, want, got, "the file")
}

func TestDownloadExportFileVerify(t *testing.T) {
	t.Parallel()
	data := exportBytes(100 << 10)
	t.Run("right checksum", func(t *testing.T) {
		t.Parallel()
		api, _ := storedFileAPI(t, data)
		downloadVerified(t, newClient(t, api.Base), data)
	})
	t.Run("uppercase checksum", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, data)
		api := fileAPI(t, data, strings.ToUpper(sha256Hex(data)), func() string { return presigned(storage.URL) })
		path := filepath.Join(t.TempDir(), "out")
		_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path,
			&synthient.DownloadParams{Verify: true})
		require.NoError(t, err)
	})
	t.Run("wrong checksum", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, data)
		other := append([]byte(nil), data...)
		other[len(other)/2] ^= 1
		api := fileAPI(t, data, sha256Hex(other), func() string { return presigned(storage.URL) })
		dir := t.TempDir()
		m, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
			&synthient.DownloadParams{Verify: true})
		require.ErrorIs(t, err, synthient.ErrChecksumMismatch)
		require.Nil(t, m)
		assert.Empty(t, dirEntries(t, dir), "after a checksum mismatch")
		assert.Equal(t, 1, storage.Arrivals(), "storage arrivals")
	})
}

func TestDownloadExportFileProgress(t *testing.T) {
	t.Parallel()
	data := exportBytes(700 << 10)
	api, _ := storedFileAPI(t, data)
	type call struct{ done, total int64 }
	var calls []call
	m, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(t.TempDir(), "out"),
		&synthient.DownloadParams{Progress: func(done, total int64) { calls = append(calls, call{done, total}) }})
	require.NoError(t, err)
	require.NotEmpty(t, calls, "Progress was never called")
	prev := int64(0)
	for i, c := range calls {
		assert.Greater(t, c.done, prev, "call %d: done, want it increasing", i)
		assert.Equal(t, m.Size, c.total, "call %d: total, want meta.Size", i)
		prev = c.done
	}
	assert.EqualValues(t, len(data), calls[len(calls)-1].done, "last done, want the size")
}

func TestDownloadExportFileResolvesLatest(t *testing.T) {
	t.Parallel()
	data := exportBytes(8192)
	api, _ := storedFileAPI(t, data)
	path := filepath.Join(t.TempDir(), "latest.parquet")
	m, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "latest", path, &synthient.DownloadParams{Verify: true})
	require.NoError(t, err)
	assert.Equal(t, latestID, m.ID, "meta id")
	assert.Equal(t, []string{"/api/v4/feeds/proxies/export/latest/meta", "/api/v4/feeds/proxies/export/" + latestID}, api.Paths(),
		"API requests: the download asks for the meta's id, not latest")
}

func TestDownloadExportFileMetaWithAnIDThatIsNotOne(t *testing.T) {
	t.Parallel()
	data := exportBytes(100)
	storage := storageServer(t, data)
	api := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/meta") {
			writeJSON(w, 200, fmt.Sprintf(`{"stream":"proxies","kind":"hourly","id":"../../../account/me","format":"parquet",`+
				`"date":1781049600,"created_at":1781103600,"size":100,"rows":1,"checksum":%q,"schema":{"fields":[]}}`, sha256Hex(data)))
			return
		}
		w.Header().Set("Location", presigned(storage.URL))
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	dir := t.TempDir()
	_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "latest", filepath.Join(dir, "out"), nil)
	require.Error(t, err, "a meta whose id is not an export id")
	assert.Len(t, api.Paths(), 1, "API requests: the meta alone")
	assert.Empty(t, dirEntries(t, dir))
}

//nolint:tparallel // the subtests share one fake, whose requests are counted after them
func TestDownloadExportFileInvalidArguments(t *testing.T) {
	t.Parallel()
	api, _ := storedFileAPI(t, []byte("x"))
	c := newClient(t, api.Base)
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		feed     synthient.Feed
		id, path string
	}{
		{"hour 24", synthient.FeedProxies, "2026-06-10/24", filepath.Join(dir, "a")},
		{"unknown feed", synthient.Feed("nope"), "latest", filepath.Join(dir, "b")},
		{"empty path", synthient.FeedProxies, "latest", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.DownloadExportFile(callCtx(t), tc.feed, tc.id, tc.path, nil)
			requireInvalid(t, err)
		})
	}
	assert.Zero(t, api.Arrivals(), "API requests")
	assert.Empty(t, dirEntries(t, dir))
}

// A path that cannot be written is an error before anything is sent: a
// directory (even with Overwrite), a missing parent directory.
func TestDownloadExportFileUnwritablePath(t *testing.T) {
	t.Parallel()
	api, _ := storedFileAPI(t, []byte("x"))
	c := newClient(t, api.Base)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o750))
	for _, p := range []*synthient.DownloadParams{nil, {Overwrite: true}} {
		_, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "latest", sub, p)
		require.ErrorIs(t, err, synthient.ErrInvalidArgument, "params %+v, path a directory", p)
	}
	// A path in a missing directory: an *Error wrapping an *fs.PathError
	// matching fs.ErrNotExist.
	_, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "latest", filepath.Join(dir, "missing", "out"), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
	var base *synthient.Error
	require.ErrorAs(t, err, &base)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Zero(t, api.Arrivals(), "API requests")
	assert.Equal(t, []string{"sub"}, dirEntries(t, dir))
}

// A meta request that fails leaves no .part behind.
func TestDownloadExportFileMetaFailureLeavesNoFile(t *testing.T) {
	t.Parallel()
	api := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) { writeProblem(w, 404) })
	dir := t.TempDir()
	_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "latest", filepath.Join(dir, "out"), nil)
	_ = requireAPIErr(t, err, 404)
	assert.Empty(t, dirEntries(t, dir))
}

// ---------------------------------------------------------------------
// Exact size: never short, never more
// ---------------------------------------------------------------------

// rawAnswer is a host that answers a request with head (a status line and
// header lines, each ending in CRLF), an empty line and body, written as
// they are, then closes the connection cleanly.
func rawAnswer(t *testing.T, head string, body []byte) *apiServer {
	return newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		c := takeOver(t, w, r)
		if _, err := io.WriteString(c, head+"\r\n"); err != nil {
			return
		}
		_, _ = c.Write(body)
	})
}

// requireDownloadError checks that err is a plain *Error of a download
// (no *APIError or *ConnectionError behind it), matching sentinel when it
// is not nil, never retried, with the given attempts, and that neither it
// nor logs (if not nil) hold a secret.
func requireDownloadError(t *testing.T, err, sentinel error, attempts int, logs *logBuffer) {
	t.Helper()
	_ = requirePlainError(t, err)
	if sentinel != nil {
		require.ErrorIs(t, err, sentinel)
	}
	_ = requireStop(t, err, attempts, retry.NotRetryable)
	assertNoSecret(t, err, logs)
}

// A storage answer that ends early, or is not a 200, is never a success:
// DownloadExport fails when the Content-Length cannot confirm the size,
// DownloadExportFile checks the count against the meta and leaves no file.
func TestDownloadExportShortAnswerIsAnError(t *testing.T) {
	t.Parallel()
	data := exportBytes(1000)
	half := data[:500]
	cases := []struct {
		name       string
		head       string
		body       []byte
		wantExport error // DownloadExport's sentinel; nil for a plain *Error
		wantN      int64 // what DownloadExport wrote
		wantFile   error // DownloadExportFile's sentinel
	}{
		{"HTTP/1.0 close-delimited, ends early", "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n", half,
			synthient.ErrSizeUnknown, 500, synthient.ErrSizeMismatch},
		{"chunked, ends cleanly early", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", chunked(half, nil),
			synthient.ErrSizeUnknown, 500, synthient.ErrSizeMismatch},
		{"Content-Length: 0", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", nil,
			synthient.ErrSizeMismatch, 0, synthient.ErrSizeMismatch},
		{"206", "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-499/1000\r\nContent-Length: 500\r\n", half,
			nil, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/DownloadExport", func(t *testing.T) {
			t.Parallel()
			storage := rawAnswer(t, tc.head, tc.body)
			api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
			var buf bytes.Buffer
			n, err := newClient(t, api.Base).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
			requireDownloadError(t, err, tc.wantExport, 2, nil)
			assert.Equal(t, tc.wantN, n, "bytes returned")
			assert.EqualValues(t, tc.wantN, buf.Len(), "bytes written")
			assert.Equal(t, []int{1, 1}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
		})
		t.Run(tc.name+"/DownloadExport, from the API itself", func(t *testing.T) {
			t.Parallel()
			api := rawAnswer(t, tc.head, tc.body)
			var buf bytes.Buffer
			n, err := newClient(t, api.Base).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
			requireDownloadError(t, err, tc.wantExport, 1, nil)
			assert.Equal(t, tc.wantN, n, "bytes returned")
			assert.EqualValues(t, tc.wantN, buf.Len(), "bytes written")
			assert.Equal(t, 1, api.Arrivals(), "API arrivals")
		})
		for _, verify := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/DownloadExportFile verify=%v", tc.name, verify), func(t *testing.T) {
				t.Parallel()
				storage := rawAnswer(t, tc.head, tc.body)
				api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
				dir := t.TempDir()
				m, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
					&synthient.DownloadParams{Verify: verify})
				requireDownloadError(t, err, tc.wantFile, 3, nil) // meta, API leg, storage
				assert.Nil(t, m)
				assert.Empty(t, dirEntries(t, dir))
			})
		}
	}
}

// A storage host that sends more than the meta's size is cut there: at
// most Size bytes reach the file or the writer, and the call fails.
func TestDownloadExportNeverWritesMoreThanTheSize(t *testing.T) {
	t.Parallel()
	const size = 1000
	data := exportBytes(size)
	big := exportBytes(64 << 10)
	cases := []struct {
		name     string
		head     string
		body     []byte
		wantMost int64 // the bytes that may reach the writer
	}{
		{"Content-Length larger than the meta", "HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n", big, 0},
		{"HTTP/1.0 close-delimited", "HTTP/1.0 200 OK\r\n", big, size},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", chunked(big, nil), size},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/DownloadExportFile", func(t *testing.T) {
			t.Parallel()
			storage := rawAnswer(t, tc.head, tc.body)
			api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
			dir := t.TempDir()
			var most int64
			progress := func(done, total int64) {
				most = max(most, done)
				assert.EqualValues(t, size, total, "Progress total, want the meta's size")
			}
			_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
				&synthient.DownloadParams{Progress: progress})
			requireDownloadError(t, err, synthient.ErrSizeMismatch, 3, nil) // meta, API leg, storage
			assert.LessOrEqual(t, most, tc.wantMost, "bytes Progress reached")
			assert.Empty(t, dirEntries(t, dir))
		})
		t.Run(tc.name+"/DownloadExportTo", func(t *testing.T) {
			t.Parallel()
			storage := rawAnswer(t, tc.head, tc.body)
			api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
			var buf bytes.Buffer
			_, err := newClient(t, api.Base).DownloadExportTo(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf, nil)
			requireDownloadError(t, err, synthient.ErrSizeMismatch, 3, nil) // meta, API leg, storage
			if assert.LessOrEqual(t, int64(buf.Len()), tc.wantMost, "bytes written") {
				assertSameBytes(t, big[:buf.Len()], buf.Bytes(), "bytes written: the first ones sent")
			}
		})
	}
}

// gzipped returns data compressed with gzip.
func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// Both legs ask for the identity encoding, and a body sent with
// Content-Encoding: gzip anyway is written as it came: 4 KiB of gzip never
// becomes 4 MiB on disk. The size and the checksum then decide.
func TestDownloadExportNeverDecodesTheBody(t *testing.T) {
	t.Parallel()
	plain := make([]byte, 4<<20)
	gz := gzipped(t, plain)
	gzipServer := func(t *testing.T) *apiServer {
		return newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(len(gz)))
			w.WriteHeader(200)
			_, _ = w.Write(gz)
		})
	}
	assertIdentity := func(t *testing.T, leg string, r request) {
		t.Helper()
		assert.Equal(t, []string{"identity"}, r.Header.Values("Accept-Encoding"), "%s request Accept-Encoding", leg)
	}
	downloadRaw := func(t *testing.T, api *apiServer) {
		t.Helper()
		var buf bytes.Buffer
		n, err := newClient(t, api.Base).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf)
		require.NoError(t, err)
		require.EqualValues(t, len(gz), n, "bytes returned: the gzip as sent")
		require.True(t, assertSameBytes(t, gz, buf.Bytes(), "bytes written: the gzip as sent"))
		assertIdentity(t, "API", api.Requests()[0])
	}
	t.Run("storage leg", func(t *testing.T) {
		t.Parallel()
		storage := gzipServer(t)
		downloadRaw(t, redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL)))
		assertIdentity(t, "storage", storage.Requests()[0])
	})
	t.Run("API leg answers 200", func(t *testing.T) {
		t.Parallel()
		downloadRaw(t, gzipServer(t))
	})
	t.Run("file, meta of the decoded bytes", func(t *testing.T) {
		t.Parallel()
		storage := gzipServer(t)
		api := fileAPI(t, plain, sha256Hex(plain), func() string { return presigned(storage.URL) })
		dir := t.TempDir()
		_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"), nil)
		requireDownloadError(t, err, synthient.ErrSizeMismatch, 3, nil) // meta, API leg, storage
		assert.Empty(t, dirEntries(t, dir))
	})
	t.Run("file, meta of the bytes sent", func(t *testing.T) {
		t.Parallel()
		storage := gzipServer(t)
		api := fileAPI(t, gz, sha256Hex(gz), func() string { return presigned(storage.URL) })
		downloadVerified(t, newClient(t, api.Base), gz)
	})
}

// ---------------------------------------------------------------------
// Redirects and bodies echoed back
// ---------------------------------------------------------------------

// A Location with user info is refused: net/http would send it to storage
// as an Authorization header.
func TestDownloadExportLocationWithUserInfo(t *testing.T) {
	t.Parallel()
	const password = "hunter2pw"
	for name, form := range map[string]string{"absolute": "http://user:%s@%s", "scheme-relative": "//user:%s@%s"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storage := storageServer(t, exportBytes(100))
			loc := fmt.Sprintf(form, password, strings.TrimPrefix(storage.URL, "http://")) + presignObject + "?" + presignQuery
			api := redirectServer(t, http.StatusTemporaryRedirect, loc)
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			requireDownloadError(t, err, nil, 1, logs)
			assert.Zero(t, n)
			assert.Equal(t, []int{1, 0}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
			assertNoSecret(t, err, logs, password) // nor the user info
		})
	}
}

// A Location that does not parse, on any redirect from the API or from
// storage, is a plain *Error at once: not sent again, no URL in its text.
func TestDownloadExportUnparsableLocationOnAnyRedirect(t *testing.T) {
	t.Parallel()
	const bad = "http://127.0.0.1:1/%zz?" + presignQuery
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprintf("API %d", status), func(t *testing.T) {
			t.Parallel()
			api := redirectServer(t, status, bad)
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			_, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			requireDownloadError(t, err, nil, 1, logs)
			assert.Equal(t, 1, api.Arrivals(), "API arrivals (not retried)")
		})
		t.Run(fmt.Sprintf("storage %d", status), func(t *testing.T) {
			t.Parallel()
			storage := redirectServer(t, status, bad)
			api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			_, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			requireDownloadError(t, err, nil, 2, logs)
			assert.Equal(t, []int{1, 1}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage")
		})
	}
}

// presignValues returns every value of presignQuery of 4 bytes or more,
// raw and decoded.
func presignValues(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pair := range strings.Split(presignQuery, "&") {
		_, raw, _ := strings.Cut(pair, "=")
		dec, err := url.QueryUnescape(raw)
		require.NoError(t, err)
		for _, v := range []string{raw, dec} {
			if len(v) >= 4 {
				out = append(out, v)
			}
		}
	}
	return out
}

// lowerEscapes returns s with the hex digits of its percent-escapes in
// lower case.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			copy(b[i+1:i+3], strings.ToLower(string(b[i+1:i+3])))
		}
	}
	return string(b)
}

// canonicalHex returns the bytes of s as space-separated hex, as S3's
// CanonicalRequestBytes.
func canonicalHex(s string) string {
	h := make([]string, len(s))
	for i := range len(s) {
		h[i] = fmt.Sprintf("%02x", s[i])
	}
	return strings.Join(h, " ")
}

// An error body from storage that echoes the presigned query (S3's
// SignatureDoesNotMatch holds the string it signed) gives an *APIError in
// which every value of the query is redacted, in every field.
func TestDownloadExportStorageErrorRedactsThePresignedQuery(t *testing.T) {
	t.Parallel()
	cred, _ := url.QueryUnescape("AKIAEXAMPLE%2F20260610%2Fauto%2Fs3%2Faws4_request")
	cases := []struct {
		name, ctype string
		body        func(storageURL string) string
		keep        string // text of the body that stays
		echo        bool   // the echo stays, redacted (XML keeps Code and Message alone)
	}{
		{"S3 XML", "application/xml", func(storageURL string) string {
			return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>" +
				"<Message>The request signature we calculated does not match the signature you provided.</Message>" +
				"<AWSAccessKeyId>AKIAEXAMPLE</AWSAccessKeyId>" +
				"<StringToSign>AWS4-HMAC-SHA256\n20260610T140000Z\n20260610/auto/s3/aws4_request\n" + strings.Repeat("9f", 32) + "</StringToSign>" +
				"<SignatureProvided>" + presignSecret + "</SignatureProvided>" +
				"<CanonicalRequest>GET\n" + presignObject + "\n" + strings.ReplaceAll(presignQuery, "&", "&amp;") + "\nhost:" +
				strings.TrimPrefix(storageURL, "http://") + "\n\nhost\nUNSIGNED-PAYLOAD</CanonicalRequest></Error>"
		}, "SignatureDoesNotMatch", false},
		// Cut by the 64 KiB read inside the signature: not XML any more,
		// and the signature's beginning is at the end of the text.
		{"S3 XML cut short", "application/xml", func(string) string {
			return "<?xml version=\"1.0\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Padding>" +
				strings.Repeat("p", 64<<10-120) + "</Padding><SignatureProvided>" + presignSecret + strings.Repeat("0", 200)
		}, "SignatureDoesNotMatch", true},
		// S3's CanonicalRequestBytes: the canonical request in spaced hex.
		{"hex bytes", "text/plain", func(string) string {
			return "bytes: " + canonicalHex(presignQuery) + " and " + canonicalHex("AKIAEXAMPLE/20260610/auto") + " and " + canonicalHex(presignSecret)
		}, "bytes:", true},
		// Percent-escapes with lower-case hex digits, as some encoders
		// write them; the letters keep their case.
		{"lower-case escapes", "text/plain", func(string) string {
			return "credential " + lowerEscapes(url.QueryEscape(cred)) + " token " + lowerEscapes(presignToken)
		}, "credential", true},
		// A value of 4 bytes, the shortest that is redacted.
		{"short value", "text/plain", func(string) string {
			return "signed headers: host"
		}, "signed headers:", true},
		{"problem+json", "application/problem+json", func(storageURL string) string {
			return fmt.Sprintf(`{"type":"https://storage.example/errors/%s","title":"bad X-Amz-Signature=%s","status":403,`+
				`"detail":"canonical query %s","instance":%q,"errors":{"credential":[%q],"signature":["%s"]}}`,
				presignSecret, presignSecret, presignQuery, presignObject+"?"+presignQuery, cred, presignSecret)
		}, "canonical query", true},
		{"text/plain", "text/plain; charset=utf-8", func(storageURL string) string {
			return "signature mismatch for " + presigned(storageURL)
		}, "signature mismatch for", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var storage *apiServer
			storage = newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, tc.body(storage.URL))
			})
			api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
			_, err := newClient(t, api.Base).DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			ae := requireAPIErr(t, err, http.StatusForbidden)
			fields := map[string]string{
				"Type": ae.Type, "Title": ae.Title, "Detail": ae.Detail, "RequestID": ae.RequestID,
				"Errors": fmt.Sprint(ae.Errors), "%#v": fmt.Sprintf("%#v", ae), "%+v": fmt.Sprintf("%+v", ae),
			}
			// The texts can be 64 KiB long: the messages quote 300 bytes.
			for name, text := range fields {
				for _, v := range append(presignValues(t), presignQuery, "AKIAEXAMPLE", presignSecret[:8]) {
					assert.False(t, strings.Contains(text, v), "%s holds the query value %q: %.300s", name, v, text)                                   //nolint:testifylint // the text can be 64 KiB: the message quotes 300 bytes of it
					assert.False(t, strings.Contains(text, lowerEscapes(v)), "%s holds the query value %q, lower-case escaped: %.300s", name, v, text) //nolint:testifylint // the text can be 64 KiB: the message quotes 300 bytes of it
					assert.False(t, strings.Contains(text, canonicalHex(v)), "%s holds the query value %q in hex: %.300s", name, v, text)              //nolint:testifylint // the text can be 64 KiB: the message quotes 300 bytes of it
				}
			}
			all := fields["%#v"]
			assert.True(t, strings.Contains(all, tc.keep), "the error lost the body's text %q: %.300s", tc.keep, all) //nolint:testifylint // the text can be 64 KiB: the message quotes 300 bytes of it
			assert.Equal(t, tc.echo, strings.Contains(all, "[REDACTED]"), "[REDACTED] in the error: %.300s", all)
		})
	}
}

// ---------------------------------------------------------------------
// DownloadExportFile: the target and the temporary file
// ---------------------------------------------------------------------

// A path that is, or links to, something other than a regular file is
// refused before anything is sent, also with Overwrite, and left as it
// was.
//
//nolint:tparallel // the subtests share one fake and one directory, counted and read after them
func TestDownloadExportFileRefusesATargetThatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	// A socket's path must fit in 108 bytes: a short directory.
	dir, err := os.MkdirTemp("", "dl")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", filepath.Join(dir, "sock"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o750))
	// A link to a regular file is refused too: /dev/stdout is a link to
	// /proc/self/fd/1, a regular file when stdout is redirected to one,
	// and the rename would replace the link.
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("keep"), 0o600))
	links := map[string]string{"to-devnull": os.DevNull, "to-fifo": fifo, "to-dir": sub, "to-file": file}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	api, storage := storedFileAPI(t, []byte("x"))
	c := newClient(t, api.Base)
	for _, name := range []string{"fifo", "sock", "to-devnull", "to-fifo", "to-dir", "to-file"} {
		path := filepath.Join(dir, name)
		before, err := os.Lstat(path)
		require.NoError(t, err)
		for _, p := range []*synthient.DownloadParams{nil, {Overwrite: true}} {
			t.Run(fmt.Sprintf("%s overwrite=%v", name, p != nil), func(t *testing.T) {
				m, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "latest", path, p)
				require.ErrorIs(t, err, synthient.ErrInvalidArgument)
				assert.Nil(t, m)
				after, err := os.Lstat(path)
				if assert.NoError(t, err, "%s is gone", name) {
					assert.Equal(t, before.Mode(), after.Mode(), "mode of %s", name)
				}
			})
		}
	}
	assert.Equal(t, []int{0, 0}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API, storage (refused before sending)")
	parts, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	assert.Empty(t, parts, "temporary files left")
	got, _ := os.ReadFile(file) //nolint:gosec // a file of the test's temporary directory
	assert.Equal(t, "keep", string(got), "the linked file")
}

// A symbolic link planted at the old temporary name, path.part, is never
// followed: the file it names keeps its bytes, whether the download
// succeeds or fails.
func TestDownloadExportFileIgnoresALinkAtPathPart(t *testing.T) {
	t.Parallel()
	data := exportBytes(64 << 10)
	cases := []struct {
		name      string
		overwrite bool
		fail      bool
	}{
		{"success", false, false},
		{"success with Overwrite", true, false},
		{"storage fails", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storage := newAPIServer(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				if tc.fail {
					writeProblem(w, 503)
					return
				}
				serveFile(w, data)
			})
			api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o600))
			path := filepath.Join(dir, "out.parquet")
			require.NoError(t, os.Symlink(victim, path+".part"))
			_, err := newClient(t, api.Base).DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path,
				&synthient.DownloadParams{Overwrite: tc.overwrite, Verify: true})
			got, _ := os.ReadFile(victim) //nolint:gosec // a file of the test's temporary directory
			assert.Equal(t, "precious", string(got), "the link's target is untouched")
			want := []string{"out.parquet", "out.parquet.part", "victim"}
			if tc.fail {
				want = want[1:]
				require.Error(t, err, "a storage 503")
			} else {
				require.NoError(t, err)
				st, err := os.Lstat(path)
				if assert.NoError(t, err) {
					assert.True(t, st.Mode().IsRegular(), "%s is %v, want a regular file", path, st.Mode())
				}
				got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
				assertSameBytes(t, data, got, "the file")
			}
			assert.Equal(t, want, dirEntries(t, dir))
		})
	}
}

// filesStorage serves files by id: the object path is /bucket/<id>. Its
// URL for an id is fileURL.
func filesStorage(t *testing.T, serve func(id string, w http.ResponseWriter, r *http.Request)) *apiServer {
	return newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		serve(strings.TrimPrefix(r.URL.Path, "/bucket/"), w, r)
	})
}

func fileURL(s *apiServer, id string) string { return s.URL + "/bucket/" + id + "?" + presignQuery }

// Two downloads to one path, one finishing while the other still writes:
// each has its own temporary file, so the path ends with one whole,
// verified file (the second's with Overwrite; without it the second fails
// with fs.ErrExist), never a mix.
func TestDownloadExportFileConcurrentDownloadsToOnePath(t *testing.T) {
	t.Parallel()
	const idA, idB = "2026-06-10/13", "2026-06-10/14"
	a := exportBytes(256 << 10)
	b := bytes.Repeat([]byte{0xb5}, len(a))
	files := map[string][]byte{idA: a, idB: b}
	for _, overwrite := range []bool{false, true} {
		t.Run(fmt.Sprintf("overwrite=%v", overwrite), func(t *testing.T) {
			t.Parallel()
			half := len(b) / 2
			releaseB := make(chan struct{})
			storage := filesStorage(t, func(id string, w http.ResponseWriter, r *http.Request) {
				if id == idA {
					serveFile(w, a)
					return
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(b)))
				_, _ = w.Write(b[:half])
				w.(http.Flusher).Flush()
				select {
				case <-releaseB:
					_, _ = w.Write(b[half:])
				case <-r.Context().Done():
				}
			})
			api := filesAPI(t, func(id string) (int, string) { return len(files[id]), sha256Hex(files[id]) },
				func(id string) string { return fileURL(storage, id) })
			c := newClient(t, api.Base)
			ctx := callCtx(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "out.parquet")
			params := func(progress func(done, total int64)) *synthient.DownloadParams {
				return &synthient.DownloadParams{Overwrite: overwrite, Verify: true, Progress: progress}
			}

			halfB := make(chan struct{})
			var once sync.Once
			errB := make(chan error, 1)
			go func() {
				_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, idB, path, params(func(done, _ int64) {
					if done >= int64(half) {
						once.Do(func() { close(halfB) })
					}
				}))
				errB <- err
			}()
			select {
			case <-halfB:
			case err := <-errB:
				require.FailNow(t, "the download of B ended before half its bytes", "err = %v", err)
			}
			_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, idA, path, params(nil))
			assert.NoError(t, err, "first download to finish") //nolint:testifylint // B waits for releaseB, closed below: stopping here would leave it waiting
			close(releaseB)
			err = <-errB

			want, which := a, "first"
			if overwrite {
				want, which = b, "second"
				require.NoError(t, err, "second download to finish, with Overwrite")
			} else {
				require.ErrorIs(t, err, fs.ErrExist, "second download to finish")
			}
			got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			assertSameBytes(t, want, got, "the file, want the whole of the %s download (equal to A: %v, to B: %v)",
				which, bytes.Equal(got, a), bytes.Equal(got, b))
			assert.Equal(t, []string{"out.parquet"}, dirEntries(t, dir), "the directory holds the file alone")
		})
	}
}

// Many downloads to one path at once: each ends with a whole verified file
// or an error matching fs.ErrExist (without Overwrite, all but one), and
// the path holds the bytes of one of them.
func TestDownloadExportFileManyDownloadsToOnePath(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	var ids []string
	for h := range 6 {
		id := fmt.Sprintf("2026-06-10/%d", h)
		ids = append(ids, id)
		files[id] = bytes.Repeat([]byte{byte('a' + h)}, 96<<10+h)
	}
	for _, overwrite := range []bool{false, true} {
		t.Run(fmt.Sprintf("overwrite=%v", overwrite), func(t *testing.T) {
			t.Parallel()
			storage := filesStorage(t, func(id string, w http.ResponseWriter, _ *http.Request) { serveFile(w, files[id]) })
			api := filesAPI(t, func(id string) (int, string) { return len(files[id]), sha256Hex(files[id]) },
				func(id string) string { return fileURL(storage, id) })
			c := newClient(t, api.Base)
			ctx := callCtx(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "out.parquet")
			errs := make([]error, len(ids))
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Go(func() {
					_, errs[i] = c.DownloadExportFile(ctx, synthient.FeedProxies, id, path,
						&synthient.DownloadParams{Overwrite: overwrite, Verify: true})
				})
			}
			wg.Wait()
			got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			var won []string
			for i, err := range errs {
				switch {
				case err == nil:
					won = append(won, ids[i])
				case overwrite || !errors.Is(err, fs.ErrExist):
					require.NoError(t, err, "download of %s", ids[i])
				}
			}
			if !overwrite {
				assert.Len(t, won, 1, "downloads that succeeded without Overwrite")
			}
			assert.True(t, slices.ContainsFunc(won, func(id string) bool { return bytes.Equal(got, files[id]) }),
				"the file holds %d bytes, none of a successful download's (%v)", len(got), won)
			assert.Equal(t, []string{"out.parquet"}, dirEntries(t, dir), "the directory holds the file alone")
		})
	}
}

// ---------------------------------------------------------------------
// DownloadExportTo
// ---------------------------------------------------------------------

func TestDownloadExportTo(t *testing.T) {
	t.Parallel()
	data := exportBytes(300 << 10)
	t.Run("verified, latest resolved", func(t *testing.T) {
		t.Parallel()
		api, storage := storedFileAPI(t, data)
		var buf bytes.Buffer
		var last, total int64
		m, err := newClient(t, api.Base).DownloadExportTo(callCtx(t), synthient.FeedProxies, "latest", &buf,
			&synthient.DownloadParams{Verify: true, Progress: func(d, tot int64) { last, total = d, tot }})
		require.NoError(t, err)
		assert.Equal(t, latestID, m.ID)
		assert.EqualValues(t, len(data), m.Size)
		assertSameBytes(t, data, buf.Bytes())
		assert.EqualValues(t, len(data), last, "last Progress done")
		assert.EqualValues(t, len(data), total, "last Progress total")
		assert.Equal(t, []string{"/api/v4/feeds/proxies/export/latest/meta", "/api/v4/feeds/proxies/export/" + latestID}, api.Paths(), "API requests")
		require.Len(t, storage.Requests(), 1)
		assertStorageRequest(t, storage.Requests()[0])
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, data)
		api := fileAPI(t, data, sha256Hex(data[1:]), func() string { return presigned(storage.URL) })
		var buf bytes.Buffer
		m, err := newClient(t, api.Base).DownloadExportTo(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf, &synthient.DownloadParams{Verify: true})
		requireDownloadError(t, err, synthient.ErrChecksumMismatch, 3, nil) // meta, API leg, storage
		assert.Nil(t, m)
		assertSameBytes(t, data, buf.Bytes(), "bytes written: all those received (written before the check)")
	})
	t.Run("meta without a size", func(t *testing.T) {
		t.Parallel()
		storage := storageServer(t, data)
		api := filesAPI(t, func(string) (int, string) { return 0, sha256Hex(data) }, func(string) string { return presigned(storage.URL) })
		var buf bytes.Buffer
		_, err := newClient(t, api.Base).DownloadExportTo(callCtx(t), synthient.FeedProxies, "2026-06-10/14", &buf, nil)
		var de *synthient.DecodeError
		require.ErrorAs(t, err, &de)
		assert.Len(t, api.Paths(), 1, "API requests: the meta alone")
		assert.Zero(t, storage.Arrivals(), "storage requests")
		assert.Zero(t, buf.Len(), "bytes written")
	})
	t.Run("invalid arguments", func(t *testing.T) {
		t.Parallel()
		api := fileAPI(t, data, sha256Hex(data), func() string { return "http://127.0.0.1:1/never" })
		c := newClient(t, api.Base)
		for _, tc := range []struct {
			feed synthient.Feed
			id   string
			w    io.Writer
		}{
			{synthient.FeedProxies, "latest", nil},
			{synthient.FeedProxies, "2026-06-10/24", io.Discard},
			{synthient.Feed("nope"), "latest", io.Discard},
		} {
			m, err := c.DownloadExportTo(callCtx(t), tc.feed, tc.id, tc.w, nil)
			require.ErrorIs(t, err, synthient.ErrInvalidArgument, "DownloadExportTo(%s, %q, %v)", tc.feed, tc.id, tc.w)
			assert.Nil(t, m, "DownloadExportTo(%s, %q, %v)", tc.feed, tc.id, tc.w)
		}
		assert.Zero(t, api.Arrivals(), "API requests")
	})
}

// The error of a DownloadExportTo or DownloadExportFile describes the whole
// call: the meta request that was answered counts among its attempts and
// makes NotSent false, although every attempt of the API leg after it was
// refused (the API went down between the two requests).
func TestDownloadExportFileErrorDescribesTheCall(t *testing.T) {
	t.Parallel()
	data := exportBytes(100)
	meta := fmt.Sprintf(`{"stream":"proxies","kind":"daily","id":"2026-06-10","format":"parquet","date":1781049600,`+
		`"created_at":1781103600,"size":%d,"rows":1,"checksum":%q,"schema":{"fields":[]}}`, len(data), sha256Hex(data))
	for _, name := range []string{"DownloadExportTo", "DownloadExportFile"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The API answers the meta request, then stops listening.
			var srv *apiServer
			srv = newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				srv.StopListening()
				writeJSON(w, http.StatusOK, meta)
				_ = http.NewResponseController(w).Flush()
				takeOver(t, w, r)
			})
			c := newClient(t, srv.Base)
			var err error
			if name == "DownloadExportTo" {
				_, err = c.DownloadExportTo(callCtx(t), synthient.FeedProxies, "2026-06-10", io.Discard, nil)
			} else {
				_, err = c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10", filepath.Join(t.TempDir(), "out"), nil)
			}
			srv.Finish()
			// NotSent false: the meta request reached the server.
			_ = requireConnErr(t, err, false, false)
			assert.NotContains(t, err.Error(), "not sent")
			base := requireStop(t, err, 4, retry.AttemptsExhausted) // the meta and three refused
			assert.Equal(t, name, base.Op)
		})
	}
}

// A Progress callback that panics: the panic reaches the caller, and the
// temporary file is closed and removed on the way out.
func TestDownloadExportFileProgressPanicLeavesNoFile(t *testing.T) {
	t.Parallel()
	api, _ := storedFileAPI(t, exportBytes(4096))
	c := newClient(t, api.Base)
	dir := t.TempDir()
	assert.PanicsWithValue(t, "progress", func() {
		_, _ = c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
			&synthient.DownloadParams{Progress: func(int64, int64) { panic("progress") }})
	}, "the callback's panic reaches the caller")
	assert.Empty(t, dirEntries(t, dir))
}

// lyingWriter reports n bytes written, whatever it was given.
type lyingWriter struct{ n int }

func (w lyingWriter) Write([]byte) (int, error) { return w.n, nil }

// A writer that reports fewer than none or more than all of the bytes: an
// *Error, never a panic, and Progress never passes the total.
func TestDownloadExportWriterThatLies(t *testing.T) {
	t.Parallel()
	api, _ := storedFileAPI(t, exportBytes(1000))
	c := newClient(t, api.Base)
	for _, n := range []int{-1, 1 << 20} {
		t.Run(fmt.Sprintf("DownloadExport n=%d", n), func(t *testing.T) {
			t.Parallel()
			_, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", lyingWriter{n})
			var base *synthient.Error
			assert.ErrorAs(t, err, &base)
		})
		t.Run(fmt.Sprintf("DownloadExportTo n=%d", n), func(t *testing.T) {
			t.Parallel()
			progress := func(done, total int64) {
				assert.LessOrEqual(t, done, total, "Progress(%d, %d)", done, total)
				assert.GreaterOrEqual(t, done, int64(0), "Progress(%d, %d)", done, total)
			}
			_, err := c.DownloadExportTo(callCtx(t), synthient.FeedProxies, "2026-06-10/14", lyingWriter{n},
				&synthient.DownloadParams{Verify: true, Progress: progress})
			var base *synthient.Error
			assert.ErrorAs(t, err, &base)
		})
	}
}

// A file name too long to take the temporary suffix still downloads: the
// temporary file gets a short name in the same directory.
func TestDownloadExportFileLongName(t *testing.T) {
	t.Parallel()
	data := exportBytes(100)
	api, _ := storedFileAPI(t, data)
	c := newClient(t, api.Base)
	dir := t.TempDir()
	path := filepath.Join(dir, strings.Repeat("n", 250))
	_, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path, &synthient.DownloadParams{Verify: true})
	require.NoError(t, err)
	got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	assertSameBytes(t, data, got, "the file")
	assert.Len(t, dirEntries(t, dir), 1, "the directory holds the file alone")
	// A name no file system takes: refused before anything is sent.
	_, err = c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, strings.Repeat("n", 256)), nil)
	require.ErrorIs(t, err, synthient.ErrInvalidArgument)
	assert.Equal(t, 2, api.Arrivals(), "API arrivals: the 2 of the first download")
}

// A path the system cannot look at is refused before anything is sent,
// also when the temporary file could be made: here the whole path is
// longer than Linux takes (PATH_MAX, 4096 bytes with its NUL), while the
// short name a temporary file takes for so long a name
// (.synthient-<digits>.part) fits.
func TestDownloadExportFilePathTooLong(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("PATH_MAX of 4096 bytes is Linux's")
	}
	api, _ := storedFileAPI(t, exportBytes(100))
	c := newClient(t, api.Base)
	dir := t.TempDir()
	for len(dir) < 3900 {
		dir = filepath.Join(dir, strings.Repeat("d", min(250, 3900-len(dir))))
	}
	require.NoError(t, os.MkdirAll(dir, 0o750))
	path := filepath.Join(dir, strings.Repeat("n", 250))
	require.Greater(t, len(path), 4095, "the path is longer than PATH_MAX")
	_, err := c.DownloadExportFile(callCtx(t), synthient.FeedProxies, "2026-06-10/14", path, nil)
	require.ErrorIs(t, err, syscall.ENAMETOOLONG)
	var base *synthient.Error
	require.ErrorAs(t, err, &base)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Zero(t, api.Arrivals(), "API requests")
	assert.Empty(t, dirEntries(t, dir), "no temporary file left")
}

// A meta that describes another export than the one asked for, or none,
// is a *DecodeError, and nothing is downloaded.
func TestDownloadExportToMetaOfAnotherExport(t *testing.T) {
	t.Parallel()
	data := exportBytes(100)
	for _, tc := range []struct{ asked, metaID string }{
		{"2026-06-10/14", "2026-06-10/15"},
		{"2026-06-10/14", "../../account/me"},
		{"latest", "latest"},
		{"latest", "not an id"},
		{"2026-06-10", "2026-06-10/3"},
	} {
		t.Run(tc.asked+" gets "+tc.metaID, func(t *testing.T) {
			t.Parallel()
			storage := storageServer(t, data)
			api := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/meta") {
					w.Header().Set("Location", presigned(storage.URL))
					w.WriteHeader(http.StatusTemporaryRedirect)
					return
				}
				writeJSON(w, 200, fmt.Sprintf(`{"stream":"proxies","kind":"hourly","id":%q,"format":"parquet","date":1781049600,`+
					`"created_at":1781103600,"size":%d,"rows":1,"checksum":%q,"schema":{"fields":[]}}`, tc.metaID, len(data), sha256Hex(data)))
			})
			_, err := newClient(t, api.Base).DownloadExportTo(callCtx(t), synthient.FeedProxies, tc.asked, io.Discard, nil)
			var de *synthient.DecodeError
			require.ErrorAs(t, err, &de)
			require.NotErrorIs(t, err, synthient.ErrInvalidArgument)
			assert.Equal(t, []int{1, 0}, []int{api.Arrivals(), storage.Arrivals()}, "arrivals: API (the meta request alone), storage")
		})
	}
}

// An answer that is not HTTP (here a redirect whose Location line holds a
// control byte, which net/http refuses to parse) is ErrMalformedResponse,
// sent once, and no error text quotes the line and its presigned query;
// nor any net/http error the storage host provokes.
func TestDownloadExportMalformedAnswer(t *testing.T) {
	t.Parallel()
	t.Run("API leg", func(t *testing.T) {
		t.Parallel()
		api := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(takeOver(t, w, r), "HTTP/1.1 307 Temporary Redirect\r\nLocation: "+presigned("http://storage.test")+"\x01\r\nContent-Length: 0\r\n\r\n")
		})
		logger, logs := newLogger()
		c := newClient(t, api.Base, synthient.WithLogger(logger))
		_, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		api.Finish()
		require.ErrorIs(t, err, synthient.ErrMalformedResponse)
		assert.Equal(t, 1, api.Arrivals(), "arrivals: the answer would be the same again")
		assertNoSecret(t, err, logs)
	})
	t.Run("storage that echoes the request", func(t *testing.T) {
		t.Parallel()
		storage := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(takeOver(t, w, r), r.RequestURI+"\r\n\r\n")
		})
		api := redirectServer(t, http.StatusTemporaryRedirect, presigned(storage.URL))
		logger, logs := newLogger()
		c := newClient(t, api.Base, synthient.WithLogger(logger))
		_, err := c.DownloadExport(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		var ce *synthient.ConnectionError
		if assert.ErrorAs(t, err, &ce) {
			assert.False(t, ce.NotSent, "NotSent of %v", err)
		}
		assertNoSecret(t, err, logs)
	})
}

// A call cut short by its context between its legs still counts the legs
// that were answered: here the meta request, whose answer's hook cancels.
func TestDownloadExportToCancelledAfterTheMeta(t *testing.T) {
	t.Parallel()
	data := exportBytes(100)
	storage := storageServer(t, data)
	api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	hook := func(ri *synthient.ResponseInfo) error {
		if ri.Status == http.StatusOK {
			cancel()
		}
		return nil
	}
	c := newClient(t, api.Base, synthient.WithResponseHook(hook))
	_, err := c.DownloadExportTo(ctx, synthient.FeedProxies, "2026-06-10/14", io.Discard, nil)
	require.ErrorIs(t, err, context.Canceled)
	_ = requireStop(t, err, 1, retry.ContextDone)
	assert.Equal(t, 1, api.Arrivals(), "API requests")
	assert.Zero(t, storage.Arrivals(), "storage requests")
}

// A storage answer whose connection ends before its Content-Length: a
// *ConnectionError (the call reached the server), which also matches
// ErrSizeMismatch, the mark of every short download.
func TestDownloadExportCutBeforeTheContentLength(t *testing.T) {
	t.Parallel()
	data := exportBytes(1000)
	storage := newAPIServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		c := takeOver(t, w, r)
		_, _ = fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", len(data))
		_, _ = c.Write(data[:500])
	})
	api := fileAPI(t, data, sha256Hex(data), func() string { return presigned(storage.URL) })
	_, err := newClient(t, api.Base).DownloadExportTo(callCtx(t), synthient.FeedProxies, "2026-06-10/14", io.Discard, nil)
	_ = requireConnErr(t, err, false, false)
	require.ErrorIs(t, err, synthient.ErrSizeMismatch)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "got 500 bytes, expected 1000")
}
