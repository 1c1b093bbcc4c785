package synthient_test

// FuzzExportID tests export.go's export id validator. It belongs in
// export_test.go, which is being rewritten at the same time; it moves there
// at the merge. It runs on the recordingTransport of lookup_test.go.

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// referenceExportID is an independent reference of the export id rules:
// it reports whether id is "latest", "YYYY-MM-DD" with a real (proleptic
// Gregorian) date, or "YYYY-MM-DD/H" or "YYYY-MM-DD/HH" with an hour of 0
// to 23, and returns its date and hour (-1 for none).
func referenceExportID(id string) (date string, hour int, ok bool) {
	if id == "latest" {
		return "latest", -1, true
	}
	date, rest, hourly := strings.Cut(id, "/")
	if len(date) != 10 || date[4] != '-' || date[7] != '-' {
		return "", 0, false
	}
	num := func(s string) (int, bool) {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, len(s) > 0
	}
	y, okY := num(date[0:4])
	m, okM := num(date[5:7])
	d, okD := num(date[8:10])
	if !okY || !okM || !okD || m < 1 || m > 12 || d < 1 {
		return "", 0, false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	if d > days {
		return "", 0, false
	}
	if !hourly {
		return date, -1, true
	}
	if len(rest) < 1 || len(rest) > 2 {
		return "", 0, false
	}
	h, okH := num(rest)
	if !okH || h > 23 {
		return "", 0, false
	}
	return date, h, true
}

// sentMetaPath matches the path of a request for an export's metadata.
var sentMetaPath = regexp.MustCompile(`^/api/v4/feeds/proxies/export/(latest|([0-9]{4})-([0-9]{2})-([0-9]{2})(?:/([0-9]{1,2}))?)/meta$`)

// FuzzExportID fuzzes the export id validator through ExportMeta: an id
// the reference rejects is an invalid argument and sends nothing; one it
// accepts sends one request to /feeds/proxies/export/{id}/meta with the
// id's own date and hour, a real date and an hour of 0 to 23.
func FuzzExportID(f *testing.F) {
	for _, id := range []string{
		"latest", "Latest", "LATEST", "latest/", "latest/1", " latest", "latest\x00", "",
		"2026-06-10", "2026-06-10/0", "2026-06-10/00", "2026-06-10/7", "2026-06-10/07",
		"2026-06-10/23", "2026-06-10/24", "2026-06-10/99", "2026-06-10/007", "2026-06-10/100",
		"2026-06-10/", "2026-06-10//1", "2026-06-10/1/", "2026-06-10/1/meta", "2026-06-10/01/02",
		"2026-06-10/+1", "2026-06-10/-0", "2026-06-10/ 1", "2026-06-10/1 ", "2026-06-10/0x1",
		"2026-06-10/1_0", "2026-06-10/\u0661", "2026-06-10/\uff11", "2026-06-10/1e1",
		"2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2100-02-29", "2400-02-29",
		"0000-01-01", "0000-02-29", "9999-12-31", "2026-01-31", "2026-04-31", "2026-06-31",
		"2026-13-01", "2026-00-10", "2026-06-00", "2026-06-32", "2026-6-10", "2026-06-1",
		"26-06-10", "20260-06-10", "2026/06/10", "2026-06-10T00", "2026-06-10 ", " 2026-06-10",
		"+026-06-10", "-026-06-10", "2026-+6-10", "2026-06-+1", "2026--6-10", "2026-06-1x",
		"\uff12\uff10\uff12\uff16-06-10", "2026-06-10\n", "2026-06-10\x00", "../2026-06-10",
		"2026-06-10/../../account/me", "2026-06-10?x=1", "2026-06-10#x", "2026-06-10%2F1",
		"2026-06-10%00", "2026-06-10;1", "2026-06-10\\1", "2026-06-10/1?", "2026-06-10/1#",
	} {
		f.Add(id)
	}
	c, rt := newRecording(f, answerJSON(http.StatusOK, `{"stream":"proxies","id":"2026-06-10","size":1,"checksum":"00"}`))

	f.Fuzz(func(t *testing.T, id string) {
		_, err := c.ExportMeta(context.Background(), synthient.FeedProxies, id)
		r := acceptedRequest(t, strconv.Quote(id), err, rt.Take())

		date, hour, ok := referenceExportID(id)
		switch {
		case !ok && r != nil:
			t.Fatalf("ExportMeta(%q) sent %s; the reference rejects the id", id, r.URL.EscapedPath())
		case ok && r == nil:
			t.Fatalf("ExportMeta(%q) = %v; the reference accepts the id", id, err)
		case r == nil:
			return
		}
		require.Empty(t, r.URL.RawQuery, "ExportMeta(%q) sent a query", id)
		require.Empty(t, r.URL.Fragment, "ExportMeta(%q) sent a fragment", id)
		escaped := r.URL.EscapedPath()
		m := sentMetaPath.FindStringSubmatch(escaped)
		require.NotNil(t, m, "ExportMeta(%q) sent path %q, not /api/v4/feeds/proxies/export/(latest|YYYY-MM-DD|YYYY-MM-DD/H{1,2})/meta", id, escaped)
		if m[1] == "latest" {
			require.Equal(t, "latest", date, "ExportMeta(%q) sent %q", id, escaped)
			return
		}
		sentDate := m[2] + "-" + m[3] + "-" + m[4]
		_, _, real := referenceExportID(sentDate)
		require.True(t, real, "ExportMeta(%q) sent %q: %s is not a real date", id, escaped, sentDate)
		require.Equal(t, date, sentDate, "ExportMeta(%q) sent the date", id)
		sentHour := -1
		if m[5] != "" {
			sentHour, _ = strconv.Atoi(m[5])
			require.LessOrEqual(t, sentHour, 23, "ExportMeta(%q) sent %q: the hour is outside 0 to 23", id, escaped)
		}
		require.Equal(t, hour, sentHour, "ExportMeta(%q) sent %q: the hour (-1: none)", id, escaped)
	})
}
