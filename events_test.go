package synthient_test

// Tests of events.go: each feed's events as the streams decode them.

import (
	"context"
	"encoding/json"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// streamBody serves body as an NDJSON stream and returns the events and
// errors of the stream that method opens on it.
func streamBody[T any](t *testing.T, method func(*synthient.Client, context.Context) iter.Seq2[T, error], body string) ([]T, []error) {
	t.Helper()
	srv := newAPIServer(t, serveNDJSON(body))
	c := newClient(t, srv.Base)
	evs, errs, _ := drain(method(c, context.Background()), 0)
	return evs, errs
}

// decodeStream is streamBody for a body that decodes without an error.
func decodeStream[T any](t *testing.T, method func(*synthient.Client, context.Context) iter.Seq2[T, error], body string) []T {
	t.Helper()
	evs, errs := streamBody(t, method, body)
	require.Empty(t, errs)
	return evs
}

func TestStreamDecodesSecondsFeeds(t *testing.T) {
	t.Parallel()
	// The proxy stream excerpt of api-v4.md §7, heartbeat included.
	proxies := decodeStream(t, (*synthient.Client).StreamProxies,
		`{"ip":"192.0.2.44","provider":"EXAMPLEPROXY","type":"RESIDENTIAL_PROXY","timestamp":1781136001,"country_code":"US","asn":64496}
{"ip":"2001:db8:5::9","provider":"EXAMPLEPROXY","type":"MOBILE_PROXY","timestamp":1781136001,"country_code":"GB","asn":64497}

{"ip":"198.51.100.200","provider":"OTHERPROXY","type":"DATACENTER_PROXY","timestamp":1781136017,"country_code":"DE","asn":64498}
`)
	require.Equal(t, []synthient.ProxyEvent{
		{IP: "192.0.2.44", Provider: "EXAMPLEPROXY", Type: "RESIDENTIAL_PROXY", Timestamp: 1781136001, CountryCode: "US", ASN: 64496},
		{IP: "2001:db8:5::9", Provider: "EXAMPLEPROXY", Type: "MOBILE_PROXY", Timestamp: 1781136001, CountryCode: "GB", ASN: 64497},
		{IP: "198.51.100.200", Provider: "OTHERPROXY", Type: "DATACENTER_PROXY", Timestamp: 1781136017, CountryCode: "DE", ASN: 64498},
	}, proxies, "proxies")
	got := synthient.UnixTime(proxies[2].Timestamp, false)
	assert.True(t, got.Equal(time.Unix(1781136017, 0)), "UnixTime(seconds) = %v", got)
	assert.Same(t, time.UTC, got.Location(), "UnixTime(seconds) = %v, want UTC", got)

	anon := decodeStream(t, (*synthient.Client).StreamAnonymizers,
		`{"range_start":"198.51.100.0","range_end":"198.51.100.255","provider":"EXAMPLEVPN","type":"commercial_vpn","timestamp":1781136002,"country_code":"NL","asn":64501}`+"\n")
	assert.Equal(t, []synthient.AnonymizerEvent{{RangeStart: "198.51.100.0", RangeEnd: "198.51.100.255", Provider: "EXAMPLEVPN",
		Type: "commercial_vpn", Timestamp: 1781136002, CountryCode: "NL", ASN: 64501}}, anon, "anonymizers")

	tor := decodeStream(t, (*synthient.Client).StreamTorrents,
		`{"info_hash":"0123456789abcdef0123456789abcdef01234567","name":"debian.iso","magnet_uri":"magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567",`+
			`"total_size":4000000000,"piece_length":262144,"file_count":2,"files":[{"path":"d/debian.iso","length":3999999000},{"path":"d/README","length":1000}],`+
			`"peers":[{"ip":"203.0.113.9","port":6881,"source":"DHT","encrypted":true},{"ip":"2001:db8::7","port":51413,"source":"udp://tracker.example:1337","encrypted":false}],`+
			`"timestamp":1781136003}`+"\n")
	assert.Equal(t, []synthient.TorrentEvent{{
		InfoHash: "0123456789abcdef0123456789abcdef01234567", Name: "debian.iso",
		MagnetURI: "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567",
		TotalSize: 4000000000, PieceLength: 262144, FileCount: 2,
		Files: []synthient.TorrentFile{{Path: "d/debian.iso", Length: 3999999000}, {Path: "d/README", Length: 1000}},
		Peers: []synthient.TorrentPeer{
			{IP: "203.0.113.9", Port: 6881, Source: "DHT", Encrypted: true},
			{IP: "2001:db8::7", Port: 51413, Source: "udp://tracker.example:1337", Encrypted: false},
		},
		Timestamp: 1781136003,
	}}, tor, "torrents")

	ja4t := decodeStream(t, (*synthient.Client).StreamJA4T,
		`{"ip":"192.0.2.10","ja4t":"43080_2-4-8-1-3_1436_9","provider":"EXAMPLEPROXY","type":"DATACENTER_PROXY","timestamp":1781136004,"country_code":"US","asn":64502}`+"\n")
	assert.Equal(t, []synthient.JA4TEvent{{IP: "192.0.2.10", JA4T: "43080_2-4-8-1-3_1436_9", Provider: "EXAMPLEPROXY",
		Type: "DATACENTER_PROXY", Timestamp: 1781136004, CountryCode: "US", ASN: 64502}}, ja4t, "ja4t")

	// Missing and unknown fields are tolerated.
	sparse := decodeStream(t, (*synthient.Client).StreamProxies, `{"ip":"192.0.2.1","future_field":{"x":[1,2]}}`+"\n")
	assert.Equal(t, []synthient.ProxyEvent{{IP: "192.0.2.1"}}, sparse, "sparse event")
}

func TestStreamDecodesHoneypotHTTP(t *testing.T) {
	t.Parallel()
	evs := decodeStream(t, (*synthient.Client).StreamHoneypotHTTP,
		`{"timestamp":1781136005123,"tunnel_id":9007199254740993,"domain":"example.org","port":8080,`+
			`"details":{"method":"GET","uri":"/wp-login.php","version":"HTTP/1.1","headers":{"Host":"example.org","User-Agent":"curl/8.0"}},`+
			`"raw":"GET /wp-login.php HTTP/1.1\r\nHost: example.org\r\n\r\n",`+
			`"meta":{"pool_id":17,"provider":"EXAMPLEPROXY","proxy_ip":"198.51.100.77","server":"hp-3"}}`+"\n"+
			`{"timestamp":1781136006000,"domain":"example.net","details":null,"meta":{"pool_id":"pool-a","provider":null}}`+"\n")
	assert.Equal(t, []synthient.HoneypotHTTPEvent{
		{
			Timestamp: 1781136005123, TunnelID: 9007199254740993, Domain: "example.org", Port: 8080,
			Details: &synthient.HTTPRequestDetails{Method: "GET", URI: "/wp-login.php", Version: "HTTP/1.1",
				Headers: map[string]string{"Host": "example.org", "User-Agent": "curl/8.0"}},
			Raw:  "GET /wp-login.php HTTP/1.1\r\nHost: example.org\r\n\r\n",
			Meta: &synthient.HoneypotMeta{PoolID: "17", Provider: "EXAMPLEPROXY", ProxyIP: "198.51.100.77", Server: "hp-3"},
		},
		{
			Timestamp: 1781136006000, Domain: "example.net",
			Meta: &synthient.HoneypotMeta{PoolID: "pool-a"},
		},
	}, evs)
	if len(evs) > 0 {
		got := synthient.UnixTime(evs[0].Timestamp, true)
		assert.True(t, got.Equal(time.Unix(1781136005, 123e6)), "UnixTime(ms) = %v, want 2026-06-11 00:00:05.123 UTC", got)
		assert.Same(t, time.UTC, got.Location(), "UnixTime(ms) = %v, want UTC", got)
		assert.Equal(t, 2026, got.Year(), "UnixTime(ms) = %v", got)
	}
}

func TestStreamDecodesHoneypotHTTPSDetails(t *testing.T) {
	t.Parallel()
	const object = `{"sni":"example.org","ciphers":[4865,4866],"alpn":["h2","http/1.1"]}`
	encoded, err := json.Marshal(object)
	require.NoError(t, err)
	cases := []struct {
		name    string
		details string
		want    string // "" for nil
	}{
		{"JSON-encoded string", string(encoded), object},
		{"object", object, object},
		{"null", "null", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs := decodeStream(t, (*synthient.Client).StreamHoneypotHTTPS,
				`{"timestamp":1781136007001,"tunnel_id":5,"domain":"example.org","port":443,"details":`+tc.details+
					`,"raw":"FgMBAAEBAA==","meta":{"pool_id":3,"provider":"P","proxy_ip":"198.51.100.1","server":"s"}}`+"\n")
			require.Len(t, evs, 1)
			e := evs[0]
			assert.Equal(t, int64(1781136007001), e.Timestamp, "Timestamp")
			assert.Equal(t, int64(5), e.TunnelID, "TunnelID")
			assert.Equal(t, "example.org", e.Domain, "Domain")
			assert.Equal(t, 443, e.Port, "Port")
			assert.Equal(t, "FgMBAAEBAA==", e.Raw, "Raw")
			assert.Equal(t, &synthient.HoneypotMeta{PoolID: "3", Provider: "P", ProxyIP: "198.51.100.1", Server: "s"}, e.Meta, "Meta")
			if tc.want == "" {
				assert.Nil(t, e.Details, "Details = %s, want nil", e.Details)
				return
			}
			var got any
			require.NoError(t, json.Unmarshal(e.Details, &got), "Details %s is not JSON", e.Details)
			assert.IsType(t, map[string]any{}, got, "Details is still a JSON string: %s", e.Details)
			assert.JSONEq(t, tc.want, string(e.Details), "Details, want the object")
		})
	}
	t.Run("absent", func(t *testing.T) {
		t.Parallel()
		evs := decodeStream(t, (*synthient.Client).StreamHoneypotHTTPS, `{"timestamp":1,"domain":"x"}`+"\n")
		require.Len(t, evs, 1)
		assert.Nil(t, evs[0].Details, "Details")
		assert.Nil(t, evs[0].Meta, "Meta")
	})
}

