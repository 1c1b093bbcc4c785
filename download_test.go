package synthient_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
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
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
)

// dlSecret is the signature of the presigned storage URLs: it must never
// appear in an error or a log line.
const dlSecret = "SECRETSIG0d1e2f3a4b5c6d7e8f"

// dlQuery is the query of a presigned storage URL (R2 / S3 style).
const dlQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20260610%2Fauto%2Fs3%2Faws4_request" +
	"&X-Amz-Date=20260610T140000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=" + dlSecret

// dlObject is the object path on the storage host.
const dlObject = "/bucket/proxies/2026/06/10/14_proxies.parquet"

// dlPresigned returns the presigned URL of dlObject on origin.
func dlPresigned(origin string) string { return origin + dlObject + "?" + dlQuery }

// dlData returns n deterministic bytes that are not all alike.
func dlData(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func dlSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// dlRedirectAPI answers every request with status and Location loc (no
// Location header when loc is "").
func dlRedirectAPI(t *testing.T, tlsOn bool, status int, loc string) *fxServer {
	return newFXServer(t, tlsOn, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if loc != "" {
			w.Header().Set("Location", loc)
		}
		w.Header().Set("X-Request-Id", "req-redirect")
		w.WriteHeader(status)
	})
}

// dlStorage serves data as dlServeFile does.
func dlStorage(t *testing.T, tlsOn bool, data []byte) *fxServer {
	return newFXServer(t, tlsOn, func(_ int, w http.ResponseWriter, _ *http.Request) { dlServeFile(w, data) })
}

// dlServeFile answers 200 with data, a Content-Length and an X-Storage
// header, in four flushed pieces.
func dlServeFile(w http.ResponseWriter, data []byte) {
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

// dlCheckStorageHeaders checks that the storage request carried no
// credentials and the presigned URL as it was.
func dlCheckStorageHeaders(t *testing.T, r fxReq) {
	t.Helper()
	for _, h := range []string{"X-Api-Key", "Authorization", "Cookie", "Proxy-Authorization"} {
		if v, ok := r.Header[h]; ok {
			t.Errorf("storage request carries %s: %q", h, v)
		}
	}
	if strings.Contains(fmt.Sprint(r.Header), testKey) {
		t.Errorf("storage request headers hold the API key: %v", r.Header)
	}
	if r.Method != http.MethodGet || r.Path != dlObject || r.RawQuery != dlQuery {
		t.Errorf("storage request %s %s?%s, want GET %s?%s", r.Method, r.Path, r.RawQuery, dlObject, dlQuery)
	}
}

// dlErrTree returns err and every error below it.
func dlErrTree(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, dlErrTree(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, dlErrTree(e)...)
		}
	}
	return out
}

// dlNoSecret checks that neither the presigned query nor the key appear in
// err (in every form and every error it wraps) or in the log.
func dlNoSecret(t *testing.T, err error, logs *logBuffer) {
	t.Helper()
	var texts []string
	for _, e := range dlErrTree(err) {
		texts = append(texts, e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
	}
	var base *synthient.Error
	if errors.As(err, &base) {
		texts = append(texts, base.Error(), fmt.Sprintf("%+v", base), fmt.Sprintf("%#v", base))
	}
	if logs != nil {
		texts = append(texts, logs.String())
	}
	for _, s := range texts {
		for _, secret := range []string{dlSecret, "X-Amz-", "AKIAEXAMPLE", testKey} {
			if strings.Contains(s, secret) {
				t.Errorf("%q leaks %q", s, secret)
			}
		}
	}
}

// dlCheckRedirectError checks that err is an *Error and not an *APIError.
func dlCheckRedirectError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("err = nil, want an *Error")
	}
	var base *synthient.Error
	if !errors.As(err, &base) {
		t.Errorf("err = %v (%T), want an *Error", err, err)
	}
	var ae *synthient.APIError
	if errors.As(err, &ae) {
		t.Errorf("err = %v matches *APIError (status %d), want a plain *Error", err, ae.Status)
	}
	var ce *synthient.ConnectionError
	if errors.As(err, &ce) {
		t.Errorf("err = %v matches *ConnectionError, want a plain *Error", err)
	}
}

// dlSignalWriter collects the bytes and closes reached once it holds at
// least at bytes.
type dlSignalWriter struct {
	buf     bytes.Buffer
	at      int
	once    sync.Once
	reached chan struct{}
}

func newDLSignalWriter(at int) *dlSignalWriter {
	return &dlSignalWriter{at: at, reached: make(chan struct{})}
}

func (w *dlSignalWriter) Write(p []byte) (int, error) {
	n, _ := w.buf.Write(p)
	if w.buf.Len() >= w.at {
		w.once.Do(func() { close(w.reached) })
	}
	return n, nil
}

// dlRawStorage is a storage host that sends the headers of a body of
// total bytes and its first part bytes, then waits for wait (if not nil)
// and ends the connection: with an RST when reset, else with a FIN.
func dlRawStorage(t *testing.T, data []byte, part int, wait <-chan struct{}, reset bool) *fxRaw {
	return newFXRaw(t, func(c *net.TCPConn, _ *http.Request, quit <-chan struct{}) {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", len(data))
		if _, err := c.Write(data[:part]); err != nil {
			return
		}
		if wait != nil && !fxWait(wait, quit) {
			return
		}
		if reset {
			fxReset(c)
		}
	})
}

func TestDownloadExportFollows307ToStorage(t *testing.T) {
	data := dlData(300 << 10)
	storage := dlStorage(t, false, data)
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))

	var buf bytes.Buffer
	n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
	if err != nil {
		t.Fatalf("DownloadExport: %v", err)
	}
	if n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("returned %d, wrote %d bytes (equal: %v), want %d", n, buf.Len(), bytes.Equal(buf.Bytes(), data), len(data))
	}
	areqs := api.Reqs()
	if len(areqs) != 1 {
		t.Fatalf("%d API requests, want 1", len(areqs))
	}
	if r := areqs[0]; r.Method != http.MethodGet || r.Path != "/api/v4/feeds/proxies/export/2026-06-10/14" {
		t.Errorf("API request %s %s", r.Method, r.Path)
	}
	if got := areqs[0].Header.Get("X-Api-Key"); got != testKey {
		t.Errorf("API request X-Api-Key = %q, want the key", got)
	}
	sreqs := storage.Reqs()
	if len(sreqs) != 1 {
		t.Fatalf("%d storage requests, want 1", len(sreqs))
	}
	dlCheckStorageHeaders(t, sreqs[0])
	dlNoSecret(t, err, logs)
}

func TestDownloadExportPathForEveryFeed(t *testing.T) {
	data := []byte("PAR1...PAR1")
	storage := dlStorage(t, false, data)
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	c := newClient(t, api.Base)
	i := 0
	for _, f := range fxSegments {
		for _, id := range []string{"latest", "2026-06-10", "2026-06-10/5"} {
			var buf bytes.Buffer
			if _, err := c.DownloadExport(context.Background(), f.feed, id, &buf); err != nil {
				t.Fatalf("DownloadExport(%s, %q): %v", f.feed, id, err)
			}
			if want := "/api/v4/feeds/" + f.seg + "/export/" + id; api.Reqs()[i].Path != want {
				t.Errorf("DownloadExport(%s, %q) asked the API for %s, want %s", f.feed, id, api.Reqs()[i].Path, want)
			}
			if !bytes.Equal(buf.Bytes(), data) {
				t.Errorf("DownloadExport(%s, %q) wrote %q", f.feed, id, buf.Bytes())
			}
			i++
		}
	}
}

func TestDownloadExportInvalidArguments(t *testing.T) {
	storage := dlStorage(t, false, []byte("x"))
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	c := newClient(t, api.Base)
	var buf bytes.Buffer
	cases := []struct {
		feed synthient.Feed
		id   string
		w    io.Writer
	}{
		{synthient.FeedProxies, "2026-06-10/14", nil},
		{synthient.FeedProxies, "2026-02-30", &buf},
		{synthient.FeedProxies, "latest/3", &buf},
		{synthient.FeedProxies, "../x", &buf},
		{synthient.FeedProxies, "", &buf},
		{synthient.Feed("nope"), "latest", &buf},
	}
	for _, tc := range cases {
		n, err := c.DownloadExport(context.Background(), tc.feed, tc.id, tc.w)
		if !errors.Is(err, synthient.ErrInvalidArgument) || n != 0 {
			t.Errorf("DownloadExport(%s, %q, %v) = %d, %v; want 0 and an error matching ErrInvalidArgument", tc.feed, tc.id, tc.w, n, err)
		}
	}
	if api.Arrivals()+storage.Arrivals() != 0 {
		t.Errorf("%d API and %d storage requests, want none", api.Arrivals(), storage.Arrivals())
	}
}

