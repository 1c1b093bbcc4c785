package exports

import "iter"

// The row types of the feeds. Each field is a column of the feed's export
// files, named in the field's parquet tag, in the order of the meta's
// schema; the Go type is the column's type in the meta ("string", "int64",
// "int32", "binary"). The tags are parquet-go's (the fake server writes
// its files with them); reading does not depend on them, nor on the order
// of the columns in a file.

// ProxyRow is one row of a proxies export: an address seen acting as a
// proxy.
type ProxyRow struct {
	IP       string `parquet:"ip" json:"ip"`
	Provider string `parquet:"provider,dict" json:"provider"`
	Type     string `parquet:"type,dict" json:"type"`
	// Timestamp is in Unix seconds.
	Timestamp   int64  `parquet:"timestamp" json:"timestamp"`
	CountryCode string `parquet:"country_code,dict" json:"country_code"`
	ASN         int32  `parquet:"asn" json:"asn"`
}

// AnonymizerRow is one row of an anonymizers export: an address range of
// a VPN, Tor or relay service. CountryCode and ASN are those of
// RangeStart.
type AnonymizerRow struct {
	RangeStart  string `parquet:"range_start" json:"range_start"`
	RangeEnd    string `parquet:"range_end" json:"range_end"`
	Provider    string `parquet:"provider,dict" json:"provider"`
	Type        string `parquet:"type,dict" json:"type"`
	CountryCode string `parquet:"country_code,dict" json:"country_code"`
	ASN         int32  `parquet:"asn" json:"asn"`
	// Timestamp is in Unix seconds.
	Timestamp int64 `parquet:"timestamp" json:"timestamp"`
}

// TorrentRow is one row of a torrents export (the stream's files and
// peers are not exported).
type TorrentRow struct {
	// InfoHash is the torrent's SHA-1 in hex.
	InfoHash    string `parquet:"info_hash" json:"info_hash"`
	Name        string `parquet:"name,dict" json:"name"`
	MagnetURI   string `parquet:"magnet_uri" json:"magnet_uri"`
	TotalSize   int64  `parquet:"total_size" json:"total_size"`
	PieceLength int32  `parquet:"piece_length" json:"piece_length"`
	FileCount   int32  `parquet:"file_count" json:"file_count"`
	// Timestamp is in Unix seconds.
	Timestamp int64 `parquet:"timestamp" json:"timestamp"`
}

// HoneypotHTTPRow is one row of a honeypot_http export: a request to a
// honeypot web server (the stream's headers and meta are not exported).
type HoneypotHTTPRow struct {
	// Timestamp is in Unix milliseconds.
	Timestamp int64  `parquet:"timestamp" json:"timestamp"`
	TunnelID  int64  `parquet:"tunnel_id" json:"tunnel_id"`
	Domain    string `parquet:"domain,dict" json:"domain"`
	Port      int32  `parquet:"port" json:"port"`
	Method    string `parquet:"method,dict" json:"method"`
	URI       string `parquet:"uri,dict" json:"uri"`
	Version   string `parquet:"version,dict" json:"version"`
	// Raw is the request as it came on the wire.
	Raw string `parquet:"raw" json:"raw"`
}

// HoneypotHTTPSRow is one row of a honeypot_https export: a TLS handshake
// with a honeypot (the stream's meta is not exported).
type HoneypotHTTPSRow struct {
	// Timestamp is in Unix milliseconds.
	Timestamp int64  `parquet:"timestamp" json:"timestamp"`
	TunnelID  int64  `parquet:"tunnel_id" json:"tunnel_id"`
	Domain    string `parquet:"domain,dict" json:"domain"`
	Port      int32  `parquet:"port" json:"port"`
	// Details is the parsed ClientHello as JSON text.
	Details string `parquet:"details" json:"details"`
	// Raw is the captured handshake record; nil when it was not captured
	// (a null in the file).
	Raw []byte `parquet:"raw,optional" json:"raw"`
}

