// Package render turns the SDK's results into what the command prints:
// aligned tables, CSV and JSON lines, and the small text helpers they
// share. Every cell is escaped (textsafe.EscapeCell), so a value from the
// server cannot add a column or a line.
package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ShellWord returns s as one word for a POSIX shell: as it is when it
// holds only letters, digits and -_.,:=+/@%, else single-quoted. A cursor
// from the server is printed in a command line the user may paste.
func ShellWord(s string) string {
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

// OrDash returns s, or "-" when it is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// PtrOrDash returns *s, or "-" when s is nil or empty.
func PtrOrDash(s *string) string {
	if s == nil {
		return "-"
	}
	return OrDash(*s)
}

// Deref returns *s, or "" when s is nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// JoinSet lists the values that are set and not empty; "-" when there are
// none.
func JoinSet(v ...*string) string {
	var set []string
	for _, s := range v {
		if s != nil && *s != "" {
			set = append(set, *s)
		}
	}
	return List(set)
}

// List joins v with ", "; "-" when it is empty.
func List(v []string) string {
	if len(v) == 0 {
		return "-"
	}
	return strings.Join(v, ", ")
}

// UnixDate renders the Unix time ts as a UTC date; "-" for 0.
func UnixDate(ts int64) string {
	if ts == 0 {
		return "-"
	}
	return time.Unix(ts, 0).UTC().Format(time.DateOnly)
}

// UnixTime renders the Unix time ts as a UTC date and minute; "-" for 0.
func UnixTime(ts int64) string {
	if ts == 0 {
		return "-"
	}
	return time.Unix(ts, 0).UTC().Format("2006-01-02 15:04Z")
}

// BytesHuman renders a size in binary units.
func BytesHuman(n int64) string {
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

// Plural renders n with the singular or plural noun phrase.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// SumsLegs reports whether the SDK's count of attempts of a call of its
// method op (synthient.Error.Attempts, CallEnd.Attempts) adds up the
// requests of several legs or pages, each a first attempt of its own: a
// download's (its meta, the API's redirect, the storage request), and the
// pages of AllExports.
func SumsLegs(op string) bool {
	return strings.HasPrefix(op, "DownloadExport") || op == "AllExports"
}

// Attempts words n, the SDK's count of attempts of a call of its method
// op, in words true of the call: "2 attempts" of a request sent again,
// but "3 requests" of a call whose count adds up legs or pages
// (SumsLegs), where three requests of one attempt each are not "3
// attempts".
func Attempts(op string, n int) string {
	if SumsLegs(op) {
		return Plural(int64(n), "request", "requests")
	}
	return Plural(int64(n), "attempt", "attempts")
}

// HumanDuration renders d as a person reads a wait, in its two largest
// units, rounded down: "30 days 10 hours", "5 hours", "1 minute 3
// seconds"; "now" under a second.
func HumanDuration(d time.Duration) string {
	units := []struct {
		name string
		size time.Duration
	}{{"day", 24 * time.Hour}, {"hour", time.Hour}, {"minute", time.Minute}, {"second", time.Second}}
	for i, u := range units {
		if d < u.size {
			continue
		}
		n := d / u.size
		out := Plural(int64(n), u.name, u.name+"s")
		if i+1 < len(units) {
			next := units[i+1]
			if m := d % u.size / next.size; m > 0 {
				out += " " + Plural(int64(m), next.name, next.name+"s")
			}
		}
		return out
	}
	return "now"
}

// OneLine joins the words of s with single spaces: a message that spans
// lines, or holds runs of white space, as one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Truncate cuts s to at most n bytes, at a character boundary, marking
// the cut with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Clip cuts s to at most n runes, marking the cut with "…".
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