func TestStreamDecodesHoneypotDNSAndADB(t *testing.T) {
	t.Parallel()
	dns := decodeStream(t, (*synthient.Client).StreamHoneypotDNS,
		`{"timestamp":1781136008000,"tunnel_id":42,"domain":"x.example.org","port":853,"meta":{"pool_id":12.5,"provider":"P","proxy_ip":"2001:db8::53","server":"dns-1"}}`+"\n")
	require.Equal(t, []synthient.HoneypotDNSEvent{{Timestamp: 1781136008000, TunnelID: 42, Domain: "x.example.org", Port: 853,
		Meta: &synthient.HoneypotMeta{PoolID: "12.5", Provider: "P", ProxyIP: "2001:db8::53", Server: "dns-1"}}}, dns, "dns")
	got := synthient.UnixTime(dns[0].Timestamp, true)
	assert.True(t, got.Equal(time.Unix(1781136008, 0)), "UnixTime(ms) = %v", got)

	adb := decodeStream(t, (*synthient.Client).StreamHoneypotADB,
		`{"session":"sha256:9b74c9897bac770ffc029102a200c5de","sequential_id":3,"command":"aWQ7IHVuYW1lIC1h","hash":"sha256:ef01"}`+"\n"+
			`{"session":"sha256:9b74c9897bac770ffc029102a200c5de","sequential_id":4,"command":"AAEC/w==","hash":"sha256:ef02"}`+"\n")
	assert.Equal(t, []synthient.HoneypotADBEvent{
		{Session: "sha256:9b74c9897bac770ffc029102a200c5de", SequentialID: 3, Command: []byte("id; uname -a"), Hash: "sha256:ef01"},
		{Session: "sha256:9b74c9897bac770ffc029102a200c5de", SequentialID: 4, Command: []byte{0, 1, 2, 0xff}, Hash: "sha256:ef02"},
	}, adb, "adb")

	// A command that is not base64 does not decode.
	_, errs := streamBody(t, (*synthient.Client).StreamHoneypotADB, `{"session":"s","command":"not base64!"}`+"\n")
	require.Len(t, errs, 1)
	var de *synthient.DecodeError
	assert.ErrorAs(t, errs[0], &de)
}
