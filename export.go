package synthient

import (
	"context"
	"crypto/sha256"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient/retry"
)

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
func (c *Client) ListExports(ctx context.Context, feed Feed, p *ListExportsParams) (_ *ExportPage, err error) {
	ctx, call := c.startCall(ctx, "ListExports", retry.Standard)
	defer call.end(&err)
	page, _, err := c.listExports(ctx, meta{op: "ListExports"}, feed, p)
	return page, err
}

// listExports sends one listing request as the operation m.op, after the
// earlier pages of the same call that m counts. The returned meta counts
// this request's attempts too, for an error found in the page or a call
// that goes on with more pages.
func (c *Client) listExports(ctx context.Context, m meta, feed Feed, p *ListExportsParams) (*ExportPage, meta, error) {
	seg, err := checkFeed(m.op, feed)
	if err != nil {
		return nil, m, err
	}
	q, err := exportsQuery(m.op, p)
	if err != nil {
		return nil, m, err
	}
	op := &operation{
		name:   m.op,
		prior:  m.attempts,
		method: http.MethodGet,
		route:  "/feeds/{feed}/export",
		path:   "/feeds/" + seg + "/export",
		query:  q,
		class:  retry.Standard,
		accept: mediaJSON,
		bucket: exportBucket,
	}
	var page ExportPage
	m, err = c.getJSON(ctx, op, &page)
	if err != nil {
		return nil, m, err
	}
	if page.Exports == nil && page.Stream == "" {
		return nil, m, shapeError(m, "response is not an export listing")
	}
	return &page, m, nil
}

// AllExports returns every export of feed, page after page, newest first.
// It is lazy: no request is sent before the loop starts, and breaking out
// of the loop stops fetching. p may be nil; it is not modified. Each page
// follows the standard retry class.
//
// A failing page yields its error once and ends the sequence, as does a
// next cursor that repeats one already requested (an *Error). The loop is
// one call: the error describes it whole, as the observer's CallEnd does
// (its Attempts counts the requests of every page, and once a page was
// answered the call has reached the server: a ConnectionError's NotSent is
// false).
//
// To catch a repeat, a loop keeps the SHA-256 digest of each cursor it
// requested, never the cursor itself: its memory grows by a fixed amount
// per page (32 bytes and the map's overhead, under 100 bytes), however
// long the server makes its cursors. Only the cursor of the next request
// is held whole.
func (c *Client) AllExports(ctx context.Context, feed Feed, p *ListExportsParams) iter.Seq2[Export, error] {
	var first ListExportsParams
	if p != nil {
		first = *p
	}
	return func(yield func(Export, error) bool) {
		ctx, call := c.startCall(ctx, "AllExports", retry.Standard)
		var err error
		defer call.end(&err)
		if err = c.allExports(ctx, feed, first, yield); err != nil {
			yield(Export{}, err)
		}
	}
}

// allExports yields every export of feed, page after page from params,
// and returns the error that ends the sequence: nil when the last page
// was yielded or yield asked to stop.
func (c *Client) allExports(ctx context.Context, feed Feed, params ListExportsParams, yield func(Export, error) bool) error {
	seen := map[[sha256.Size]byte]struct{}{sha256.Sum256([]byte(params.Cursor)): {}}
	m := meta{op: "AllExports"}
	for {
		page, pm, err := c.listExports(ctx, m, feed, &params)
		m = pm // the pages are legs of one call, their attempts counted together
		if err != nil {
			return err
		}
		for _, e := range page.Exports {
			if !yield(e, nil) {
				return nil
			}
		}
		next := page.NextCursor
		if next == "" {
			return nil
		}
		digest := sha256.Sum256([]byte(next))
		if _, ok := seen[digest]; ok {
			return notRetryable(m, "the export listing repeated a cursor", nil)
		}
		seen[digest] = struct{}{}
		params.Cursor = next
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
	h, ok := exportHour(hour)
	if !ok {
		return "", invalid("%s: export id %q has an hour outside 0 to 23", op, id)
	}
	return date + "/" + strconv.Itoa(h), nil
}

// exportHour parses the hour of an hourly export id: one or two digits,
// 0 to 23.
func exportHour(hour string) (int, bool) {
	h, err := strconv.Atoi(hour)
	return h, err == nil && len(hour) >= 1 && len(hour) <= 2 && hour[0] != '+' && hour[0] != '-' && h >= 0 && h <= 23
}

// ExportMeta returns the description of one export: its size, row count,
// SHA-256 and columns. id is "latest", "YYYY-MM-DD" or "YYYY-MM-DD/HH"; an
// invalid id or unknown feed gives an error matching ErrInvalidArgument.
// The request follows the standard retry class.
func (c *Client) ExportMeta(ctx context.Context, feed Feed, id string) (_ *ExportMeta, err error) {
	ctx, call := c.startCall(ctx, "ExportMeta", retry.Standard)
	defer call.end(&err)
	em, _, err := c.exportMeta(ctx, meta{op: "ExportMeta"}, feed, id)
	return em, err
}

// exportMeta sends the meta request as the operation m.op, after the
// earlier legs of the same call that m counts. The returned meta counts
// this request's attempts too, for a call that goes on with more legs.
func (c *Client) exportMeta(ctx context.Context, m meta, feed Feed, id string) (*ExportMeta, meta, error) {
	seg, err := checkFeed(m.op, feed)
	if err != nil {
		return nil, m, err
	}
	idPath, err := exportPath(m.op, id)
	if err != nil {
		return nil, m, err
	}
	op := &operation{
		name:   m.op,
		prior:  m.attempts,
		method: http.MethodGet,
		route:  "/feeds/{feed}/export/{id}/meta",
		path:   "/feeds/" + seg + "/export/" + idPath + "/meta",
		class:  retry.Standard,
		accept: mediaJSON,
		bucket: exportBucket,
	}
	var em ExportMeta
	m, err = c.getJSON(ctx, op, &em)
	if err != nil {
		return nil, m, err
	}
	if em.Checksum == "" && em.Size == 0 {
		return nil, m, shapeError(m, "response is not export meta")
	}
	return &em, m, nil
}
