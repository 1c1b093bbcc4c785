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
// limit recent events counting back from now. Each part draws from the
// domain's random source in turn, in the order below. seed is the
// server's (WithSeed).
func lookupDomain(name string, limit int, now time.Time, seed uint64) synthient.DomainLookup {
	r := seededRNG(seed, "domain", name)
	out := synthient.DomainLookup{Domain: name}
	quiet, base := domainVolume(r)
	var total, uniq30 int64
	out.TimeSeries, total, uniq30 = dailySeries(r, quiet, base, now.Truncate(24*time.Hour))
	last := out.TimeSeries[len(out.TimeSeries)-1]
	out.Stats = synthient.DomainStats{Events24h: last.Events, TotalEvents30d: total}
	out.Status = "active"
	if last.Events == 0 {
		out.Status = "inactive"
	}
	rh := dailyRhythm(r)
	out.UniqueIPs = synthient.DomainUniqueIPs{Value24h: last.UniqueIPs, Value30d: max(uniq30*6/10, last.UniqueIPs),
		Sparkline24h: rh.sparkline(last.UniqueIPs)}
	out.HourDowHeatmap, out.ActivityStats = rh.activity(r, quiet, total)
	addBreakdowns(&out, r, total)
	out.RecentEvents = recentEvents(r, &out, limit, total, last.Events, now)
	return out
}

// domainVolume draws whether a domain is quiet (one in eight) and its
// daily events: 2 to 62 when quiet, else 900 to 60000 on a log scale.
func domainVolume(r *rand.Rand) (quiet bool, base float64) {
	quiet = r.IntN(8) == 0
	if quiet {
		return true, 2 + r.Float64()*60
	}
	return false, math.Exp(math.Log(900) + r.Float64()*(math.Log(60000)-math.Log(900)))
}

// dailySeries is a domain's 30 days ending today, oldest first, with their
// total events and unique addresses.
func dailySeries(r *rand.Rand, quiet bool, base float64, today time.Time) (days []synthient.DomainDay, total, uniq int64) {
	for i := 0; i < 30; i++ {
		ev := int64(base * (0.7 + 0.6*r.Float64()))
		if quiet && r.IntN(3) == 0 {
			ev = 0
		}
		u := int64(float64(ev) * (0.05 + 0.2*r.Float64()))
		if ev > 0 && u == 0 {
			u = 1
		}
		days = append(days, synthient.DomainDay{Date: today.Add(-time.Duration(29-i) * 24 * time.Hour).Unix(), Events: ev, UniqueIPs: u})
		total += ev
		uniq += u
	}
	return days, total, uniq
}

// rhythm is a domain's daily rhythm: a weight for each hour of the day,
// peaking at peak, and the sum of the weights.
type rhythm struct {
	peak   int
	weight []float64
	sum    float64
}

// dailyRhythm draws a domain's rhythm: its peak hour, then the weights.
func dailyRhythm(r *rand.Rand) rhythm {
	rh := rhythm{peak: r.IntN(24), weight: make([]float64, 24)}
	for h := range rh.weight {
		d := math.Abs(float64(h - rh.peak))
		d = math.Min(d, 24-d)
		rh.weight[h] = 0.25 + math.Exp(-d*d/18) + 0.15*r.Float64()
		rh.sum += rh.weight[h]
	}
	return rh
}

// sparkline spreads a day's unique addresses over its hours.
func (rh rhythm) sparkline(uniq int64) []int64 {
	spark := make([]int64, 24)
	for h := range spark {
		spark[h] = int64(math.Round(float64(uniq) * 1.3 * rh.weight[h] / rh.sum))
	}
	return spark
}

