package retry

import (
	"math"
	"strings"
	"time"
)

// The three HTTP-date forms of RFC 9110, section 5.6.7, GMT only.
const (
	imfFixdate  = "Mon, 02 Jan 2006 15:04:05 GMT"
	rfc850Date  = "Monday, 02-Jan-06 15:04:05 GMT"
	asctimeDate = "Mon Jan _2 15:04:05 2006"
)

// ParseRetryAfter parses the values of a Retry-After field strictly and
// returns the wait it asks for.
//
// It accepts exactly one value, either delay-seconds (1*DIGIT after
// trimming spaces; a number too large for a Duration gives the largest
// Duration, never a negative or zero one) or an HTTP-date in one of RFC
// 9110's three forms (IMF-fixdate, RFC 850, asctime; GMT only), whose wait
// is the date minus date, the response's Date field, or minus now when
// date is missing or malformed. A date in the past asks for no wait.
//
// Everything else (no value, two values, a sign, a fraction, any other
// text) is unusable and reported as absent: ok is false.
func ParseRetryAfter(values []string, date string, now time.Time) (wait time.Duration, ok bool) {
	if len(values) != 1 {
		return 0, false
	}
	v := strings.Trim(values[0], " \t")
	if v == "" {
		return 0, false
	}
	if d, ok := parseDelaySeconds(v); ok {
		return d, true
	}
	t, ok := ParseHTTPDate(v, now)
	if !ok {
		return 0, false
	}
	ref := now
	if rt, ok := ParseHTTPDate(strings.Trim(date, " \t"), now); ok {
		ref = rt
	}
	if !t.After(ref) {
		return 0, true
	}
	return t.Sub(ref), true // Sub saturates at the largest Duration
}

// parseDelaySeconds parses 1*DIGIT, saturating at the largest Duration.
func parseDelaySeconds(v string) (time.Duration, bool) {
	const maxSeconds = math.MaxInt64 / int64(time.Second)
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > maxSeconds {
			continue // already saturated; keep checking the syntax
		}
		n = n*10 + int64(c-'0')
	}
	if n > maxSeconds {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(n) * time.Second, true
}

// ParseHTTPDate parses an HTTP-date in any of RFC 9110's three forms, GMT
// only, to the letter of its grammar: names spelled as in the RFC
// (case-sensitive), two-digit fields with both digits, no fractional
// seconds; the day of the week is not checked against the date. A
// two-digit RFC 850 year is read as the year with those last two digits
// that lies within 50 years of now, and a timestamp that would lie more
// than 50 years after now as the most recent past one.
func ParseHTTPDate(v string, now time.Time) (time.Time, bool) {
	switch {
	case matchShape(v, "w, 99 m 9999 99:99:99 GMT"):
		t, err := time.Parse(imfFixdate, v)
		return t, err == nil
	case matchShape(v, "w m _9 99:99:99 9999"):
		t, err := time.Parse(asctimeDate, v)
		return t, err == nil
	case matchShape(v, "W, 99-m-99 99:99:99 GMT"):
		t, err := time.Parse(rfc850Date, v)
		if err != nil {
			return time.Time{}, false
		}
		in := func(year int) time.Time {
			return time.Date(year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
		}
		now = now.UTC()
		year := now.Year()/100*100 + t.Year()%100
		switch c := in(year); {
		case c.After(now.AddDate(50, 0, 0)):
			year -= 100
		case c.Before(now.AddDate(-50, 0, 0)):
			year += 100
		}
		c := in(year)
		return c, c.Day() == t.Day() // 29-Feb of a year that is not a leap year
	}
	return time.Time{}, false
}

// names are the names a shape pattern's letters stand for.
var names = map[byte][]string{
	'w': {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"},
	'W': {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"},
	'm': {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"},
}

// matchShape reports whether v has exactly the shape of pattern, in which
// 'w' is a day name (Mon), 'W' a long day name (Monday), 'm' a month name,
// '9' a digit, '_' a digit or a space, and any other byte stands for
// itself.
func matchShape(v, pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if ns, ok := names[c]; ok {
			if v, ok = cutName(v, ns); !ok {
				return false
			}
			continue
		}
		if v == "" {
			return false
		}
		digit := v[0] >= '0' && v[0] <= '9'
		var ok bool
		switch c {
		case '9':
			ok = digit
		case '_':
			ok = digit || v[0] == ' '
		default:
			ok = v[0] == c
		}
		if !ok {
			return false
		}
		v = v[1:]
	}
	return v == ""
}

// cutName removes the name in names that v starts with.
func cutName(v string, names []string) (string, bool) {
	for _, n := range names {
		if rest, ok := strings.CutPrefix(v, n); ok {
			return rest, true
		}
	}
	return v, false
}
