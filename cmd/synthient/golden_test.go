package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/synthient-go/synthient/synthienttest"
)

// The text output of every command, against a fake on a fixed clock, must
// match its golden file byte for byte.
func TestGoldenText(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"lookup_ip_intelligence", []string{"lookup", "ip", "203.0.113.7"}},
		{"lookup_ip_no_intelligence", []string{"lookup", "ip", "8.8.8.8"}},
		{"lookup_ip_private", []string{"lookup", "ip", "10.0.0.1"}},
		{"lookup_ip_ipv6", []string{"lookup", "ip", "2606:4700:4700::1111"}},
		{"lookup_domain", []string{"lookup", "domain", "example.com", "--limit", "5"}},
		{"account", []string{"account"}},
		{"health", []string{"health"}},
		{"exports_list", []string{"exports", "list", "proxies"}},
		{"exports_list_page", []string{"exports", "list", "honeypot_http", "--limit", "3"}},
		{"exports_list_all", []string{"exports", "list", "proxies", "--limit", "5", "--all"}},
		{"exports_meta_latest", []string{"exports", "meta", "proxies", "latest"}},
		{"exports_meta_daily", []string{"exports", "meta", "ja4t", "2026-06-09"}},
		{"exports_meta_hourly", []string{"exports", "meta", "helio/dns", "2026-06-10/07"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			r := runSrv(t, srv, tt.args...)
			wantCode(t, r, 0, tt.args...)
			if r.stderr != "" {
				t.Errorf("stderr: %q, want nothing", r.stderr)
			}
			golden(t, tt.name, normalise(r.stdout))

			// The same command against a second fake on the same clock
			// prints the same bytes: the golden file is not stable by luck.
			again := runSrv(t, newServer(t), tt.args...)
			if normalise(again.stdout) != normalise(r.stdout) {
				t.Errorf("two runs differ:\n%s\n---\n%s", r.stdout, again.stdout)
			}
		})
	}
}

// A batch's text output is one table in input order.
func TestGoldenLookupIPsTable(t *testing.T) {
	srv := newServer(t)
	in := strings.Join([]string{
		"# a few addresses",
		"203.0.113.7",
		"",
		"8.8.8.8",
		"  1.1.1.1  ",
		"10.0.0.1",
		"2606:4700:4700::1111",
		"192.0.2.1",
		"45.155.205.233",
		"2001:db8::1",
	}, "\n") + "\n"
	args := []string{"--base-url", srv.URL, "lookup", "ips", "--file", "-"}
	r := call{args: args, env: keyEnv(srv), stdin: strings.NewReader(in)}.run(t)
	wantCode(t, r, 0, args...)
	if r.stderr != "" {
		t.Errorf("stderr: %q, want nothing", r.stderr)
	}
	golden(t, "lookup_ips_table", r.stdout)
	if n := srv.Arrivals(synthienttest.RouteLookupIPs); n != 1 {
		t.Errorf("%d batch requests, want 1", n)
	}
}

// The download's one-line report.
func TestGoldenDownload(t *testing.T) {
	srv := newServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "proxies.parquet")
	r := runSrv(t, srv, "exports", "download", "proxies", "2026-06-09", "--out", out, "--verify")
	wantCode(t, r, 0)
	golden(t, "exports_download", strings.ReplaceAll(r.stdout, dir, "<DIR>"))
}