// activity spreads 30 days of events over the hours and weekdays: the
// hour by weekday heatmap, and the statistics of the hours.
func (rh rhythm) activity(r *rand.Rand, quiet bool, total int64) ([][]int64, synthient.ActivityStats) {
	dowW := make([]float64, 7)
	for d := range dowW {
		dowW[d] = 0.8 + 0.4*r.Float64()
	}
	perHour := float64(total) / 720
	heatmap := make([][]int64, 24)
	hourly := make([]int64, 24)
	for h := 0; h < 24; h++ {
		row := make([]int64, 7)
		for d := 0; d < 7; d++ {
			row[d] = int64(math.Round(perHour * 24 * rh.weight[h] / rh.sum * dowW[d] * 30 / 7))
		}
		heatmap[h] = row
		hourly[h] = int64(math.Round(perHour * 24 * rh.weight[h] / rh.sum))
	}
	sorted := slices.Clone(hourly)
	slices.Sort(sorted)
	cadence := []string{"steady", "steady", "bursty", "periodic"}[r.IntN(4)]
	if quiet {
		cadence = "sporadic"
	}
	return heatmap, synthient.ActivityStats{
		PeakHour: rh.peak, QuietHour: slices.Index(hourly, slices.Min(hourly)),
		MedianPerHour: (sorted[11] + sorted[12]) / 2, P95PerHour: sorted[22], Cadence: cadence,
	}
}

// addBreakdowns sets a domain's top subdomains, ports, countries and ASN,
// largest first.
func addBreakdowns(out *synthient.DomainLookup, r *rand.Rand, total int64) {
	labels := slices.Clone(subdomainLabels)
	r.Shuffle(len(labels), func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	for i, c := range splits(r, 3+r.IntN(4), total) {
		out.TopSubdomains = append(out.TopSubdomains, synthient.SubdomainCount{Subdomain: labels[i] + "." + out.Domain, Count: c})
	}
	ports := slices.Clone(domainPorts[2:])
	r.Shuffle(len(ports), func(i, j int) { ports[i], ports[j] = ports[j], ports[i] })
	ports = append([]int{443, 80}, ports[:r.IntN(3)]...)
	for i, c := range splits(r, len(ports), total) {
		out.TopPorts = append(out.TopPorts, synthient.PortCount{Port: ports[i], Count: c})
	}
	countries := countryOrder(r)
	countries = countries[:3+r.IntN(4)]
	uniqShares := splits(r, len(countries), out.UniqueIPs.Value30d)
	for i, c := range splits(r, len(countries), total) {
		out.GeoDistribution = append(out.GeoDistribution, synthient.CountryCount{CountryCode: countries[i], UniqueIPs: uniqShares[i], Events: c})
	}
	if r.IntN(8) != 0 && total > 0 {
		op := isps[r.IntN(len(isps))]
		out.TopASN = &synthient.DomainTopASN{ASN: op.asn, Events: int64(float64(total) * (0.08 + 0.3*r.Float64()))}
	}
}

// countryOrder is the countries of the cities in a random order.
func countryOrder(r *rand.Rand) []string {
	var countries []string
	for _, i := range r.Perm(len(cities)) {
		if !slices.Contains(countries, cities[i].country) {
			countries = append(countries, cities[i].country)
		}
	}
	return countries
}

// recentEvents is at most limit of a domain's events, newest first,
// counting back from now at its daily rate (its 30-day rate when it was
// quiet today).
func recentEvents(r *rand.Rand, out *synthient.DomainLookup, limit int, total, today int64, now time.Time) []synthient.DomainEvent {
	n := int(min(int64(limit), total))
	events := make([]synthient.DomainEvent, 0, n)
	gap := 86400.0 / math.Max(1, float64(today))
	if today == 0 {
		gap = 30 * 86400 / math.Max(1, float64(total))
	}
	t := float64(now.Unix()) - r.Float64()*gap
	for i := 0; i < n; i++ {
		sub := out.TopSubdomains[weighted(r, len(out.TopSubdomains))]
		events = append(events, synthient.DomainEvent{
			Timestamp:       int64(t),
			SourceIPMasked:  maskIP(randomPublicIP(r)),
			TargetSubdomain: sub.Subdomain,
			Port:            out.TopPorts[weighted(r, len(out.TopPorts))].Port,
			CountryCode:     out.GeoDistribution[weighted(r, len(out.GeoDistribution))].CountryCode,
		})
		t -= gap * (0.2 + 1.6*r.Float64())
	}
	return events
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