func TestDownloadExportRelativeLocation(t *testing.T) {
	data := dlData(10 << 10)
	cases := []struct{ name, loc, path string }{
		{"absolute path", "/storage/file.parquet?" + dlQuery, "/storage/file.parquet"},
		{"relative path", "file.parquet?" + dlQuery, "/api/v4/feeds/proxies/export/2026-06-10/file.parquet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/v4/feeds/proxies/export/2026-06-10/14" {
					w.Header().Set("Location", tc.loc)
					w.WriteHeader(http.StatusTemporaryRedirect)
					return
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(data)))
				w.Write(data)
			})
			c := newClient(t, srv.Base)
			var buf bytes.Buffer
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
			if err != nil {
				t.Fatalf("DownloadExport: %v", err)
			}
			if n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
				t.Errorf("got %d bytes", n)
			}
			reqs := srv.Reqs()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if reqs[1].Path != tc.path || reqs[1].RawQuery != dlQuery {
				t.Errorf("second request %s?%s, want %s?%s", reqs[1].Path, reqs[1].RawQuery, tc.path, dlQuery)
			}
		})
	}
}

func TestDownloadExportFollows308(t *testing.T) {
	data := dlData(5000)
	storage := dlStorage(t, false, data)
	api := dlRedirectAPI(t, false, http.StatusPermanentRedirect, dlPresigned(storage.URL))
	c := newClient(t, api.Base)
	var buf bytes.Buffer
	n, err := c.DownloadExport(context.Background(), synthient.FeedTorrents, "2026-06-10", &buf)
	if err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("DownloadExport = %d, %v", n, err)
	}
	if storage.Arrivals() != 1 {
		t.Errorf("%d storage requests, want 1", storage.Arrivals())
	}
	dlCheckStorageHeaders(t, storage.Reqs()[0])
}

func TestDownloadExportRedirectFromStorageIsAnError(t *testing.T) {
	for _, status := range []int{302, 301, 303, 307, 308} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			third := dlStorage(t, false, []byte("never"))
			storage := dlRedirectAPI(t, false, status, dlPresigned(third.URL))
			api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			var buf bytes.Buffer
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
			dlCheckRedirectError(t, err)
			if n != 0 || buf.Len() != 0 {
				t.Errorf("wrote %d bytes", n)
			}
			if a, s, th := api.Arrivals(), storage.Arrivals(), third.Arrivals(); a != 1 || s != 1 || th != 0 {
				t.Errorf("arrivals: API %d, storage %d, third %d; want 1, 1, 0", a, s, th)
			}
			dlNoSecret(t, err, logs)
		})
	}
}

func TestDownloadExportAPIRedirectOtherThan307Or308IsAnError(t *testing.T) {
	for _, status := range []int{301, 302, 303, 300} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			storage := dlStorage(t, false, []byte("never"))
			api := dlRedirectAPI(t, false, status, dlPresigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			dlCheckRedirectError(t, err)
			if n != 0 {
				t.Errorf("n = %d", n)
			}
			if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 0 {
				t.Errorf("arrivals: API %d, storage %d; want 1, 0", a, s)
			}
			dlNoSecret(t, err, logs)
		})
	}
}

// dlTLSConfig trusts the certificate of httptest's TLS servers (all of
// them share it).
func dlTLSConfig(s *fxServer) synthient.Option {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return synthient.WithTLSConfig(&tls.Config{RootCAs: pool})
}

func TestDownloadExportHTTPSToHTTPDowngradeIsAnError(t *testing.T) {
	data := dlData(4096)
	t.Run("https to http", func(t *testing.T) {
		storage := dlStorage(t, false, data)
		api := dlRedirectAPI(t, true, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
		logger, logs := newLogger()
		c := newClient(t, api.Base, dlTLSConfig(api), synthient.WithLogger(logger))
		n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		dlCheckRedirectError(t, err)
		if n != 0 {
			t.Errorf("n = %d", n)
		}
		if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 0 {
			t.Errorf("arrivals: API %d, storage %d; want 1, 0", a, s)
		}
		dlNoSecret(t, err, logs)
	})
	t.Run("https to https", func(t *testing.T) {
		storage := dlStorage(t, true, data)
		api := dlRedirectAPI(t, true, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
		c := newClient(t, api.Base, dlTLSConfig(api))
		var buf bytes.Buffer
		n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
		if err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("DownloadExport = %d, %v", n, err)
		}
		dlCheckStorageHeaders(t, storage.Reqs()[0])
	})
}

func TestDownloadExportRedirectItCannotFollow(t *testing.T) {
	storage := dlStorage(t, false, []byte("never"))
	cases := map[string]string{
		"no Location":              "",
		"Location does not parse":  "http://127.0.0.1:1/%zz?" + dlQuery,
		"Location is not http(s)":  "ftp://" + strings.TrimPrefix(storage.URL, "http://") + dlObject + "?" + dlQuery,
		"Location without a host":  "http:///bucket/x?" + dlQuery,
		"Location is a javascript": "javascript:alert(1)//?" + dlQuery,
	}
	for name, loc := range cases {
		t.Run(name, func(t *testing.T) {
			api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, loc)
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			dlCheckRedirectError(t, err)
			if n != 0 {
				t.Errorf("n = %d", n)
			}
			if a := api.Arrivals(); a != 1 {
				t.Errorf("%d API arrivals, want 1 (not retried)", a)
			}
			dlNoSecret(t, err, logs)
		})
	}
	if s := storage.Arrivals(); s != 0 {
		t.Errorf("%d storage requests, want 0", s)
	}
}

func TestDownloadExportRetriesTheAPILeg(t *testing.T) {
	data := dlData(2048)
	storage := dlStorage(t, false, data)
	api := newFXServer(t, false, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			fxProblem(w, 503, "Retry-After", "0")
			return
		}
		w.Header().Set("Location", dlPresigned(storage.URL))
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	c := newClient(t, api.Base)
	var buf bytes.Buffer
	n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
	if err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("DownloadExport = %d, %v", n, err)
	}
	if a, s := api.Arrivals(), storage.Arrivals(); a != 2 || s != 1 {
		t.Errorf("arrivals: API %d, storage %d; want 2, 1", a, s)
	}
	for i, r := range api.Reqs() {
		if r.Header.Get("X-Api-Key") != testKey {
			t.Errorf("API attempt %d carries no key", i+1)
		}
	}
	dlCheckStorageHeaders(t, storage.Reqs()[0])
}

func TestDownloadExportStorageErrorIsAnAPIErrorNeverRetried(t *testing.T) {
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
			storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.Header().Set("Retry-After", "0")
				w.Header().Set("X-Request-Id", "storage-req-9")
				w.WriteHeader(503)
				io.WriteString(w, tc.body)
			})
			api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			var ae *synthient.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v (%T), want an *APIError", err, err)
			}
			if ae.Status != 503 || ae.Title != tc.title || ae.Detail != tc.detail || ae.RequestID != "storage-req-9" {
				t.Errorf("APIError = %+v, want status 503, title %q, detail %q, request id storage-req-9", ae, tc.title, tc.detail)
			}
			if ae.Error() != "503 Service Unavailable" {
				t.Errorf("Error() = %q", ae.Error())
			}
			if n != 0 {
				t.Errorf("n = %d", n)
			}
			if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 1 {
				t.Errorf("arrivals: API %d, storage %d; want 1, 1 (the storage leg is never retried)", a, s)
			}
			dlNoSecret(t, err, logs)
		})
	}
}

func TestDownloadExportStorageResetMidBody(t *testing.T) {
	data := dlData(1 << 20)
	const part = 64 << 10
	w := newDLSignalWriter(part)
	storage := dlRawStorage(t, data, part, w.reached, true)
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", w)
	var ce *synthient.ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want a *ConnectionError", err, err)
	}
	var te *synthient.TimeoutError
	if errors.As(err, &te) {
		t.Errorf("err = %v is a *TimeoutError, want a reset", err)
	}
	if n != part || w.buf.Len() != part || !bytes.Equal(w.buf.Bytes(), data[:part]) {
		t.Errorf("returned %d, wrote %d bytes; want %d, the bytes received before the reset", n, w.buf.Len(), part)
	}
	if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 1 {
		t.Errorf("arrivals: API %d, storage %d; want 1, 1 (a read failure is never retried)", a, s)
	}
	dlCheckRawStorageHeaders(t, storage)
	dlNoSecret(t, err, logs)
}

func dlCheckRawStorageHeaders(t *testing.T, s *fxRaw) {
	t.Helper()
	for _, r := range s.Reqs() {
		dlCheckStorageHeaders(t, fxReq{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header})
	}
}

func TestDownloadExportTruncatedBody(t *testing.T) {
	data := dlData(1000)
	storage := dlRawStorage(t, data, 500, nil, false)
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	var buf bytes.Buffer
	n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
	if err == nil {
		t.Fatalf("DownloadExport of a body cut short = %d, nil; want an error", n)
	}
	var ce *synthient.ConnectionError
	if !errors.As(err, &ce) {
		t.Errorf("err = %v (%T), want a *ConnectionError", err, err)
	}
	if n != 500 || !bytes.Equal(buf.Bytes(), data[:500]) {
		t.Errorf("returned %d, wrote %d bytes; want 500", n, buf.Len())
	}
	if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 1 {
		t.Errorf("arrivals: API %d, storage %d; want 1, 1", a, s)
	}
	dlNoSecret(t, err, logs)
}

func TestDownloadExportStorageUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(dead))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	_, err = c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
	var ce *synthient.ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want a *ConnectionError", err, err)
	}
	// The API leg was answered: the call reached the server, although
	// this last request never left.
	if ce.NotSent || strings.Contains(err.Error(), "not sent") {
		t.Errorf("err = %v with NotSent %v, want NotSent false (the API leg reached the server)", err, ce.NotSent)
	}
	if !strings.Contains(err.Error(), "an earlier attempt reached the server") {
		t.Errorf("err = %v: want it to say that the earlier attempt, not this one, reached the server", err)
	}
	if a := api.Arrivals(); a != 1 {
		t.Errorf("%d API arrivals, want 1", a)
	}
	dlNoSecret(t, err, logs)
}

// A storage host that reads the request and closes the connection without
// an answer: an unknown outcome, and the storage leg is never sent again.
func TestDownloadExportStorageClosesAfterRequest(t *testing.T) {
	storage := newFXRaw(t, func(c *net.TCPConn, _ *http.Request, _ <-chan struct{}) {})
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
	var ce *synthient.ConnectionError
	if !errors.As(err, &ce) || ce.NotSent {
		t.Fatalf("err = %v (%T), want a *ConnectionError with NotSent false", err, err)
	}
	storage.Close()
	if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 1 {
		t.Errorf("arrivals: API %d, storage %d; want 1 and 1", a, s)
	}
	dlNoSecret(t, err, logs)
}

func TestDownloadExportCancelledDuringTheBody(t *testing.T) {
	data := dlData(1 << 20)
	storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:1000])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	logger, logs := newLogger()
	c := newClient(t, api.Base, synthient.WithLogger(logger))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newDLSignalWriter(1000)
	go func() {
		<-w.reached
		cancel()
	}()
	_, err := c.DownloadExport(ctx, synthient.FeedProxies, "2026-06-10/14", w)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one matching context.Canceled", err)
	}
	if s := storage.Arrivals(); s != 1 {
		t.Errorf("%d storage arrivals, want 1", s)
	}
	dlNoSecret(t, err, logs)
}

func TestDownloadExportResponseHook(t *testing.T) {
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
		storage := dlStorage(t, false, []byte("bytes"))
		api := newFXServer(t, false, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				fxProblem(w, 503, "Retry-After", "0")
				return
			}
			w.Header().Set("Location", dlPresigned(storage.URL))
			w.WriteHeader(http.StatusTemporaryRedirect)
		})
		hook, got := newHook()
		c := newClient(t, api.Base, hook)
		if _, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard); err != nil {
			t.Fatalf("DownloadExport: %v", err)
		}
		want := []seen{{503, false, ""}, {307, false, dlPresigned(storage.URL)}}
		if g := got(); !reflect.DeepEqual(g, want) {
			t.Errorf("hook saw %+v, want %+v (the API's responses, never storage's)", g, want)
		}
	})
	t.Run("storage 503", func(t *testing.T) {
		storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Storage", "yes")
			fxProblem(w, 503)
		})
		api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
		hook, got := newHook()
		c := newClient(t, api.Base, hook)
		_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		var ae *synthient.APIError
		if !errors.As(err, &ae) || ae.Status != 503 {
			t.Fatalf("err = %v, want an *APIError 503", err)
		}
		if g := got(); len(g) != 1 || g[0].status != 307 || g[0].storage {
			t.Errorf("hook saw %+v, want only the API's 307", g)
		}
	})
	t.Run("hook error on the 307", func(t *testing.T) {
		storage := dlStorage(t, false, []byte("bytes"))
		api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
		hookErr := errors.New("hook says no")
		c := newClient(t, api.Base, synthient.WithResponseHook(func(*synthient.ResponseInfo) error { return hookErr }))
		n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		if err != hookErr || n != 0 {
			t.Errorf("DownloadExport = %d, %v (%T); want 0 and the hook's error unchanged", n, err, err)
		}
		if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 0 {
			t.Errorf("arrivals: API %d, storage %d; want 1, 0", a, s)
		}
	})
}

func TestDownloadExportConstantMemory(t *testing.T) {
	const size = 64 << 20
	chunk := dlData(64 << 10)
	storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for i := 0; i < size/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
	c := newClient(t, api.Base)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10", io.Discard)
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("DownloadExport = %d, %v; want %d", n, err, size)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d KiB to download %d MiB", alloc>>10, size>>20)
	if alloc > 4<<20 {
		t.Errorf("allocated %d bytes to download %d bytes, want far less than the file (< 4 MiB)", alloc, size)
	}
}

// ---------------------------------------------------------------------
// DownloadExportFile
// ---------------------------------------------------------------------

const dlLatestID = "2026-06-10/14"

// dlFileAPI answers meta requests (for "latest" with the id dlLatestID)
// with the size of data and checksum, and download requests with a 307 to
// storageURL.
func dlFileAPI(t *testing.T, data []byte, checksum string, storageURL func() string) *fxServer {
	return dlFilesAPI(t, func(string) (int, string) { return len(data), checksum }, func(string) string { return storageURL() })
}

// dlFilesAPI answers meta requests for an id (for "latest" the id
// dlLatestID) with the size and checksum meta gives, and download requests
// with a 307 to storageURL(id).
func dlFilesAPI(t *testing.T, meta func(id string) (int, string), storageURL func(id string) string) *fxServer {
	return newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/v4/feeds/proxies/export/")
		if !ok {
			fxProblem(w, 404)
			return
		}
		if id, ok := strings.CutSuffix(rest, "/meta"); ok {
			if id == "latest" {
				id = dlLatestID
			}
			hour := ""
			if _, h, ok := strings.Cut(id, "/"); ok {
				hour = `"hour":` + h + `,`
			}
			size, checksum := meta(id)
			fxJSON(w, 200, fmt.Sprintf(`{"stream":"proxies","kind":"hourly","id":%q,"format":"parquet","date":1781049600,%s`+
				`"created_at":1781103600,"size":%d,"rows":12,"checksum":%q,"schema":{"fields":[{"name":"ip","type":"string"}]}}`,
				id, hour, size, checksum))
			return
		}
		w.Header().Set("Location", storageURL(rest))
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
}

// dlDirEntries lists the names in dir.
func dlDirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// dlParts returns the temporary files of a download to path: the names
// path.<digits>.part.
func dlParts(t *testing.T, path string) []string {
	t.Helper()
	matches, err := filepath.Glob(path + ".*.part")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, m := range matches {
		digits := strings.TrimSuffix(strings.TrimPrefix(m, path+"."), ".part")
		if _, err := strconv.ParseUint(digits, 10, 32); err == nil {
			parts = append(parts, m)
		}
	}
	return parts
}

func dlExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestDownloadExportFileWritesPartThenRenames(t *testing.T) {
	data := dlData(512 << 10)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	dir := t.TempDir()
	path := filepath.Join(dir, "proxies.parquet")

	var problems []string
	progress := func(done, total int64) {
		// The bytes so far are in path.<digits>.part; path does not exist
		// yet.
		parts := dlParts(t, path)
		if len(parts) != 1 {
			problems = append(problems, fmt.Sprintf("at %d bytes: temporary files %v, want one", done, parts))
		} else if st, err := os.Lstat(parts[0]); err != nil || !st.Mode().IsRegular() || st.Size() != done {
			problems = append(problems, fmt.Sprintf("at %d bytes: %s is %v (%v), want a regular file of %d bytes", done, parts[0], st, err, done))
		}
		if dlExists(path) {
			problems = append(problems, fmt.Sprintf("at %d bytes: %s exists before the download ended", done, path))
		}
	}
	m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
		&synthient.DownloadParams{Progress: progress})
	if err != nil {
		t.Fatalf("DownloadExportFile: %v", err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if m == nil || m.ID != "2026-06-10/14" || m.Size != int64(len(data)) || m.Checksum != dlSHA(data) {
		t.Errorf("meta = %+v", m)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("file holds %d bytes (%v), want the %d downloaded", len(got), err, len(data))
	}
	if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"proxies.parquet"}) {
		t.Errorf("directory holds %v, want only the file (no .part)", names)
	}
	wantPaths := []string{"/api/v4/feeds/proxies/export/2026-06-10/14/meta", "/api/v4/feeds/proxies/export/2026-06-10/14"}
	if p := api.Paths(); !reflect.DeepEqual(p, wantPaths) {
		t.Errorf("API requests %v, want %v (meta, then the download)", p, wantPaths)
	}
	if s := storage.Arrivals(); s != 1 {
		t.Errorf("%d storage requests, want 1", s)
	}
	dlCheckStorageHeaders(t, storage.Reqs()[0])
}