// --output json: one JSON document per result, with the API's field names,
// and the same bytes from run to run.
func TestJSONLookupIP(t *testing.T) {
	srv := newServer(t)
	r := runSrv(t, srv, "--output", "json", "lookup", "ip", "203.0.113.7")
	wantCode(t, r, 0)
	if n := len(lines(r.stdout)); n != 1 {
		t.Fatalf("%d lines, want one JSON document:\n%s", n, r.stdout)
	}
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document:\n%s", r.stdout)
	}
	wantKeys := func(what string, m any, keys ...string) {
		t.Helper()
		obj, ok := m.(map[string]any)
		if !ok {
			t.Fatalf("%s is %T, want an object", what, m)
		}
		var got []string
		for k := range obj {
			got = append(got, k)
		}
		slices.Sort(got)
		slices.Sort(keys)
		if !reflect.DeepEqual(got, keys) {
			t.Errorf("%s has members %v, want %v", what, got, keys)
		}
	}
	wantKeys("the lookup", doc, "ip", "network", "location", "intelligence")
	wantKeys("network", doc["network"], "asn", "isp", "type", "org", "domain", "abuse_email", "abuse_phone")
	wantKeys("location", doc["location"], "country", "state", "city", "timezone", "latitude", "longitude", "geo_hash")
	wantKeys("intelligence", doc["intelligence"], "risk_score", "behavior", "categories", "devices", "providers")
	if doc["ip"] != "203.0.113.7" {
		t.Errorf(`"ip" is %v`, doc["ip"])
	}
	golden(t, "lookup_ip_intelligence.json", r.stdout)

	// An address without intelligence has no "intelligence" member.
	r = runSrv(t, srv, "-o", "json", "lookup", "ip", "8.8.8.8")
	wantCode(t, r, 0)
	doc = nil
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	wantKeys("the lookup of 8.8.8.8", doc, "ip", "network", "location")
}

// lookup ips --output json is NDJSON, one result per input line, in input
// order, repeated addresses included.
func TestJSONLookupIPsInputOrder(t *testing.T) {
	srv := newServer(t)
	in := []string{"8.8.8.8", "203.0.113.7", "2606:4700:4700::1111", "10.0.0.1", "8.8.8.8", "1.1.1.1", "192.0.2.1"}
	args := []string{"--base-url", srv.URL, "-o", "json", "lookup", "ips", "--file", "-"}
	r := call{args: args, env: keyEnv(srv), stdin: strings.NewReader(strings.Join(in, "\n"))}.run(t)
	wantCode(t, r, 0, args...)
	if got := ndjsonIPs(t, r.stdout); !slices.Equal(got, in) {
		t.Errorf("results in order %v, want %v", got, in)
	}
	golden(t, "lookup_ips.ndjson", r.stdout)
}

// Every other command's --output json is one JSON document (NDJSON for
// exports list --all).
func TestJSONOtherCommands(t *testing.T) {
	srv := newServer(t)
	dir := t.TempDir()
	tests := []struct {
		args  []string
		docs  int
		field string // a member the (first) document must have
	}{
		{[]string{"account"}, 1, "lookup_quota"},
		{[]string{"health"}, 1, "status"},
		{[]string{"lookup", "domain", "example.com", "--limit", "2"}, 1, "recent_events"},
		{[]string{"exports", "list", "proxies", "--limit", "3"}, 1, "next_cursor"},
		{[]string{"exports", "list", "proxies", "--all"}, 17, "checksum"},
		{[]string{"exports", "meta", "proxies", "latest"}, 1, "checksum"},
		{[]string{"exports", "download", "proxies", "latest", "--out", filepath.Join(dir, "f.parquet"), "--verify"}, 1, "verified"},
		{[]string{"stream", "proxies", "--max-events", "2"}, 2, "ip"},
	}
	for _, tt := range tests {
		args := append([]string{"-o", "json"}, tt.args...)
		r := runSrv(t, srv, args...)
		wantCode(t, r, 0, args...)
		ls := lines(r.stdout)
		if len(ls) != tt.docs {
			t.Errorf("synthient %s: %d lines, want %d:\n%s", strings.Join(args, " "), len(ls), tt.docs, r.stdout)
			continue
		}
		for i, l := range ls {
			var doc map[string]any
			if err := json.Unmarshal([]byte(l), &doc); err != nil {
				t.Errorf("synthient %s: line %d is not a JSON object: %v", strings.Join(args, " "), i+1, err)
				continue
			}
			if _, ok := doc[tt.field]; !ok && i == 0 {
				t.Errorf("synthient %s: no %q member in %s", strings.Join(args, " "), tt.field, l)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f.parquet")); err != nil {
		t.Error(err)
	}
}
