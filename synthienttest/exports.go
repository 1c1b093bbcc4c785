package synthienttest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
)

// storageBucket is the bucket of the presigned URLs.
const storageBucket = "synthient-exports"

// rollup is how long after midnight UTC the previous day's daily snapshot
// is ready.
const rollup = 30 * time.Minute

// snapshot is one export file of a feed.
type snapshot struct {
	kind    string    // "daily" or "hourly"
	day     time.Time // UTC midnight
	hour    int       // -1 for a daily snapshot
	created time.Time
}

func (sn snapshot) id() string {
	if sn.hour < 0 {
		return sn.day.Format(time.DateOnly)
	}
	return fmt.Sprintf("%s/%02d", sn.day.Format(time.DateOnly), sn.hour)
}

// order is the snapshot's position in a listing, larger is newer: its
// start, hourly before daily at the same start.
func (sn snapshot) order() int64 {
	start := sn.day.Unix()
	if sn.hour >= 0 {
		return (start+int64(sn.hour)*3600)*2 + 1
	}
	return start * 2
}

// snapshots returns every snapshot that exists at now, newest first (the
// same for every feed): the completed hours of the current UTC day; during
// the first hour of a day, also the previous day's hours (its daily rollup
// is ready from 00:30); and a daily snapshot for each of the previous
// exportDays days.
func (s *Server) snapshots(now time.Time) []snapshot {
	today := now.Truncate(24 * time.Hour)
	yesterday := today.Add(-24 * time.Hour)
	var out []snapshot
	for h := now.Hour() - 1; h >= 0; h-- {
		out = append(out, hourly(today, h))
	}
	if now.Hour() == 0 {
		for h := 23; h >= 0; h-- {
			out = append(out, hourly(yesterday, h))
		}
	}
	for d := 0; d < s.cfg.exportDays; d++ {
		day := yesterday.Add(-time.Duration(d) * 24 * time.Hour)
		if d == 0 && now.Before(today.Add(rollup)) {
			continue
		}
		out = append(out, snapshot{kind: "daily", day: day, hour: -1, created: day.Add(24*time.Hour + rollup)})
	}
	return out
}

func hourly(day time.Time, h int) snapshot {
	return snapshot{kind: "hourly", day: day, hour: h, created: day.Add(time.Duration(h+1) * time.Hour)}
}

// file names the export file of feed's export id at the size the server
// is configured to make it.
func (s *Server) file(feed synthient.Feed, id string) exportFile {
	return exportFile{feed: feed, id: id, size: max(8, s.cfg.exportSize(feed, id))}
}

func defaultExportSize(feed synthient.Feed, id string) int64 {
	h := fnv.New32a()
	h.Write([]byte(string(feed) + "/" + id))
	v := int64(h.Sum32())
	if strings.Contains(id, "/") {
		return 48<<10 + v%(16<<10)
	}
	return 96<<10 + v%(32<<10)
}

var schemas = map[synthient.Feed][]synthient.SchemaField{
	synthient.FeedProxies: {{Name: "ip", Type: "string"}, {Name: "provider", Type: "string"}, {Name: "type", Type: "string"},
		{Name: "timestamp", Type: "int64"}, {Name: "country_code", Type: "string"}, {Name: "asn", Type: "int32"}},
	synthient.FeedAnonymizers: {{Name: "range_start", Type: "string"}, {Name: "range_end", Type: "string"}, {Name: "provider", Type: "string"},
		{Name: "type", Type: "string"}, {Name: "country_code", Type: "string"}, {Name: "asn", Type: "int32"}, {Name: "timestamp", Type: "int64"}},
	synthient.FeedTorrents: {{Name: "info_hash", Type: "string"}, {Name: "name", Type: "string"}, {Name: "magnet_uri", Type: "string"},
		{Name: "total_size", Type: "int64"}, {Name: "piece_length", Type: "int32"}, {Name: "file_count", Type: "int32"}, {Name: "timestamp", Type: "int64"}},
	synthient.FeedHoneypotHTTP: {{Name: "timestamp", Type: "int64"}, {Name: "tunnel_id", Type: "int64"}, {Name: "domain", Type: "string"},
		{Name: "port", Type: "int32"}, {Name: "method", Type: "string"}, {Name: "uri", Type: "string"}, {Name: "version", Type: "string"}, {Name: "raw", Type: "string"}},
	synthient.FeedHoneypotHTTPS: {{Name: "timestamp", Type: "int64"}, {Name: "tunnel_id", Type: "int64"}, {Name: "domain", Type: "string"},
		{Name: "port", Type: "int32"}, {Name: "details", Type: "string"}, {Name: "raw", Type: "binary"}},
	synthient.FeedHoneypotDNS: {{Name: "timestamp", Type: "int64"}, {Name: "tunnel_id", Type: "int64"}, {Name: "domain", Type: "string"},
		{Name: "port", Type: "int32"}},
	synthient.FeedHoneypotADB: {{Name: "session", Type: "string"}, {Name: "sequential_id", Type: "int32"}, {Name: "command", Type: "binary"},
		{Name: "hash", Type: "string"}},
	synthient.FeedJA4T: {{Name: "ip", Type: "string"}, {Name: "ja4t", Type: "string"}, {Name: "provider", Type: "string"},
		{Name: "type", Type: "string"}, {Name: "timestamp", Type: "int64"}, {Name: "country_code", Type: "string"}, {Name: "asn", Type: "int32"}},
}

