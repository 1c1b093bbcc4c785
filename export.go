package synthient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"iter"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/synthient-go/synthient/retry"
)

// ErrChecksumMismatch is matched (errors.Is) by the error of a verified
// download whose bytes do not hash to the checksum of its meta.
var ErrChecksumMismatch = errors.New("checksum mismatch")

// Export is one Parquet snapshot of a feed, as listed by ListExports.
type Export struct {
	// ID is "YYYY-MM-DD" for a daily snapshot and "YYYY-MM-DD/HH" for an
	// hourly one; pass it to ExportMeta and DownloadExport.
	ID string `json:"id"`
	// Kind is "daily" or "hourly".
	Kind string `json:"kind"`
	// Date is the snapshot's day, "YYYY-MM-DD".
	Date string `json:"date"`
	// Hour is the UTC hour of an hourly snapshot; nil for a daily one.
	Hour      *int  `json:"hour,omitempty"`
	SizeBytes int64 `json:"size_bytes"`
	RowCount  int64 `json:"row_count"`
	// Checksum is the lowercase hex SHA-256 of the file.
	Checksum string `json:"checksum"`
	// CreatedAt is in Unix seconds.
	CreatedAt int64 `json:"created_at"`
	// DownloadPath is the path of the download endpoint of this snapshot.
	DownloadPath string `json:"download_path"`
}

