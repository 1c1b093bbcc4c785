package problem_test

// Tests of problem.go: Parse on RFC 9457 bodies, other JSON error shapes,
// S3 errors, text and HTML, always valid UTF-8; Write, read back with
// Parse. TestMain (goleak) is in main_test.go.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/problem"
)

const validation = `{
  "type": "https://docs.synthient.com/errors/validation",
  "title": "Validation error",
  "status": 422,
  "detail": "2 fields are invalid",
  "instance": "/api/v4/lookup/ips",
  "errors": {
    "ips": ["must contain between 1 and 1000 entries"],
    "ips[3]": ["must be a valid IP address", "must not be empty"]
  }
}`

var validationDetails = problem.Details{
	Type:     "https://docs.synthient.com/errors/validation",
	Title:    "Validation error",
	Status:   422,
	Detail:   "2 fields are invalid",
	Instance: "/api/v4/lookup/ips",
	Errors: map[string][]string{
		"ips":    {"must contain between 1 and 1000 entries"},
		"ips[3]": {"must be a valid IP address", "must not be empty"},
	},
}

type parseCase struct {
	name        string
	contentType string
	body        string
	want        problem.Details
}

var parseCases = []parseCase{
	{"problem_json", "application/problem+json", validation, validationDetails},
	{"problem_json_charset", "application/problem+json; charset=utf-8", validation, validationDetails},
	{"application_json", "application/json", validation, validationDetails},
	{"vendor_json_suffix", "application/vnd.synthient.error+json", validation, validationDetails},
	{"json_without_content_type", "", validation, validationDetails},
	{"json_with_text_content_type", "text/plain", validation, validationDetails},
	{"rate_limited", "application/problem+json",
		`{"type": "https://docs.synthient.com/errors/rate-limited", "title": "Too Many Requests", "status": 429,
		  "detail": "Rate limit exceeded for this team; retry after 2 seconds."}`,
		problem.Details{Type: "https://docs.synthient.com/errors/rate-limited", Title: "Too Many Requests", Status: 429,
			Detail: "Rate limit exceeded for this team; retry after 2 seconds."}},
	{"text_plain", "text/plain; charset=utf-8", "Invalid API Key\n", problem.Details{Detail: "Invalid API Key"}},
	{"text_plain_no_content_type", "", "  upstream timed out  ", problem.Details{Detail: "upstream timed out"}},
	{"html", "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>\r\n",
		problem.Details{Detail: "<html><body><h1>502 Bad Gateway</h1></body></html>"}},
	// An S3-style storage error: Code, Message and RequestId, never the
	// request it echoes (StringToSign, CanonicalRequest and their bytes).
	{"s3_xml", "application/xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>" +
		"<Message>The request signature we calculated does not match the signature you provided.</Message>" +
		"<StringToSign>AWS4-HMAC-SHA256\nsecret</StringToSign><CanonicalRequest>GET /o X-Amz-Signature=secret</CanonicalRequest>" +
		"<CanonicalRequestBytes>73 65 63 72 65 74</CanonicalRequestBytes><RequestId>4442587FB7D0A2F9</RequestId></Error>",
		problem.Details{Title: "SignatureDoesNotMatch", Detail: "The request signature we calculated does not match the signature you provided.",
			Instance: "4442587FB7D0A2F9"}},
	{"s3_xml_without_content_type", "", "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>",
		problem.Details{Title: "NoSuchKey", Detail: "The specified key does not exist."}},
	{"xml_without_code", "application/xml", "<Error><Message>m</Message></Error>", problem.Details{Detail: "<Error><Message>m</Message></Error>"}},
	{"xml_cut_short", "application/xml", "<Error><Code>SignatureDoesNotMatch</Code><StringToSign>AWS4",
		problem.Details{Detail: "<Error><Code>SignatureDoesNotMatch</Code><StringToSign>AWS4"}},
	{"invalid_json", "application/problem+json", `{"title": "Bad`, problem.Details{Detail: `{"title": "Bad`}},
	{"invalid_json_plain_json", "application/json", `{"title": "x",}`, problem.Details{Detail: `{"title": "x",}`}},
	{"json_suffix_with_text_body", "application/problem+json", "oops", problem.Details{Detail: "oops"}},
	{"json_array", "application/json", `["a", "b"]`, problem.Details{Detail: `["a", "b"]`}},
	{"json_string", "application/json", `"just a string"`, problem.Details{Detail: `"just a string"`}},
	{"json_number", "application/problem+json", `42`, problem.Details{Detail: `42`}},
	{"json_null", "application/problem+json", `null`, problem.Details{Detail: `null`}},
	{"errors_map_of_strings", "application/problem+json",
		`{"title":"Validation error","errors":{"ip_address":"must be a valid IP address","limit":["too big"]}}`,
		problem.Details{Title: "Validation error", Errors: map[string][]string{
			"ip_address": {"must be a valid IP address"}, "limit": {"too big"}}}},
	{"errors_with_unusable_entries", "application/problem+json",
		`{"errors":{"a":5,"b":["x"],"c":{"d":"e"},"f":[1,2]}}`,
		problem.Details{Errors: map[string][]string{"b": {"x"}}}},
	{"errors_not_an_object", "application/problem+json", `{"title":"t","errors":["x"]}`, problem.Details{Title: "t"}},
	{"errors_empty", "application/problem+json", `{"title":"t","errors":{}}`, problem.Details{Title: "t"}},
	{"errors_only_unusable", "application/problem+json", `{"errors":{"a":5}}`, problem.Details{}},
	{"health_problems", "application/json", `{"status":"unhealthy","problems":["lookup backend unreachable","feed store down"]}`,
		problem.Details{Detail: "lookup backend unreachable; feed store down"}},
	{"health_problems_empty", "application/json", `{"status":"unhealthy","problems":[]}`, problem.Details{}},
	{"detail_wins_over_problems", "application/json", `{"detail":"d","problems":["p"]}`, problem.Details{Detail: "d"}},
	{"legacy_error", "application/json", `{"error": "Invalid API Key"}`, problem.Details{Detail: "Invalid API Key"}},
	{"legacy_message", "application/json", `{"message": "Not Found"}`, problem.Details{Detail: "Not Found"}},
	{"docs_401", "application/json", `{"detail":"Invalid API Key"}`, problem.Details{Detail: "Invalid API Key"}},
	{"detail_wins_over_error", "application/json", `{"detail":"d","error":"e","message":"m"}`, problem.Details{Detail: "d"}},
	{"members_of_the_wrong_type", "application/problem+json",
		`{"type":1,"title":5,"status":"422","detail":["x"],"instance":{},"error":false}`, problem.Details{}},
	{"status_float", "application/problem+json", `{"status":422.5,"title":"t"}`, problem.Details{Title: "t"}},
	{"escaped_strings", "application/problem+json", `{"title":"caf\u00e9 \"quoted\"","detail":"line\nbreak"}`,
		problem.Details{Title: "café \"quoted\"", Detail: "line\nbreak"}},
	{"empty", "application/problem+json", "", problem.Details{}},
	{"white_space", "text/plain", " \r\n\t ", problem.Details{}},
	{"malformed_content_type", "application/problem+json; =", `{"title":"t"}`, problem.Details{Title: "t"}},
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, problem.Parse(tc.contentType, []byte(tc.body)), "Parse(%q, %q)", tc.contentType, tc.body)
		})
	}
}

