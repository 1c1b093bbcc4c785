package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// WriteIPLookup prints one lookup as a two-column table.
func WriteIPLookup(w io.Writer, r *synthient.IPLookup) error {
	t := NewTable(w)
	t.Row("IP", r.IP.String())
	if n := r.Network; n != nil {
		t.Row("Network", fmt.Sprintf("AS%d %s (%s)", n.ASN, OrDash(n.ISP), OrDash(n.Type)))
		t.Row("Org", PtrOrDash(n.Org))
		t.Row("Domain", PtrOrDash(n.Domain))
		t.Row("Abuse", JoinSet(n.AbuseEmail, n.AbusePhone))
	} else {
		t.Row("Network", "-")
	}
	if l := r.Location; l != nil {
		t.Row("Location", fmt.Sprintf("%s, %s, %s (%s) %.4f,%.4f geohash %s",
			OrDash(l.City), OrDash(l.State), OrDash(l.Country), OrDash(l.Timezone), l.Latitude, l.Longitude, OrDash(l.GeoHash)))
	} else {
		t.Row("Location", "-")
	}
	if in := r.Intelligence; in != nil {
		t.Row("Risk score", Risk(in.RiskScore))
		t.Row("Categories", List(in.Categories))
		t.Row("Behavior", List(in.Behavior))
		var providers []string
		for _, p := range in.Providers {
			providers = append(providers, fmt.Sprintf("%s %s (last seen %s)", p.Provider, p.Type, UnixDate(p.LastSeen)))
		}
		t.Row("Providers", List(providers))
		var devices []string
		for _, d := range in.Devices {
			devices = append(devices, fmt.Sprintf("%s %s (last seen %s)", d.OS, d.Version, UnixDate(d.LastSeen)))
		}
		t.Row("Devices", List(devices))
	} else {
		t.Row("Intelligence", "none available")
	}
	return t.Flush()
}

// IPColumns are the columns of the one-line form of lookups (IPRow), for
// a Stream.
var IPColumns = []Column{{Header: "IP", Long: true, Need: addrWidth}, {Header: "ASN", Max: 8}, {Header: "ISP", Max: 28},
	{Header: "TYPE", Max: 12}, {Header: "COUNTRY"}, {Header: "RISK"}, {Header: "CATEGORIES"}}

// addrWidth is the width an address column needs for addr: that of the
// longest address of its family.
func addrWidth(addr string) int {
	if strings.Contains(addr, ":") {
		return len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
	}
	return len("255.255.255.255")
}

// Risk renders a risk score, coloured on a terminal by how high it is:
// red from 75, yellow from 40, else green.
func Risk(score int) string {
	style := textsafe.Green
	switch {
	case score >= 75:
		style = textsafe.Red
	case score >= 40:
		style = textsafe.Yellow
	}
	return textsafe.Paint(style, strconv.Itoa(score))
}

// IPRow is the one-line form of a lookup, for batches, under IPHeader.
func IPRow(r *synthient.IPLookup) []string {
	asn, isp, typ, country, risk, cats := "-", "-", "-", "-", "-", "-"
	if n := r.Network; n != nil {
		asn, isp, typ = "AS"+strconv.Itoa(n.ASN), OrDash(n.ISP), OrDash(n.Type)
	}
	if l := r.Location; l != nil {
		country = OrDash(l.Country)
	}
	if in := r.Intelligence; in != nil {
		risk, cats = Risk(in.RiskScore), List(in.Categories)
	}
	return []string{r.IP.String(), asn, isp, typ, country, risk, cats}
}

// The CSV columns: raw values for machines (numbers as numbers, times in
// RFC 3339, lists joined with ";"), an empty cell for a missing value.

// IPCSVHeader is the CSV header of IP lookups.
var IPCSVHeader = []string{"ip", "asn", "isp", "network_type", "org", "domain",
	"country", "state", "city", "timezone", "latitude", "longitude",
	"risk_score", "categories", "behavior", "providers", "devices"}