// ExportPage is one page of a feed's exports, newest first.
type ExportPage struct {
	// Stream is the feed's public name.
	Stream  string   `json:"stream"`
	Exports []Export `json:"feeds"`
	// NextCursor fetches the next page; empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// ExportMeta describes one export file.
type ExportMeta struct {
	Stream string `json:"stream"`
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	// Date is the snapshot's day in Unix seconds (a string in listings).
	Date int64 `json:"date"`
	// Hour is the UTC hour of an hourly snapshot; nil for a daily one.
	Hour *int `json:"hour,omitempty"`
	// Format is "parquet".
	Format    string `json:"format"`
	CreatedAt int64  `json:"created_at"` // Unix seconds
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
	Rows int64 `json:"rows"`
	// Checksum is the lowercase hex SHA-256 of the file.
	Checksum string       `json:"checksum"`
	Schema   ExportSchema `json:"schema"`
}

// ExportSchema lists the Parquet columns of an export.
type ExportSchema struct {
	Fields []SchemaField `json:"fields"`
}

// SchemaField is one Parquet column.
type SchemaField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// ListExportsParams are the options of ListExports and AllExports.
type ListExportsParams struct {
	// Limit is the page size, 1 to 500; zero means the API's default (100).
	Limit int
	// Cursor is a previous page's NextCursor; empty for the first page.
	Cursor string
}

// DownloadParams are the options of DownloadExportFile.
type DownloadParams struct {
	// Overwrite allows replacing an existing file at the path.
	Overwrite bool
	// Verify checks the SHA-256 of the bytes, computed while they stream,
	// against ExportMeta.Checksum; a mismatch is an error matching
	// ErrChecksumMismatch and leaves no file.
	Verify bool
	// Progress, if set, is called as bytes arrive with the bytes written so
	// far and the expected total (ExportMeta.Size).
	Progress func(done, total int64)
}

func exportsQuery(op string, p *ListExportsParams) (url.Values, error) {
	if p == nil {
		return nil, nil
	}
	q := url.Values{}
	switch {
	case p.Limit < 0 || p.Limit > 500:
		return nil, invalid("%s: limit %d is outside 1 to 500", op, p.Limit)
	case p.Limit > 0:
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q, nil
}

// ListExports returns one page of feed's exports, newest first. p may be
// nil. An unknown feed or a Limit outside 0 to 500 gives an error matching
// ErrInvalidArgument. The request follows the standard retry class.
func (c *Client) ListExports(ctx context.Context, feed Feed, p *ListExportsParams) (*ExportPage, error) {
	return c.listExports(ctx, "ListExports", feed, p)
}

func (c *Client) listExports(ctx context.Context, name string, feed Feed, p *ListExportsParams) (*ExportPage, error) {
	seg, err := checkFeed(name, feed)
	if err != nil {
		return nil, err
	}
	q, err := exportsQuery(name, p)
	if err != nil {
		return nil, err
	}
	op := &operation{
		name:   name,
		method: http.MethodGet,
		route:  "/feeds/{feed}/export",
		path:   "/feeds/" + seg + "/export",
		query:  q,
		class:  retry.Standard,
		accept: "application/json",
	}
	var page ExportPage
	m, err := c.getJSON(ctx, op, &page)
	if err != nil {
		return nil, err
	}
	if page.Exports == nil && page.Stream == "" {
		return nil, &DecodeError{Status: http.StatusOK, Err: errors.New("response is not an export listing"), meta: m}
	}
	return &page, nil
}

// AllExports returns every export of feed, page after page, newest first.
// It is lazy: no request is sent before the loop starts, and breaking out
// of the loop stops fetching. p may be nil; it is not modified. Each page
// follows the standard retry class.
//
// A failing page yields its error once and ends the sequence, as does a
// next cursor that repeats one already requested (an *Error).
func (c *Client) AllExports(ctx context.Context, feed Feed, p *ListExportsParams) iter.Seq2[Export, error] {
	var first ListExportsParams
	if p != nil {
		first = *p
	}
	return func(yield func(Export, error) bool) {
		params := first // each loop over the sequence starts again
		seen := map[string]bool{params.Cursor: true}
		for {
			page, err := c.listExports(ctx, "AllExports", feed, &params)
			if err != nil {
				yield(Export{}, err)
				return
			}
			for _, e := range page.Exports {
				if !yield(e, nil) {
					return
				}
			}
			next := page.NextCursor
			if next == "" {
				return
			}
			if seen[next] {
				yield(Export{}, &Error{Op: "AllExports", Message: "the export listing repeated a cursor"})
				return
			}
			seen[next] = true
			params.Cursor = next
		}
	}
}

// exportPath validates an export id ("latest", "YYYY-MM-DD" or
// "YYYY-MM-DD/HH") and returns its escaped path below the feed.
func exportPath(op, id string) (string, error) {
	if id == "latest" {
		return "latest", nil
	}
	date, hour, hourly := strings.Cut(id, "/")
	if len(date) != 10 {
		return "", invalid("%s: export id %q is not latest, YYYY-MM-DD or YYYY-MM-DD/HH", op, id)
	}
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return "", invalid("%s: export id %q does not hold a real date", op, id)
	}
	if !hourly {
		return date, nil
	}
	h, err := strconv.Atoi(hour)
	if err != nil || len(hour) < 1 || len(hour) > 2 || hour[0] == '+' || hour[0] == '-' || h < 0 || h > 23 {
		return "", invalid("%s: export id %q has an hour outside 0 to 23", op, id)
	}
	return date + "/" + strconv.Itoa(h), nil
}

// ExportMeta returns the description of one export: its size, row count,
// SHA-256 and columns. id is "latest", "YYYY-MM-DD" or "YYYY-MM-DD/HH"; an
// invalid id or unknown feed gives an error matching ErrInvalidArgument.
// The request follows the standard retry class.
func (c *Client) ExportMeta(ctx context.Context, feed Feed, id string) (*ExportMeta, error) {
	seg, err := checkFeed("ExportMeta", feed)
	if err != nil {
		return nil, err
	}
	idPath, err := exportPath("ExportMeta", id)
	if err != nil {
		return nil, err
	}
	op := &operation{
		name:   "ExportMeta",
		method: http.MethodGet,
		route:  "/feeds/{feed}/export/{id}/meta",
		path:   "/feeds/" + seg + "/export/" + idPath + "/meta",
		class:  retry.Standard,
		accept: "application/json",
	}
	var meta ExportMeta
	m, err := c.getJSON(ctx, op, &meta)
	if err != nil {
		return nil, err
	}
	if meta.Checksum == "" && meta.Size == 0 {
		return nil, &DecodeError{Status: http.StatusOK, Err: errors.New("response is not export meta"), meta: m}
	}
	return &meta, nil
}

// DownloadExport streams one export file to w and returns the number of
// bytes written. id is as for ExportMeta.
//
// The API answers with a 307 to a presigned URL on the storage host; the
// client follows exactly that one redirect, sending the storage host no API
// key, Authorization or cookie. The API leg follows the standard retry
// class; the storage leg, and any failure while reading, are never retried.
// A redirect from anywhere else, a second redirect, or one from https to
// http gives an *Error. An error status from storage is an *APIError. The
// presigned URL never appears in an error or a log line. Memory use is
// constant, whatever the file's size.
func (c *Client) DownloadExport(ctx context.Context, feed Feed, id string, w io.Writer) (int64, error) {
	if w == nil {
		return 0, invalid("DownloadExport: nil writer")
	}
	return c.download(ctx, "DownloadExport", feed, id, w)
}

func (c *Client) download(ctx context.Context, name string, feed Feed, id string, w io.Writer) (int64, error) {
	seg, err := checkFeed(name, feed)
	if err != nil {
		return 0, err
	}
	idPath, err := exportPath(name, id)
	if err != nil {
		return 0, err
	}
	op := &operation{
		name:     name,
		method:   http.MethodGet,
		route:    "/feeds/{feed}/export/{id}",
		path:     "/feeds/" + seg + "/export/" + idPath,
		class:    retry.Standard,
		accept:   "application/octet-stream",
		redirect: true,
	}
	resp, m, err := c.do(ctx, op)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// The API served the bytes itself.
		return copyBody(ctx, m, resp, w)
	}
	loc, err := c.storageURL(resp)
	discard(resp)
	if err != nil {
		return 0, &Error{Op: name, Attempts: m.attempts, StopReason: retry.NotRetryable, Message: err.Error()}
	}
	return c.fetchStorage(ctx, m, loc, w)
}

