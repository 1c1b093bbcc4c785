package synthienttest_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// take returns the first n elements of seq, and the error that ended it.
func take[T any](seq iter.Seq2[T, error], n int) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
		if len(out) == n {
			break
		}
	}
	return out, nil
}

func TestStreamsTyped(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond))
	c := newClient(t, srv)
	ctx := context.Background()
	sec, ms := testNow.Unix(), testNow.UnixMilli()
	near := func(ts int64) bool { return ts <= ms && ts > ms-5000 }

	proxies, err := take(c.StreamProxies(ctx), 5)
	must(t, err, "StreamProxies")
	for _, e := range proxies {
		a, perr := netip.ParseAddr(e.IP)
		check(t, perr == nil && e.Provider != "" && e.Timestamp == sec, "proxy event %+v", e)
		check(t, slices.Contains([]string{"RESIDENTIAL_PROXY", "MOBILE_PROXY", "DATACENTER_PROXY", "PUBLIC_PROXY"}, e.Type), "type %q", e.Type)
		// The stream and a lookup of the address agree.
		l, err := c.LookupIP(ctx, a)
		must(t, err, "LookupIP")
		eq(t, e.ASN, l.Network.ASN, "ASN as the lookup says")
		eq(t, e.CountryCode, l.Location.Country, "country as the lookup says")
		check(t, slices.ContainsFunc(l.Intelligence.Providers, func(p synthient.Provider) bool { return p.Provider == e.Provider }),
			"the lookup of %s does not list provider %s", e.IP, e.Provider)
	}
	anon, err := take(c.StreamAnonymizers(ctx), 3)
	must(t, err, "StreamAnonymizers")
	for _, e := range anon {
		s, err1 := netip.ParseAddr(e.RangeStart)
		x, err2 := netip.ParseAddr(e.RangeEnd)
		check(t, err1 == nil && err2 == nil && s.Less(x) && e.Provider != "" && e.Timestamp == sec && e.ASN > 0 && len(e.CountryCode) == 2, "anonymizer event %+v", e)
	}
	torrents, err := take(c.StreamTorrents(ctx), 3)
	must(t, err, "StreamTorrents")
	for _, e := range torrents {
		_, herr := hex.DecodeString(e.InfoHash)
		check(t, len(e.InfoHash) == 40 && herr == nil, "info hash %q", e.InfoHash)
		check(t, strings.HasPrefix(e.MagnetURI, "magnet:?xt=urn:btih:"+e.InfoHash), "magnet %q", e.MagnetURI)
		eq(t, e.FileCount, len(e.Files), "file_count")
		var total int64
		for _, f := range e.Files {
			total += f.Length
		}
		eq(t, e.TotalSize, total, "total_size")
		check(t, e.PieceLength >= 1<<18 && e.PieceLength&(e.PieceLength-1) == 0, "piece length %d", e.PieceLength)
		check(t, len(e.Peers) > 0 && e.Timestamp == sec, "torrent %+v", e)
	}
	httpEvents, err := take(c.StreamHoneypotHTTP(ctx), 3)
	must(t, err, "StreamHoneypotHTTP")
	for _, e := range httpEvents {
		check(t, near(e.Timestamp), "honeypot_http timestamp %d is not in milliseconds near %d", e.Timestamp, ms)
		check(t, e.Details != nil && e.Details.Method != "" && strings.HasPrefix(e.Raw, e.Details.Method+" "+e.Details.URI+" HTTP/1.1\r\n"), "http event %+v", e)
		check(t, e.Meta != nil && e.Meta.PoolID != "" && e.TunnelID > 0 && e.Port > 0, "http event meta %+v", e)
	}
	httpsEvents, err := take(c.StreamHoneypotHTTPS(ctx), 4)
	must(t, err, "StreamHoneypotHTTPS")
	for _, e := range httpsEvents {
		check(t, near(e.Timestamp), "honeypot_https timestamp %d", e.Timestamp)
		var hello map[string]any
		must(t, json.Unmarshal(e.Details, &hello), "details")
		eq(t, hello["sni"], any(e.Domain), "sni")
	}
	dns, err := take(c.StreamHoneypotDNS(ctx), 3)
	must(t, err, "StreamHoneypotDNS")
	for _, e := range dns {
		check(t, near(e.Timestamp) && slices.Contains([]int{53, 853, 5353}, e.Port) && e.Domain != "", "dns event %+v", e)
	}
	adb, err := take(c.StreamHoneypotADB(ctx), 6)
	must(t, err, "StreamHoneypotADB")
	for i, e := range adb {
		sum := sha256.Sum256(e.Command)
		eq(t, e.Hash, hex.EncodeToString(sum[:]), "command hash")
		check(t, strings.HasPrefix(e.Session, "sha256:") && len(e.Command) > 0, "adb event %+v", e)
		if i > 0 && e.Session == adb[i-1].Session {
			eq(t, e.SequentialID, adb[i-1].SequentialID+1, "sequential id")
		}
	}
	ja4t, err := take(c.StreamJA4T(ctx), 3)
	must(t, err, "StreamJA4T")
	for _, e := range ja4t {
		check(t, strings.Count(e.JA4T, "_") == 3 && e.Timestamp == sec && e.Provider != "" && e.Type != "", "ja4t event %+v", e)
	}
	raw, err := take(c.StreamRaw(ctx, synthient.FeedJA4T), 2)
	must(t, err, "StreamRaw")
	for _, r := range raw {
		var m map[string]any
		must(t, json.Unmarshal(r, &m), "raw event")
		check(t, m["ja4t"] != nil && m["ip"] != nil, "raw event %s", r)
	}
	eventually(t, "every stream is closed", func() bool { return srv.OpenStreams() == 0 })
	eq(t, srv.Arrivals(synthienttest.RouteStream), 9, "stream arrivals")
}

