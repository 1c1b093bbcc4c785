package synthient

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRateLimit(t *testing.T) {
	t.Parallel()
	maxD := time.Duration(math.MaxInt64)
	for _, tc := range []struct {
		name                   string
		limit, remaining, rset []string
		want                   *RateLimit
	}{
		{"none", nil, nil, nil, nil},
		{"all", []string{"100"}, []string{"42"}, []string{"7"}, &RateLimit{100, 42, 7 * time.Second}},
		{"spaces", []string{" 100 "}, []string{"\t42"}, []string{"7 "}, &RateLimit{100, 42, 7 * time.Second}},
		{"one of three", nil, []string{"3"}, nil, &RateLimit{0, 3, 0}},
		{"malformed reads 0", []string{"-1"}, []string{"+3"}, []string{"1.5"}, &RateLimit{0, 0, 0}},
		{"empty reads 0", []string{""}, nil, nil, &RateLimit{0, 0, 0}},
		{"huge saturates", []string{"99999999999999999999999"}, nil, []string{"99999999999999999999999"}, &RateLimit{math.MaxInt, 0, maxD}},
		{"reset past a Duration saturates", nil, nil, []string{strconv.FormatInt(math.MaxInt64/int64(time.Second)+1, 10)}, &RateLimit{0, 0, maxD}},
		{"largest exact reset", nil, nil, []string{strconv.FormatInt(math.MaxInt64/int64(time.Second), 10)}, &RateLimit{0, 0, time.Duration(math.MaxInt64/int64(time.Second)) * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range map[string][]string{"Ratelimit-Limit": tc.limit, "Ratelimit-Remaining": tc.remaining, "Ratelimit-Reset": tc.rset} {
				if v != nil {
					h[k] = v
				}
			}
			assert.Equal(t, tc.want, parseRateLimit(h), "parseRateLimit(%v)", h)
		})
	}
}

// FuzzParseRateLimit: any header values give nil or non-negative fields,
// and a value of digits reads as its number.
func FuzzParseRateLimit(f *testing.F) {
	for _, s := range []string{"100", " 7 ", "", "-1", "+1", "1.5", "99999999999999999999999", "0", "9223372036", "9223372037"} {
		f.Add(s, s, s)
	}
	f.Fuzz(func(t *testing.T, limit, remaining, reset string) {
		h := http.Header{"Ratelimit-Limit": {limit}, "Ratelimit-Remaining": {remaining}, "Ratelimit-Reset": {reset}}
		rl := parseRateLimit(h)
		require.NotNil(t, rl, "nil with every header present")
		require.False(t, rl.Limit < 0 || rl.Remaining < 0 || rl.Reset < 0, "negative field %+v from %q %q %q", rl, limit, remaining, reset)
		if n, err := strconv.Atoi(limit); err == nil && n >= 0 && limit == strconv.Itoa(n) {
			require.Equal(t, n, rl.Limit, "Limit from %q", limit)
		}
	})
}