// IPCSVRow is a lookup's row under IPCSVHeader.
func IPCSVRow(r *synthient.IPLookup) []string {
	row := make([]string, 0, len(IPCSVHeader))
	row = append(row, r.IP.String())
	if n := r.Network; n != nil {
		row = append(row, strconv.Itoa(n.ASN), n.ISP, n.Type, Deref(n.Org), Deref(n.Domain))
	} else {
		row = append(row, "", "", "", "", "")
	}
	if l := r.Location; l != nil {
		row = append(row, l.Country, l.State, l.City, l.Timezone, formatFloat(l.Latitude), formatFloat(l.Longitude))
	} else {
		row = append(row, "", "", "", "", "", "")
	}
	if in := r.Intelligence; in != nil {
		var providers, devices []string
		for _, p := range in.Providers {
			providers = append(providers, p.Provider)
		}
		for _, d := range in.Devices {
			devices = append(devices, strings.TrimSpace(d.OS+" "+d.Version))
		}
		row = append(row, strconv.Itoa(in.RiskScore), strings.Join(in.Categories, ";"),
			strings.Join(in.Behavior, ";"), strings.Join(providers, ";"), strings.Join(devices, ";"))
	} else {
		row = append(row, "", "", "", "", "")
	}
	return row
}

// WriteDomain prints a domain lookup: a two-column table, then a table of
// its recent events.
func WriteDomain(w io.Writer, r *synthient.DomainLookup) error {
	t := NewTable(w)
	t.Row("Domain", r.Domain)
	t.Row("Status", OrDash(r.Status))
	t.Row("Events", fmt.Sprintf("%d in 24h, %d in 30 days", r.Stats.Events24h, r.Stats.TotalEvents30d))
	t.Row("Unique IPs", fmt.Sprintf("%d in 24h, %d in 30 days", r.UniqueIPs.Value24h, r.UniqueIPs.Value30d))
	if r.TopASN != nil {
		t.Row("Top ASN", fmt.Sprintf("AS%d (%d events)", r.TopASN.ASN, r.TopASN.Events))
	}
	var subs, ports []string
	for _, s := range r.TopSubdomains {
		subs = append(subs, fmt.Sprintf("%s (%d)", s.Subdomain, s.Count))
	}
	for _, p := range r.TopPorts {
		ports = append(ports, fmt.Sprintf("%d (%d)", p.Port, p.Count))
	}
	t.Row("Top subdomains", List(subs))
	t.Row("Top ports", List(ports))
	s := r.ActivityStats
	t.Row("Activity", fmt.Sprintf("peak %02d:00, quiet %02d:00, median %d/h, p95 %d/h, %s", s.PeakHour, s.QuietHour, s.MedianPerHour, s.P95PerHour, OrDash(s.Cadence)))
	if err := t.Flush(); err != nil {
		return err
	}
	if len(r.RecentEvents) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	t = NewTable(w)
	t.Row("TIME", "SOURCE", "TARGET", "PORT", "COUNTRY")
	for _, e := range r.RecentEvents {
		t.Row(UnixTime(e.Timestamp), e.SourceIPMasked, e.TargetSubdomain, strconv.Itoa(e.Port), e.CountryCode)
	}
	return t.Flush()
}

// DomainCSVHeader is the CSV header of domain lookups.
var DomainCSVHeader = []string{"domain", "status", "events_24h", "events_30d",
	"unique_ips_24h", "unique_ips_30d", "top_asn", "top_subdomains", "top_ports", "cadence"}

// DomainCSVRow is a domain lookup's row under DomainCSVHeader.
func DomainCSVRow(r *synthient.DomainLookup) []string {
	asn := ""
	if r.TopASN != nil {
		asn = strconv.Itoa(r.TopASN.ASN)
	}
	var subs, ports []string
	for _, s := range r.TopSubdomains {
		subs = append(subs, s.Subdomain)
	}
	for _, p := range r.TopPorts {
		ports = append(ports, strconv.Itoa(p.Port))
	}
	return []string{r.Domain, r.Status,
		strconv.FormatInt(r.Stats.Events24h, 10), strconv.FormatInt(r.Stats.TotalEvents30d, 10),
		strconv.FormatInt(r.UniqueIPs.Value24h, 10), strconv.FormatInt(r.UniqueIPs.Value30d, 10),
		asn, strings.Join(subs, ";"), strings.Join(ports, ";"), r.ActivityStats.Cadence}
}
