package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The text output of lookup ip and lookup domain matches its golden file.
func TestGoldenLookup(t *testing.T) {
	t.Parallel()
	checkGolden(t, []goldenCase{
		{"lookup_ip_intelligence", []string{"lookup", "ip", "203.0.113.7"}},
		{"lookup_ip_no_intelligence", []string{"lookup", "ip", "8.8.8.8"}},
		{"lookup_ip_private", []string{"lookup", "ip", "10.0.0.1"}},
		{"lookup_ip_ipv6", []string{"lookup", "ip", "2606:4700:4700::1111"}},
		{"lookup_domain", []string{"lookup", "domain", "example.com", "--limit", "5"}},
	})
}

// --output json: one JSON document per result, with the API's field names,
// and the same bytes from run to run.
func TestJSONLookupIP(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	r := runSrv(t, srv, "--output", "json", "lookup", "ip", "203.0.113.7")
	requireCode(t, r, 0)
	require.Len(t, lines(r.stdout), 1, "want one JSON document:\n%s", r.stdout)
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	require.NoError(t, dec.Decode(&doc), "not JSON:\n%s", r.stdout)
	require.False(t, dec.More(), "more than one JSON document:\n%s", r.stdout)
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
	golden(t, "lookup_ip_intelligence.json", r.stdout)

	// An address without intelligence has no "intelligence" member.
	r = runSrv(t, srv, "-o", "json", "lookup", "ip", "8.8.8.8")
	requireCode(t, r, 0)
	doc = nil
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "not JSON:\n%s", r.stdout)
	wantKeys("the lookup of 8.8.8.8", doc, "ip", "network", "location")
}
