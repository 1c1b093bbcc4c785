package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/synthient-go/synthient"
)

// writeJSONLine writes the JSON text b as one line, with every control
// character, C1 control, U+2028 and U+2029 in its strings \u-escaped
// (appendJSON): encoding/json leaves C1 controls and DEL raw, and a
// stream line is the server's own text.
func writeJSONLine(w io.Writer, b []byte) error {
	line := make([]byte, 0, len(b)+1)
	if needsEscape(b) {
		line = appendJSON(line, b)
	} else {
		line = append(line, b...)
	}
	_, err := w.Write(append(line, '\n'))
	return err
}

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

// row adds a row; a cell's control characters, tab and newline included,
// are escaped first, so that a value cannot break the columns or forge a
// line (and the columns are measured on what is printed).
func (t *table) row(cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = escapeCell(c)
	}
	fmt.Fprintln(t.tw, strings.Join(safe, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// shellWord returns s as one word for a POSIX shell: as it is when it
// holds only letters, digits and -_.,:=+/@%, else single-quoted. A cursor
// from the server is printed in a command line the user may paste.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, notShellSafe) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func notShellSafe(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return false
	}
	return !strings.ContainsRune("-_.,:=+/@%", r)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ptr(s *string) string {
	if s == nil {
		return "-"
	}
	return orDash(*s)
}

// joinSet lists the values that are set and not empty; "-" when there are
// none.
func joinSet(v ...*string) string {
	var set []string
	for _, s := range v {
		if s != nil && *s != "" {
			set = append(set, *s)
		}
	}
	return list(set)
}

func list(v []string) string {
	if len(v) == 0 {
		return "-"
	}
	return strings.Join(v, ", ")
}

func unixDate(ts int64) string {
	if ts == 0 {
		return "-"
	}
	return time.Unix(ts, 0).UTC().Format(time.DateOnly)
}

func unixTime(ts int64) string {
	if ts == 0 {
		return "-"
	}
	return time.Unix(ts, 0).UTC().Format("2006-01-02 15:04Z")
}

// bytesHuman renders a size in binary units.
func bytesHuman(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// writeIPLookup prints one lookup as a two-column table.
func writeIPLookup(w io.Writer, r *synthient.IPLookup) error {
	t := newTable(w)
	t.row("IP", r.IP.String())
	if n := r.Network; n != nil {
		t.row("Network", fmt.Sprintf("AS%d %s (%s)", n.ASN, orDash(n.ISP), orDash(n.Type)))
		t.row("Org", ptr(n.Org))
		t.row("Domain", ptr(n.Domain))
		t.row("Abuse", joinSet(n.AbuseEmail, n.AbusePhone))
	} else {
		t.row("Network", "-")
	}
	if l := r.Location; l != nil {
		t.row("Location", fmt.Sprintf("%s, %s, %s (%s) %.4f,%.4f geohash %s",
			orDash(l.City), orDash(l.State), orDash(l.Country), orDash(l.Timezone), l.Latitude, l.Longitude, orDash(l.GeoHash)))
	} else {
		t.row("Location", "-")
	}
	if in := r.Intelligence; in != nil {
		t.row("Risk score", strconv.Itoa(in.RiskScore))
		t.row("Categories", list(in.Categories))
		t.row("Behavior", list(in.Behavior))
		var providers []string
		for _, p := range in.Providers {
			providers = append(providers, fmt.Sprintf("%s %s (last seen %s)", p.Provider, p.Type, unixDate(p.LastSeen)))
		}
		t.row("Providers", list(providers))
		var devices []string
		for _, d := range in.Devices {
			devices = append(devices, fmt.Sprintf("%s %s (last seen %s)", d.OS, d.Version, unixDate(d.LastSeen)))
		}
		t.row("Devices", list(devices))
	} else {
		t.row("Intelligence", "none available")
	}
	return t.flush()
}

// ipRow is the one-line form of a lookup, for batches.
func ipRow(r *synthient.IPLookup) []string {
	asn, isp, typ, country, risk, cats := "-", "-", "-", "-", "-", "-"
	if n := r.Network; n != nil {
		asn, isp, typ = "AS"+strconv.Itoa(n.ASN), orDash(n.ISP), orDash(n.Type)
	}
	if l := r.Location; l != nil {
		country = orDash(l.Country)
	}
	if in := r.Intelligence; in != nil {
		risk, cats = strconv.Itoa(in.RiskScore), list(in.Categories)
	}
	return []string{r.IP.String(), asn, isp, typ, country, risk, cats}
}

var ipHeader = []string{"IP", "ASN", "ISP", "TYPE", "COUNTRY", "RISK", "CATEGORIES"}

func writeExports(w io.Writer, exports []synthient.Export) error {
	t := newTable(w)
	t.row("ID", "KIND", "SIZE", "ROWS", "CREATED", "SHA-256")
	for _, e := range exports {
		sum := e.Checksum
		if len(sum) > 12 {
			sum = sum[:12] + "…"
		}
		t.row(e.ID, e.Kind, bytesHuman(e.SizeBytes), strconv.FormatInt(e.RowCount, 10), unixTime(e.CreatedAt), sum)
	}
	return t.flush()
}

// newBytesBar returns a progress bar for a transfer of total bytes.
func newBytesBar(w io.Writer, total int64, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(50*time.Millisecond),
	)
}

// plural renders n with the singular or plural noun phrase.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
