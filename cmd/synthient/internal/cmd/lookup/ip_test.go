package lookup_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
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
