package index_test

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// TestBuildAndCheck builds an index of the newest proxies export of the
// fake and checks addresses of that export against its rows, in each
// format, spending no credit.
func TestBuildAndCheck(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	rows := latestByIP(t, download(t, srv, synthient.FeedProxies, "latest"))
	idx := filepath.Join(t.TempDir(), "feeds.synidx")
	r := clitest.RunSrv(t, srv, "index", "build", "proxies", "--latest", "--out", idx, "-o", "json")
	clitest.RequireCode(t, r, 0, "index build")
	var src struct {
		Feed, Source string
		Rows         int64
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &src))
	assert.Equal(t, "proxies", src.Feed)
	assert.Equal(t, "2026-06-10/13", src.Source)

	var ips []string
	for ip := range rows {
		ips = append(ips, ip)
	}
	sort.Strings(ips)
	ips = ips[:20]
	args := append([]string{"index", "check", "--index", idx, "-o", "json", "--all", "192.0.2.1"}, ips...)
	r = clitest.RunSrv(t, srv, args...)
	clitest.RequireCode(t, r, 0, "index check")
	lines := clitest.Lines(r.Stdout)
	require.Len(t, lines, len(ips)+1)
	assert.JSONEq(t, `{"ip":"192.0.2.1","feeds":[]}`, lines[0], "a miss with --all")
	for i, line := range lines[1:] {
		var got struct {
			IP    string `json:"ip"`
			Feeds []struct {
				Feed, Provider, Type string
				CountryCode          string `json:"country_code"`
				ASN                  int32  `json:"asn"`
				LastSeen             int64  `json:"last_seen"`
			} `json:"feeds"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		want := rows[ips[i]]
		assert.Equal(t, netip.MustParseAddr(ips[i]).String(), got.IP)
		require.Len(t, got.Feeds, 1, got.IP)
		f := got.Feeds[0]
		assert.Equal(t, []any{"proxies", want.Provider, want.Type, want.CountryCode, want.ASN, want.Timestamp},
			[]any{f.Feed, f.Provider, f.Type, f.CountryCode, f.ASN, f.LastSeen}, got.IP)
	}

	r = clitest.RunSrv(t, srv, "index", "check", "--index", idx, "192.0.2.1", ips[0])
	clitest.RequireCode(t, r, 0, "index check (text)")
	assert.Len(t, clitest.Lines(r.Stdout), 2, "the header and the hit: no line for a miss without --all")
	assert.Contains(t, r.Stdout, ips[0])

	r = clitest.Call{Args: []string{"index", "check", "--index", idx, "-o", "csv", "-"}, Stdin: strings.NewReader(ips[1] + " nope\n# a comment\n" + ips[2] + "\n")}.Run(t)
	clitest.RequireCode(t, r, clierr.Usage, "a word that is not an address")
	assert.Contains(t, r.Stderr, `"nope" is not an IP address`)
	lines = clitest.Lines(r.Stdout)
	require.Len(t, lines, 3)
	assert.Equal(t, "ip,feed,provider,type,country_code,asn,last_seen", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], ips[1]+",proxies,"), lines[1])

	assert.Equal(t, int64(synthienttest.DefaultCredits), srv.Credits(srv.APIKey), "no credit spent")
}

// TestCheckRefusesADamagedIndex: a file that is not an index, or a
// damaged one, is refused with the reason, and nothing is printed.
func TestCheckRefusesADamagedIndex(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	idx := filepath.Join(t.TempDir(), "feeds.synidx")
	clitest.RequireCode(t, clitest.RunSrv(t, srv, "index", "build", "ja4t", "--latest", "--out", idx), 0, "index build")
	data, err := os.ReadFile(idx) //nolint:gosec // a file of this test
	require.NoError(t, err)
	data[len(data)-1] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.synidx")
	require.NoError(t, os.WriteFile(bad, data, 0o600)) //nolint:gosec // a file of this test
	for _, tt := range []struct{ name, path, says string }{
		{"damaged", bad, "a checksum does not match"},
		{"an export", download(t, srv, synthient.FeedJA4T, "latest"), "not an index file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.RunSrv(t, srv, "index", "check", "--index", tt.path, "192.0.2.1")
			assert.NotEqual(t, 0, r.Code)
			assert.Empty(t, r.Stdout)
			assert.Contains(t, r.Stderr, tt.says)
		})
	}
}