// HoneypotDNSRow is one row of a honeypot_dns export: a query to a
// honeypot's name server (the stream's meta is not exported).
type HoneypotDNSRow struct {
	// Timestamp is in Unix milliseconds.
	Timestamp int64 `parquet:"timestamp" json:"timestamp"`
	TunnelID  int64 `parquet:"tunnel_id" json:"tunnel_id"`
	// Domain is the name queried.
	Domain string `parquet:"domain,dict" json:"domain"`
	// Port is 53 (DNS), 853 (DNS over TLS) or 5353 (mDNS).
	Port int32 `parquet:"port" json:"port"`
}

// HoneypotADBRow is one row of a honeypot_adb export: a command of an
// Android Debug Bridge session.
type HoneypotADBRow struct {
	// Session identifies the session ("sha256:..." ).
	Session string `parquet:"session" json:"session"`
	// SequentialID orders the commands of a session, from 0.
	SequentialID int32 `parquet:"sequential_id" json:"sequential_id"`
	// Command is the command's raw bytes.
	Command []byte `parquet:"command" json:"command"`
	// Hash is the command's hash.
	Hash string `parquet:"hash" json:"hash"`
}

// JA4TRow is one row of a ja4t export: a TCP fingerprint seen from an
// address.
type JA4TRow struct {
	IP          string `parquet:"ip" json:"ip"`
	JA4T        string `parquet:"ja4t,dict" json:"ja4t"`
	Provider    string `parquet:"provider,dict" json:"provider"`
	Type        string `parquet:"type,dict" json:"type"`
	Timestamp   int64  `parquet:"timestamp" json:"timestamp"`
	CountryCode string `parquet:"country_code,dict" json:"country_code"`
	ASN         int32  `parquet:"asn" json:"asn"`
}

// The columns each row type reads, in the order of its fields.
var (
	proxyFields = []field[ProxyRow]{
		textCol("ip", func(r *ProxyRow) *string { return &r.IP }),
		textCol("provider", func(r *ProxyRow) *string { return &r.Provider }),
		textCol("type", func(r *ProxyRow) *string { return &r.Type }),
		int64Col("timestamp", func(r *ProxyRow) *int64 { return &r.Timestamp }),
		textCol("country_code", func(r *ProxyRow) *string { return &r.CountryCode }),
		int32Col("asn", func(r *ProxyRow) *int32 { return &r.ASN }),
	}
	anonymizerFields = []field[AnonymizerRow]{
		textCol("range_start", func(r *AnonymizerRow) *string { return &r.RangeStart }),
		textCol("range_end", func(r *AnonymizerRow) *string { return &r.RangeEnd }),
		textCol("provider", func(r *AnonymizerRow) *string { return &r.Provider }),
		textCol("type", func(r *AnonymizerRow) *string { return &r.Type }),
		textCol("country_code", func(r *AnonymizerRow) *string { return &r.CountryCode }),
		int32Col("asn", func(r *AnonymizerRow) *int32 { return &r.ASN }),
		int64Col("timestamp", func(r *AnonymizerRow) *int64 { return &r.Timestamp }),
	}
	torrentFields = []field[TorrentRow]{
		textCol("info_hash", func(r *TorrentRow) *string { return &r.InfoHash }),
		textCol("name", func(r *TorrentRow) *string { return &r.Name }),
		textCol("magnet_uri", func(r *TorrentRow) *string { return &r.MagnetURI }),
		int64Col("total_size", func(r *TorrentRow) *int64 { return &r.TotalSize }),
		int32Col("piece_length", func(r *TorrentRow) *int32 { return &r.PieceLength }),
		int32Col("file_count", func(r *TorrentRow) *int32 { return &r.FileCount }),
		int64Col("timestamp", func(r *TorrentRow) *int64 { return &r.Timestamp }),
	}
	honeypotHTTPFields = []field[HoneypotHTTPRow]{
		int64Col("timestamp", func(r *HoneypotHTTPRow) *int64 { return &r.Timestamp }),
		int64Col("tunnel_id", func(r *HoneypotHTTPRow) *int64 { return &r.TunnelID }),
		textCol("domain", func(r *HoneypotHTTPRow) *string { return &r.Domain }),
		int32Col("port", func(r *HoneypotHTTPRow) *int32 { return &r.Port }),
		textCol("method", func(r *HoneypotHTTPRow) *string { return &r.Method }),
		textCol("uri", func(r *HoneypotHTTPRow) *string { return &r.URI }),
		textCol("version", func(r *HoneypotHTTPRow) *string { return &r.Version }),
		textCol("raw", func(r *HoneypotHTTPRow) *string { return &r.Raw }),
	}
	honeypotHTTPSFields = []field[HoneypotHTTPSRow]{
		int64Col("timestamp", func(r *HoneypotHTTPSRow) *int64 { return &r.Timestamp }),
		int64Col("tunnel_id", func(r *HoneypotHTTPSRow) *int64 { return &r.TunnelID }),
		textCol("domain", func(r *HoneypotHTTPSRow) *string { return &r.Domain }),
		int32Col("port", func(r *HoneypotHTTPSRow) *int32 { return &r.Port }),
		textCol("details", func(r *HoneypotHTTPSRow) *string { return &r.Details }),
		binaryCol("raw", func(r *HoneypotHTTPSRow) *[]byte { return &r.Raw }),
	}
	honeypotDNSFields = []field[HoneypotDNSRow]{
		int64Col("timestamp", func(r *HoneypotDNSRow) *int64 { return &r.Timestamp }),
		int64Col("tunnel_id", func(r *HoneypotDNSRow) *int64 { return &r.TunnelID }),
		textCol("domain", func(r *HoneypotDNSRow) *string { return &r.Domain }),
		int32Col("port", func(r *HoneypotDNSRow) *int32 { return &r.Port }),
	}
	honeypotADBFields = []field[HoneypotADBRow]{
		textCol("session", func(r *HoneypotADBRow) *string { return &r.Session }),
		int32Col("sequential_id", func(r *HoneypotADBRow) *int32 { return &r.SequentialID }),
		binaryCol("command", func(r *HoneypotADBRow) *[]byte { return &r.Command }),
		textCol("hash", func(r *HoneypotADBRow) *string { return &r.Hash }),
	}
	ja4tFields = []field[JA4TRow]{
		textCol("ip", func(r *JA4TRow) *string { return &r.IP }),
		textCol("ja4t", func(r *JA4TRow) *string { return &r.JA4T }),
		textCol("provider", func(r *JA4TRow) *string { return &r.Provider }),
		textCol("type", func(r *JA4TRow) *string { return &r.Type }),
		int64Col("timestamp", func(r *JA4TRow) *int64 { return &r.Timestamp }),
		textCol("country_code", func(r *JA4TRow) *string { return &r.CountryCode }),
		int32Col("asn", func(r *JA4TRow) *int32 { return &r.ASN }),
	}
)

