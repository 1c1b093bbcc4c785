package synthient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/synthient-go/synthient/internal/download"
	"github.com/synthient-go/synthient/internal/redact"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/retry/retryhttp"
)

// The sentinels of a download that arrived but is not the file. Each is
// matched (errors.Is) by an *Error whose StopReason is retry.NotRetryable
// and whose text gives the expected and received byte counts or digests,
// never a URL.
var (
	// ErrChecksumMismatch is matched by the error of a verified download
	// whose bytes do not hash to the checksum of its meta.
	ErrChecksumMismatch = errors.New("checksum mismatch")
	// ErrSizeMismatch is matched by the error of a download whose byte
	// count is not the expected size: fewer bytes, more bytes (the copy
	// stops at the expected size), a Content-Length that differs from the
	// meta's size, or a Content-Length of 0 (an export is never empty).
	// When the connection ended before the Content-Length, the error is a
	// *ConnectionError that matches ErrSizeMismatch too.
	ErrSizeMismatch = errors.New("size mismatch")
	// ErrSizeUnknown is matched by the error of a DownloadExport whose
	// answer had no Content-Length (a chunked body, or one ended by
	// closing the connection): every byte was copied to the writer, but
	// nothing confirms that the file is whole.
	ErrSizeUnknown = errors.New("size could not be confirmed")
)

// DownloadParams are the options of DownloadExportTo and
// DownloadExportFile. The zero value writes the bytes as they come,
// without a checksum or progress, and never replaces a file.
type DownloadParams struct {
	// Overwrite allows DownloadExportFile to replace an existing regular
	// file at the path. DownloadExportTo ignores it.
	Overwrite bool
	// Verify checks the SHA-256 of the bytes, computed while they stream,
	// against ExportMeta.Checksum; a mismatch is an error matching
	// ErrChecksumMismatch, and DownloadExportFile then leaves no file.
	Verify bool
	// Progress, if set, is called on the caller's goroutine after each
	// write with the bytes written so far and the expected total
	// (ExportMeta.Size); done never exceeds total.
	Progress func(done, total int64)
}

// DownloadExport streams one export file to w and returns the number of
// bytes written. id is as for ExportMeta; w must not be nil.
//
// The API answers with a 307 to a presigned URL on the storage host; the
// client follows exactly that one redirect (a 307 or 308 from the API
// origin), sending the storage host no API key, Authorization or cookie.
// Any other redirect is an *Error, "a redirect it cannot follow", that is
// neither followed nor sent again and holds no URL: a 301, 302 or 303, a
// redirect from storage, one from https to http, one without a host or
// whose Location does not parse, and one whose Location holds user info
// (net/http would send it to storage as an Authorization header). The API
// leg follows the
// standard retry class; the storage leg, and any failure while reading,
// are never retried. An error status from storage is an *APIError in
// which every value of the presigned query is replaced by "[REDACTED]"
// (S3 echoes the string it signed). The presigned URL never appears in an
// error or a log line.
//
// A download is whole or an error. Both requests ask for
// "Accept-Encoding: identity", and a Content-Encoding is never decoded:
// the bytes are written as they arrive. The storage host must answer 200
// (a 206 or any other 2xx is an *Error) with a Content-Length, and send
// exactly that many bytes: a Content-Length of 0 or a connection that
// ends early (a *ConnectionError) is an error; an answer without a
// Content-Length is copied to w and then gives an error matching
// ErrSizeUnknown, since nothing confirms it is whole. The same holds when
// the API answers 200 with the bytes itself. After an error, w may hold
// part of the file. DownloadExportTo and DownloadExportFile check the
// bytes against the meta.
//
// Memory use is constant, whatever the file's size. DownloadExport is
// safe for concurrent use; w is written from the calling goroutine only.
func (c *Client) DownloadExport(ctx context.Context, feed Feed, id string, w io.Writer) (_ int64, err error) {
	ctx, call := c.startCall(ctx, "DownloadExport", retry.Standard)
	defer call.end(&err)
	if w == nil {
		return 0, invalid("DownloadExport: nil writer")
	}
	n, _, err := c.download(ctx, meta{op: "DownloadExport"}, feed, id, w, -1)
	return n, err
}

