package retry_test

// Tests of retryafter.go: ParseRetryAfter and ParseHTTPDate, to the letter
// of RFC 9110's grammar, with the RFC 850 two-digit year rule; fuzz
// targets for both.

import (
	"math"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/retry"
)

// raNow is the local clock of the Retry-After tests: 37 s before the
// "Sun, 06 Nov 1994 08:49:37 GMT" of RFC 9110's examples.
var raNow = time.Date(1994, time.November, 6, 8, 49, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		values []string
		date   string
		want   time.Duration
		wantOK bool
	}{
		// delay-seconds
		{"zero", []string{"0"}, "", 0, true},
		{"five", []string{"5"}, "", 5 * time.Second, true},
		{"spaces trimmed", []string{" 7 "}, "", 7 * time.Second, true},
		{"leading zeros", []string{"007"}, "", 7 * time.Second, true},
		{"many leading zeros", []string{"0000000000000000000000000000000000000005"}, "", 5 * time.Second, true},
		{"a day", []string{"86400"}, "", 24 * time.Hour, true},
		{"largest whole seconds in a Duration", []string{"9223372036"}, "", 9223372036 * time.Second, true},
		{"one second too many saturates", []string{"9223372037"}, "", maxDuration, true},
		{"overflow saturates", []string{"99999999999999999999"}, "", maxDuration, true},
		{"int64 overflow saturates", []string{"9223372036854775808"}, "", maxDuration, true},
		{"huge overflow saturates", []string{strings.Repeat("9", 400)}, "", maxDuration, true},
		{"the Date field does not change delay-seconds", []string{"5"}, "Sun, 06 Nov 1994 08:49:37 GMT", 5 * time.Second, true},

		// unusable
		{"nil", nil, "", 0, false},
		{"no values", []string{}, "", 0, false},
		{"empty", []string{""}, "", 0, false},
		{"space", []string{" "}, "", 0, false},
		{"negative", []string{"-1"}, "", 0, false},
		{"plus sign", []string{"+5"}, "", 0, false},
		{"fraction", []string{"1.5"}, "", 0, false},
		{"unit", []string{"5s"}, "", 0, false},
		{"garbage", []string{"abc"}, "", 0, false},
		{"list in one value", []string{"5, 6"}, "", 0, false},
		{"two numbers with a space", []string{"5 6"}, "", 0, false},
		{"exponent", []string{"1e3"}, "", 0, false},
		{"hex", []string{"0x10"}, "", 0, false},
		{"non-ASCII digit", []string{"\u0663"}, "", 0, false},
		{"full-width digit", []string{"\uff15"}, "", 0, false},
		{"two values", []string{"1", "2"}, "", 0, false},
		{"two equal values", []string{"5", "5"}, "", 0, false},
		{"one empty of two", []string{"5", ""}, "", 0, false},
		{"overflowing negative", []string{"-99999999999999999999"}, "", 0, false},
		{"overflow with garbage after it", []string{"99999999999999999999x"}, "", 0, false},

		// HTTP-date, against the local clock
		{"IMF-fixdate", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "", 37 * time.Second, true},
		{"RFC 850", []string{"Sunday, 06-Nov-94 08:49:37 GMT"}, "", 37 * time.Second, true},
		{"asctime", []string{"Sun Nov  6 08:49:37 1994"}, "", 37 * time.Second, true},
		{"asctime two-digit day", []string{"Thu Nov 10 08:49:00 1994"}, "", 4 * 24 * time.Hour, true},
		{"IMF-fixdate with spaces", []string{"  Sun, 06 Nov 1994 08:49:37 GMT "}, "", 37 * time.Second, true},
		{"date now", []string{"Sun, 06 Nov 1994 08:49:00 GMT"}, "", 0, true},
		{"date in the past", []string{"Sun, 06 Nov 1994 08:48:00 GMT"}, "", 0, true},
		{"date long past", []string{"Thu, 01 Jan 1970 00:00:00 GMT"}, "", 0, true},
		{"date too far for a Duration saturates", []string{"Fri, 31 Dec 9999 23:59:59 GMT"}, "", maxDuration, true},

		// HTTP-date, against the response's Date field
		{"against Date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:49:30 GMT", 7 * time.Second, true},
		{"against a Date ahead of the local clock", []string{"Sun, 06 Nov 1994 09:00:00 GMT"}, "Sun, 06 Nov 1994 08:59:00 GMT", time.Minute, true},
		{"against Date, RFC 850 Date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sunday, 06-Nov-94 08:49:27 GMT", 10 * time.Second, true},
		{"against Date, asctime Date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun Nov  6 08:49:17 1994", 20 * time.Second, true},
		{"asctime against Date", []string{"Sun Nov  6 08:49:37 1994"}, "Sun, 06 Nov 1994 08:49:36 GMT", time.Second, true},
		{"equal to Date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:49:37 GMT", 0, true},
		{"before Date", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:50:00 GMT", 0, true},
		{"before Date although after the local clock", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun, 06 Nov 1994 09:00:00 GMT", 0, true},
		{"malformed Date: local clock", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "yesterday", 37 * time.Second, true},
		{"non-GMT Date: local clock", []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "Sun, 06 Nov 1994 08:49:30 +0000", 37 * time.Second, true},

		// HTTP-date forms outside RFC 9110: unusable
		{"IMF-fixdate +0000", []string{"Sun, 06 Nov 1994 08:49:37 +0000"}, "", 0, false},
		{"IMF-fixdate UTC", []string{"Sun, 06 Nov 1994 08:49:37 UTC"}, "", 0, false},
		{"IMF-fixdate PST", []string{"Sun, 06 Nov 1994 08:49:37 PST"}, "", 0, false},
		{"IMF-fixdate no zone", []string{"Sun, 06 Nov 1994 08:49:37"}, "", 0, false},
		{"RFC 850 UTC", []string{"Sunday, 06-Nov-94 08:49:37 UTC"}, "", 0, false},
		{"RFC 850 +0000", []string{"Sunday, 06-Nov-94 08:49:37 +0000"}, "", 0, false},
		{"asctime with a zone", []string{"Sun Nov  6 08:49:37 1994 PST"}, "", 0, false},
		{"RFC 3339", []string{"1994-11-06T08:49:37Z"}, "", 0, false},
		{"HTTP-date with garbage after it", []string{"Sun, 06 Nov 1994 08:49:37 GMT x"}, "", 0, false},
		{"two HTTP-dates", []string{"Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT"}, "", 0, false},
		{"fractional seconds", []string{"Sun, 06 Nov 1994 08:49:37.5 GMT"}, "", 0, false},
		{"fractional seconds with a comma", []string{"Sun, 06 Nov 1994 08:49:37,5 GMT"}, "", 0, false},
		{"one-digit hour", []string{"Sun, 06 Nov 1994 8:49:37 GMT"}, "", 0, false},
		{"one-digit hour after two spaces", []string{"Sun, 06 Nov 1994  8:49:37 GMT"}, "", 0, false},
		{"asctime one-digit hour after two spaces", []string{"Sun Nov  6  8:49:37 1994"}, "", 0, false},
		{"one-digit day", []string{"Sun, 6 Nov 1994 08:49:37 GMT"}, "", 0, false},
		{"lower-case names", []string{"sun, 06 nov 1994 08:49:37 GMT"}, "", 0, false},
		{"long day name in IMF-fixdate", []string{"Sunday, 06 Nov 1994 08:49:37 GMT"}, "", 0, false},
		{"RFC 850 with a short day name", []string{"Sun, 06-Nov-94 08:49:37 GMT"}, "", 0, false},
		{"RFC 850 with a four-digit year", []string{"Sunday, 06-Nov-1994 08:49:37 GMT"}, "", 0, false},
		{"asctime with one space before a one-digit day", []string{"Sun Nov 6 08:49:37 1994"}, "", 0, false},
		{"hour 24", []string{"Sun, 06 Nov 1994 24:00:00 GMT"}, "", 0, false},
		{"31 November", []string{"Thu, 31 Nov 1994 08:49:37 GMT"}, "", 0, false},
		{"RFC 850 31 November", []string{"Thursday, 31-Nov-94 08:49:37 GMT"}, "", 0, false},
		{"RFC 850 hour 25", []string{"Sunday, 06-Nov-94 25:49:37 GMT"}, "", 0, false},
		{"a tab inside", []string{"Sun,\t06 Nov 1994 08:49:37 GMT"}, "", 0, false},

		// RFC 9110's grammar, and no more: the weekday is not checked.
		{"asctime with a two-digit day", []string{"Sun Nov 06 08:49:37 1994"}, "", 37 * time.Second, true},
		{"a weekday that does not match", []string{"Mon, 06 Nov 1994 08:49:37 GMT"}, "", 37 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := retry.ParseRetryAfter(tc.values, tc.date, raNow)
			assert.Equal(t, tc.wantOK, ok, "ParseRetryAfter(%q, %q): ok", tc.values, tc.date)
			assert.Equal(t, tc.want, got, "ParseRetryAfter(%q, %q): wait", tc.values, tc.date)
		})
	}
}

