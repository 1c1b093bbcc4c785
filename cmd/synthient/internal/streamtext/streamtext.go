// Package streamtext renders stream events in text: one line per event,
// its time first, then the fields that tell events of the feed apart, two
// spaces between fields. Each field is escaped as a table cell
// (textsafe.EscapeCell), so a value cannot end the line early. An event
// that does not decode as its feed's (or has none of the feed's fields)
// is not rendered: the command prints its JSON.
package streamtext

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// EventLine renders one event of feed, given as its JSON, as a line
// (without the newline); ok is false when it does not decode.
func EventLine(feed synthient.Feed, raw []byte) (line string, ok bool) {
	fieldsOf, known := eventRenderers[feed]
	if !known {
		return "", false
	}
	fields, err := fieldsOf(raw)
	if err != nil {
		return "", false // not the feed's event, or none of its fields
	}
	for i, f := range fields {
		fields[i] = textsafe.EscapeCell(render.OrDash(f))
	}
	return strings.Join(fields, "  "), true
}

// eventRenderers decode an event of each feed into the fields of its
// line.
var eventRenderers = map[synthient.Feed]func([]byte) ([]string, error){
	synthient.FeedProxies: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.ProxyEvent](raw)
		return []string{eventTime(e.Timestamp, false), e.IP, e.Provider, e.Type, e.CountryCode, asn(e.ASN)}, err
	},
	synthient.FeedAnonymizers: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.AnonymizerEvent](raw)
		return []string{eventTime(e.Timestamp, false), e.RangeStart + "-" + e.RangeEnd, e.Provider, e.Type, e.CountryCode, asn(e.ASN)}, err
	},
	synthient.FeedTorrents: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.TorrentEvent](raw)
		return []string{eventTime(e.Timestamp, false), e.InfoHash, render.Clip(e.Name, 60), render.BytesHuman(e.TotalSize),
			render.Plural(int64(e.FileCount), "file", "files"), render.Plural(int64(len(e.Peers)), "peer", "peers")}, err
	},
	synthient.FeedJA4T: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.JA4TEvent](raw)
		return []string{eventTime(e.Timestamp, false), e.IP, e.JA4T, e.Provider, e.Type, e.CountryCode, asn(e.ASN)}, err
	},
	synthient.FeedHoneypotHTTP: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.HoneypotHTTPEvent](raw)
		request := ""
		if d := e.Details; d != nil {
			request = render.Clip(d.Method+" "+d.URI, 80)
		}
		return []string{eventTime(e.Timestamp, true), hostPort(e.Domain, e.Port), request, honeypot(e.Meta)}, err
	},
	synthient.FeedHoneypotHTTPS: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.HoneypotHTTPSEvent](raw)
		return []string{eventTime(e.Timestamp, true), hostPort(e.Domain, e.Port), "TLS ClientHello", honeypot(e.Meta)}, err
	},
	synthient.FeedHoneypotDNS: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.HoneypotDNSEvent](raw)
		return []string{eventTime(e.Timestamp, true), e.Domain, "port " + strconv.Itoa(e.Port), honeypot(e.Meta)}, err
	},
	synthient.FeedHoneypotADB: func(raw []byte) ([]string, error) {
		e, err := decodeEvent[synthient.HoneypotADBEvent](raw)
		return []string{e.Session, "#" + strconv.Itoa(e.SequentialID), render.Clip(adbCommand(e.Command), 80)}, err
	},
}

// errNotEvent is the error of an event that has none of its feed's
// fields.
var errNotEvent = errors.New("none of the feed's fields")

// decodeEvent decodes raw as an event of type T, which must hold one of
// T's fields at least.
func decodeEvent[T any](raw []byte) (T, error) {
	var e T
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, err
	}
	if reflect.ValueOf(e).IsZero() {
		return e, errNotEvent
	}
	return e, nil
}

// eventTime renders a feed timestamp (ms: in milliseconds) in UTC.
func eventTime(ts int64, ms bool) string {
	if ts == 0 {
		return ""
	}
	layout := "2006-01-02 15:04:05Z"
	if ms {
		layout = "2006-01-02 15:04:05.000Z"
	}
	return synthient.UnixTime(ts, ms).Format(layout)
}

func asn(n int) string {
	if n == 0 {
		return ""
	}
	return "AS" + strconv.Itoa(n)
}

func hostPort(host string, port int) string {
	if port == 0 {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}

// honeypot names the honeypot that saw an event: its provider and pool.
func honeypot(m *synthient.HoneypotMeta) string {
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m.Provider + " " + m.PoolID)
}

// adbCommand is an ADB command's text, NUL separators as spaces; bytes
// that are not UTF-8 are escaped by the cell.
func adbCommand(b []byte) string {
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
