package main

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/synthient-go/synthient"
)

func (a *app) lookupCommand() *cobra.Command {
	return groupCommand("lookup", "Look up IP addresses and domains (billed)",
		withCSV(a.lookupIPCommand(), "one row"),
		withCSV(a.lookupIPsCommand(), "one row per address looked up"),
		withCSV(a.lookupDomainCommand(), "one row"))
}

func (a *app) lookupIPCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ip ADDR",
		Short: "Look up one IP address (1 credit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ip, err := netip.ParseAddr(strings.TrimSpace(args[0]))
			if err != nil {
				return usageError("%q is not an IP address", args[0])
			}
			c, err := a.newClient()
			if err != nil {
				return err
			}
			r, err := c.LookupIP(cmd.Context(), ip)
			if err != nil {
				return err
			}
			switch {
			case a.json():
				return a.emit(r)
			case a.csv():
				return writeCSV(a.env.stdout, ipCSVHeader, ipCSVRow(r))
			}
			return writeIPLookup(a.env.stdout, r)
		},
	}
}

func (a *app) lookupDomainCommand() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "domain NAME",
		Short: "Look up a domain's honeypot intelligence (1 credit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.newClient()
			if err != nil {
				return err
			}
			if err := checkLimit(cmd, limit, 1000); err != nil {
				return err
			}
			r, err := c.LookupDomain(cmd.Context(), args[0], &synthient.DomainLookupParams{Limit: limit})
			if err != nil {
				return err
			}
			switch {
			case a.json():
				return a.emit(r)
			case a.csv():
				return writeCSV(a.env.stdout, domainCSVHeader, domainCSVRow(r))
			}
			return writeDomain(a.env.stdout, r)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "recent events to return, 1 to 1000 (default: the API's, 50)")
	return cmd
}

func writeDomain(w io.Writer, r *synthient.DomainLookup) error {
	t := newTable(w)
	t.row("Domain", r.Domain)
	t.row("Status", orDash(r.Status))
	t.row("Events", fmt.Sprintf("%d in 24h, %d in 30 days", r.Stats.Events24h, r.Stats.TotalEvents30d))
	t.row("Unique IPs", fmt.Sprintf("%d in 24h, %d in 30 days", r.UniqueIPs.Value24h, r.UniqueIPs.Value30d))
	if r.TopASN != nil {
		t.row("Top ASN", fmt.Sprintf("AS%d (%d events)", r.TopASN.ASN, r.TopASN.Events))
	}
	var subs, ports []string
	for _, s := range r.TopSubdomains {
		subs = append(subs, fmt.Sprintf("%s (%d)", s.Subdomain, s.Count))
	}
	for _, p := range r.TopPorts {
		ports = append(ports, fmt.Sprintf("%d (%d)", p.Port, p.Count))
	}
	t.row("Top subdomains", list(subs))
	t.row("Top ports", list(ports))
	s := r.ActivityStats
	t.row("Activity", fmt.Sprintf("peak %02d:00, quiet %02d:00, median %d/h, p95 %d/h, %s", s.PeakHour, s.QuietHour, s.MedianPerHour, s.P95PerHour, orDash(s.Cadence)))
	if err := t.flush(); err != nil {
		return err
	}
	if len(r.RecentEvents) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t = newTable(w)
	t.row("TIME", "SOURCE", "TARGET", "PORT", "COUNTRY")
	for _, e := range r.RecentEvents {
		t.row(unixTime(e.Timestamp), e.SourceIPMasked, e.TargetSubdomain, strconv.Itoa(e.Port), e.CountryCode)
	}
	return t.flush()
}

// checkLimit refuses a --limit given outside 1 to max: 0 would otherwise
// silently mean the API's default, which leaving the flag out says.
func checkLimit(cmd *cobra.Command, limit, max int) error {
	if cmd.Flags().Changed("limit") && (limit < 1 || limit > max) {
		return usageError("--limit must be 1 to %d, not %d (leave it out for the API's default)", max, limit)
	}
	return nil
}
