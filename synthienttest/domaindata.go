package synthienttest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
)

var subdomainLabels = []string{"www", "api", "mail", "cdn", "admin", "dev", "staging", "vpn", "portal", "app", "login", "static", "m", "shop", "git"}

var domainPorts = []int{443, 80, 8080, 8443, 22, 53, 25, 3389, 8000, 5000}

// lookupDomain makes up the honeypot intelligence of a domain, the same for
// the same name and day: a 30-day daily series ending today, and at most
// limit recent events counting back from now.
func lookupDomain(name string, limit int, now time.Time) synthient.DomainLookup {
	r := rng("domain", name)
	day := now.Truncate(24 * time.Hour)
	quiet := r.IntN(8) == 0
	var base float64
	if quiet {
		base = 2 + r.Float64()*60
	} else {
		base = math.Exp(math.Log(900) + r.Float64()*(math.Log(60000)-math.Log(900)))
	}
	out := synthient.DomainLookup{Domain: name}

	// The daily series, oldest first.
	var total, uniq30 int64
	for i := 0; i < 30; i++ {
		ev := int64(base * (0.7 + 0.6*r.Float64()))
		if quiet && r.IntN(3) == 0 {
			ev = 0
		}
		u := int64(float64(ev) * (0.05 + 0.2*r.Float64()))
		if ev > 0 && u == 0 {
			u = 1
		}
		out.TimeSeries = append(out.TimeSeries, synthient.DomainDay{
			Date: day.Add(-time.Duration(29-i) * 24 * time.Hour).Unix(), Events: ev, UniqueIPs: u,
		})
		total += ev
		uniq30 += u
	}
	last := out.TimeSeries[len(out.TimeSeries)-1]
	out.Stats = synthient.DomainStats{Events24h: last.Events, TotalEvents30d: total}
	out.Status = "active"
	if last.Events == 0 {
		out.Status = "inactive"
	}

	// Hourly shape: a daily rhythm peaking at some hour.
	peak := r.IntN(24)
	hourW := make([]float64, 24)
	var wsum float64
	for h := range hourW {
		d := math.Abs(float64(h - peak))
		d = math.Min(d, 24-d)
		hourW[h] = 0.25 + math.Exp(-d*d/18) + 0.15*r.Float64()
		wsum += hourW[h]
	}
	spark := make([]int64, 24)
	for h := range spark {
		spark[h] = int64(math.Round(float64(last.UniqueIPs) * 1.3 * hourW[h] / wsum))
	}
	out.UniqueIPs = synthient.DomainUniqueIPs{Value24h: last.UniqueIPs, Value30d: uniq30 * 6 / 10, Sparkline24h: spark}
	if out.UniqueIPs.Value30d < last.UniqueIPs {
		out.UniqueIPs.Value30d = last.UniqueIPs
	}

	dowW := make([]float64, 7)
	for d := range dowW {
		dowW[d] = 0.8 + 0.4*r.Float64()
	}
	perHour := float64(total) / 720
	out.HourDowHeatmap = make([][]int64, 24)
	hourly := make([]int64, 24)
	for h := 0; h < 24; h++ {
		row := make([]int64, 7)
		for d := 0; d < 7; d++ {
			row[d] = int64(math.Round(perHour * 24 * hourW[h] / wsum * dowW[d] * 30 / 7))
		}
		out.HourDowHeatmap[h] = row
		hourly[h] = int64(math.Round(perHour * 24 * hourW[h] / wsum))
	}
	sorted := slices.Clone(hourly)
	slices.Sort(sorted)
	quietHour := 0
	for h := range hourly {
		if hourly[h] < hourly[quietHour] {
			quietHour = h
		}
	}
	cadence := []string{"steady", "steady", "bursty", "periodic"}[r.IntN(4)]
	if quiet {
		cadence = "sporadic"
	}
	out.ActivityStats = synthient.ActivityStats{
		PeakHour: peak, QuietHour: quietHour,
		MedianPerHour: (sorted[11] + sorted[12]) / 2, P95PerHour: sorted[22], Cadence: cadence,
	}

	// Breakdowns, largest first.
	labels := slices.Clone(subdomainLabels)
	r.Shuffle(len(labels), func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	shares := splits(r, 3+r.IntN(4), total)
	for i, c := range shares {
		out.TopSubdomains = append(out.TopSubdomains, synthient.SubdomainCount{Subdomain: labels[i] + "." + name, Count: c})
	}
	ports := slices.Clone(domainPorts[2:])
	r.Shuffle(len(ports), func(i, j int) { ports[i], ports[j] = ports[j], ports[i] })
	ports = append([]int{443, 80}, ports[:r.IntN(3)]...)
	for i, c := range splits(r, len(ports), total) {
		out.TopPorts = append(out.TopPorts, synthient.PortCount{Port: ports[i], Count: c})
	}
	var countries []string
	for _, i := range r.Perm(len(cities)) {
		if !slices.Contains(countries, cities[i].country) {
			countries = append(countries, cities[i].country)
		}
	}
	countries = countries[:3+r.IntN(4)]
	uniqShares := splits(r, len(countries), out.UniqueIPs.Value30d)
	for i, c := range splits(r, len(countries), total) {
		out.GeoDistribution = append(out.GeoDistribution, synthient.CountryCount{CountryCode: countries[i], UniqueIPs: uniqShares[i], Events: c})
	}
	if r.IntN(8) != 0 && total > 0 {
		op := isps[r.IntN(len(isps))]
		out.TopASN = &synthient.DomainTopASN{ASN: op.asn, Events: int64(float64(total) * (0.08 + 0.3*r.Float64()))}
	}

	// Recent events, newest first.
	n := int(min(int64(limit), total))
	out.RecentEvents = make([]synthient.DomainEvent, 0, n)
	gap := 86400.0 / math.Max(1, float64(last.Events))
	if last.Events == 0 {
		gap = 30 * 86400 / math.Max(1, float64(total))
	}
	t := float64(now.Unix()) - r.Float64()*gap
	for i := 0; i < n; i++ {
		sub := out.TopSubdomains[weighted(r, len(out.TopSubdomains))]
		out.RecentEvents = append(out.RecentEvents, synthient.DomainEvent{
			Timestamp:       int64(t),
			SourceIPMasked:  maskIP(randomPublicIP(r)),
			TargetSubdomain: sub.Subdomain,
			Port:            out.TopPorts[weighted(r, len(out.TopPorts))].Port,
			CountryCode:     out.GeoDistribution[weighted(r, len(out.GeoDistribution))].CountryCode,
		})
		t -= gap * (0.2 + 1.6*r.Float64())
	}
	return out
}

// splits divides total into n decreasing parts that add up to at most
// total.
func splits(r *rand.Rand, n int, total int64) []int64 {
	out := make([]int64, n)
	left := float64(total)
	for i := range out {
		share := 0.35 + 0.3*r.Float64()
		if i == n-1 {
			share = 0.8
		}
		out[i] = int64(left * share)
		left -= float64(out[i])
	}
	slices.SortFunc(out, func(a, b int64) int { return cmp.Compare(b, a) })
	return out
}

// weighted picks an index in [0, n), the lower ones more often.
func weighted(r *rand.Rand, n int) int {
	for i := 0; i < n-1; i++ {
		if r.IntN(2) == 0 {
			return i
		}
	}
	return n - 1
}

// maskIP hides the host part of an address: "198.51.100.x",
// "2a01:4f8:c0c::x".
func maskIP(a netip.Addr) string {
	if a.Is4() {
		b := a.As4()
		return fmt.Sprintf("%d.%d.%d.x", b[0], b[1], b[2])
	}
	p := netip.PrefixFrom(a, 48).Masked().Addr().String()
	return strings.TrimSuffix(p, ":") + ":x"
}