// openRaw opens a stream with net/http and returns a line reader.
func openRaw(t *testing.T, hc *http.Client, srv *synthienttest.Server, seg string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL+"/feeds/"+seg+"/stream", nil)
	must(t, err, "request")
	req.Header.Set("X-Api-Key", srv.APIKey)
	resp, err := hc.Do(req)
	must(t, err, "opening the stream")
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

func TestStreamWireFormat(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Hour), synthienttest.WithHeartbeat(10*time.Millisecond))
	resp, br := openRaw(t, rawClient(t), srv, "helio/https")
	eq(t, resp.StatusCode, 200, "status")
	eq(t, resp.Header.Get("Content-Type"), "application/x-ndjson", "Content-Type")
	check(t, resp.Header.Get("RateLimit-Limit") == "20", "RateLimit-Limit %q", resp.Header.Get("RateLimit-Limit"))
	first, err := br.ReadString('\n')
	must(t, err, "first line")
	var ev struct {
		Details json.RawMessage `json:"details"`
	}
	must(t, json.Unmarshal([]byte(first), &ev), "first event")
	check(t, strings.HasPrefix(string(ev.Details), `"`), "details is not a JSON string: %s", ev.Details)
	// Then only heartbeats: the next event is an hour away.
	for range 3 {
		line, err := br.ReadString('\n')
		must(t, err, "heartbeat")
		eq(t, line, "\n", "heartbeat line")
	}
}

func TestStreamHTTPSDetailsForms(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond), synthienttest.WithHTTPSDetails(synthienttest.DetailsMixed))
	_, br := openRaw(t, rawClient(t), srv, "helio/https")
	forms := map[byte]bool{}
	for range 6 {
		line, err := br.ReadBytes('\n')
		must(t, err, "line")
		var ev struct {
			Details json.RawMessage `json:"details"`
		}
		must(t, json.Unmarshal(line, &ev), "event")
		forms[ev.Details[0]] = true
		var typed synthient.HoneypotHTTPSEvent
		must(t, json.Unmarshal(line, &typed), "the SDK's type")
		check(t, typed.Details == nil || typed.Details[0] == '{', "the SDK kept details %s", typed.Details)
	}
	check(t, forms['"'] && forms['{'] && forms['n'], "details forms %v", forms)

	obj, _ := newServer(t, synthienttest.WithHTTPSDetails(synthienttest.DetailsObject))
	_, br = openRaw(t, rawClient(t), obj, "helio/https")
	line, err := br.ReadBytes('\n')
	must(t, err, "line")
	check(t, strings.Contains(string(line), `"details":{`), "details is not an object: %s", line)
}