// DownloadExportTo downloads one export to w and returns its meta. id is
// as for ExportMeta; "latest" is resolved through the meta first, so that
// the bytes and the meta describe the same snapshot. w must not be nil; p
// may be nil and is not modified (Overwrite does not apply).
//
// A success wrote exactly ExportMeta.Size bytes to w, and no call writes
// more: a storage answer that announces another size writes nothing; one
// that ends early, or sends more (the copy reads at most Size+1 bytes and
// writes at most Size), gives an error matching ErrSizeMismatch. With
// p.Verify the SHA-256 is computed while the bytes stream; on a mismatch
// the error matches ErrChecksumMismatch, and the bytes are already in w:
// a caller that must not use unverified bytes writes to a file
// (DownloadExportFile) or a buffer it can drop. A meta without a positive
// size, or without a SHA-256 when p.Verify is set, is a *DecodeError and
// nothing is downloaded. Otherwise it behaves as ExportMeta followed by
// DownloadExport. It is safe for concurrent use; w and p.Progress are
// used from the calling goroutine only.
func (c *Client) DownloadExportTo(ctx context.Context, feed Feed, id string, w io.Writer, p *DownloadParams) (_ *ExportMeta, err error) {
	const name = "DownloadExportTo"
	ctx, call := c.startCall(ctx, name, retry.Standard)
	defer call.end(&err)
	if w == nil {
		return nil, invalid("%s: nil writer", name)
	}
	if err := checkExport(name, feed, id); err != nil {
		return nil, err
	}
	em, _, err := c.downloadTo(ctx, name, feed, id, w, paramsOf(p))
	return em, err
}