// export returns the listing item of a snapshot.
func (s *Server) export(feed synthient.Feed, sn snapshot) synthient.Export {
	id := sn.id()
	f := describe(s.file(feed, id))
	e := synthient.Export{
		ID: id, Kind: sn.kind, Date: sn.day.Format(time.DateOnly),
		SizeBytes: f.size, RowCount: f.rows, Checksum: f.checksum,
		CreatedAt: sn.created.Unix(), DownloadPath: apiPrefix + "/feeds/" + feedSegment(feed) + "/export/" + id,
	}
	if sn.hour >= 0 {
		h := sn.hour
		e.Hour = &h
	}
	return e
}

func (s *Server) meta(feed synthient.Feed, sn snapshot) synthient.ExportMeta {
	e := s.export(feed, sn)
	return synthient.ExportMeta{
		Stream: string(feed), Kind: e.Kind, ID: e.ID, Date: sn.day.Unix(), Hour: e.Hour, Format: "parquet",
		CreatedAt: e.CreatedAt, Size: e.SizeBytes, Rows: e.RowCount, Checksum: e.Checksum,
		Schema: synthient.ExportSchema{Fields: append([]synthient.SchemaField(nil), schemas[feed]...)},
	}
}

// cursor is "<feed segment>:<order>" and a tag, base64url.
func (s *Server) cursor(seg string, order int64) string {
	payload := seg + ":" + strconv.FormatInt(order, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(payload + ":" + s.tag(payload)))
}

func (s *Server) tag(payload string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("cursor\n" + payload))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// parseCursor returns the order after which a page starts.
func (s *Server) parseCursor(seg, c string) (int64, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(raw), ':')
	if i < 0 {
		return 0, false
	}
	payload, tag := string(raw[:i]), string(raw[i+1:])
	if !hmac.Equal([]byte(tag), []byte(s.tag(payload))) {
		return 0, false
	}
	gotSeg, num, ok := strings.Cut(payload, ":")
	if !ok || gotSeg != seg {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	return n, err == nil
}

// handleExports answers an export listing: a page of at most limit
// (default 100, at most 500) snapshots, newest first, after the cursor.
func (s *Server) handleExports(w http.ResponseWriter, r *http.Request, _ *apiKey, p params) {
	q := r.URL.Query()
	limit := 100
	if vs, ok := q["limit"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(vs[0]))
		if err != nil || n < 1 {
			badRequest(w, r, "limit must be an integer between 1 and 500.")
			return
		}
		limit = min(n, 500)
	}
	all := s.snapshots(s.now())
	start := 0
	if vs, ok := q["cursor"]; ok {
		after, ok := s.parseCursor(p.feedSeg, vs[0])
		if !ok {
			badRequest(w, r, "The cursor is not valid for this listing.")
			return
		}
		start = len(all)
		for i, sn := range all {
			if sn.order() < after {
				start = i
				break
			}
		}
	}
	end := min(len(all), start+limit)
	page := synthient.ExportPage{Stream: string(p.feed), Exports: make([]synthient.Export, 0, end-start)}
	for _, sn := range all[start:end] {
		page.Exports = append(page.Exports, s.export(p.feed, sn))
	}
	if end < len(all) {
		page.NextCursor = s.cursor(p.feedSeg, all[end-1].order())
	}
	writeJSON(w, http.StatusOK, page)
}