// storageURL checks the API's redirect and returns where it points.
func (c *Client) storageURL(resp *http.Response) (*url.URL, error) {
	if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect {
		return nil, fmt.Errorf("a redirect it cannot follow (status %d)", resp.StatusCode)
	}
	raw := resp.Header.Get("Location")
	if raw == "" {
		return nil, errors.New("a redirect it cannot follow (no Location)")
	}
	loc, err := resp.Request.URL.Parse(raw)
	if err != nil {
		return nil, errors.New("a redirect it cannot follow (Location does not parse)")
	}
	switch {
	case loc.Scheme != "https" && loc.Scheme != "http":
		return nil, errors.New("a redirect it cannot follow (not http or https)")
	case resp.Request.URL.Scheme == "https" && loc.Scheme == "http":
		return nil, errors.New("a redirect it cannot follow (https to http)")
	case loc.Host == "":
		return nil, errors.New("a redirect it cannot follow (no host)")
	}
	return loc, nil
}

// fetchStorage downloads the presigned URL loc into w, once: the storage
// leg is never retried.
func (c *Client) fetchStorage(ctx context.Context, m meta, loc *url.URL, w io.Writer) (int64, error) {
	m.attempts++ // the storage request counts as an attempt of the call
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return 0, &Error{Op: m.op, Attempts: m.attempts, Message: "building the storage request"}
	}
	// Only these headers: no API key, Authorization or cookie.
	req.Header["User-Agent"] = []string{c.userAgent}
	req.Header["Accept"] = []string{"application/octet-stream"}
	retry.SetNoReplayBody(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, &Error{Op: m.op, Attempts: m.attempts, StopReason: retry.ContextDone, Err: ctx.Err()}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL holds the presigned query
		}
		f := retry.ClassifyError(err)
		m.reason = retry.NotRetryable
		if f.Timeout {
			return 0, &TimeoutError{ConnectionError{NotSent: f.NotSent, Err: err, meta: m}}
		}
		return 0, &ConnectionError{NotSent: f.NotSent, Err: err, meta: m}
	}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		discard(resp)
		return 0, &Error{Op: m.op, Attempts: m.attempts, StopReason: retry.NotRetryable,
			Message: fmt.Sprintf("a redirect it cannot follow (status %d from storage)", resp.StatusCode)}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		e := readAPIError(resp)
		if e.RetryAfter == nil {
			if d, ok := retry.ParseRetryAfter(resp.Header["Retry-After"], resp.Header.Get("Date"), time.Now()); ok {
				e.RetryAfter = &d
			}
		}
		m.reason = retry.NotRetryable
		e.meta = m
		return 0, e
	}
	return copyBody(ctx, m, resp, w)
}

// copyBody streams a 2xx body into w and closes it. A failure while
// reading is a *ConnectionError or *TimeoutError, never retried; a failure
// to write is an *Error wrapping the writer's error.
func copyBody(ctx context.Context, m meta, resp *http.Response, w io.Writer) (int64, error) {
	defer resp.Body.Close()
	src := &readErrReader{r: resp.Body}
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	// Hide any ReaderFrom of w (io.Discard's reads 8 KiB at a time): the
	// large buffer means fewer reads of the connection.
	n, err := io.CopyBuffer(struct{ io.Writer }{w}, src, *buf)
	switch {
	case err == nil:
		return n, nil
	case src.err != nil:
		return n, readError(ctx, m, src.err)
	}
	return n, &Error{Op: m.op, Attempts: m.attempts, Message: "writing the download", Err: err}
}