// DownloadExportFile downloads one export to the file at path and returns
// its meta. id and p are as for DownloadExportTo, which it builds on.
//
// The bytes go to a new temporary file in path's directory, named
// path + "." + random digits + ".part" (such as "out.parquet.3904817266.part";
// ".synthient-<digits>.part" when path's name is too long to take the
// suffix), created exclusively: an existing name, a symbolic link
// included, is never opened, so no link is followed and no two downloads
// share one. It
// is synced and moved to path when the whole file arrived (and, with
// p.Verify, matched the checksum), and removed on any failure: path never
// holds a partial or unverified file, and two downloads to one path each
// end with a whole file or an error, never mixed bytes.
//
// Before anything is sent: a path that is a symbolic link (whatever it
// points to: /dev/stdout is one), a directory, or anything else that is
// not a regular file (a device, a FIFO, a socket) is an error matching
// ErrInvalidArgument, also with p.Overwrite; another existing path is an
// error matching fs.ErrExist, unless p.Overwrite is set; a path that
// cannot be looked at (too long, below a file, without permission) and a
// temporary file that cannot be created are an *Error wrapping the
// *fs.PathError. Without
// p.Overwrite a file that appears at path during the download is kept and
// the call fails with an *Error matching fs.ErrExist; with it, path is
// replaced by a rename. It is safe for concurrent use, also by calls that
// write to the same path.
func (c *Client) DownloadExportFile(ctx context.Context, feed Feed, id, path string, p *DownloadParams) (_ *ExportMeta, err error) {
	const name = "DownloadExportFile"
	ctx, call := c.startCall(ctx, name, retry.Standard)
	defer call.end(&err)
	params := paramsOf(p)
	// 1. Refuse what cannot be done before anything is sent.
	if err := checkFileDownload(name, feed, id, path, params.Overwrite); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, closedError(name)
	}
	// 2. Create the temporary file, also before anything is sent: a path
	// that cannot be written costs no request. Until step 4 succeeds it is
	// removed on the way out, also after a panic in p.Progress or below.
	f, err := download.CreatePart(path)
	if err != nil {
		return nil, opError(meta{op: name}, "creating the file", err)
	}
	committed := false
	defer func() {
		if !committed {
			// The call failed already: its error says why, not these.
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	// 3. Download into it; it is synced and closed.
	em, m, err := c.downloadToFile(ctx, name, feed, id, f, params)
	if err != nil {
		return nil, err
	}
	// 4. Move it to path.
	if err := commit(m, f.Name(), path, params.Overwrite); err != nil {
		return nil, err
	}
	committed = true
	return em, nil
}

// checkFileDownload validates the arguments of DownloadExportFile and the
// path it is to write (see checkTarget).
func checkFileDownload(name string, feed Feed, id, path string, overwrite bool) error {
	if path == "" {
		return invalid("%s: empty path", name)
	}
	if err := checkExport(name, feed, id); err != nil {
		return err
	}
	return checkTarget(name, path, overwrite)
}

func paramsOf(p *DownloadParams) DownloadParams {
	if p == nil {
		return DownloadParams{}
	}
	return *p
}

// checkExport validates a feed and an export id.
func checkExport(name string, feed Feed, id string) error {
	if _, err := checkFeed(name, feed); err != nil {
		return err
	}
	_, err := exportPath(name, id)
	return err
}

// downloadTo resolves the meta of id, then downloads exactly its size to
// w, hashing and reporting progress as params ask. m describes the call.
func (c *Client) downloadTo(ctx context.Context, name string, feed Feed, id string, w io.Writer, params DownloadParams) (em *ExportMeta, m meta, err error) {
	em, m, err = c.exportMeta(ctx, meta{op: name}, feed, id)
	if err != nil {
		return nil, m, err
	}
	if err := checkMeta(m, id, em, params.Verify); err != nil {
		return nil, m, err
	}
	cw := &download.Checked{W: w, Total: em.Size, Progress: params.Progress}
	if params.Verify {
		cw.Hash = sha256.New()
	}
	_, m, err = c.download(ctx, m, feed, em.ID, cw, em.Size)
	if err == nil {
		err = verify(m, cw, em)
	}
	if err != nil {
		return nil, m, err
	}
	return em, m, nil
}

// checkMeta refuses a meta that cannot be downloaded against: one that is
// not of the export id asked for (for "latest", of no concrete export), or
// has no size, or no SHA-256 to verify against.
func checkMeta(m meta, id string, em *ExportMeta, verify bool) error {
	var err error
	switch {
	case !sameExport(id, em.ID):
		err = fmt.Errorf("meta is of export %q, not %q", em.ID, id)
	case em.Size <= 0:
		err = fmt.Errorf("meta size %d is not the size of an export", em.Size)
	case verify && !isSHA256Hex(em.Checksum):
		err = fmt.Errorf("meta checksum %q is not a SHA-256", em.Checksum)
	default:
		return nil
	}
	return decodeError(m, http.StatusOK, err)
}

// sameExport reports whether got, the id of a meta, names the export the
// caller asked for: the same one, or for "latest" a concrete one.
func sameExport(asked, got string) bool {
	gotPath, err := exportPath("", got)
	if err != nil || gotPath == "latest" {
		return false
	}
	if asked == "latest" {
		return true
	}
	askedPath, err := exportPath("", asked)
	return err == nil && askedPath == gotPath
}

// downloadToFile downloads into f, then syncs and closes it.
func (c *Client) downloadToFile(ctx context.Context, name string, feed Feed, id string, f *os.File, params DownloadParams) (*ExportMeta, meta, error) {
	em, m, err := c.downloadTo(ctx, name, feed, id, f, params)
	if err == nil {
		if serr := f.Sync(); serr != nil {
			err = notRetryable(m, "syncing the file", serr)
		}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = notRetryable(m, "closing the file", cerr)
	}
	if err != nil {
		return nil, m, err
	}
	return em, m, nil
}

// checkTarget refuses a path DownloadExportFile must not write: a name
// longer than file systems take (it could not be renamed to), a symbolic
// link (its target may be anything: /dev/stdout is a link to
// /proc/self/fd/1, and the rename would replace the link, as root for
// every process), a directory or anything else that is not a regular
// file, a path os.Lstat fails on other than with fs.ErrNotExist; and,
// without overwrite, anything at all.
func checkTarget(name, path string, overwrite bool) error {
	if len(filepath.Base(path)) > download.MaxNameLen {
		return invalid("%s: the name of %s is longer than %d bytes", name, path, download.MaxNameLen)
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Nothing there: creating the temporary file in the same
		// directory says whether one can be made.
		return nil
	case err != nil:
		// Not to be looked at (too long a path, a parent that is not a
		// directory, no permission): not to be written either, even when
		// the temporary file's shorter name could be made.
		return opError(meta{op: name}, "examining the path", err)
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return invalid("%s: %s is a directory", name, path)
	case !mode.IsRegular():
		return invalid("%s: %s is %s, not a regular file", name, path, download.FileKind(mode))
	case !overwrite:
		return fmt.Errorf("synthient: %s: %s: %w", name, path, fs.ErrExist)
	}
	return nil
}

// commit moves the finished temporary file part to path (see
// internal/download). m describes the call, for its errors.
func commit(m meta, part, path string, overwrite bool) error {
	switch err := download.Commit(part, path, overwrite); {
	case errors.Is(err, download.ErrAppeared):
		return notRetryable(m, path+" appeared during the download", fs.ErrExist)
	case err != nil:
		return notRetryable(m, "renaming the file", err)
	}
	return nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// verify compares the hash of the bytes w passed on with em's checksum;
// nil when they were not hashed. m describes the download.
func verify(m meta, w *download.Checked, em *ExportMeta) error {
	if w.Hash == nil {
		return nil
	}
	got := hex.EncodeToString(w.Hash.Sum(nil))
	if strings.EqualFold(got, em.Checksum) {
		return nil
	}
	return downloadError(m, ErrChecksumMismatch, "SHA-256 of %d bytes is %s, meta says %s (%d bytes)",
		w.Done, got, strings.ToLower(em.Checksum), em.Size)
}

// download sends the API leg of a download of feed's export id, follows
// its redirect and copies the file to w. size is the number of bytes
// expected; < 0 when only the answer's Content-Length can say. prior
// names the call and counts the attempts of its earlier legs (the meta of
// DownloadExportTo); the returned m describes the whole call, for errors
// found after it.
func (c *Client) download(ctx context.Context, prior meta, feed Feed, id string, w io.Writer, size int64) (n int64, m meta, err error) {
	op, err := downloadOp(prior, feed, id)
	if err != nil {
		return 0, m, err
	}
	// The API leg: the file itself, or a redirect to it.
	resp, m, err := c.do(ctx, op)
	if err != nil {
		return 0, m, err
	}
	defer c.closeIdleIfClosed() // once both legs are done with
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		n, err = copyExact(ctx, m, resp, w, size)
		c.observed(ctx).addBytes(n)
		return n, m, err
	}
	// The storage leg, where the redirect points.
	loc, err := storageURL(resp)
	discard(resp)
	if err != nil {
		return 0, m, downloadError(m, nil, "%s", err.Error())
	}
	m.attempts++ // the storage request counts as an attempt of the call
	n, err = c.fetchStorage(ctx, m, loc, w, size)
	c.observed(ctx).addBytes(n)
	return n, m, err
}

// downloadOp returns the API leg of a download of feed's export id, as
// the operation prior names, after the attempts it counts.
func downloadOp(prior meta, feed Feed, id string) (*operation, error) {
	seg, err := checkFeed(prior.op, feed)
	if err != nil {
		return nil, err
	}
	idPath, err := exportPath(prior.op, id)
	if err != nil {
		return nil, err
	}
	return &operation{
		name:     prior.op,
		prior:    prior.attempts,
		method:   http.MethodGet,
		route:    "/feeds/{feed}/export/{id}",
		path:     "/feeds/" + seg + "/export/" + idPath,
		class:    retry.Standard,
		accept:   mediaOctets,
		redirect: true,
		raw:      true,
		bucket:   downloadBucket,
	}, nil
}

// storageURL checks the API's redirect and returns where it points. Its
// errors hold no part of the Location.
func storageURL(resp *http.Response) (*url.URL, error) {
	if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect {
		return nil, fmt.Errorf("a redirect it cannot follow (status %d)", resp.StatusCode)
	}
	raw := location(resp.Header)
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
	case loc.User != nil:
		return nil, errors.New("a redirect it cannot follow (user info in Location)")
	}
	return loc, nil
}

