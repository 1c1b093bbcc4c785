package lookup_test

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/cmd/lookup"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// The text output of lookup ip and lookup domain matches its golden file.
func TestGoldenLookup(t *testing.T) {
	t.Parallel()
	clitest.CheckGolden(t, []clitest.GoldenCase{
		{Name: "lookup_ip_intelligence", Args: []string{"lookup", "ip", "203.0.113.7"}},
		{Name: "lookup_ip_no_intelligence", Args: []string{"lookup", "ip", "8.8.8.8"}},
		{Name: "lookup_ip_private", Args: []string{"lookup", "ip", "10.0.0.1"}},
		{Name: "lookup_ip_ipv6", Args: []string{"lookup", "ip", "2606:4700:4700::1111"}},
		{Name: "lookup_domain", Args: []string{"lookup", "domain", "example.com", "--limit", "5"}},
	})
}

// --output json: one JSON document per result, with the API's field names,
// and the same bytes from run to run.
func TestJSONLookupIP(t *testing.T) {
	t.Parallel()
	srv := clitest.NewServer(t)
	r := clitest.RunSrv(t, srv, "--output", "json", "lookup", "ip", "203.0.113.7")
	clitest.RequireCode(t, r, 0)
	require.Len(t, clitest.Lines(r.Stdout), 1, "want one JSON document:\n%s", r.Stdout)
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	require.NoError(t, dec.Decode(&doc), "not JSON:\n%s", r.Stdout)
	require.False(t, dec.More(), "more than one JSON document:\n%s", r.Stdout)
	wantKeys := func(what string, m any, keys ...string) {
		t.Helper()
		obj, ok := m.(map[string]any)
		require.True(t, ok, "%s is %T, want an object", what, m)
		var got []string
		for k := range obj {
			got = append(got, k)
		}
		assert.ElementsMatch(t, keys, got, "the members of %s", what)
	}
	wantKeys("the lookup", doc, "ip", "network", "location", "intelligence")
	wantKeys("network", doc["network"], "asn", "isp", "type", "org", "domain", "abuse_email", "abuse_phone")
	wantKeys("location", doc["location"], "country", "state", "city", "timezone", "latitude", "longitude", "geo_hash")
	wantKeys("intelligence", doc["intelligence"], "risk_score", "behavior", "categories", "devices", "providers")
	assert.Equal(t, "203.0.113.7", doc["ip"], `"ip"`)
	clitest.Golden(t, "lookup_ip_intelligence.json", r.Stdout)

	// An address without intelligence has no "intelligence" member.
	r = clitest.RunSrv(t, srv, "-o", "json", "lookup", "ip", "8.8.8.8")
	clitest.RequireCode(t, r, 0)
	doc = nil
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc), "not JSON:\n%s", r.Stdout)
	wantKeys("the lookup of 8.8.8.8", doc, "ip", "network", "location")
}

// lookup ip parses its command line into the options of one of its two
// runs, run by neither (its runF seams): one address and no bulk flag is
// an address looked up alone, parsed; anything else a bulk lookup, whose
// input and flags are checked first (see TestIPsParse for the flags).
func TestIPParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		stdinTTY bool
		one      string   // the address looked up alone
		max      string   // and its --max-credits, if any
		addrs    []string // else the addresses of a bulk lookup
		file     string   // and its file ("-" for stdin)
		err      string   // else the error
	}{
		{name: "one address", args: []string{"8.8.8.8"}, one: "8.8.8.8"},
		{name: "one IPv6 address", args: []string{"2001:db8::1"}, one: "2001:db8::1"},
		{name: "one domain name", args: []string{"example.com"}, err: `"example.com" is not an IP address`},
		{name: "one address and a bulk flag", args: []string{"8.8.8.8", "--dry-run"}, addrs: []string{"8.8.8.8"}},
		{name: "one address and --max-credits", args: []string{"8.8.8.8", "--max-credits", "7"}, one: "8.8.8.8", max: "7"},
		{name: "two addresses", args: []string{"1.1.1.1", "8.8.8.8"}, addrs: []string{"1.1.1.1", "8.8.8.8"}},
		{name: "stdin by -", args: []string{"-"}, stdinTTY: true, file: "-"},
		{name: "stdin piped", args: nil, addrs: []string{}, file: "-"},
		{name: "no address on a terminal", args: nil, stdinTTY: true, err: "lookup ip needs addresses: ADDR... or - (stdin), or pipe them in"},
		{name: "- with addresses", args: []string{"-", "1.1.1.1"}, err: "- reads the addresses from stdin: give it alone"},
		{name: "bulk flag out of range", args: []string{"1.1.1.1", "8.8.8.8", "--concurrency", "0"}, err: "--concurrency must be 1 to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.Factory(iostreams.System{StdinIsTerminal: func() bool { return tt.stdinTTY }})
			var one clitest.Seam[lookup.IPOptions]
			var bulk clitest.Seam[lookup.BulkOptions]
			err := clitest.Parse(t, lookup.NewCmdIP(f, one.RunF, bulk.RunF), tt.args...)
			if tt.one != "" {
				if one.Parsed(t, err, "") {
					assert.Equal(t, netip.MustParseAddr(tt.one), one.Got.Addr)
					assert.Equal(t, tt.max, one.Got.MaxCredits.String(), "--max-credits")
				}
				assert.Nil(t, bulk.Got, "a bulk lookup")
				return
			}
			if bulk.Parsed(t, err, tt.err) {
				assert.Equal(t, tt.addrs, bulk.Got.Addrs)
				assert.Equal(t, tt.file, bulk.Got.File)
				assert.Equal(t, "lookup ip", bulk.Got.Command)
			}
			assert.Nil(t, one.Got, "a lookup alone")
		})
	}
}