func TestDownloadExportFileStorageFailureLeavesNoFile(t *testing.T) {
	data := dlData(1 << 20)
	const part = 64 << 10
	t.Run("reset mid-body", func(t *testing.T) {
		reached := make(chan struct{})
		var once sync.Once
		storage := dlRawStorage(t, data, part, reached, true)
		api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		dir := t.TempDir()
		path := filepath.Join(dir, "out.parquet")
		m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
			&synthient.DownloadParams{Progress: func(done, _ int64) {
				if done >= part {
					once.Do(func() { close(reached) })
				}
			}})
		var ce *synthient.ConnectionError
		if !errors.As(err, &ce) || m != nil {
			t.Fatalf("DownloadExportFile = %+v, %v (%T); want a *ConnectionError", m, err, err)
		}
		if names := dlDirEntries(t, dir); len(names) != 0 {
			t.Errorf("directory holds %v after a failed download, want nothing (no file, no .part)", names)
		}
		if s := storage.Arrivals(); s != 1 {
			t.Errorf("%d storage arrivals, want 1", s)
		}
	})
	t.Run("storage 503", func(t *testing.T) {
		storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { fxProblem(w, 503) })
		api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		dir := t.TempDir()
		_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"), nil)
		var ae *synthient.APIError
		if !errors.As(err, &ae) || ae.Status != 503 {
			t.Fatalf("err = %v, want an *APIError 503", err)
		}
		if names := dlDirEntries(t, dir); len(names) != 0 {
			t.Errorf("directory holds %v, want nothing", names)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		storage := dlRawStorage(t, data, part, nil, false)
		api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		dir := t.TempDir()
		_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"), nil)
		if err == nil {
			t.Fatal("err = nil for a body cut short")
		}
		if names := dlDirEntries(t, dir); len(names) != 0 {
			t.Errorf("directory holds %v, want nothing", names)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data[:part])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := c.DownloadExportFile(ctx, synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
			&synthient.DownloadParams{Progress: func(int64, int64) { cancel() }})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want one matching context.Canceled", err)
		}
		if names := dlDirEntries(t, dir); len(names) != 0 {
			t.Errorf("directory holds %v, want nothing", names)
		}
	})
}

func TestDownloadExportFileExistingFile(t *testing.T) {
	data := dlData(4096)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, p := range []*synthient.DownloadParams{nil, {}, {Verify: true}} {
		m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path, p)
		if !errors.Is(err, fs.ErrExist) || m != nil {
			t.Errorf("params %+v: DownloadExportFile over an existing file = %+v, %v; want an error matching fs.ErrExist", p, m, err)
		}
	}
	if a, s := api.Arrivals(), storage.Arrivals(); a != 0 || s != 0 {
		t.Errorf("arrivals: API %d, storage %d; want none (checked before sending)", a, s)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("existing file now holds %d bytes, want it untouched", len(got))
	}
	if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"out.parquet"}) {
		t.Errorf("directory holds %v", names)
	}

	m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
		&synthient.DownloadParams{Overwrite: true})
	if err != nil || m == nil {
		t.Fatalf("with Overwrite: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Errorf("file holds %d bytes after an overwrite, want the %d downloaded", len(got), len(data))
	}
	if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"out.parquet"}) {
		t.Errorf("directory holds %v, want only the file", names)
	}
}

// A file that appears at the path while the download runs is not replaced
// (without Overwrite): the call fails with fs.ErrExist and leaves it and no
// .part.
func TestDownloadExportFileRaceWithAnotherWriter(t *testing.T) {
	data := dlData(4096)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	hook := func(ri *synthient.ResponseInfo) error {
		if ri.Status == http.StatusTemporaryRedirect {
			return os.WriteFile(path, []byte("theirs"), 0o644)
		}
		return nil
	}
	c := newClient(t, api.Base, synthient.WithResponseHook(hook))
	_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path, nil)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("err = %v, want one matching fs.ErrExist", err)
	}
	// Found after every request: an *Error that counts them.
	var base *synthient.Error
	if !errors.As(err, &base) || base.Attempts != 3 {
		t.Errorf("err = %v (%T), want an *Error of 3 attempts (meta, API, storage)", err, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "theirs" {
		t.Errorf("the other writer's file now holds %d bytes, want it untouched", len(got))
	}
	if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"out.parquet"}) {
		t.Errorf("directory holds %v", names)
	}
}

// dlDownloadVerified downloads 2026-06-10/14 with Verify to a new file
// and checks that it holds want.
func dlDownloadVerified(t *testing.T, c *synthient.Client, want []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out")
	if _, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
		&synthient.DownloadParams{Verify: true}); err != nil {
		t.Fatalf("DownloadExportFile: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("file holds %d bytes, want the %d downloaded", len(got), len(want))
	}
}

func TestDownloadExportFileVerify(t *testing.T) {
	data := dlData(100 << 10)
	t.Run("right checksum", func(t *testing.T) {
		storage := dlStorage(t, false, data)
		api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
		dlDownloadVerified(t, newClient(t, api.Base), data)
	})
	t.Run("uppercase checksum", func(t *testing.T) {
		storage := dlStorage(t, false, data)
		api := dlFileAPI(t, data, strings.ToUpper(dlSHA(data)), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		path := filepath.Join(t.TempDir(), "out")
		if _, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
			&synthient.DownloadParams{Verify: true}); err != nil {
			t.Fatalf("DownloadExportFile: %v", err)
		}
	})
	t.Run("wrong checksum", func(t *testing.T) {
		storage := dlStorage(t, false, data)
		other := append([]byte(nil), data...)
		other[len(other)/2] ^= 1
		api := dlFileAPI(t, data, dlSHA(other), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		dir := t.TempDir()
		m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
			&synthient.DownloadParams{Verify: true})
		if !errors.Is(err, synthient.ErrChecksumMismatch) || m != nil {
			t.Fatalf("DownloadExportFile = %+v, %v; want an error matching ErrChecksumMismatch", m, err)
		}
		if names := dlDirEntries(t, dir); len(names) != 0 {
			t.Errorf("directory holds %v after a checksum mismatch, want nothing", names)
		}
		if s := storage.Arrivals(); s != 1 {
			t.Errorf("%d storage arrivals, want 1", s)
		}
	})
}

func TestDownloadExportFileProgress(t *testing.T) {
	data := dlData(700 << 10)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	type call struct{ done, total int64 }
	var calls []call
	m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(t.TempDir(), "out"),
		&synthient.DownloadParams{Progress: func(done, total int64) { calls = append(calls, call{done, total}) }})
	if err != nil {
		t.Fatalf("DownloadExportFile: %v", err)
	}
	if len(calls) == 0 {
		t.Fatal("Progress was never called")
	}
	prev := int64(0)
	for i, c := range calls {
		if c.done <= prev {
			t.Errorf("call %d: done %d after %d, want it increasing", i, c.done, prev)
		}
		if c.total != m.Size {
			t.Errorf("call %d: total %d, want meta.Size %d", i, c.total, m.Size)
		}
		prev = c.done
	}
	if last := calls[len(calls)-1].done; last != int64(len(data)) {
		t.Errorf("last done = %d, want the size %d", last, len(data))
	}
}

func TestDownloadExportFileResolvesLatest(t *testing.T) {
	data := dlData(8192)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	path := filepath.Join(t.TempDir(), "latest.parquet")
	m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", path, &synthient.DownloadParams{Verify: true})
	if err != nil {
		t.Fatalf("DownloadExportFile: %v", err)
	}
	if m.ID != dlLatestID {
		t.Errorf("meta id %q, want %q", m.ID, dlLatestID)
	}
	want := []string{"/api/v4/feeds/proxies/export/latest/meta", "/api/v4/feeds/proxies/export/" + dlLatestID}
	if p := api.Paths(); !reflect.DeepEqual(p, want) {
		t.Errorf("API requests %v, want %v (the download asks for the meta's id, not latest)", p, want)
	}
}

func TestDownloadExportFileMetaWithAnIDThatIsNotOne(t *testing.T) {
	data := dlData(100)
	storage := dlStorage(t, false, data)
	api := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/meta") {
			fxJSON(w, 200, fmt.Sprintf(`{"stream":"proxies","kind":"hourly","id":"../../../account/me","format":"parquet",`+
				`"date":1781049600,"created_at":1781103600,"size":100,"rows":1,"checksum":%q,"schema":{"fields":[]}}`, dlSHA(data)))
			return
		}
		w.Header().Set("Location", dlPresigned(storage.URL))
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	c := newClient(t, api.Base)
	dir := t.TempDir()
	if _, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", filepath.Join(dir, "out"), nil); err == nil {
		t.Fatal("err = nil for a meta whose id is not an export id")
	}
	if p := api.Paths(); len(p) != 1 {
		t.Errorf("API requests %v, want only the meta", p)
	}
	if names := dlDirEntries(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v, want nothing", names)
	}
}