// fetchStorage downloads the presigned URL loc into w, once: the storage
// leg is never retried.
func (c *Client) fetchStorage(ctx context.Context, m meta, loc *url.URL, w io.Writer, size int64) (int64, error) {
	resp, err := c.sendStorage(ctx, m, loc)
	if err != nil {
		return 0, err
	}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		discard(resp)
		return 0, downloadError(m, nil, "a redirect it cannot follow (status %d from storage)", resp.StatusCode)
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return 0, storageError(resp, m, loc.RawQuery)
	}
	return copyExact(ctx, m, resp, w, size)
}

// identity is the Accept-Encoding of both legs of a download: net/http
// decodes a body only when it asked for gzip itself.
var identity = []string{"identity"}

// sendStorage sends the storage request and returns its answer, body open.
func (c *Client) sendStorage(ctx context.Context, m meta, loc *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, opError(m, "building the storage request", nil)
	}
	// Only these headers: no API key, Authorization or cookie.
	req.Header["User-Agent"] = c.userAgent
	req.Header["Accept"] = mediaOctets
	req.Header["Accept-Encoding"] = identity
	retryhttp.SetNoReplayBody(req)
	oc := c.observed(ctx)
	req, reqCtx := oc.startStorage(req, loc)
	resp, err := c.hc.Do(req)
	if err == nil {
		oc.endStorage(reqCtx, m.attempts, resp, retry.Failure{}, nil) //nolint:contextcheck // reqCtx is req's context, derived from ctx by startStorage
		return resp, nil
	}
	f, cause := transportCause(err)
	oc.endStorage(reqCtx, m.attempts, nil, f, cause) //nolint:contextcheck // as above
	// The API leg was answered, so the call reached the server whatever
	// became of this request: NotSent false, never sent again, worded
	// after this request's own fate.
	return nil, lateError(ctx, m, scrub(cause, loc.RawQuery), f.NotSent)
}