// TestParseRetryAfterUsesNow: with no usable Date field, an HTTP-date is
// measured against the now argument, not the machine's clock.
func TestParseRetryAfterUsesNow(t *testing.T) {
	t.Parallel()
	v := []string{"Sun, 06 Nov 1994 08:49:37 GMT"}
	for _, tc := range []struct {
		now  time.Time
		want time.Duration
	}{
		{raNow, 37 * time.Second},
		{raNow.Add(-time.Hour), time.Hour + 37*time.Second},
		{raNow.Add(37 * time.Second), 0},
		{time.Date(1994, time.November, 6, 9, 49, 0, 0, time.FixedZone("CET", 3600)), 37 * time.Second},
	} {
		got, ok := retry.ParseRetryAfter(v, "", tc.now)
		if assert.True(t, ok, "now %v", tc.now) {
			assert.Equal(t, tc.want, got, "now %v", tc.now)
		}
	}
}

func TestParseHTTPDate(t *testing.T) {
	t.Parallel()
	want := time.Date(1994, time.November, 6, 8, 49, 37, 0, time.UTC)
	for _, v := range []string{
		"Sun, 06 Nov 1994 08:49:37 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994",
	} {
		assertHTTPDate(t, v, raNow, want)
	}
	for _, v := range []string{
		"", "GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 +0000",
		"Sun, 06 Nov 1994 08:49:37 PST", "Sunday, 06-Nov-94 08:49:37 PST", "Sun Nov  6 08:49:37 1994 GMT",
		"06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 25:49:37 GMT", "1994-11-06T08:49:37Z",
		// Each form has the shape but time.Parse refuses the date.
		"Sunday, 06-Nov-94 25:49:37 GMT", "Thursday, 31-Nov-94 08:49:37 GMT", "Sun Nov 31 08:49:37 1994",
		// A space where a digit belongs, which time.Parse alone would take.
		"Sun, 06 Nov 1994  8:49:37 GMT", "Sunday, 06-Nov-94  8:49:37 GMT", "Sun Nov  6  8:49:37 1994",
	} {
		got, ok := retry.ParseHTTPDate(v, raNow)
		assert.False(t, ok, "ParseHTTPDate(%q) = %v: want unusable", v, got)
	}
}