func TestStreamEndsCleanly(t *testing.T) {
	ctx := context.Background()
	// After the events cap.
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond), synthienttest.WithMaxEvents(5))
	c := newClient(t, srv)
	n := 0
	for _, err := range c.StreamProxies(ctx) {
		must(t, err, "stream")
		n++
	}
	eq(t, n, 5, "events before the cap")

	// After the lifetime.
	srv2, _ := newServer(t, synthienttest.WithEventInterval(10*time.Millisecond), synthienttest.WithStreamLifetime(150*time.Millisecond))
	c2 := newClient(t, srv2)
	start := time.Now()
	n = 0
	for _, err := range c2.StreamTorrents(ctx) {
		must(t, err, "stream")
		n++
	}
	took := time.Since(start)
	check(t, took >= 150*time.Millisecond && took < 2*time.Second, "stream lived %v", took)
	check(t, n >= 3 && n <= 20, "%d events in 150 ms at 10 ms", n)
	wait, ok := synthient.ReconnectDelay(nil)
	check(t, ok && wait == 0, "a clean close reconnects at once")
	eventually(t, "the streams are closed", func() bool { return srv.OpenStreams()+srv2.OpenStreams() == 0 })
}

func TestStreamStopsWhenClientLeaves(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond))
	c := newClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	for _, err := range c.StreamHoneypotDNS(ctx) {
		if err != nil {
			check(t, n == 10 && errors.Is(err, context.Canceled), "after %d events: %v", n, err)
			break
		}
		n++
		if n == 1 {
			eq(t, srv.OpenStreams(), 1, "open streams")
		}
		if n == 10 {
			cancel()
		}
	}
	cancel()
	eventually(t, "the server sees the client leave", func() bool { return srv.OpenStreams() == 0 })
}

func TestStreamDefaults(t *testing.T) {
	eq(t, synthienttest.DefaultHeartbeat, 15*time.Second, "default heartbeat")
	eq(t, synthienttest.DefaultStreamLifetime, 30*time.Minute, "default stream lifetime")
	eq(t, synthienttest.DefaultStreamLimit, 2, "default concurrent-stream limit")
}

func TestStreamConcurrencyLimit(t *testing.T) {
	srv, _ := newServer(t, synthienttest.WithEventInterval(5*time.Millisecond))
	c := newClient(t, srv)
	// Bounded: with a wrong limit the third stream would open and run on.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	next1, stop1 := iter.Pull2(c.StreamProxies(ctx))
	defer stop1()
	next2, stop2 := iter.Pull2(c.StreamJA4T(ctx))
	defer stop2()
	_, err, ok := next1()
	check(t, ok && err == nil, "first stream: %v", err)
	_, err, ok = next2()
	check(t, ok && err == nil, "second stream: %v", err)
	eq(t, srv.OpenStreams(), 2, "open streams")

	// A third stream of the same key: 429 without Retry-After.
	hc := rawClient(t)
	hc.Timeout = 10 * time.Second
	r := do(t, hc, "GET", srv.URL+"/feeds/torrents/stream", srv.APIKey, "")
	p := problemOf(t, r, 429)
	eq(t, r.Header.Get("Retry-After"), "", "Retry-After on the concurrent-stream 429")
	check(t, strings.Contains(p.Detail, "concurrent"), "detail %q", p.Detail)
	check(t, r.Header.Get("RateLimit-Limit") != "", "no RateLimit headers")

	// The SDK returns it at once, without retrying.
	srv.Reset()
	_, err = take(c.StreamAnonymizers(ctx), 1)
	apiErr := asAPIError(t, err)
	eq(t, apiErr.Status, 429, "status")
	check(t, apiErr.RetryAfter == nil, "RetryAfter %v", apiErr.RetryAfter)
	eq(t, srv.Arrivals(synthienttest.RouteStream), 1, "arrivals")
	_, ok = synthient.ReconnectDelay(err)
	check(t, ok, "a 429 is worth reconnecting later")

	// Another key has its own allowance.
	other := srv.AddKey([]string{synthienttest.StreamScope(synthient.FeedTorrents)}, 0)
	_, err = take(newClientKey(t, srv, other).StreamTorrents(ctx), 1)
	must(t, err, "another key's stream")

	stop1()
	eventually(t, "a stream slot frees", func() bool { return srv.OpenStreams() == 1 })
	_, err = take(c.StreamAnonymizers(ctx), 1)
	must(t, err, "a stream after one closed")
}

