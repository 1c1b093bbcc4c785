// Package problem reads and writes RFC 9457 problem details, the error
// bodies of the Synthient API: the client reads them into APIError, the
// fake server writes them. It also reads the XML error of an S3-style
// export storage host.
package problem

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// MaxBody is the most of an error body that is read.
const MaxBody = 64 << 10

// MediaType is the media type of a problem details body.
const MediaType = "application/problem+json"

// Details is a problem details object, with the validation extension the
// API uses for 422 answers.
type Details struct {
	Type     string              `json:"type,omitempty"`
	Title    string              `json:"title,omitempty"`
	Status   int                 `json:"status,omitempty"`
	Detail   string              `json:"detail,omitempty"`
	Instance string              `json:"instance,omitempty"`
	Errors   map[string][]string `json:"errors,omitempty"`
}

// Parse reads an error body. It never fails: a JSON object gives the
// members it has (type, title, status, detail, instance and errors, each
// only when it has the right type; a legacy "error" or "message" string and
// an unhealthy /health answer's "problems" become Detail); an S3-style XML
// <Error> gives its Code as Title, its Message as Detail and its RequestId
// as Instance, and nothing else (S3 echoes the request it signed in other
// elements); any other body, including one of these that does not parse,
// gives its trimmed text as Detail.
func Parse(contentType string, body []byte) Details {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return Details{}
	}
	if isJSON(contentType) || trimmed[0] == '{' {
		if d, ok := parseJSON(trimmed); ok {
			return d
		}
	}
	if trimmed[0] == '<' {
		if d, ok := parseS3(trimmed); ok {
			return d
		}
	}
	return Details{Detail: text(trimmed)}
}

// s3Error is the XML error body of S3 and the stores that copy it (R2,
// GCS's XML API, MinIO).
type s3Error struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	RequestID string   `xml:"RequestId"`
}

func parseS3(body []byte) (Details, bool) {
	var e s3Error
	if err := xml.Unmarshal(body, &e); err != nil || e.Code == "" {
		return Details{}, false
	}
	return Details{Title: e.Code, Detail: e.Message, Instance: e.RequestID}, true
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func parseJSON(body []byte) (Details, bool) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return Details{}, false
	}
	var d Details
	str(members["type"], &d.Type)
	str(members["title"], &d.Title)
	str(members["detail"], &d.Detail)
	str(members["instance"], &d.Instance)
	if raw, ok := members["status"]; ok {
		_ = json.Unmarshal(raw, &d.Status) // a non-integer status is ignored
	}
	d.Errors = fieldErrors(members["errors"])
	if d.Detail == "" {
		var problems []string
		if raw, ok := members["problems"]; ok && json.Unmarshal(raw, &problems) == nil && len(problems) > 0 {
			d.Detail = strings.Join(problems, "; ")
		}
	}
	if d.Detail == "" {
		str(members["error"], &d.Detail)
	}
	if d.Detail == "" {
		str(members["message"], &d.Detail)
	}
	return d, true
}

// str decodes raw into *dst when raw is a JSON string.
func str(raw json.RawMessage, dst *string) {
	if len(raw) > 0 && raw[0] == '"' {
		_ = json.Unmarshal(raw, dst)
	}
}

// fieldErrors reads the validation messages by field, accepting a single
// string as well as a list for a field.
func fieldErrors(raw json.RawMessage) map[string][]string {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || len(fields) == 0 {
		return nil
	}
	out := make(map[string][]string, len(fields))
	for name, v := range fields {
		var list []string
		if json.Unmarshal(v, &list) == nil {
			out[name] = list
			continue
		}
		var one string
		if json.Unmarshal(v, &one) == nil {
			out[name] = []string{one}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Write answers with d as application/problem+json, with status d.Status
// (500 when it is not an error status).
func Write(w http.ResponseWriter, d Details) {
	if d.Status < 400 || d.Status > 599 {
		d.Status = http.StatusInternalServerError
	}
	if d.Title == "" {
		d.Title = http.StatusText(d.Status)
	}
	body, err := json.Marshal(d)
	if err != nil { // cannot happen for this type; answer without a body
		w.WriteHeader(d.Status)
		return
	}
	w.Header().Set("Content-Type", MediaType)
	w.WriteHeader(d.Status)
	_, _ = w.Write(body)
}
