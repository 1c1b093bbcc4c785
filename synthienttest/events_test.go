package synthienttest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"iter"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// The first events of the first two streams of every feed (and of each
// form of the honeypot_https details), on a fresh fake at testNow, hash to
// the pinned sums: the generators make exactly these events.
func TestEventsPinned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, seg string
		form      synthienttest.DetailsForm
		sum       string
	}{
		{"proxies", "proxies", synthienttest.DetailsString, "fb533b7f5455471665971a4adcad332d57d41077e772a3de4f8b7465f9bb001a"},
		{"anonymizers", "anonymizers", synthienttest.DetailsString, "edd5f29e2faf90633a1b074672949261092b264ba3d37d6cdcab42da8c5cf733"},
		{"torrents", "torrents", synthienttest.DetailsString, "eed45eab3a925279aa5555aa258d97c6e2c5b504cf5494acd3b8ffe6f40e09eb"},
		{"http", "helio/http", synthienttest.DetailsString, "bd76f11d147c23420d29b8a28d3f0ac7da63e9dada4f6ede52cb0ed0cd4ca208"},
		{"https string", "helio/https", synthienttest.DetailsString, "9aaa45b66d7121cf51d3d2da1731bd22660079e172809a48e46337a09615a8f2"},
		{"https object", "helio/https", synthienttest.DetailsObject, "61b1438bc934f3f3bebd2bb7ce187c251e156c91a5186b7da7a89f61fff9d4b3"},
		{"https mixed", "helio/https", synthienttest.DetailsMixed, "350e1924d522d58f9f2edd1b28b1132aedb14699a63344463b0596c8dda464c7"},
		{"dns", "helio/dns", synthienttest.DetailsString, "2640e8ce01a4750bb2d9ffc4da0d80a5312ec4f7c0eaf8bb3f503994ab6caf08"},
		{"adb", "helio/adb", synthienttest.DetailsString, "841dc43f53eb50afc3ba8733b8b3d9ea2d65eb7a95e99bc6189dabc6f85ba8d3"},
		{"ja4t", "ja4t", synthienttest.DetailsString, "3a73d177eb5e20159927582ef633a96c2245a5a0d105ffde52a159a2d49f2192"},
	} {
		t.Run(tc.name, func(t *testing.T) {
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

// streamOf returns the first n events of a stream of a fresh fake.
func streamOf[T any](t *testing.T, n int, open func(*synthient.Client, context.Context) iter.Seq2[T, error]) []T {
	t.Helper()
	srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond))
	evs, err := take(open(newClient(t, srv), context.Background()), n)
	require.NoError(t, err)
	require.Len(t, evs, n)
	return evs
}

var (
	testSec = testNow.Unix()
	testMs  = testNow.UnixMilli()
)

// The events of each feed decode into the SDK's types and hold together;
// honeypot timestamps are milliseconds up to 1.5 s before the clock.
func TestEventsTyped(t *testing.T) {
	t.Parallel()
	t.Run("proxies", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond))
		c := newClient(t, srv)
		ctx := context.Background()
		evs, err := take(c.StreamProxies(ctx), 5)
		require.NoError(t, err)
		for _, e := range evs {
			assert.Equal(t, testSec, e.Timestamp)
			assert.Contains(t, []string{"RESIDENTIAL_PROXY", "MOBILE_PROXY", "DATACENTER_PROXY", "PUBLIC_PROXY"}, e.Type)
			// The stream and a lookup of the address agree.
			l, err := c.LookupIP(ctx, netip.MustParseAddr(e.IP))
			require.NoError(t, err)
			assert.Equal(t, l.Network.ASN, e.ASN, "ASN as the lookup says")
			assert.Equal(t, l.Location.Country, e.CountryCode, "country as the lookup says")
			assert.Contains(t, providers(l), e.Provider, "the lookup of %s lists the provider", e.IP)
		}
	})
	t.Run("anonymizers", func(t *testing.T) {
		t.Parallel()
		for _, e := range streamOf(t, 3, (*synthient.Client).StreamAnonymizers) {
			start, end := netip.MustParseAddr(e.RangeStart), netip.MustParseAddr(e.RangeEnd)
			assert.True(t, start.Less(end), "range %s-%s", start, end)
			assert.NotEmpty(t, e.Provider)
			assert.Equal(t, testSec, e.Timestamp)
			assert.Positive(t, e.ASN)
			assert.Len(t, e.CountryCode, 2)
		}
	})
	t.Run("torrents", func(t *testing.T) {
		t.Parallel()
		for _, e := range streamOf(t, 3, (*synthient.Client).StreamTorrents) {
			_, err := hex.DecodeString(e.InfoHash)
			require.NoError(t, err, "info hash %q", e.InfoHash)
			assert.Len(t, e.InfoHash, 40)
			assert.True(t, strings.HasPrefix(e.MagnetURI, "magnet:?xt=urn:btih:"+e.InfoHash), "magnet %q", e.MagnetURI)
			assert.Equal(t, len(e.Files), e.FileCount, "file_count")
			var total int64
			for _, f := range e.Files {
				total += f.Length
			}
			assert.Equal(t, total, e.TotalSize, "total_size")
			assert.GreaterOrEqual(t, e.PieceLength, 1<<18)
			assert.Zero(t, e.PieceLength&(e.PieceLength-1), "piece length %d is a power of 2", e.PieceLength)
			assert.NotEmpty(t, e.Peers)
			assert.Equal(t, testSec, e.Timestamp)
		}
	})
	t.Run("honeypot_http", func(t *testing.T) {
		t.Parallel()
		for _, e := range streamOf(t, 3, (*synthient.Client).StreamHoneypotHTTP) {
			assert.InDelta(t, testMs-750, e.Timestamp, 750)
			require.NotNil(t, e.Details)
			assert.True(t, strings.HasPrefix(e.Raw, e.Details.Method+" "+e.Details.URI+" HTTP/1.1\r\n"), "raw %q", e.Raw)
			require.NotNil(t, e.Meta)
			assert.NotEmpty(t, e.Meta.PoolID)
			assert.Positive(t, e.TunnelID)
			assert.Positive(t, e.Port)
		}
	})
	t.Run("honeypot_https", func(t *testing.T) {
		t.Parallel()
		for _, e := range streamOf(t, 4, (*synthient.Client).StreamHoneypotHTTPS) {
			assert.InDelta(t, testMs-750, e.Timestamp, 750)
			var hello map[string]any
			require.NoError(t, json.Unmarshal(e.Details, &hello), "details %s", e.Details)
			assert.Equal(t, e.Domain, hello["sni"])
		}
	})
	t.Run("honeypot_dns", func(t *testing.T) {
		t.Parallel()
		for _, e := range streamOf(t, 3, (*synthient.Client).StreamHoneypotDNS) {
			assert.InDelta(t, testMs-750, e.Timestamp, 750)
			assert.Contains(t, []int{53, 853, 5353}, e.Port)
			assert.NotEmpty(t, e.Domain)
		}
	})
	t.Run("honeypot_adb", func(t *testing.T) {
		t.Parallel()
		evs := streamOf(t, 6, (*synthient.Client).StreamHoneypotADB)
		for i, e := range evs {
			sum := sha256.Sum256(e.Command)
			assert.Equal(t, hex.EncodeToString(sum[:]), e.Hash, "command hash")
			assert.True(t, strings.HasPrefix(e.Session, "sha256:"), "session %q", e.Session)
			assert.NotEmpty(t, e.Command)
			if i > 0 && e.Session == evs[i-1].Session {
				assert.Equal(t, evs[i-1].SequentialID+1, e.SequentialID, "sequential id")
			}
		}
	})
	t.Run("ja4t", func(t *testing.T) {
		t.Parallel()
		for _, e := range streamOf(t, 3, (*synthient.Client).StreamJA4T) {
			assert.Equal(t, 3, strings.Count(e.JA4T, "_"), "ja4t %q", e.JA4T)
			assert.Equal(t, testSec, e.Timestamp)
			assert.NotEmpty(t, e.Provider)
			assert.NotEmpty(t, e.Type)
		}
	})
	t.Run("raw", func(t *testing.T) {
		t.Parallel()
		raw := streamOf(t, 2, func(c *synthient.Client, ctx context.Context) iter.Seq2[json.RawMessage, error] {
			return c.StreamRaw(ctx, synthient.FeedJA4T)
		})
		for _, r := range raw {
			var m map[string]any
			require.NoError(t, json.Unmarshal(r, &m))
			assert.Contains(t, m, "ja4t")
			assert.Contains(t, m, "ip")
		}
	})
}