// findSnapshot resolves {date}[/{hour}] at now, or answers 400 or 404.
func (s *Server) findSnapshot(w http.ResponseWriter, r *http.Request, p params) (snapshot, bool) {
	now := s.now()
	if p.date == "latest" {
		return s.latestHourly(w, r, p.hour, now)
	}
	day, hour, bad := parseExportID(p.date, p.hour)
	if bad != "" {
		badRequest(w, r, bad)
		return snapshot{}, false
	}
	for _, sn := range s.snapshots(now) {
		if sn.day.Equal(day) && sn.hour == hour {
			return sn, true
		}
	}
	s.noSnapshot(w, r, p.date, day, hour, now)
	return snapshot{}, false
}

// latestHourly resolves latest: the newest hourly snapshot at now. It
// takes no hour.
func (s *Server) latestHourly(w http.ResponseWriter, r *http.Request, hour string, now time.Time) (snapshot, bool) {
	if hour != "" {
		badRequest(w, r, "latest takes no hour.")
		return snapshot{}, false
	}
	for _, sn := range s.snapshots(now) {
		if sn.hour >= 0 {
			return sn, true
		}
	}
	notFound(w, r, "No hourly export is available yet.")
	return snapshot{}, false
}

// parseExportID reads an export id's date (YYYY-MM-DD) and hour (one or
// two digits, 0 to 23; "" for a daily export, read as -1). bad is the
// detail of the 400 answer to an id that does not parse.
func parseExportID(date, hour string) (day time.Time, h int, bad string) {
	day, err := time.Parse(time.DateOnly, date)
	if err != nil || len(date) != 10 {
		return time.Time{}, 0, "The date must be YYYY-MM-DD or latest."
	}
	if hour == "" {
		return day, -1, ""
	}
	h, err = strconv.Atoi(hour)
	if err != nil || len(hour) > 2 || hour[0] < '0' || hour[0] > '9' || h < 0 || h > 23 {
		return time.Time{}, 0, "The hour must be an integer from 0 to 23."
	}
	return day, h, ""
}

// noSnapshot answers a well-formed export id that has no snapshot at now:
// 400 for an hour of a day rolled into its daily export, 404 with
// Retry-After for yesterday's daily export before the rollup, else 404.
func (s *Server) noSnapshot(w http.ResponseWriter, r *http.Request, date string, day time.Time, hour int, now time.Time) {
	today := now.Truncate(24 * time.Hour)
	yesterday := today.Add(-24 * time.Hour)
	oldest := yesterday.Add(-time.Duration(s.cfg.exportDays-1) * 24 * time.Hour)
	hoursKept := day.Equal(yesterday) && now.Hour() == 0 // yesterday's hours, in the first hour of today
	switch {
	case hour >= 0 && day.Before(today) && !hoursKept && !day.Before(oldest):
		badRequest(w, r, fmt.Sprintf("The hours of %s were rolled into its daily export; request /export/%s instead.", date, date))
	case hour < 0 && day.Equal(yesterday) && now.Before(today.Add(rollup)) && s.cfg.exportDays > 0:
		wait := max(1, int(today.Add(rollup).Sub(now).Seconds()+0.999))
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		notFound(w, r, fmt.Sprintf("The daily export of %s is still being assembled; its hours stay available meanwhile.", date))
	default:
		notFound(w, r, "No export for "+strings.TrimPrefix(r.URL.Path, apiPrefix)+".")
	}
}

// handleExportMeta answers an export's meta.
func (s *Server) handleExportMeta(w http.ResponseWriter, r *http.Request, _ *apiKey, p params) {
	sn, ok := s.findSnapshot(w, r, p)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.meta(p.feed, sn))
}

// handleDownload answers an export download: a redirect to a presigned
// storage URL.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request, _ *apiKey, p params) {
	sn, ok := s.findSnapshot(w, r, p)
	if !ok {
		return
	}
	w.Header().Set("Location", s.presign(p.feed, sn.id(), s.now()))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusTemporaryRedirect)
}

const amzDate = "20060102T150405Z"

// objectPath is the storage path of an export file.
func objectPath(feed synthient.Feed, id string) string {
	return "/" + storageBucket + "/" + string(feed) + "/" + id + ".parquet"
}

