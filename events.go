package synthient

import (
	"bytes"
	"encoding/json"
	"time"
)

// The events of the real-time feeds. Every field may be missing from an
// event (the API marks none required), which leaves it zero. Timestamps are
// Unix seconds for proxies, anonymizers, torrents and ja4t, and Unix
// MILLISECONDS for the four honeypot feeds; use UnixTime to read either.

// UnixTime returns the time of a feed timestamp: seconds, or milliseconds
// when ms is set (the honeypot feeds).
func UnixTime(ts int64, ms bool) time.Time {
	if ms {
		return time.UnixMilli(ts).UTC()
	}
	return time.Unix(ts, 0).UTC()
}

// ProxyEvent is an address seen acting as a proxy (feed proxies).
type ProxyEvent struct {
	IP          string `json:"ip"`
	Provider    string `json:"provider"`
	Type        string `json:"type"`
	Timestamp   int64  `json:"timestamp"` // Unix seconds
	CountryCode string `json:"country_code"`
	ASN         int    `json:"asn"`
}

// AnonymizerEvent is an address range of an anonymizing service (feed
// anonymizers); CountryCode and ASN are those of RangeStart.
type AnonymizerEvent struct {
	RangeStart  string `json:"range_start"`
	RangeEnd    string `json:"range_end"`
	Provider    string `json:"provider"`
	Type        string `json:"type"`
	Timestamp   int64  `json:"timestamp"` // Unix seconds
	CountryCode string `json:"country_code"`
	ASN         int    `json:"asn"`
}

// TorrentEvent is a torrent seen on BitTorrent (feed torrents).
type TorrentEvent struct {
	InfoHash    string        `json:"info_hash"` // 40 hex digits (SHA-1)
	Name        string        `json:"name"`
	MagnetURI   string        `json:"magnet_uri"`
	TotalSize   int64         `json:"total_size"`
	PieceLength int           `json:"piece_length"`
	FileCount   int           `json:"file_count"`
	Files       []TorrentFile `json:"files"`
	Peers       []TorrentPeer `json:"peers"`
	Timestamp   int64         `json:"timestamp"` // Unix seconds
}

// TorrentFile is one file of a torrent.
type TorrentFile struct {
	Path   string `json:"path"`
	Length int64  `json:"length"`
}

// TorrentPeer is one peer of a torrent.
type TorrentPeer struct {
	IP   string `json:"ip"`
	Port int    `json:"port"`
	// Source is where the peer was learnt: DHT, PEX or a tracker.
	Source    string `json:"source"`
	Encrypted bool   `json:"encrypted"`
}

// JA4TEvent is a TCP fingerprint seen from an address (feed ja4t).
type JA4TEvent struct {
	IP          string `json:"ip"`
	JA4T        string `json:"ja4t"`
	Provider    string `json:"provider"`
	Type        string `json:"type"`
	Timestamp   int64  `json:"timestamp"` // Unix seconds
	CountryCode string `json:"country_code"`
	ASN         int    `json:"asn"`
}

// HoneypotMeta describes the honeypot that saw an event. Numbers the API
// sends for these fields are kept as their text.
type HoneypotMeta struct {
	PoolID   string `json:"pool_id"`
	Provider string `json:"provider"`
	ProxyIP  string `json:"proxy_ip"`
	Server   string `json:"server"`
}

// UnmarshalJSON accepts strings, numbers and null for every field.
func (m *HoneypotMeta) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	for name, dst := range map[string]*string{
		"pool_id": &m.PoolID, "provider": &m.Provider, "proxy_ip": &m.ProxyIP, "server": &m.Server,
	} {
		*dst = scalarText(fields[name])
	}
	return nil
}

// scalarText returns a JSON string's value, or the text of any other
// scalar; "" for null or absent.
func scalarText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// HTTPRequestDetails is a request a honeypot received.
type HTTPRequestDetails struct {
	Method  string            `json:"method"`
	URI     string            `json:"uri"`
	Version string            `json:"version"`
	Headers map[string]string `json:"headers"`
}

// HoneypotHTTPEvent is an HTTP request seen by a honeypot (feed
// honeypot_http).
type HoneypotHTTPEvent struct {
	Timestamp int64               `json:"timestamp"` // Unix MILLISECONDS
	TunnelID  int64               `json:"tunnel_id"`
	Domain    string              `json:"domain"`
	Port      int                 `json:"port"`
	Details   *HTTPRequestDetails `json:"details"`
	Raw       string              `json:"raw"` // the raw request text
	Meta      *HoneypotMeta       `json:"meta"`
}

// HoneypotHTTPSEvent is a TLS handshake seen by a honeypot (feed
// honeypot_https).
type HoneypotHTTPSEvent struct {
	Timestamp int64  `json:"timestamp"` // Unix MILLISECONDS
	TunnelID  int64  `json:"tunnel_id"`
	Domain    string `json:"domain"`
	Port      int    `json:"port"`
	// Details is the parsed ClientHello as a JSON object (the API may send
	// it as an object or as a JSON-encoded string; both arrive here as the
	// object), or nil when the API sends null.
	Details json.RawMessage `json:"details"`
	// Raw is the handshake bytes, base64; empty when not captured.
	Raw  string        `json:"raw"`
	Meta *HoneypotMeta `json:"meta"`
}

// UnmarshalJSON decodes the event, unwrapping a Details sent as a JSON
// string.
func (e *HoneypotHTTPSEvent) UnmarshalJSON(b []byte) error {
	type plain HoneypotHTTPSEvent
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	d := bytes.TrimSpace(p.Details)
	switch {
	case len(d) == 0 || string(d) == "null":
		p.Details = nil
	case d[0] == '"':
		var inner string
		if err := json.Unmarshal(d, &inner); err != nil {
			return err
		}
		if in := bytes.TrimSpace([]byte(inner)); json.Valid(in) {
			p.Details = json.RawMessage(in)
		} else {
			p.Details = d // not JSON inside: keep the string
		}
	default:
		p.Details = d
	}
	*e = HoneypotHTTPSEvent(p)
	return nil
}

// HoneypotDNSEvent is a DNS query seen by a honeypot (feed honeypot_dns).
type HoneypotDNSEvent struct {
	Timestamp int64  `json:"timestamp"` // Unix MILLISECONDS
	TunnelID  int64  `json:"tunnel_id"`
	Domain    string `json:"domain"` // the name queried
	// Port is 53 for DNS, 853 for DNS over TLS, 5353 for mDNS.
	Port int           `json:"port"`
	Meta *HoneypotMeta `json:"meta"`
}

// HoneypotADBEvent is an Android Debug Bridge command seen by a honeypot
// (feed honeypot_adb). It carries no timestamp.
type HoneypotADBEvent struct {
	Session      string `json:"session"` // session hash, such as "sha256:..."
	SequentialID int    `json:"sequential_id"`
	Command      []byte `json:"command"` // sent as base64
	Hash         string `json:"hash"`
}
