package synthient_test

// Benchmarks, each pairing the SDK with plain net/http plus encoding/json
// doing the same work on the same loopback server in the same run. The
// figures and the command that produced them are in docs/performance.md;
// scripts/bench.sh reproduces them.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
)

// lookupBody is a full IpLookup answer (api-v4.md §7).
const lookupBody = `{"ip":"198.51.100.23","network":{"asn":64500,"isp":"Example Broadband","type":"RESIDENTIAL","org":null,"domain":"example-broadband.net","abuse_email":"abuse@example-broadband.net","abuse_phone":null},"location":{"country":"DE","state":"BE","city":"Berlin","timezone":"Europe/Berlin","latitude":52.52,"longitude":13.405,"geo_hash":"u33"},"intelligence":{"risk_score":81,"behavior":["PROGRAMMATIC_TRAFFIC"],"categories":["RESIDENTIAL_PROXY"],"devices":[{"os":"Android","version":"13","last_seen":1781049600}],"providers":[{"provider":"EXAMPLEPROXY","type":"RESIDENTIAL_PROXY","last_seen":1781136000}]}}`

// lookupServer answers every request with lookupBody, for the address
// the path names (the parallel benchmarks ask for many), and RateLimit
// headers that say the bucket is far from spent, as most answers of the
// API do: the SDK's pacing learns from each and never holds a call. A plain
// httptest server, not apiServer: the benchmarks measure the client, and
// apiServer records each request and watches its context in a goroutine
// of its own.
func lookupServer(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Ratelimit-Limit"] = []string{"200"}
		h["Ratelimit-Remaining"] = []string{"199"}
		h["Ratelimit-Reset"] = []string{"1"}
		body := lookupBody
		if ip := path.Base(r.URL.Path); ip != "198.51.100.23" && strings.HasPrefix(r.URL.Path, "/api/v4/lookup/ip/") {
			body = strings.Replace(body, "198.51.100.23", ip, 1)
		}
		writeJSON(w, http.StatusOK, body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// plainClient is what a careful user would write with net/http alone: a
// shared transport with enough idle connections, the key header, a status
// check and a JSON decode.
type plainClient struct {
	hc   *http.Client
	base string
}

func newPlainClient(b *testing.B, base string) *plainClient {
	tr := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	return &plainClient{hc: &http.Client{Transport: tr}, base: base}
}

func (p *plainClient) lookupIP(ctx context.Context, ip netip.Addr) (*synthient.IPLookup, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/lookup/ip/"+ip.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Api-Key", testKey)
	req.Header.Set("Accept", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close() //nolint:errcheck // decoded or given up: Close says nothing more
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var out synthient.IPLookup
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// benchMode is how a lookup benchmark calls: serially or from 32
// goroutines, with a context that has no deadline or one that has.
type benchMode struct {
	name     string
	parallel bool
	deadline bool
}

var benchModes = []benchMode{
	{"mode=serial", false, false},
	{"mode=serial-deadline", false, true},
	{"mode=parallel32", true, false},
}

// runLookups runs call b.N times as mode says. call gets the call's
// number, from which a parallel benchmark makes each call's address its
// own: identical LookupIP calls in flight share one request, which would
// not be the same work as the plain client's.
func runLookups(b *testing.B, mode benchMode, call func(ctx context.Context, n uint64) error) {
	b.ReportAllocs()
	ctx := context.Background()
	if mode.deadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Hour)
		b.Cleanup(cancel)
	}
	if !mode.parallel {
		for b.Loop() {
			if err := call(ctx, 0); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var n atomic.Uint64
	b.SetParallelism(16) // 16 x GOMAXPROCS(2) = 32 goroutines
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := call(ctx, n.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// nthAddr returns the address of call n: 198.51.100.23 for 0, else one
// of 65,536 addresses of 10.0.0.0/16.
func nthAddr(n uint64) netip.Addr {
	if n == 0 {
		return netip.MustParseAddr("198.51.100.23")
	}
	return netip.AddrFrom4([4]byte{10, 0, byte(n >> 8), byte(n)}) //nolint:gosec // n's low two bytes, cut on purpose
}

// BenchmarkLookupIP compares LookupIP with the plain version, serially
// (with a context that has no deadline, and one that has: the SDK then
// sends on a goroutine of its own, so that an identical call may share the
// request) and from 32 goroutines sharing one client.
func BenchmarkLookupIP(b *testing.B) {
	for _, mode := range benchModes {
		b.Run(mode.name+"/impl=sdk", func(b *testing.B) {
			srv := lookupServer(b)
			c := newClient(b, srv.URL+"/api/v4")
			runLookups(b, mode, func(ctx context.Context, n uint64) error {
				_, err := c.LookupIP(ctx, nthAddr(n))
				return err
			})
		})
		b.Run(mode.name+"/impl=plain", func(b *testing.B) {
			srv := lookupServer(b)
			p := newPlainClient(b, srv.URL+"/api/v4")
			runLookups(b, mode, func(ctx context.Context, n uint64) error {
				_, err := p.lookupIP(ctx, nthAddr(n))
				return err
			})
		})
	}
}

// BenchmarkLookupIPCacheHit is a LookupIP answered from a memory cache
// (impl=sdk), beside plain net/http sending the request (impl=plain, no
// cache) and beside the cache a user might write by hand (impl=plainmap:
// the answer's JSON in a sync.Map, decoded at each hit), in the same run.
func BenchmarkLookupIPCacheHit(b *testing.B) {
	ip := nthAddr(0)
	for _, mode := range []benchMode{benchModes[0], benchModes[2]} {
		b.Run(mode.name+"/impl=sdk", func(b *testing.B) {
			srv := lookupServer(b)
			c := newClient(b, srv.URL+"/api/v4", synthient.WithCache(synthient.NewMemoryCache(1000, time.Hour)))
			if _, err := c.LookupIP(context.Background(), ip); err != nil {
				b.Fatal(err)
			}
			runLookups(b, mode, func(ctx context.Context, _ uint64) error {
				l, err := c.LookupIP(ctx, ip)
				if err == nil && l.CachedAt.IsZero() {
					err = fmt.Errorf("not a cache hit")
				}
				return err
			})
		})
		b.Run(mode.name+"/impl=plain", func(b *testing.B) {
			srv := lookupServer(b)
			p := newPlainClient(b, srv.URL+"/api/v4")
			runLookups(b, mode, func(ctx context.Context, _ uint64) error {
				_, err := p.lookupIP(ctx, ip)
				return err
			})
		})
		b.Run(mode.name+"/impl=plainmap", func(b *testing.B) {
			var m sync.Map
			m.Store(ip, []byte(lookupBody))
			runLookups(b, mode, func(context.Context, uint64) error {
				v, ok := m.Load(ip)
				if !ok {
					return fmt.Errorf("no entry")
				}
				var out synthient.IPLookup
				return json.Unmarshal(v.([]byte), &out)
			})
		})
	}
}

// BenchmarkMemoryCacheEntries fills a memory cache with 1,000,000 entries
// of a full IP answer's value, as the client stores it (the value of
// lookupBody, taken from a Set), under the client's keys, and reports the
// heap they take: per entry in all (B/entry), and besides the key's and
// the value's bytes (overhead-B/entry). Run it with -benchtime 1x.
func BenchmarkMemoryCacheEntries(b *testing.B) {
	const n = 1_000_000
	spy := &spyCache{Cache: synthient.NewMemoryCache(10, time.Hour)}
	srv := lookupServer(b)
	c := newClient(b, srv.URL+"/api/v4", synthient.WithCache(spy))
	if _, err := c.LookupIP(context.Background(), nthAddr(0)); err != nil {
		b.Fatal(err)
	}
	value, err := spy.Cache.Get(context.Background(), spy.keys[0])
	if err != nil || value == nil {
		b.Fatal("no value stored", err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "v1:ip:" + netip.AddrFrom4([4]byte{11, byte(i >> 16), byte(i >> 8), byte(i)}).String()
	}
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cache := synthient.NewMemoryCache(n, 0)
		keyBytes := 0
		for _, k := range keys {
			k = strings.Clone(k) // a key of its own, as the client's
			keyBytes += len(k)
			if err := cache.Set(context.Background(), k, bytes.Clone(value), 24*time.Hour); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perEntry := float64(after.HeapAlloc-before.HeapAlloc) / n
		b.ReportMetric(perEntry, "B/entry")
		b.ReportMetric(perEntry-float64(keyBytes)/n-float64(len(value)), "overhead-B/entry")
		b.ReportMetric(float64(len(value)), "value-B")
		if v, _ := cache.Get(context.Background(), keys[n-1]); v == nil {
			b.Fatal("the last entry is not kept")
		}
		runtime.KeepAlive(cache)
	}
}

// proxyStream returns n NDJSON proxy events, with a heartbeat line every
// 1000 events.
func proxyStream(n int) []byte {
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, `{"ip":"192.0.%d.%d","provider":"EXAMPLEPROXY","type":"RESIDENTIAL_PROXY","timestamp":%d,"country_code":"US","asn":%d}`+"\n",
			i/256%256, i%256, 1781136001+i, 64496+i%1000)
		if i%1000 == 999 {
			buf.WriteString("\n")
		}
	}
	return buf.Bytes()
}

// memTransport answers every request with a 200 NDJSON body read from data.
type memTransport struct{ data []byte }

func (t memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/x-ndjson"}},
		Body:       io.NopCloser(bytes.NewReader(t.data)),
		Request:    r,
	}, nil
}

// heapSampler records the peak heap in use, sampled every 10,000 events.
type heapSampler struct{ peak uint64 }

func (h *heapSampler) sample(i int) {
	if i%10000 != 0 {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapInuse)
}

// BenchmarkStreamDecode decodes a stream of 200,000 proxy events: the SDK's
// StreamProxies (its whole path: request, attempt loop, line reader,
// decoding) against a bufio.Scanner plus json.Unmarshal loop over the same
// bytes. Both read from memory, so the figures are the decoding cost.
func BenchmarkStreamDecode(b *testing.B) {
	const events = 200_000
	data := proxyStream(events)
	b.Run("impl=sdk", func(b *testing.B) {
		c := newClient(b, "http://stream.test/api/v4", synthient.WithTransport(memTransport{data}))
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var h heapSampler
		for b.Loop() {
			n := 0
			for ev, err := range c.StreamProxies(context.Background()) {
				if err != nil {
					b.Fatal(err)
				}
				if ev.ASN == 0 {
					b.Fatal("event not decoded")
				}
				n++
				h.sample(n)
			}
			if n != events {
				b.Fatalf("%d events, want %d", n, events)
			}
		}
		b.ReportMetric(float64(h.peak)/(1<<20), "peak-heap-MiB")
	})
	b.Run("impl=plain", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var h heapSampler
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			n := 0
			for sc.Scan() {
				line := sc.Bytes()
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				var ev synthient.ProxyEvent
				if err := json.Unmarshal(line, &ev); err != nil {
					b.Fatal(err)
				}
				if ev.ASN == 0 {
					b.Fatal("event not decoded")
				}
				n++
				h.sample(n)
			}
			if n != events {
				b.Fatalf("%d events, want %d", n, events)
			}
		}
		b.ReportMetric(float64(h.peak)/(1<<20), "peak-heap-MiB")
	})
}

// exportSize is the size of the downloaded export.
const exportSize = 256 << 20

// exportServers starts an API origin answering 307 to a storage origin on
// another port that serves exportSize bytes, and returns the API's base
// URL, the storage URL and the bytes' SHA-256.
func exportServers(b *testing.B) (api, storage string, sum string) {
	chunk := bytes.Repeat([]byte("PAR1synthient-export-bytes-0123456789abcdef"), (1<<20)/43+1)[:1<<20]
	h := sha256.New()
	for range exportSize / len(chunk) {
		h.Write(chunk)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	st := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(exportSize))
		for range exportSize / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	b.Cleanup(st.Close)
	metaBody := fmt.Sprintf(`{"stream":"proxies","kind":"daily","id":"2026-06-09","format":"parquet","date":1780963200,"created_at":1781052600,"size":%d,"rows":1,"checksum":%q,"schema":{"fields":[]}}`, exportSize, sum)
	var downloads atomic.Int64
	apiSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/meta") {
			writeJSON(w, http.StatusOK, metaBody)
			return
		}
		downloads.Add(1)
		http.Redirect(w, r, st.URL+"/bucket/proxies/2026-06-09.parquet?X-Amz-Signature=abc", http.StatusTemporaryRedirect)
	}))
	b.Cleanup(apiSrv.Close)
	return apiSrv.URL + "/api/v4", st.URL, sum
}