func TestDownloadExportFileInvalidArguments(t *testing.T) {
	storage := dlStorage(t, false, []byte("x"))
	api := dlFileAPI(t, []byte("x"), dlSHA([]byte("x")), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	dir := t.TempDir()
	for _, tc := range []struct {
		feed     synthient.Feed
		id, path string
	}{
		{synthient.FeedProxies, "2026-06-10/24", filepath.Join(dir, "a")},
		{synthient.Feed("nope"), "latest", filepath.Join(dir, "b")},
		{synthient.FeedProxies, "latest", ""},
	} {
		_, err := c.DownloadExportFile(context.Background(), tc.feed, tc.id, tc.path, nil)
		if !errors.Is(err, synthient.ErrInvalidArgument) {
			t.Errorf("DownloadExportFile(%s, %q, %q): err = %v, want ErrInvalidArgument", tc.feed, tc.id, tc.path, err)
		}
	}
	if api.Arrivals() != 0 {
		t.Errorf("%d API requests, want 0", api.Arrivals())
	}
	if names := dlDirEntries(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v", names)
	}
}

// A path that cannot be written is an error before anything is sent: a
// directory (even with Overwrite), a missing parent directory.
func TestDownloadExportFileUnwritablePath(t *testing.T) {
	storage := dlStorage(t, false, []byte("x"))
	api := dlFileAPI(t, []byte("x"), dlSHA([]byte("x")), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*synthient.DownloadParams{nil, {Overwrite: true}} {
		_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", sub, p)
		if !errors.Is(err, synthient.ErrInvalidArgument) {
			t.Errorf("params %+v, path a directory: err = %v, want ErrInvalidArgument", p, err)
		}
	}
	_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", filepath.Join(dir, "missing", "out"), nil)
	var base *synthient.Error
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &base) || !errors.As(err, &pe) {
		t.Errorf("path in a missing directory: err = %v (%T), want an *Error wrapping an *fs.PathError matching fs.ErrNotExist", err, err)
	}
	if a := api.Arrivals(); a != 0 {
		t.Errorf("%d API requests, want 0", a)
	}
	if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"sub"}) {
		t.Errorf("directory holds %v", names)
	}
}

// A meta request that fails leaves no .part behind.
func TestDownloadExportFileMetaFailureLeavesNoFile(t *testing.T) {
	api := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { fxProblem(w, 404) })
	c := newClient(t, api.Base)
	dir := t.TempDir()
	_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", filepath.Join(dir, "out"), nil)
	var ae *synthient.APIError
	if !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("err = %v, want an *APIError 404", err)
	}
	if names := dlDirEntries(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v, want nothing", names)
	}
}

// ---------------------------------------------------------------------
// Exact size: never short, never more
// ---------------------------------------------------------------------

// dlRawAnswer is a storage host that answers every request with head (a
// status line and header lines, each ending in CRLF), an empty line and
// body, written as they are, then closes the connection cleanly.
func dlRawAnswer(t *testing.T, head string, body []byte) *fxRaw {
	return newFXRaw(t, func(c *net.TCPConn, _ *http.Request, _ <-chan struct{}) {
		if _, err := io.WriteString(c, head+"\r\n"); err != nil {
			return
		}
		_, _ = c.Write(body)
	})
}

// dlChunked frames data as one chunk of a chunked body and ends the body
// cleanly.
func dlChunked(data []byte) []byte {
	return fmt.Appendf(nil, "%x\r\n%s\r\n0\r\n\r\n", len(data), data)
}

// dlCheckDownloadError checks that err is a plain *Error of a download
// (no *APIError or *ConnectionError behind it), matching sentinel when it
// is not nil, never retried, with the given attempts, and that neither it
// nor logs (if not nil) hold a secret.
func dlCheckDownloadError(t *testing.T, err, sentinel error, attempts int, logs *logBuffer) {
	t.Helper()
	dlCheckRedirectError(t, err)
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("err = %v, want one matching %v", err, sentinel)
	}
	var base *synthient.Error
	if errors.As(err, &base) && (base.Attempts != attempts || base.StopReason != retry.NotRetryable) {
		t.Errorf("Attempts %d, StopReason %q; want %d, %q", base.Attempts, base.StopReason, attempts, retry.NotRetryable)
	}
	dlNoSecret(t, err, logs)
}

// A storage answer that ends early, or is not a 200, is never a success:
// DownloadExport fails when the Content-Length cannot confirm the size,
// DownloadExportFile checks the count against the meta and leaves no file.
func TestDownloadExportShortAnswerIsAnError(t *testing.T) {
	data := dlData(1000)
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
		{"chunked, ends cleanly early", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", dlChunked(half),
			synthient.ErrSizeUnknown, 500, synthient.ErrSizeMismatch},
		{"Content-Length: 0", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", nil,
			synthient.ErrSizeMismatch, 0, synthient.ErrSizeMismatch},
		{"206", "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-499/1000\r\nContent-Length: 500\r\n", half,
			nil, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/DownloadExport", func(t *testing.T) {
			t.Parallel()
			storage := dlRawAnswer(t, tc.head, tc.body)
			api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
			c := newClient(t, api.Base)
			var buf bytes.Buffer
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
			dlCheckDownloadError(t, err, tc.wantExport, 2, nil)
			if n != tc.wantN || int64(buf.Len()) != tc.wantN {
				t.Errorf("returned %d, wrote %d bytes; want %d", n, buf.Len(), tc.wantN)
			}
			if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 1 {
				t.Errorf("arrivals: API %d, storage %d; want 1, 1", a, s)
			}
		})
		t.Run(tc.name+"/DownloadExport, from the API itself", func(t *testing.T) {
			t.Parallel()
			api := dlRawAnswer(t, tc.head, tc.body)
			c := newClient(t, api.URL+"/api/v4")
			var buf bytes.Buffer
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
			dlCheckDownloadError(t, err, tc.wantExport, 1, nil)
			if n != tc.wantN || int64(buf.Len()) != tc.wantN {
				t.Errorf("returned %d, wrote %d bytes; want %d", n, buf.Len(), tc.wantN)
			}
			if a := api.Arrivals(); a != 1 {
				t.Errorf("%d API arrivals, want 1", a)
			}
		})
		for _, verify := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/DownloadExportFile verify=%v", tc.name, verify), func(t *testing.T) {
				t.Parallel()
				storage := dlRawAnswer(t, tc.head, tc.body)
				api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
				c := newClient(t, api.Base)
				dir := t.TempDir()
				m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
					&synthient.DownloadParams{Verify: verify})
				dlCheckDownloadError(t, err, tc.wantFile, 3, nil) // meta, API leg, storage
				if m != nil {
					t.Errorf("meta = %+v, want nil", m)
				}
				if names := dlDirEntries(t, dir); len(names) != 0 {
					t.Errorf("directory holds %v, want nothing", names)
				}
			})
		}
	}
}

// A storage host that sends more than the meta's size is cut there: at
// most Size bytes reach the file or the writer, and the call fails.
func TestDownloadExportNeverWritesMoreThanTheSize(t *testing.T) {
	const size = 1000
	data := dlData(size)
	big := dlData(64 << 10)
	cases := []struct {
		name     string
		head     string
		body     []byte
		wantMost int64 // the bytes that may reach the writer
	}{
		{"Content-Length larger than the meta", "HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n", big, 0},
		{"HTTP/1.0 close-delimited", "HTTP/1.0 200 OK\r\n", big, size},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", dlChunked(big), size},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/DownloadExportFile", func(t *testing.T) {
			t.Parallel()
			storage := dlRawAnswer(t, tc.head, tc.body)
			api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
			c := newClient(t, api.Base)
			dir := t.TempDir()
			var most int64
			progress := func(done, total int64) {
				most = max(most, done)
				if total != size {
					t.Errorf("Progress total %d, want the meta's size %d", total, size)
				}
			}
			_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
				&synthient.DownloadParams{Progress: progress})
			dlCheckDownloadError(t, err, synthient.ErrSizeMismatch, 3, nil) // meta, API leg, storage
			if most > tc.wantMost {
				t.Errorf("Progress reached %d bytes, want at most %d", most, tc.wantMost)
			}
			if names := dlDirEntries(t, dir); len(names) != 0 {
				t.Errorf("directory holds %v, want nothing", names)
			}
		})
		t.Run(tc.name+"/DownloadExportTo", func(t *testing.T) {
			t.Parallel()
			storage := dlRawAnswer(t, tc.head, tc.body)
			api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
			c := newClient(t, api.Base)
			var buf bytes.Buffer
			_, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf, nil)
			dlCheckDownloadError(t, err, synthient.ErrSizeMismatch, 3, nil) // meta, API leg, storage
			if int64(buf.Len()) > tc.wantMost || !bytes.Equal(buf.Bytes(), big[:buf.Len()]) {
				t.Errorf("wrote %d bytes, want at most %d, the first ones sent", buf.Len(), tc.wantMost)
			}
		})
	}
}