// presign returns a presigned storage URL for an export file, valid for the
// presign expiry from now.
func (s *Server) presign(feed synthient.Feed, id string, now time.Time) string {
	path := objectPath(feed, id)
	q := url.Values{}
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Credential", "SYNTHIENTTESTKEY/"+now.Format("20060102")+"/auto/s3/aws4_request")
	q.Set("X-Amz-Date", now.Format(amzDate))
	q.Set("X-Amz-Expires", strconv.Itoa(int(s.cfg.presignExpiry/time.Second)))
	q.Set("X-Amz-SignedHeaders", "host")
	q.Set("X-Amz-Signature", s.sign(path, q))
	return s.StorageURL + path + "?" + q.Encode()
}

// sign is the hex HMAC-SHA256 of the method, path and the query without
// its signature.
func (s *Server) sign(path string, q url.Values) string {
	c := url.Values{}
	for k, v := range q {
		if k != "X-Amz-Signature" {
			c[k] = v
		}
	}
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("GET\n" + path + "\n" + c.Encode()))
	return hex.EncodeToString(m.Sum(nil))
}

func storageError(w http.ResponseWriter, status int, code, msg, resource string) {
	body := fmt.Sprintf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message><Resource>%s</Resource></Error>\n",
		xmlText(code), xmlText(msg), xmlText(resource))
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// xmlText escapes s for XML character data: a request's path may hold an
// "&" (or, from a hostile client, "<"), which would end the document.
func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// serveStorage is the storage origin's handler.
func (s *Server) serveStorage(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		s.refuse(w)
		return
	}
	defer s.handlers.Done()
	sw := s.begin(w, r, RouteStorage)
	sw.Header().Set("X-Amz-Request-Id", strings.ToUpper(strings.ReplaceAll(sw.e.RequestID, "-", "")[:16]))
	if f, ok := s.takeFault(RouteStorage, sw.e); ok {
		s.runFault(sw, r, RouteStorage, f, func(w http.ResponseWriter) { s.handleStorage(w, r) })
		return
	}
	s.handleStorage(sw, r)
}

func (s *Server) handleStorage(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		storageError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.", path)
		return
	}
	q := r.URL.Query()
	sig := q.Get("X-Amz-Signature")
	if sig == "" || !hmac.Equal([]byte(sig), []byte(s.sign(path, q))) {
		storageError(w, http.StatusForbidden, "AccessDenied", "The request signature we calculated does not match the signature you provided.", path)
		return
	}
	signed, err1 := time.Parse(amzDate, q.Get("X-Amz-Date"))
	expires, err2 := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err1 != nil || err2 != nil || expires < 1 {
		storageError(w, http.StatusForbidden, "AccessDenied", "The presigned URL is malformed.", path)
		return
	}
	if s.now().After(signed.Add(time.Duration(expires) * time.Second)) {
		storageError(w, http.StatusForbidden, "AccessDenied", "Request has expired", path)
		return
	}
	feed, id, ok := parseObjectPath(path)
	if !ok {
		storageError(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", path)
		return
	}
	f := s.file(feed, id)
	info := describe(f)
	h := w.Header()
	h.Set("Content-Type", "application/vnd.apache.parquet")
	h.Set("Content-Length", strconv.FormatInt(info.size, 10))
	h.Set("Accept-Ranges", "none")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// Written as it is sent; an error is the client gone.
	_ = writeExport(w, f, info.rows)
}

// parseObjectPath reads "/<bucket>/<feed>/<id>.parquet".
func parseObjectPath(path string) (synthient.Feed, string, bool) {
	rest, ok := strings.CutPrefix(path, "/"+storageBucket+"/")
	if !ok {
		return "", "", false
	}
	feedName, file, ok := strings.Cut(rest, "/")
	id, ok2 := strings.CutSuffix(file, ".parquet")
	feed := synthient.Feed(feedName)
	if !ok || !ok2 || !feed.Valid() {
		return "", "", false
	}
	date, hour, hourly := strings.Cut(id, "/")
	if _, err := time.Parse(time.DateOnly, date); err != nil || len(date) != 10 {
		return "", "", false
	}
	if hourly {
		if h, err := strconv.Atoi(hour); err != nil || len(hour) != 2 || h < 0 || h > 23 {
			return "", "", false
		}
	}
	return feed, id, true
}