// BenchmarkDownload downloads 256 MiB through the API's 307, to io.Discard
// and to a file with SHA-256 verification, against plain net/http (which
// follows the redirect itself) doing the same.
func BenchmarkDownload(b *testing.B) {
	api, _, sum := exportServers(b)
	plainGet := func(b *testing.B, hc *http.Client) *http.Response {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, api+"/feeds/proxies/export/2026-06-09", nil)
		req.Header.Set("X-Api-Key", testKey)
		resp, err := hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("plain download: %v %v", resp, err)
		}
		return resp
	}
	b.Run("to=discard/impl=sdk", func(b *testing.B) {
		c := newClient(b, api)
		b.SetBytes(exportSize)
		b.ReportAllocs()
		for b.Loop() {
			n, err := c.DownloadExport(context.Background(), synthient.FeedProxies, "2026-06-09", io.Discard)
			if err != nil || n != exportSize {
				b.Fatalf("DownloadExport = %d, %v", n, err)
			}
		}
	})
	b.Run("to=discard/impl=plain", func(b *testing.B) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr}
		b.SetBytes(exportSize)
		b.ReportAllocs()
		for b.Loop() {
			resp := plainGet(b, hc)
			n, err := io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err != nil || n != exportSize {
				b.Fatalf("copy = %d, %v", n, err)
			}
		}
	})
	b.Run("to=file/impl=sdk", func(b *testing.B) {
		c := newClient(b, api)
		path := filepath.Join(b.TempDir(), "export.parquet")
		b.SetBytes(exportSize)
		b.ReportAllocs()
		for b.Loop() {
			m, err := c.DownloadExportFile(context.Background(), synthient.FeedProxies, "2026-06-09", path,
				&synthient.DownloadParams{Verify: true, Overwrite: true})
			if err != nil || m.Size != exportSize {
				b.Fatalf("DownloadExportFile = %v, %v", m, err)
			}
		}
	})
	b.Run("to=file/impl=plain", func(b *testing.B) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr}
		path := filepath.Join(b.TempDir(), "export.parquet")
		b.SetBytes(exportSize)
		b.ReportAllocs()
		for b.Loop() {
			// The meta first, for the checksum, as the SDK does.
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, api+"/feeds/proxies/export/2026-06-09/meta", nil)
			req.Header.Set("X-Api-Key", testKey)
			mresp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var meta synthient.ExportMeta
			err = json.NewDecoder(mresp.Body).Decode(&meta)
			_ = mresp.Body.Close()
			if err != nil || meta.Checksum != sum {
				b.Fatalf("meta: %v", err)
			}
			resp := plainGet(b, hc)
			f, err := os.Create(path + ".part") //nolint:gosec // a file of the benchmark's temporary directory
			if err != nil {
				b.Fatal(err)
			}
			h := sha256.New()
			n, err := io.Copy(io.MultiWriter(f, h), resp.Body)
			_ = resp.Body.Close()
			if err == nil {
				err = f.Sync()
			}
			_ = f.Close() // synced, or the copy's or Sync's error is reported: Close loses nothing
			if err != nil || n != exportSize || hex.EncodeToString(h.Sum(nil)) != meta.Checksum {
				b.Fatalf("copy = %d, %v", n, err)
			}
			if err := os.Rename(path+".part", path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// nopObserver is an Observer that does nothing: what the hook itself
// costs a call.
type nopObserver struct{}

func (nopObserver) StartCall(ctx context.Context, _ synthient.CallStart) context.Context {
	return ctx
}

func (nopObserver) StartRequest(ctx context.Context, _ synthient.RequestStart) context.Context {
	return ctx
}

func (nopObserver) EndRequest(context.Context, synthient.RequestEnd) {}
func (nopObserver) Hold(context.Context, synthient.PacingHold)       {}
func (nopObserver) EndCall(context.Context, synthient.CallEnd)       {}

// BenchmarkLookupIPObserver compares LookupIP, serially, without an
// observer (as BenchmarkLookupIP's impl=sdk) and with one that does
// nothing. The otel module's BenchmarkLookupIP measures its OpenTelemetry
// observer.
func BenchmarkLookupIPObserver(b *testing.B) {
	ip := netip.MustParseAddr("198.51.100.23")
	for _, tc := range []struct {
		name string
		opts []synthient.Option
	}{
		{"observer=off", nil},
		{"observer=nop", []synthient.Option{synthient.WithObserver(nopObserver{})}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := lookupServer(b)
			c := newClient(b, srv.URL+"/api/v4", tc.opts...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.LookupIP(context.Background(), ip); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