// dlGzip returns data compressed with gzip.
func dlGzip(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Both legs ask for the identity encoding, and a body sent with
// Content-Encoding: gzip anyway is written as it came: 4 KiB of gzip never
// becomes 4 MiB on disk. The size and the checksum then decide.
func TestDownloadExportNeverDecodesTheBody(t *testing.T) {
	plain := make([]byte, 4<<20)
	gz := dlGzip(t, plain)
	serveGzip := func(w http.ResponseWriter) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(gz)))
		w.WriteHeader(200)
		w.Write(gz)
	}
	checkIdentity := func(t *testing.T, leg string, r fxReq) {
		t.Helper()
		if got := r.Header.Values("Accept-Encoding"); !reflect.DeepEqual(got, []string{"identity"}) {
			t.Errorf("%s request Accept-Encoding = %q, want identity", leg, got)
		}
	}
	downloadRaw := func(t *testing.T, api *fxServer) {
		t.Helper()
		var buf bytes.Buffer
		n, err := newClient(t, api.Base).DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf)
		if err != nil || n != int64(len(gz)) || !bytes.Equal(buf.Bytes(), gz) {
			t.Fatalf("DownloadExport = %d, %v; wrote %d bytes, want the %d bytes of gzip as sent", n, err, buf.Len(), len(gz))
		}
		checkIdentity(t, "API", api.Reqs()[0])
	}
	t.Run("storage leg", func(t *testing.T) {
		t.Parallel()
		storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { serveGzip(w) })
		downloadRaw(t, dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL)))
		checkIdentity(t, "storage", storage.Reqs()[0])
	})
	t.Run("API leg answers 200", func(t *testing.T) {
		t.Parallel()
		downloadRaw(t, newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { serveGzip(w) }))
	})
	t.Run("file, meta of the decoded bytes", func(t *testing.T) {
		t.Parallel()
		storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { serveGzip(w) })
		api := dlFileAPI(t, plain, dlSHA(plain), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		dir := t.TempDir()
		_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"), nil)
		dlCheckDownloadError(t, err, synthient.ErrSizeMismatch, 3, nil) // meta, API leg, storage
		if names := dlDirEntries(t, dir); len(names) != 0 {
			t.Errorf("directory holds %v, want nothing", names)
		}
	})
	t.Run("file, meta of the bytes sent", func(t *testing.T) {
		t.Parallel()
		storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) { serveGzip(w) })
		api := dlFileAPI(t, gz, dlSHA(gz), func() string { return dlPresigned(storage.URL) })
		dlDownloadVerified(t, newClient(t, api.Base), gz)
	})
}

// ---------------------------------------------------------------------
// Redirects and bodies echoed back
// ---------------------------------------------------------------------

// A Location with user info is refused: net/http would send it to storage
// as an Authorization header.
func TestDownloadExportLocationWithUserInfo(t *testing.T) {
	const password = "hunter2pw"
	for name, form := range map[string]string{"absolute": "http://user:%s@%s", "scheme-relative": "//user:%s@%s"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storage := dlStorage(t, false, dlData(100))
			loc := fmt.Sprintf(form, password, strings.TrimPrefix(storage.URL, "http://")) + dlObject + "?" + dlQuery
			api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, loc)
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			dlCheckDownloadError(t, err, nil, 1, logs)
			if n != 0 {
				t.Errorf("n = %d", n)
			}
			if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 0 {
				t.Errorf("arrivals: API %d, storage %d; want 1, 0", a, s)
			}
			for _, e := range dlErrTree(err) {
				if s := fmt.Sprintf("%#v %v", e, e); strings.Contains(s, password) {
					t.Errorf("the error holds the user info: %s", s)
				}
			}
		})
	}
}

// A Location that does not parse, on any redirect from the API or from
// storage, is a plain *Error at once: not sent again, no URL in its text.
func TestDownloadExportUnparsableLocationOnAnyRedirect(t *testing.T) {
	const bad = "http://127.0.0.1:1/%zz?" + dlQuery
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprintf("API %d", status), func(t *testing.T) {
			t.Parallel()
			api := dlRedirectAPI(t, false, status, bad)
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			dlCheckDownloadError(t, err, nil, 1, logs)
			if a := api.Arrivals(); a != 1 {
				t.Errorf("%d API arrivals, want 1 (not retried)", a)
			}
		})
		t.Run(fmt.Sprintf("storage %d", status), func(t *testing.T) {
			t.Parallel()
			storage := dlRedirectAPI(t, false, status, bad)
			api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
			logger, logs := newLogger()
			c := newClient(t, api.Base, synthient.WithLogger(logger))
			_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			dlCheckDownloadError(t, err, nil, 2, logs)
			if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 1 {
				t.Errorf("arrivals: API %d, storage %d; want 1, 1", a, s)
			}
		})
	}
}

// dlQueryValues returns every value of dlQuery of 4 bytes or more, raw and
// decoded.
func dlQueryValues(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pair := range strings.Split(dlQuery, "&") {
		_, raw, _ := strings.Cut(pair, "=")
		dec, err := url.QueryUnescape(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{raw, dec} {
			if len(v) >= 4 {
				out = append(out, v)
			}
		}
	}
	return out
}

// dlSpacedHex returns the bytes of s as space-separated hex, as S3's
// CanonicalRequestBytes.
func dlSpacedHex(s string) string {
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
				"<SignatureProvided>" + dlSecret + "</SignatureProvided>" +
				"<CanonicalRequest>GET\n" + dlObject + "\n" + strings.ReplaceAll(dlQuery, "&", "&amp;") + "\nhost:" +
				strings.TrimPrefix(storageURL, "http://") + "\n\nhost\nUNSIGNED-PAYLOAD</CanonicalRequest></Error>"
		}, "SignatureDoesNotMatch", false},
		// Cut by the 64 KiB read inside the signature: not XML any more,
		// and the signature's beginning is at the end of the text.
		{"S3 XML cut short", "application/xml", func(string) string {
			return "<?xml version=\"1.0\"?>\n<Error><Code>SignatureDoesNotMatch</Code><Padding>" +
				strings.Repeat("p", 64<<10-120) + "</Padding><SignatureProvided>" + dlSecret + strings.Repeat("0", 200)
		}, "SignatureDoesNotMatch", true},
		// S3's CanonicalRequestBytes: the canonical request in spaced hex.
		{"hex bytes", "text/plain", func(string) string {
			return "bytes: " + dlSpacedHex(dlQuery) + " and " + dlSpacedHex("AKIAEXAMPLE/20260610/auto") + " and " + dlSpacedHex(dlSecret)
		}, "bytes:", true},
		{"lower-case escapes", "text/plain", func(string) string {
			return "credential " + strings.ToLower(url.QueryEscape(cred))
		}, "credential", true},
		{"problem+json", "application/problem+json", func(storageURL string) string {
			return fmt.Sprintf(`{"type":"https://storage.example/errors/%s","title":"bad X-Amz-Signature=%s","status":403,`+
				`"detail":"canonical query %s","instance":%q,"errors":{"credential":[%q],"signature":["%s"]}}`,
				dlSecret, dlSecret, dlQuery, dlObject+"?"+dlQuery, cred, dlSecret)
		}, "canonical query", true},
		{"text/plain", "text/plain; charset=utf-8", func(storageURL string) string {
			return "signature mismatch for " + dlPresigned(storageURL)
		}, "signature mismatch for", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var storage *fxServer
			storage = newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, tc.body(storage.URL))
			})
			api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned(storage.URL))
			c := newClient(t, api.Base)
			_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
			var ae *synthient.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
				t.Fatalf("err = %v (%T), want an *APIError 403", err, err)
			}
			fields := map[string]string{
				"Type": ae.Type, "Title": ae.Title, "Detail": ae.Detail, "RequestID": ae.RequestID,
				"Errors": fmt.Sprint(ae.Errors), "%#v": fmt.Sprintf("%#v", ae), "%+v": fmt.Sprintf("%+v", ae),
			}
			for name, text := range fields {
				for _, v := range append(dlQueryValues(t), dlQuery, "AKIAEXAMPLE", dlSecret[:8]) {
					if strings.Contains(text, v) || strings.Contains(text, dlSpacedHex(v)) {
						t.Errorf("%s holds the query value %q: %.300s", name, v, text)
					}
				}
			}
			if all := fields["%#v"]; !strings.Contains(all, tc.keep) || strings.Contains(all, "[REDACTED]") != tc.echo {
				t.Errorf("the error lost the body's text, want %q and [REDACTED] (%v) in it: %.300s", tc.keep, tc.echo, all)
			}
			dlNoSecret(t, err, nil)
		})
	}
}

// ---------------------------------------------------------------------
// DownloadExportFile: the target and the temporary file
// ---------------------------------------------------------------------

