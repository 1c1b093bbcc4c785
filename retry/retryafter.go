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
	const maxSeconds = int64(math.MaxInt64 / int64(time.Second))
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
// only. A two-digit RFC 850 year that would lie more than 50 years after
// now is read as the most recent past year with the same last two digits.
func ParseHTTPDate(v string, now time.Time) (time.Time, bool) {
	if t, err := time.Parse(imfFixdate, v); err == nil {
		return t, true
	}
	if t, err := time.Parse(asctimeDate, v); err == nil {
		return t, true
	}
	t, err := time.Parse(rfc850Date, v)
	if err != nil {
		return time.Time{}, false
	}
	year := now.UTC().Year()/100*100 + t.Year()%100
	if year > now.UTC().Year()+50 {
		year -= 100
	}
	return t.AddDate(year-t.Year(), 0, 0), true
}