// copyBuffers holds the buffers downloads are copied through.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 256<<10)
	return &b
}}

// readErrReader records the error of the reader it wraps, to tell a
// failed read from a failed write.
type readErrReader struct {
	r   io.Reader
	err error
}

func (r *readErrReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// DownloadExportFile downloads one export to the file at path and returns
// its meta. id is as for ExportMeta; "latest" is resolved through the meta
// first, so the file and the meta describe the same snapshot. p may be nil.
//
// The bytes go to path + ".part", which is synced and renamed to path on
// success and removed on any failure: path never holds a partial file.
// An existing file at path is an error matching fs.ErrExist, and nothing is
// sent, unless p.Overwrite is set; a directory at path is an error matching
// ErrInvalidArgument, and a path.part that cannot be created an *Error
// wrapping the *fs.PathError: in both cases nothing is sent. With p.Verify
// the SHA-256 is computed while the bytes stream and checked against the
// meta's checksum. The retry classes are those of ExportMeta and
// DownloadExport.
func (c *Client) DownloadExportFile(ctx context.Context, feed Feed, id, path string, p *DownloadParams) (*ExportMeta, error) {
	const name = "DownloadExportFile"
	var params DownloadParams
	if p != nil {
		params = *p
	}
	if path == "" {
		return nil, invalid("%s: empty path", name)
	}
	if _, err := checkFeed(name, feed); err != nil {
		return nil, err
	}
	if _, err := exportPath(name, id); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, invalid("%s: %s is a directory", name, path)
	}
	if !params.Overwrite {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("synthient: %s: %s: %w", name, path, fs.ErrExist)
		}
	}
	if c.closed.Load() {
		return nil, &Error{Op: name, Err: ErrClosed}
	}
	// The part file is created before anything is sent, so that a path
	// that cannot be written costs no request.
	part := path + ".part"
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, &Error{Op: name, Message: "creating the file", Err: err}
	}
	em, err := c.ExportMeta(ctx, feed, id)
	if err == nil && params.Verify && !isSHA256Hex(em.Checksum) {
		err = &DecodeError{Status: http.StatusOK, Err: fmt.Errorf("meta checksum %q is not a SHA-256", em.Checksum), meta: meta{op: name}}
	}
	if err != nil {
		f.Close()
		os.Remove(part)
		return nil, err
	}
	fw := &fileWriter{f: f, total: em.Size, progress: params.Progress}
	if params.Verify {
		fw.hash = sha256.New()
	}
	_, err = c.download(ctx, name, feed, em.ID, fw)
	if err == nil && params.Verify {
		if got := hex.EncodeToString(fw.hash.Sum(nil)); !strings.EqualFold(got, em.Checksum) {
			err = &Error{Op: name, Message: fmt.Sprintf("SHA-256 of %d bytes is %s, meta says %s (%d bytes)", fw.done, got, strings.ToLower(em.Checksum), em.Size), Err: ErrChecksumMismatch}
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = &Error{Op: name, Message: "closing the file", Err: cerr}
	}
	if err == nil {
		err = commit(part, path, params.Overwrite)
	}
	if err != nil {
		os.Remove(part)
		return nil, err
	}
	return em, nil
}

// commit moves the finished part file to path: a rename when overwriting,
// otherwise a hard link, which fails rather than replace a file that
// appeared meanwhile.
func commit(part, path string, overwrite bool) error {
	if overwrite {
		if err := os.Rename(part, path); err != nil {
			return &Error{Op: "DownloadExportFile", Message: "renaming the file", Err: err}
		}
		return nil
	}
	if err := os.Link(part, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("synthient: DownloadExportFile: %s: %w", path, fs.ErrExist)
		}
		// No hard links here: check, then rename.
		if _, serr := os.Lstat(path); serr == nil {
			return fmt.Errorf("synthient: DownloadExportFile: %s: %w", path, fs.ErrExist)
		}
		if err := os.Rename(part, path); err != nil {
			return &Error{Op: "DownloadExportFile", Message: "renaming the file", Err: err}
		}
		return nil
	}
	os.Remove(part)
	return nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// fileWriter writes to the part file, hashing and reporting progress as
// the bytes pass.
type fileWriter struct {
	f        *os.File
	hash     hash.Hash
	done     int64
	total    int64
	progress func(done, total int64)
}

func (w *fileWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if w.hash != nil {
		w.hash.Write(p[:n])
	}
	w.done += int64(n)
	if w.progress != nil && n > 0 {
		w.progress(w.done, w.total)
	}
	return n, err
}