func TestParseInvalidUTF8Text(t *testing.T) {
	t.Parallel()
	got := problem.Parse("text/plain", []byte("bad \xff\xfe byte"))
	assert.True(t, utf8.ValidString(got.Detail), "Detail %q is not valid UTF-8", got.Detail)
	assert.Contains(t, []string{"bad \uFFFD byte", "bad \uFFFD\uFFFD byte"}, got.Detail, "Detail")
}

func TestWrite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		in         problem.Details
		wantStatus int
		wantTitle  string
	}{
		{"validation", validationDetails, 422, "Validation error"},
		{"title_defaults_to_status_text", problem.Details{Status: 404, Detail: "no such export"}, 404, "Not Found"},
		{"status_zero_is_500", problem.Details{Title: "oops"}, 500, "oops"},
		{"status_200_is_500", problem.Details{Status: 200}, 500, "Internal Server Error"},
		{"status_399_is_500", problem.Details{Status: 399}, 500, "Internal Server Error"},
		{"status_600_is_500", problem.Details{Status: 600}, 500, "Internal Server Error"},
		{"status_599", problem.Details{Status: 599, Title: "custom"}, 599, "custom"},
		{"status_400", problem.Details{Status: 400, Instance: "/api/v4/feeds/proxies/export"}, 400, "Bad Request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			problem.Write(rec, tc.in)
			res := rec.Result()
			defer func() { _ = res.Body.Close() }() // a recorder's body
			assert.Equal(t, tc.wantStatus, res.StatusCode, "status")
			ct := res.Header.Get("Content-Type")
			assert.Equal(t, "application/problem+json", ct, "Content-Type")
			want := tc.in
			want.Status, want.Title = tc.wantStatus, tc.wantTitle
			assert.Equal(t, want, problem.Parse(ct, rec.Body.Bytes()), "round trip of %s", rec.Body.Bytes())
		})
	}
}

// TestWriteServesHTTP checks Write inside a real handler.
func TestWriteServesHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problem.Write(w, problem.Details{Status: http.StatusTooManyRequests, Detail: "slow down"})
	}))
	t.Cleanup(srv.Close)
	hc := srv.Client()
	t.Cleanup(hc.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	res, err := hc.Do(req)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }() // read to its end below
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, 429, res.StatusCode, "status")
	assert.Equal(t, problem.Details{Status: 429, Title: "Too Many Requests", Detail: "slow down"},
		problem.Parse(res.Header.Get("Content-Type"), body), "details")
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.contentType, []byte(tc.body))
	}
	f.Add("text/plain", []byte("bad \xff\xfe byte"))
	f.Add("application/json", []byte(`{"detail":"\ud800 lone surrogate","title":"\xff"}`))
	f.Add("application/json", []byte(`{"errors":{"\xff":["\xfe"]}}`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		d := problem.Parse(contentType, body)
		for name, s := range map[string]string{"Detail": d.Detail, "Title": d.Title, "Type": d.Type, "Instance": d.Instance} {
			assert.True(t, utf8.ValidString(s), "%s %q is not valid UTF-8", name, s)
		}
		for k, vs := range d.Errors {
			assert.True(t, utf8.ValidString(k), "Errors key %q is not valid UTF-8", k)
			for _, v := range vs {
				assert.True(t, utf8.ValidString(v), "Errors[%q] value %q is not valid UTF-8", k, v)
			}
		}
		if d.Errors != nil {
			assert.NotEmpty(t, d.Errors, "Errors is an empty non-nil map")
		}
	})
}
