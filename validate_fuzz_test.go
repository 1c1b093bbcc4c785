package synthient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/synthient-go/synthient"
)

// The fuzz targets of the argument validators go through the public API: a
// client whose transport records each request and answers a minimal valid
// body, so nothing leaves the process. For every input, either the call
// fails with ErrInvalidArgument and sent nothing, or it sent exactly one
// request whose path is well-formed.

// vfBase is the base URL of the fuzz clients; the transport never dials it.
const vfBase = "https://api.invalid/api/v4"

// vfReq is what the recording transport keeps of a request.
type vfReq struct {
	method, host, escapedPath, rawQuery, fragment string
}

// vfTransport records requests and answers each with 200 and body.
type vfTransport struct {
	body string
	mu   sync.Mutex
	reqs []vfReq
}

func (t *vfTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	t.mu.Lock()
	t.reqs = append(t.reqs, vfReq{
		method:      r.Method,
		host:        r.URL.Host,
		escapedPath: r.URL.EscapedPath(),
		rawQuery:    r.URL.RawQuery,
		fragment:    r.URL.Fragment,
	})
	t.mu.Unlock()
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(t.body)),
		ContentLength: int64(len(t.body)),
		Request:       r,
	}, nil
}

// take returns the requests recorded since the last take.
func (t *vfTransport) take() []vfReq {
	t.mu.Lock()
	defer t.mu.Unlock()
	reqs := t.reqs
	t.reqs = nil
	return reqs
}

// vfClient returns a client on a recording transport that answers body.
func vfClient(f *testing.F, body string) (*synthient.Client, *vfTransport) {
	tr := &vfTransport{body: body}
	return newClient(f, vfBase, synthient.WithTransport(tr)), tr
}

// vfOutcome checks the invariant every input must meet, whatever the
// oracle says: a rejection matches ErrInvalidArgument and sent nothing; an
// acceptance sent exactly one GET to the API's host. It returns the
// request, or nil for a rejection.
func vfOutcome(t *testing.T, what string, err error, reqs []vfReq) *vfReq {
	t.Helper()
	if err != nil {
		if !errors.Is(err, synthient.ErrInvalidArgument) {
			t.Fatalf("%s: error %v (%T) does not match ErrInvalidArgument, and nothing else can fail here", what, err, err)
		}
		if len(reqs) != 0 {
			t.Fatalf("%s: rejected (%v) but sent %d requests: %+v", what, err, len(reqs), reqs)
		}
		return nil
	}
	if len(reqs) != 1 {
		t.Fatalf("%s: accepted and sent %d requests, want exactly 1: %+v", what, len(reqs), reqs)
	}
	r := reqs[0]
	if r.method != http.MethodGet || r.host != "api.invalid" {
		t.Fatalf("%s: sent %s to host %q, want GET to api.invalid", what, r.method, r.host)
	}
	return &r
}

// ---------------------------------------------------------------- export id