// assertHTTPDate checks that ParseHTTPDate(v, now) is want, in UTC.
func assertHTTPDate(t *testing.T, v string, now, want time.Time) {
	t.Helper()
	got, ok := retry.ParseHTTPDate(v, now)
	if assert.True(t, ok, "ParseHTTPDate(%q) at %v: unusable", v, now) {
		assert.Equal(t, want, got, "ParseHTTPDate(%q) at %v", v, now)
	}
}

// TestParseHTTPDateRFC850Year checks RFC 9110's rule for the two-digit
// year of an RFC 850 date: one that appears more than 50 years in the future
// is the most recent past year with the same last two digits.
func TestParseHTTPDateRFC850Year(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, time.June, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		yy   string
		year int
	}{
		{"94", 1994},
		{"99", 1999},
		{"77", 1977}, // 2077 is 51 years ahead
		{"76", 2076}, // exactly 50 years ahead is still the future
		{"70", 2070},
		{"69", 2069}, // Go's own pivot would say 1969
		{"50", 2050},
		{"30", 2030},
		{"26", 2026},
		{"25", 2025},
		{"00", 2000},
	} {
		assertHTTPDate(t, "Sunday, 01-Jan-"+tc.yy+" 00:00:00 GMT", now, time.Date(tc.year, time.January, 1, 0, 0, 0, 0, time.UTC))
	}

	// More than 50 years ahead is measured on the timestamp, not the year:
	// at 2026-03-01, 2076-12-31 is 50 years and 10 months ahead.
	at := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)
	assertHTTPDate(t, "Thursday, 31-Dec-76 00:00:00 GMT", at, time.Date(1976, time.December, 31, 0, 0, 0, 0, time.UTC))
	// Exactly 50 years ahead is still the future.
	assertHTTPDate(t, "Thursday, 01-Mar-76 00:00:00 GMT", at, time.Date(2076, time.March, 1, 0, 0, 0, 0, time.UTC))
	// And a year more than 50 years past is the next century's.
	at = time.Date(2099, time.June, 1, 0, 0, 0, 0, time.UTC)
	assertHTTPDate(t, "Friday, 01-Jan-00 00:00:00 GMT", at, time.Date(2100, time.January, 1, 0, 0, 0, 0, time.UTC))

	// The rule follows the clock it is given.
	v := "Sunday, 06-Nov-94 08:49:37 GMT"
	for _, tc := range []struct {
		now  int
		want int
	}{{1994, 1994}, {2000, 1994}, {2043, 1994}, {2044, 1994}, {2045, 2094}, {2060, 2094}, {2144, 2094}, {2145, 2194}} {
		assertHTTPDate(t, v, time.Date(tc.now, time.January, 1, 0, 0, 0, 0, time.UTC),
			time.Date(tc.want, time.November, 6, 8, 49, 37, 0, time.UTC))
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, v := range []string{
		"0", "5", " 7 ", "007", "86400", "9223372036", "9223372037", "99999999999999999999",
		"", " ", "\t", "-1", "+5", "1.5", "5s", "abc", "5, 6", "5 6", "1e3", "0x10", "\u0663",
		"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
		"Sun, 06 Nov 1994 08:49:37 +0000", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 PST",
		"Sunday, 06-Nov-20 08:49:37 GMT", "Sunday, 06-Nov-77 08:49:37 GMT",
		"Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
	} {
		for _, date := range []string{"", "Sun, 06 Nov 1994 08:49:30 GMT", "garbage"} {
			f.Add(v, date)
		}
	}
	f.Fuzz(func(t *testing.T, v, date string) {
		wait, ok := retry.ParseRetryAfter([]string{v}, date, raNow)
		if !ok {
			require.Zero(t, wait, "ParseRetryAfter(%q, %q): unusable must give 0", v, date)
		}
		require.GreaterOrEqual(t, wait, time.Duration(0), "ParseRetryAfter(%q, %q): negative wait", v, date)
		if isDigits(v) {
			require.True(t, ok, "ParseRetryAfter(%q) unusable, want delay-seconds", v)
			require.Equal(t, secondsSaturated(v), wait, "ParseRetryAfter(%q)", v)
		}
		// Surrounding spaces do not matter.
		w2, ok2 := retry.ParseRetryAfter([]string{" " + v + " "}, date, raNow)
		require.Equal(t, ok, ok2, "ParseRetryAfter(%q) and with spaces around: ok", v)
		require.Equal(t, wait, w2, "ParseRetryAfter(%q) and with spaces around: wait", v)
		// Two values are never usable.
		w2, ok2 = retry.ParseRetryAfter([]string{v, v}, date, raNow)
		require.False(t, ok2, "ParseRetryAfter(two values %q)", v)
		require.Zero(t, w2, "ParseRetryAfter(two values %q)", v)
		// ParseHTTPDate never panics on either argument.
		retry.ParseHTTPDate(v, raNow)
		retry.ParseHTTPDate(date, raNow)
	})
}