// providers are the providers a lookup names.
func providers(l *synthient.IPLookup) []string {
	var out []string
	if l.Intelligence != nil {
		for _, p := range l.Intelligence.Providers {
			out = append(out, p.Provider)
		}
	}
	return out
}

// WithHTTPSDetails sets the form of the honeypot_https details; the SDK
// reads a string or an object, and keeps null as nil.
func TestEventsHTTPSDetailsForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		form  synthienttest.DetailsForm
		forms string // the first bytes of the details of 6 events
	}{
		{"string", synthienttest.DetailsString, `""""""`},
		{"object", synthienttest.DetailsObject, "{{{{{{"},
		{"mixed", synthienttest.DetailsMixed, `{n"{n"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, synthienttest.WithEventInterval(time.Millisecond), synthienttest.WithHTTPSDetails(tc.form))
			_, br := openRaw(t, rawClient(t), srv, "helio/https") //nolint:bodyclose // openRaw closes it at Cleanup
			var forms []byte
			for range 6 {
				line, err := br.ReadBytes('\n')
				require.NoError(t, err)
				var ev struct {
					Details json.RawMessage `json:"details"`
				}
				require.NoError(t, json.Unmarshal(line, &ev))
				forms = append(forms, ev.Details[0])
				var typed synthient.HoneypotHTTPSEvent
				require.NoError(t, json.Unmarshal(line, &typed), "the SDK's type")
				if typed.Details != nil {
					assert.Equal(t, byte('{'), typed.Details[0], "the SDK keeps the details as an object")
				}
			}
			assert.Equal(t, tc.forms, string(forms))
		})
	}
}