// vfRefExportID is an independent reference of the export id rules: it
// reports whether id is "latest", "YYYY-MM-DD" with a real (proleptic
// Gregorian) date, or "YYYY-MM-DD/H" or "YYYY-MM-DD/HH" with an hour of 0
// to 23, and returns its date and hour (-1 for none).
func vfRefExportID(id string) (date string, hour int, ok bool) {
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

var vfMetaPath = regexp.MustCompile(`^/api/v4/feeds/proxies/export/(latest|([0-9]{4})-([0-9]{2})-([0-9]{2})(?:/([0-9]{1,2}))?)/meta$`)

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
	c, tr := vfClient(f, `{"stream":"proxies","id":"2026-06-10","size":1,"checksum":"00"}`)

	f.Fuzz(func(t *testing.T, id string) {
		_, err := c.ExportMeta(context.Background(), synthient.FeedProxies, id)
		r := vfOutcome(t, strconv.Quote(id), err, tr.take())

		date, hour, ok := vfRefExportID(id)
		switch {
		case !ok && r != nil:
			t.Fatalf("ExportMeta(%q) sent %s; the reference rejects the id", id, r.escapedPath)
		case ok && r == nil:
			t.Fatalf("ExportMeta(%q) = %v; the reference accepts the id", id, err)
		case r == nil:
			return
		}
		if r.rawQuery != "" || r.fragment != "" {
			t.Fatalf("ExportMeta(%q) sent query %q, fragment %q; want none", id, r.rawQuery, r.fragment)
		}
		m := vfMetaPath.FindStringSubmatch(r.escapedPath)
		if m == nil {
			t.Fatalf("ExportMeta(%q) sent path %q, not /api/v4/feeds/proxies/export/(latest|YYYY-MM-DD|YYYY-MM-DD/H{1,2})/meta", id, r.escapedPath)
		}
		if m[1] == "latest" {
			if date != "latest" {
				t.Fatalf("ExportMeta(%q) sent %q, want the date %s", id, r.escapedPath, date)
			}
			return
		}
		sentDate := m[2] + "-" + m[3] + "-" + m[4]
		if _, _, real := vfRefExportID(sentDate); !real {
			t.Fatalf("ExportMeta(%q) sent %q: %s is not a real date", id, r.escapedPath, sentDate)
		}
		if sentDate != date {
			t.Fatalf("ExportMeta(%q) sent the date %s, want %s", id, sentDate, date)
		}
		sentHour := -1
		if m[5] != "" {
			sentHour, _ = strconv.Atoi(m[5])
			if sentHour > 23 {
				t.Fatalf("ExportMeta(%q) sent %q: hour %d is outside 0 to 23", id, r.escapedPath, sentHour)
			}
		}
		if sentHour != hour {
			t.Fatalf("ExportMeta(%q) sent %q: hour %d, want %d (-1: none)", id, r.escapedPath, sentHour, hour)
		}
	})
}

// ------------------------------------------------------------------- domain

const vfDomainPrefix = "/api/v4/lookup/domain/"

