package synthient_test

import (
	"bytes"
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
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/synthient-go/synthient"
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

// dlStorage serves data with a Content-Length and an X-Storage header, in
// four flushed pieces.
func dlStorage(t *testing.T, tlsOn bool, data []byte) *fxServer {
	return newFXServer(t, tlsOn, func(_ int, w http.ResponseWriter, _ *http.Request) {
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
	})
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
// storageURL. A nil storageURL function is an error if a download comes.
func dlFileAPI(t *testing.T, data []byte, checksum string, storageURL func() string) *fxServer {
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
			fxJSON(w, 200, fmt.Sprintf(`{"stream":"proxies","kind":"hourly","id":%q,"format":"parquet","date":1781049600,%s`+
				`"created_at":1781103600,"size":%d,"rows":12,"checksum":%q,"schema":{"fields":[{"name":"ip","type":"string"}]}}`,
				id, hour, len(data), checksum))
			return
		}
		w.Header().Set("Location", storageURL())
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
		// The bytes so far are in path.part; path does not exist yet.
		if st, err := os.Stat(path + ".part"); err != nil {
			problems = append(problems, fmt.Sprintf("at %d bytes: %s.part: %v", done, path, err))
		} else if st.Size() != done {
			problems = append(problems, fmt.Sprintf("at %d bytes: .part holds %d", done, st.Size()))
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
	if got, _ := os.ReadFile(path); string(got) != "theirs" {
		t.Errorf("the other writer's file now holds %d bytes, want it untouched", len(got))
	}
	if names := dlDirEntries(t, dir); !reflect.DeepEqual(names, []string{"out.parquet"}) {
		t.Errorf("directory holds %v", names)
	}
}

func TestDownloadExportFileVerify(t *testing.T) {
	data := dlData(100 << 10)
	t.Run("right checksum", func(t *testing.T) {
		storage := dlStorage(t, false, data)
		api := dlFileAPI(t, data, dlSHA(data), func() string { return dlPresigned(storage.URL) })
		c := newClient(t, api.Base)
		path := filepath.Join(t.TempDir(), "out")
		if _, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-10/14", path,
			&synthient.DownloadParams{Verify: true}); err != nil {
			t.Fatalf("DownloadExportFile: %v", err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Errorf("file holds %d bytes", len(got))
		}
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