// A path that is, or links to, something other than a regular file is
// refused before anything is sent, also with Overwrite, and left as it
// was.
func TestDownloadExportFileRefusesATargetThatIsNotARegularFile(t *testing.T) {
	// A socket's path must fit in 108 bytes: a short directory.
	dir, err := os.MkdirTemp("", "dl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// A link to a regular file is refused too: /dev/stdout is a link to
	// /proc/self/fd/1, a regular file when stdout is redirected to one,
	// and the rename would replace the link.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"to-devnull": os.DevNull, "to-fifo": fifo, "to-dir": sub, "to-file": file}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	storage := dlStorage(t, false, []byte("x"))
	api := dlFileAPI(t, []byte("x"), dlSHA([]byte("x")), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	for _, name := range []string{"fifo", "sock", "to-devnull", "to-fifo", "to-dir", "to-file"} {
		path := filepath.Join(dir, name)
		before, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []*synthient.DownloadParams{nil, {Overwrite: true}} {
			t.Run(fmt.Sprintf("%s overwrite=%v", name, p != nil), func(t *testing.T) {
				m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "latest", path, p)
				if !errors.Is(err, synthient.ErrInvalidArgument) || m != nil {
					t.Errorf("DownloadExportFile = %+v, %v; want an error matching ErrInvalidArgument", m, err)
				}
				if after, err := os.Lstat(path); err != nil || after.Mode() != before.Mode() {
					t.Errorf("%s is now %v (%v), was %v", name, after, err, before.Mode())
				}
			})
		}
	}
	if a, s := api.Arrivals(), storage.Arrivals(); a != 0 || s != 0 {
		t.Errorf("arrivals: API %d, storage %d; want none (refused before sending)", a, s)
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(parts) != 0 {
		t.Errorf("temporary files left: %v", parts)
	}
	if got, _ := os.ReadFile(file); string(got) != "keep" {
		t.Errorf("the linked file holds %q", got)
	}
}

// A symbolic link planted at the old temporary name, path.part, is never
// followed: the file it names keeps its bytes, whether the download
// succeeds or fails.
func TestDownloadExportFileIgnoresALinkAtPathPart(t *testing.T) {
	data := dlData(64 << 10)
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
			storage := newFXServer(t, false, func(_ int, w http.ResponseWriter, _ *http.Request) {
				if tc.fail {
					fxProblem(w, 503)
					return
				}
				dlServeFile(w, data)
			})
			api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
			c := newClient(t, api.Base)
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "out.parquet")
			if err := os.Symlink(victim, path+".part"); err != nil {
				t.Fatal(err)
			}
			_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
				&synthient.DownloadParams{Overwrite: tc.overwrite, Verify: true})
			if got, _ := os.ReadFile(victim); string(got) != "precious" {
				t.Errorf("the link's target now holds %d bytes, want it untouched", len(got))
			}
			want := []string{"out.parquet", "out.parquet.part", "victim"}
			if tc.fail {
				want = want[1:]
				if err == nil {
					t.Fatal("err = nil for a storage 503")
				}
			} else {
				if err != nil {
					t.Fatalf("DownloadExportFile: %v", err)
				}
				if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
					t.Errorf("%s is %v (%v), want a regular file", path, st, err)
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
					t.Errorf("file holds %d bytes, want the %d downloaded", len(got), len(data))
				}
			}
			if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, want) {
				t.Errorf("directory holds %v, want %v", names, want)
			}
		})
	}
}

// dlFilesStorage serves files by id: the object path is /bucket/<id>. Its
// URL for an id is dlFileURL.
func dlFilesStorage(t *testing.T, serve func(id string, w http.ResponseWriter, r *http.Request)) *fxServer {
	return newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		serve(strings.TrimPrefix(r.URL.Path, "/bucket/"), w, r)
	})
}

func dlFileURL(s *fxServer, id string) string { return s.URL + "/bucket/" + id + "?" + dlQuery }

// Two downloads to one path, one finishing while the other still writes:
// each has its own temporary file, so the path ends with one whole,
// verified file (the second's with Overwrite; without it the second fails
// with fs.ErrExist), never a mix.
func TestDownloadExportFileConcurrentDownloadsToOnePath(t *testing.T) {
	const idA, idB = "2026-06-10/13", "2026-06-10/14"
	a := dlData(256 << 10)
	b := bytes.Repeat([]byte{0xb5}, len(a))
	files := map[string][]byte{idA: a, idB: b}
	for _, overwrite := range []bool{false, true} {
		t.Run(fmt.Sprintf("overwrite=%v", overwrite), func(t *testing.T) {
			t.Parallel()
			half := len(b) / 2
			releaseB := make(chan struct{})
			storage := dlFilesStorage(t, func(id string, w http.ResponseWriter, r *http.Request) {
				if id == idA {
					dlServeFile(w, a)
					return
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(b)))
				w.Write(b[:half])
				w.(http.Flusher).Flush()
				select {
				case <-releaseB:
					w.Write(b[half:])
				case <-r.Context().Done():
				}
			})
			api := dlFilesAPI(t, func(id string) (int, string) { return len(files[id]), dlSHA(files[id]) },
				func(id string) string { return dlFileURL(storage, id) })
			c := newClient(t, api.Base)
			dir := t.TempDir()
			path := filepath.Join(dir, "out.parquet")
			params := func(progress func(done, total int64)) *synthient.DownloadParams {
				return &synthient.DownloadParams{Overwrite: overwrite, Verify: true, Progress: progress}
			}

			halfB := make(chan struct{})
			var once sync.Once
			errB := make(chan error, 1)
			go func() {
				_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, idB, path, params(func(done, _ int64) {
					if done >= int64(half) {
						once.Do(func() { close(halfB) })
					}
				}))
				errB <- err
			}()
			<-halfB
			if _, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, idA, path, params(nil)); err != nil {
				t.Errorf("first download to finish: %v", err)
			}
			close(releaseB)
			err := <-errB

			want := a
			if overwrite {
				want = b
				if err != nil {
					t.Errorf("second download to finish, with Overwrite: %v", err)
				}
			} else if !errors.Is(err, fs.ErrExist) {
				t.Errorf("second download to finish: err = %v, want one matching fs.ErrExist", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
				t.Errorf("file holds %d bytes (equal to A: %v, to B: %v), want the whole of the %s download",
					len(got), bytes.Equal(got, a), bytes.Equal(got, b), map[bool]string{false: "first", true: "second"}[overwrite])
			}
			if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"out.parquet"}) {
				t.Errorf("directory holds %v, want only the file", names)
			}
		})
	}
}

// Many downloads to one path at once: each ends with a whole verified file
// or an error matching fs.ErrExist (without Overwrite, all but one), and
// the path holds the bytes of one of them.
func TestDownloadExportFileManyDownloadsToOnePath(t *testing.T) {
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
			storage := dlFilesStorage(t, func(id string, w http.ResponseWriter, _ *http.Request) { dlServeFile(w, files[id]) })
			api := dlFilesAPI(t, func(id string) (int, string) { return len(files[id]), dlSHA(files[id]) },
				func(id string) string { return dlFileURL(storage, id) })
			c := newClient(t, api.Base)
			dir := t.TempDir()
			path := filepath.Join(dir, "out.parquet")
			errs := make([]error, len(ids))
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = c.DownloadExportFile(context.Background(), synthient.FeedProxies, id, path,
						&synthient.DownloadParams{Overwrite: overwrite, Verify: true})
				}()
			}
			wg.Wait()
			got, _ := os.ReadFile(path)
			var won []string
			for i, err := range errs {
				switch {
				case err == nil:
					won = append(won, ids[i])
				case overwrite || !errors.Is(err, fs.ErrExist):
					t.Errorf("download of %s: %v", ids[i], err)
				}
			}
			if !overwrite && len(won) != 1 {
				t.Errorf("%d downloads succeeded without Overwrite (%v), want exactly 1", len(won), won)
			}
			if !slices.ContainsFunc(won, func(id string) bool { return bytes.Equal(got, files[id]) }) {
				t.Errorf("file holds %d bytes, none of a successful download's (%v)", len(got), won)
			}
			if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"out.parquet"}) {
				t.Errorf("directory holds %v, want only the file", names)
			}
		})
	}
}

// ---------------------------------------------------------------------
// DownloadExportTo
// ---------------------------------------------------------------------

func TestDownloadExportTo(t *testing.T) {
	data := dlData(300 << 10)
	t.Run("verified, latest resolved", func(t *testing.T) {
		t.Parallel()
		storage := dlStorage(t, false, data)
		api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		var buf bytes.Buffer
		var last, total int64
		m, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, "latest", &buf,
			&synthient.DownloadParams{Verify: true, Progress: func(d, tot int64) { last, total = d, tot }})
		if err != nil {
			t.Fatalf("DownloadExportTo: %v", err)
		}
		if m.ID != dlLatestID || m.Size != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("meta %+v, wrote %d bytes; want id %s and the %d bytes", m, buf.Len(), dlLatestID, len(data))
		}
		if last != int64(len(data)) || total != int64(len(data)) {
			t.Errorf("last Progress %d of %d, want %d of %d", last, total, len(data), len(data))
		}
		want := []string{"/api/v4/feeds/proxies/export/latest/meta", "/api/v4/feeds/proxies/export/" + dlLatestID}
		if p := api.Paths(); !reflect.DeepEqual(p, want) {
			t.Errorf("API requests %v, want %v", p, want)
		}
		dlCheckStorageHeaders(t, storage.Reqs()[0])
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		t.Parallel()
		storage := dlStorage(t, false, data)
		api := dlFileAPI(t, data, dlSHA(data[1:]), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		var buf bytes.Buffer
		m, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf, &synthient.DownloadParams{Verify: true})
		dlCheckDownloadError(t, err, synthient.ErrChecksumMismatch, 3, nil) // meta, API leg, storage
		if m != nil {
			t.Errorf("meta = %+v, want nil", m)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("wrote %d bytes, want the %d received (written before the check)", buf.Len(), len(data))
		}
	})
	t.Run("meta without a size", func(t *testing.T) {
		t.Parallel()
		storage := dlStorage(t, false, data)
		api := dlFilesAPI(t, func(string) (int, string) { return 0, dlSHA(data) }, func(string) string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		var buf bytes.Buffer
		_, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, "2026-06-10/14", &buf, nil)
		var de *synthient.DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("err = %v (%T), want a *DecodeError", err, err)
		}
		if p := api.Paths(); len(p) != 1 || storage.Arrivals() != 0 || buf.Len() != 0 {
			t.Errorf("API requests %v, %d storage requests, %d bytes written; want only the meta", p, storage.Arrivals(), buf.Len())
		}
	})
	t.Run("invalid arguments", func(t *testing.T) {
		t.Parallel()
		api := dlFileAPI(t, data, dlSHA(data), func() string { return "http://127.0.0.1:1/never" })
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
			m, err := c.DownloadExportTo(context.Background(), tc.feed, tc.id, tc.w, nil)
			if !errors.Is(err, synthient.ErrInvalidArgument) || m != nil {
				t.Errorf("DownloadExportTo(%s, %q, %v) = %+v, %v; want an error matching ErrInvalidArgument", tc.feed, tc.id, tc.w, m, err)
			}
		}
		if a := api.Arrivals(); a != 0 {
			t.Errorf("%d API requests, want 0", a)
		}
	})
}

