package synthient

// Tests of pace.go's reading of the RateLimit headers, which the model in
// package internal/pace takes in.

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// rlHeader is an answer's RateLimit headers.
func rlHeader(limit, remaining, reset int) http.Header {
	return http.Header{
		"Ratelimit-Limit":     {strconv.Itoa(limit)},
		"Ratelimit-Remaining": {strconv.Itoa(remaining)},
		"Ratelimit-Reset":     {strconv.Itoa(reset)},
	}
}

// TestRateLimitOf: the three headers, each present and usable, or nothing.
func TestRateLimitOf(t *testing.T) {
	t.Parallel()
	full := rlHeader(20, 5, 1)
	for _, tt := range []struct {
		name string
		drop string // header to drop
		set  [2]string
		ok   bool
	}{
		{name: "all three", ok: true},
		{name: "no limit", drop: "Ratelimit-Limit"},
		{name: "no remaining", drop: "Ratelimit-Remaining"},
		{name: "no reset", drop: "Ratelimit-Reset"},
		{name: "limit 0", set: [2]string{"Ratelimit-Limit", "0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := full.Clone()
			if tt.drop != "" {
				delete(h, tt.drop)
			}
			if tt.set[0] != "" {
				h.Set(tt.set[0], tt.set[1])
			}
			limit, remaining, reset, ok := rateLimitOf(h)
			assert.Equal(t, tt.ok, ok)
			if ok {
				assert.Equal(t, []any{20, 5, time.Second}, []any{limit, remaining, reset})
			}
		})
	}
}

// FuzzRateLimitOf: the headers' reader never panics, and what it accepts
// is usable by the model (a positive limit, a reset that is no negative
// Duration) and agrees with parseRateLimit.
func FuzzRateLimitOf(f *testing.F) {
	f.Add("20", "19", "1")
	f.Add("0", "0", "0")
	f.Add(" 200 ", "-1", "99999999999999999999999")
	f.Fuzz(func(t *testing.T, limit, remaining, reset string) {
		h := http.Header{"Ratelimit-Limit": {limit}, "Ratelimit-Remaining": {remaining}, "Ratelimit-Reset": {reset}}
		l, r, s, ok := rateLimitOf(h)
		if !ok {
			return
		}
		want := parseRateLimit(h)
		if l <= 0 || s < 0 || l != want.Limit || r != want.Remaining || s != want.Reset {
			t.Fatalf("rateLimitOf = %d, %d, %v; parseRateLimit = %+v", l, r, s, *want)
		}
	})
}