// Proxies returns the rows of a proxies export, in the file's order. What
// the typed sequences share is in the package documentation: a missing
// column or one of another type is a *ColumnError, a file that cannot be
// read a *FormatError; either is yielded once and ends the sequence.
func (f *File) Proxies() iter.Seq2[ProxyRow, error] { return readRows(f, proxyFields) }

// Anonymizers returns the rows of an anonymizers export (see Proxies).
func (f *File) Anonymizers() iter.Seq2[AnonymizerRow, error] { return readRows(f, anonymizerFields) }

// Torrents returns the rows of a torrents export (see Proxies).
func (f *File) Torrents() iter.Seq2[TorrentRow, error] { return readRows(f, torrentFields) }

// HoneypotHTTP returns the rows of a honeypot_http export (see Proxies).
func (f *File) HoneypotHTTP() iter.Seq2[HoneypotHTTPRow, error] {
	return readRows(f, honeypotHTTPFields)
}

// HoneypotHTTPS returns the rows of a honeypot_https export (see
// Proxies).
func (f *File) HoneypotHTTPS() iter.Seq2[HoneypotHTTPSRow, error] {
	return readRows(f, honeypotHTTPSFields)
}

// HoneypotDNS returns the rows of a honeypot_dns export (see Proxies).
func (f *File) HoneypotDNS() iter.Seq2[HoneypotDNSRow, error] { return readRows(f, honeypotDNSFields) }

// HoneypotADB returns the rows of a honeypot_adb export (see Proxies).
func (f *File) HoneypotADB() iter.Seq2[HoneypotADBRow, error] { return readRows(f, honeypotADBFields) }

// JA4T returns the rows of a ja4t export (see Proxies).
func (f *File) JA4T() iter.Seq2[JA4TRow, error] { return readRows(f, ja4tFields) }