// The error of a DownloadExportTo or DownloadExportFile describes the whole
// call: the meta request that was answered counts among its attempts and
// makes NotSent false, although every attempt of the API leg after it was
// refused (the API went down between the two requests).
func TestDownloadExportFileErrorDescribesTheCall(t *testing.T) {
	t.Parallel()
	data := dlData(100)
	meta := fmt.Sprintf(`{"stream":"proxies","kind":"daily","id":"2026-06-10","format":"parquet","date":1781049600,`+
		`"created_at":1781103600,"size":%d,"rows":1,"checksum":%q,"schema":{"fields":[]}}`, len(data), dlSHA(data))
	for _, name := range []string{"DownloadExportTo", "DownloadExportFile"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The API answers the meta request, then stops listening.
			srv := newRawServer(t, func(c *rawConn) {
				if _, _, _, err := c.ReadRequest(); err != nil {
					return
				}
				_ = c.WriteResponse(200, "application/json", meta)
				c.srv.ln.Close()
			})
			c := newClient(t, srv.URL)
			var err error
			if name == "DownloadExportTo" {
				_, err = c.DownloadExportTo(context.Background(), synthient.FeedProxies, "2026-06-10", io.Discard, nil)
			} else {
				_, err = c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10", filepath.Join(t.TempDir(), "out"), nil)
			}
			srv.Close()
			var ce *synthient.ConnectionError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want a *ConnectionError", err, err)
			}
			if ce.NotSent || strings.Contains(err.Error(), "not sent") {
				t.Errorf("NotSent = %v, message %q: the meta request reached the server", ce.NotSent, err)
			}
			var base *synthient.Error
			if !errors.As(err, &base) || base.Op != name || base.Attempts != 4 || base.StopReason != retry.AttemptsExhausted {
				t.Errorf("base error %+v, want Op %s, 4 attempts (the meta and three refused), %s", base, name, retry.AttemptsExhausted)
			}
		})
	}
}

// A Progress callback that panics: the panic reaches the caller, and the
// temporary file is closed and removed on the way out.
func TestDownloadExportFileProgressPanicLeavesNoFile(t *testing.T) {
	t.Parallel()
	data := dlData(4096)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	dir := t.TempDir()
	func() {
		defer func() {
			if r := recover(); r != "progress" {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		_, _ = c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, "out"),
			&synthient.DownloadParams{Progress: func(int64, int64) { panic("progress") }})
	}()
	if names := dlDirEntries(t, dir); len(names) != 0 {
		t.Errorf("directory holds %v, want nothing", names)
	}
}

// dlLyingWriter reports n bytes written, whatever it was given.
type dlLyingWriter struct{ n int }

func (w dlLyingWriter) Write([]byte) (int, error) { return w.n, nil }

// A writer that reports fewer than none or more than all of the bytes: an
// *Error, never a panic, and Progress never passes the total.
func TestDownloadExportWriterThatLies(t *testing.T) {
	t.Parallel()
	data := dlData(1000)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	for _, n := range []int{-1, 1 << 20} {
		t.Run(fmt.Sprintf("DownloadExport n=%d", n), func(t *testing.T) {
			_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", dlLyingWriter{n})
			var base *synthient.Error
			if !errors.As(err, &base) {
				t.Errorf("err = %v (%T), want an *Error", err, err)
			}
		})
		t.Run(fmt.Sprintf("DownloadExportTo n=%d", n), func(t *testing.T) {
			progress := func(done, total int64) {
				if done > total || done < 0 {
					t.Errorf("Progress(%d, %d)", done, total)
				}
			}
			_, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, "2026-06-10/14", dlLyingWriter{n},
				&synthient.DownloadParams{Verify: true, Progress: progress})
			var base *synthient.Error
			if !errors.As(err, &base) {
				t.Errorf("err = %v (%T), want an *Error", err, err)
			}
		})
	}
}

// A file name too long to take the temporary suffix still downloads: the
// temporary file gets a short name in the same directory.
func TestDownloadExportFileLongName(t *testing.T) {
	t.Parallel()
	data := dlData(100)
	storage := dlStorage(t, false, data)
	api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
	c := newClient(t, api.Base)
	dir := t.TempDir()
	path := filepath.Join(dir, strings.Repeat("n", 250))
	if _, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
		&synthient.DownloadParams{Verify: true}); err != nil {
		t.Fatalf("DownloadExportFile: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Errorf("the file holds %d bytes, want the %d of the export", len(got), len(data))
	}
	if names := dlDirEntries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want the file alone", names)
	}
	// A name no file system takes: refused before anything is sent.
	_, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", filepath.Join(dir, strings.Repeat("n", 256)), nil)
	if !errors.Is(err, synthient.ErrInvalidArgument) {
		t.Errorf("err = %v, want one matching ErrInvalidArgument", err)
	}
	if a := api.Arrivals(); a != 2 {
		t.Errorf("%d API arrivals, want the 2 of the first download", a)
	}
}

// A meta that describes another export than the one asked for, or none,
// is a *DecodeError, and nothing is downloaded.
func TestDownloadExportToMetaOfAnotherExport(t *testing.T) {
	t.Parallel()
	data := dlData(100)
	for _, tc := range []struct{ asked, metaID string }{
		{"2026-06-10/14", "2026-06-10/15"},
		{"2026-06-10/14", "../../account/me"},
		{"latest", "latest"},
		{"latest", "not an id"},
		{"2026-06-10", "2026-06-10/3"},
	} {
		t.Run(tc.asked+" gets "+tc.metaID, func(t *testing.T) {
			t.Parallel()
			storage := dlStorage(t, false, data)
			api := newFXServer(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/meta") {
					w.Header().Set("Location", dlPresigned(storage.URL))
					w.WriteHeader(http.StatusTemporaryRedirect)
					return
				}
				fxJSON(w, 200, fmt.Sprintf(`{"stream":"proxies","kind":"hourly","id":%q,"format":"parquet","date":1781049600,`+
					`"created_at":1781103600,"size":%d,"rows":1,"checksum":%q,"schema":{"fields":[]}}`, tc.metaID, len(data), dlSHA(data)))
			})
			c := newClient(t, api.Base)
			_, err := c.DownloadExportTo(context.Background(), synthient.FeedProxies, tc.asked, io.Discard, nil)
			var de *synthient.DecodeError
			if !errors.As(err, &de) || errors.Is(err, synthient.ErrInvalidArgument) {
				t.Errorf("err = %v (%T), want a *DecodeError", err, err)
			}
			if a, s := api.Arrivals(), storage.Arrivals(); a != 1 || s != 0 {
				t.Errorf("arrivals: API %d, storage %d; want the meta request alone", a, s)
			}
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
		api := newRawServer(t, func(c *rawConn) {
			if _, _, _, err := c.ReadRequest(); err == nil {
				_, _ = io.WriteString(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: "+dlPresigned("http://storage.test")+"\x01\r\nContent-Length: 0\r\n\r\n")
			}
		})
		logger, logs := newLogger()
		c := newClient(t, api.URL, synthient.WithLogger(logger))
		_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		api.Close()
		if !errors.Is(err, synthient.ErrMalformedResponse) {
			t.Errorf("err = %v, want one matching ErrMalformedResponse", err)
		}
		if n := api.Arrivals(); n != 1 {
			t.Errorf("%d arrivals, want 1: the answer would be the same again", n)
		}
		dlNoSecret(t, err, logs)
	})
	t.Run("storage that echoes the request", func(t *testing.T) {
		t.Parallel()
		storage := newRawServer(t, func(c *rawConn) {
			if req, _, _, err := c.ReadRequest(); err == nil {
				_, _ = io.WriteString(c, req.RequestURI+"\r\n\r\n")
			}
		})
		api := dlRedirectAPI(t, false, http.StatusTemporaryRedirect, dlPresigned("http://"+storage.Addr))
		logger, logs := newLogger()
		c := newClient(t, api.Base, synthient.WithLogger(logger))
		_, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-10/14", io.Discard)
		var ce *synthient.ConnectionError
		if !errors.As(err, &ce) || ce.NotSent {
			t.Errorf("err = %v (%T), want a *ConnectionError with NotSent false", err, err)
		}
		dlNoSecret(t, err, logs)
	})
}