func TestCloseEndsStreams(t *testing.T) {
	srv := synthienttest.NewServer(synthienttest.WithEventInterval(time.Hour), synthienttest.WithHeartbeat(time.Hour))
	c := newClient(t, srv)
	done := make(chan error, 1)
	got := make(chan struct{})
	go func() {
		var last error
		for _, err := range c.StreamProxies(context.Background()) {
			if err != nil {
				last = err
				break
			}
			close(got)
		}
		done <- last
	}()
	<-got
	start := time.Now()
	srv.Close()
	check(t, time.Since(start) < 2*time.Second, "Close took %v", time.Since(start))
	select {
	case err := <-done:
		// The fake cuts the connection: the client sees the chunked body
		// end early.
		var ce *synthient.ConnectionError
		check(t, err == nil || errors.As(err, &ce), "stream ended with %v", err)
	case <-time.After(3 * time.Second):
		t.Fatal("the stream did not end after Close")
	}
}

func TestStreamHeartbeatsKeepItAlive(t *testing.T) {
	ctx := context.Background()
	// Events every 400 ms, heartbeats every 25 ms: a client that times out
	// reads after 250 ms reads on.
	srv, _ := newServer(t, synthienttest.WithEventInterval(400*time.Millisecond),
		synthienttest.WithHeartbeat(25*time.Millisecond), synthienttest.WithMaxEvents(3))
	evs, err := take(newClient(t, srv, synthient.WithTimeout(250*time.Millisecond)).StreamHoneypotDNS(ctx), 10)
	must(t, err, "a stream with heartbeats")
	eq(t, len(evs), 3, "events")

	// Without heartbeats the same client times out after the first event.
	quiet, _ := newServer(t, synthienttest.WithEventInterval(time.Hour))
	evs, err = take(newClient(t, quiet, synthient.WithTimeout(250*time.Millisecond)).StreamHoneypotDNS(ctx), 10)
	eq(t, len(evs), 1, "events")
	var te *synthient.TimeoutError
	check(t, errors.As(err, &te), "error %v (%T)", err, err)
	eq(t, quiet.Arrivals(synthienttest.RouteStream), 1, "arrivals: a read failure is not retried")
}

// The first events of the first two streams of every feed (and of each
// form of the honeypot_https details), on a fresh fake at testNow, hash to
// the pinned sums: the generators make exactly these events.
func TestStreamEventsPinned(t *testing.T) {
	for _, tc := range []struct {
		seg  string
		form synthienttest.DetailsForm
		sum  string
	}{
		{"proxies", synthienttest.DetailsString, "fb533b7f5455471665971a4adcad332d57d41077e772a3de4f8b7465f9bb001a"},
		{"anonymizers", synthienttest.DetailsString, "edd5f29e2faf90633a1b074672949261092b264ba3d37d6cdcab42da8c5cf733"},
		{"torrents", synthienttest.DetailsString, "eed45eab3a925279aa5555aa258d97c6e2c5b504cf5494acd3b8ffe6f40e09eb"},
		{"helio/http", synthienttest.DetailsString, "bd76f11d147c23420d29b8a28d3f0ac7da63e9dada4f6ede52cb0ed0cd4ca208"},
		{"helio/https", synthienttest.DetailsString, "9aaa45b66d7121cf51d3d2da1731bd22660079e172809a48e46337a09615a8f2"},
		{"helio/https", synthienttest.DetailsObject, "61b1438bc934f3f3bebd2bb7ce187c251e156c91a5186b7da7a89f61fff9d4b3"},
		{"helio/https", synthienttest.DetailsMixed, "350e1924d522d58f9f2edd1b28b1132aedb14699a63344463b0596c8dda464c7"},
		{"helio/dns", synthienttest.DetailsString, "2640e8ce01a4750bb2d9ffc4da0d80a5312ec4f7c0eaf8bb3f503994ab6caf08"},
		{"helio/adb", synthienttest.DetailsString, "841dc43f53eb50afc3ba8733b8b3d9ea2d65eb7a95e99bc6189dabc6f85ba8d3"},
		{"ja4t", synthienttest.DetailsString, "3a73d177eb5e20159927582ef633a96c2245a5a0d105ffde52a159a2d49f2192"},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.seg, tc.form), func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond), synthienttest.WithMaxEvents(150),
				synthienttest.WithHTTPSDetails(tc.form), synthienttest.WithoutRateLimits())
			hc := rawClient(t)
			h := sha256.New()
			for range 2 {
				r := do(t, hc, "GET", srv.URL+"/feeds/"+tc.seg+"/stream", srv.APIKey, "")
				require.Equal(t, http.StatusOK, r.Status)
				require.Equal(t, 150, bytes.Count(r.Body, []byte{'\n'}), "events")
				_, _ = h.Write(r.Body)
			}
			assert.Equal(t, tc.sum, hex.EncodeToString(h.Sum(nil)))
		})
	}
}