// scrub returns err, or when its text holds a part of the presigned query
// rawQuery, a plain error of its redacted text: no error of a download
// may quote the presigned URL, whatever the storage host made net/http
// say.
func scrub(err error, rawQuery string) error {
	msg := err.Error()
	if redacted := redact.NewQuery(rawQuery).Redact(msg); redacted != msg {
		return errors.New(redacted)
	}
	return err
}

// storageError is the *APIError of an error status from storage, with the
// presigned query redacted from its text.
func storageError(resp *http.Response, m meta, rawQuery string) *APIError {
	a := readAnswer(resp)
	redactQuery(&a, rawQuery)
	var ra *time.Duration
	if d, ok := retry.ParseRetryAfter(resp.Header["Retry-After"], resp.Header.Get("Date"), time.Now()); ok {
		ra = &d
	}
	m.reason = retry.NotRetryable
	return apiError(m, a, ra)
}

// copyExact copies the body of a 2xx answer to w, checks that exactly the
// expected number of bytes arrived, and closes the body. size is that
// number, or < 0 for the answer's Content-Length.
func copyExact(ctx context.Context, m meta, resp *http.Response, w io.Writer, size int64) (int64, error) {
	defer resp.Body.Close() //nolint:errcheck // read to the end or given up: its Close says nothing of the copy
	want, err := expectedSize(m, resp, size)
	if err != nil {
		return 0, err
	}
	n, err := copyCapped(ctx, m, resp.Body, w, want)
	if err != nil {
		return n, err
	}
	switch {
	case want < 0:
		return n, downloadError(m, ErrSizeUnknown, "got %d bytes without a Content-Length, nothing to check them against", n)
	case n != want:
		return n, downloadError(m, ErrSizeMismatch, "got %d bytes, expected %d", n, want)
	}
	return n, nil
}

// expectedSize returns the byte count a 2xx answer must have: size when
// known, which a Content-Length must then agree with, else the
// Content-Length (-1 when there is none). Only a 200 is a download.
func expectedSize(m meta, resp *http.Response, size int64) (int64, error) {
	cl := resp.ContentLength
	switch {
	case resp.StatusCode != http.StatusOK:
		return 0, downloadError(m, nil, "the download answered %d %s, not 200 OK", resp.StatusCode, http.StatusText(resp.StatusCode))
	case size >= 0 && cl >= 0 && cl != size:
		return 0, downloadError(m, ErrSizeMismatch, "the download announces %d bytes, expected %d (the meta's size)", cl, size)
	case size >= 0:
		return size, nil
	case cl == 0:
		return 0, downloadError(m, ErrSizeMismatch, "the download announces 0 bytes, expected a file (an export is never empty)")
	}
	return cl, nil
}

// copyCapped copies body to w. With want >= 0 it reads at most want+1
// bytes and writes at most want: more is an error matching
// ErrSizeMismatch. A failure while reading is a *ConnectionError or
// *TimeoutError, never retried; a failure to write is an *Error wrapping
// the writer's error.
func copyCapped(ctx context.Context, m meta, body io.Reader, w io.Writer, want int64) (int64, error) {
	n, over, readErr, writeErr := download.Copy(w, body, want)
	switch {
	case over:
		return n, downloadError(m, ErrSizeMismatch, "got more than the expected %d bytes", want)
	case readErr != nil && want >= 0 && errors.Is(readErr, io.ErrUnexpectedEOF):
		// The connection ended before the Content-Length: a
		// *ConnectionError, and a short download too.
		return n, readError(ctx, m, fmt.Errorf("%w: got %d bytes, expected %d: %w", ErrSizeMismatch, n, want, readErr))
	case readErr != nil:
		return n, readError(ctx, m, readErr)
	case writeErr != nil:
		return n, opError(m, "writing the download", writeErr)
	}
	return n, nil
}

// redactQuery replaces the presigned query rawQuery in every text of a
// (see internal/redact).
func redactQuery(a *answer, rawQuery string) {
	r := redact.NewQuery(rawQuery)
	if r == nil {
		return
	}
	e := &a.problem
	e.Type, e.Title, e.Detail, a.requestID = r.Redact(e.Type), r.Redact(e.Title), r.Redact(e.Detail), r.Redact(a.requestID)
	if len(e.Errors) == 0 {
		return
	}
	errs := make(map[string][]string, len(e.Errors))
	for field, msgs := range e.Errors {
		k := r.Redact(field)
		for _, msg := range msgs {
			errs[k] = append(errs[k], r.Redact(msg))
		}
	}
	e.Errors = errs
}