// vfLDH reports whether s holds only letters, digits, '-', '_' and '.',
// the ASCII names whose fate the reference decides exactly.
func vfLDH(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// vfRefName is the reference for a plain ASCII name: without one trailing
// dot, non-empty, at most 253 octets, every label 1 to 63 octets.
func vfRefName(s string) (string, bool) {
	name := strings.TrimSuffix(s, ".")
	if name == "" || len(name) > 253 {
		return "", false
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 {
			return "", false
		}
	}
	return name, true
}

// vfMustReject reports why the API contract rejects domain whatever else
// it holds: '/', '?', '#', white space or a control character, or bytes
// that are not UTF-8.
func vfMustReject(domain string) string {
	if !utf8.ValidString(domain) {
		return "is not UTF-8"
	}
	for _, r := range domain {
		switch {
		case r == '/' || r == '?' || r == '#':
			return "holds " + strconv.QuoteRune(r)
		case unicode.IsSpace(r):
			return "holds the white space " + strconv.QuoteRune(r)
		case unicode.IsControl(r):
			return "holds the control character " + strconv.QuoteRune(r)
		}
	}
	return ""
}

// vfCheckSentName checks the name a request carries: a single escaped
// path segment that decodes to an ASCII name of at most 253 octets,
// labels of 1 to 63, and no '/', '?', '#', white space or control
// character.
func vfCheckSentName(t *testing.T, domain string, r *vfReq) string {
	t.Helper()
	seg, ok := strings.CutPrefix(r.escapedPath, vfDomainPrefix)
	if !ok || seg == "" || strings.Contains(seg, "/") {
		t.Fatalf("LookupDomain(%q) sent path %q, not %s{one segment}", domain, r.escapedPath, vfDomainPrefix)
	}
	if r.rawQuery != "" || r.fragment != "" {
		t.Fatalf("LookupDomain(%q) sent query %q, fragment %q; want none", domain, r.rawQuery, r.fragment)
	}
	name, err := url.PathUnescape(seg)
	if err != nil {
		t.Fatalf("LookupDomain(%q) sent the segment %q, which does not unescape: %v", domain, seg, err)
	}
	if len(name) > 253 {
		t.Fatalf("LookupDomain(%q) sent a name of %d octets, more than 253: %q", domain, len(name), name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			t.Fatalf("LookupDomain(%q) sent %q, which is not ASCII", domain, name)
		case c < 0x20 || c == 0x7f:
			t.Fatalf("LookupDomain(%q) sent %q, which holds the control character %#x", domain, name, c)
		case c == '/' || c == '?' || c == '#' || c == ' ':
			t.Fatalf("LookupDomain(%q) sent %q, which holds %q", domain, name, c)
		}
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 {
			t.Fatalf("LookupDomain(%q) sent %q, which has a label of %d octets", domain, name, len(l))
		}
	}
	return name
}

// FuzzLookupDomain fuzzes the domain validator through LookupDomain: a
// rejection is an invalid argument that sent nothing; an acceptance sent
// one request whose path segment decodes to a well-formed ASCII name. A
// name with '/', '?', '#', white space or a control character is always
// rejected; a plain LDH name is accepted exactly when the reference says,
// and sent as given (less one trailing dot).
func FuzzLookupDomain(f *testing.F) {
	long := func(n int) string { return strings.Repeat("a", n) }
	name253 := long(63) + "." + long(63) + "." + long(63) + "." + long(61)
	for _, d := range []string{
		"example.com", "example.com.", "example.com..", ".", "..", "", "a", "a.", ".a", "a..b",
		"EXAMPLE.COM", "a_b.example", "-a.com", "a-.com", "1.2.3.4", "localhost",
		long(63) + ".com", long(64) + ".com", name253, name253 + ".", name253 + "a", long(254),
		"exa mple.com", " example.com", "example.com ", "a/b.com", "a?b.com", "a#b.com",
		"a\\b.com", "a%2Fb.com", "a%b.com", "a%", "a\tb", "a\nb", "a\rb", "a\x00b", "a\x7fb",
		"a\u0080b", "a\u0085b", "a\u009fb", "a\u00a0b", "a\u1680b", "a\u2000b", "a\u2028b", "a\u3000b",
		"a\u200bb", "a\u00adb", "a\ufeffb", "\xff.com", "a\xc0\xafb.com",
		"bücher.de", "xn--bcher-kva.de", "xn--.com", "例え.テスト", "ß.de", "ΣΑΣ.gr",
		"a\uff0fb.com", "a\uff1fb.com", "a\uff03b.com", "a\u2215b.com", "a\u3002b", "a\uff0e", "a\uff61b",
		"\u2474.com", "a\u2024b", strings.Repeat("ü", 40) + ".de", strings.Repeat("ü", 70) + ".de",
		strings.Repeat("ü.", 130) + "de", "a;b.com", "a,b.com", "a@b.com", "a:80", "[::1]", "a*b",
		"a+b.com", "a=b", "a&b", "a'b", "a\"b", "a<b>", "a`b", "a{b}", "a|b", "a^b", "a~b", "a!b",
	} {
		f.Add(d)
	}
	c, tr := vfClient(f, `{"domain":"example.com"}`)

	f.Fuzz(func(t *testing.T, domain string) {
		_, err := c.LookupDomain(context.Background(), domain, nil)
		r := vfOutcome(t, strconv.Quote(domain), err, tr.take())

		if why := vfMustReject(domain); why != "" && r != nil {
			t.Fatalf("LookupDomain(%q) sent %q; the domain %s", domain, r.escapedPath, why)
		}
		if r == nil {
			if vfLDH(domain) {
				if _, ok := vfRefName(domain); ok {
					t.Fatalf("LookupDomain(%q) = %v; the reference accepts the name", domain, err)
				}
			}
			return
		}
		name := vfCheckSentName(t, domain, r)
		if vfLDH(domain) {
			want, ok := vfRefName(domain)
			if !ok {
				t.Fatalf("LookupDomain(%q) sent %q; the reference rejects the name", domain, name)
			}
			if name != want {
				t.Fatalf("LookupDomain(%q) sent the name %q, want %q", domain, name, want)
			}
		}
	})
}