// FuzzParseHTTPDate checks what holds for every usable HTTP-date: it is a
// whole second in UTC, its IMF-fixdate form reads back the same, net/http
// reads the IMF-fixdate and asctime forms (which have no two-digit year)
// as the same instant, an RFC 850 one lies within 50 years of now, and
// ParseRetryAfter waits until it.
func FuzzParseHTTPDate(f *testing.F) {
	for _, v := range []string{
		"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
		"Sun Nov 16 08:49:37 1994", "Thursday, 31-Dec-76 00:00:00 GMT", "Friday, 01-Jan-00 00:00:00 GMT",
		"Tuesday, 29-Feb-00 00:00:00 GMT", "Mon, 01 Jan 0000 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
		"Sun, 06 Nov 1994  8:49:37 GMT", "Sunday, 06-Nov-94 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:37.5 GMT",
		"", "GMT", "1994-11-06T08:49:37Z",
	} {
		f.Add(v, int32(0))
		f.Add(v, int32(60*365*24))
	}
	f.Fuzz(func(t *testing.T, v string, hours int32) {
		// A clock from about 1794 to 2194: every year it makes has four digits.
		now := raNow.Add(time.Duration(hours%(200*365*24)) * time.Hour)
		got, ok := retry.ParseHTTPDate(v, now)
		if !ok {
			return
		}
		require.Equal(t, time.UTC, got.Location(), "ParseHTTPDate(%q)", v)
		require.Zero(t, got.Nanosecond(), "ParseHTTPDate(%q)", v)
		back, ok := retry.ParseHTTPDate(got.Format(http.TimeFormat), now)
		require.True(t, ok, "ParseHTTPDate(%q) = %v, whose IMF-fixdate is unusable", v, got)
		require.Equal(t, got, back, "ParseHTTPDate(%q) and its IMF-fixdate", v)
		if c := v[3]; c == ',' || c == ' ' { // IMF-fixdate or asctime
			std, err := http.ParseTime(v)
			require.NoError(t, err, "http.ParseTime(%q)", v)
			require.True(t, got.Equal(std), "ParseHTTPDate(%q) = %v, http.ParseTime = %v", v, got, std)
		} else { // RFC 850
			require.False(t, got.After(now.AddDate(50, 0, 0)), "ParseHTTPDate(%q) at %v = %v: over 50 years ahead", v, now, got)
			require.False(t, got.Before(now.AddDate(-50, 0, 0)), "ParseHTTPDate(%q) at %v = %v: over 50 years past", v, now, got)
		}
		wait, ok := retry.ParseRetryAfter([]string{v}, "", now)
		require.True(t, ok, "ParseRetryAfter(%q)", v)
		require.Equal(t, max(got.Sub(now), 0), wait, "ParseRetryAfter(%q) at %v", v, now)
	})
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// secondsSaturated computes the Duration of a string of digits read as
// seconds, saturating at the largest Duration, with arbitrary precision.
func secondsSaturated(s string) time.Duration {
	n, _ := new(big.Int).SetString(s, 10)
	n.Mul(n, big.NewInt(int64(time.Second)))
	if n.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		return maxDuration
	}
	return time.Duration(n.Int64())
}
