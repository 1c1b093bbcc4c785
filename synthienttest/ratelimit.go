package synthienttest

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/synthient-go/synthient/internal/problem"
)

// Bucket names a rate limit, shared by the routes listed with it.
//
// Each is a token bucket. An answer past authentication says its state:
// RateLimit-Limit is the burst, RateLimit-Remaining the whole tokens left
// after this request, RateLimit-Reset the seconds until the bucket is full
// again. An empty bucket answers 429 with Retry-After: the whole seconds
// (at least 1) until a token is back.
type Bucket string

// The rate-limit buckets (api-v4.md §5). Each key has its own of each.
const (
	BucketLookup   Bucket = "lookup"   // /lookup/ip/{ip} and /lookup/ips: 100/s, burst 200
	BucketDomain   Bucket = "domain"   // /lookup/domain/{domain}: 100/s, burst 200
	BucketAccount  Bucket = "account"  // /account/me: 10/s, burst 10
	BucketStream   Bucket = "stream"   // opening /feeds/{feed}/stream: 0.5/s, burst 20
	BucketExport   Bucket = "export"   // export listings and meta: 2/s, burst 60
	BucketDownload Bucket = "download" // /feeds/{feed}/export/{id}: 0.1/s, burst 120
)

// rate is a token bucket: perSecond tokens are added each second, up to
// burst.
type rate struct {
	perSecond float64
	burst     int
}

func defaultRates() map[Bucket]rate {
	return map[Bucket]rate{
		BucketLookup:   {100, 200},
		BucketDomain:   {100, 200},
		BucketAccount:  {10, 10},
		BucketStream:   {0.5, 20},
		BucketExport:   {2, 60},
		BucketDownload: {0.1, 120},
	}
}

type bucket struct {
	tokens float64
	last   time.Time
}

// take spends one token of b at now. It returns whether it was allowed,
// the whole tokens left, the seconds until the bucket is full, and when
// refused the seconds until a token is back (at least 1).
func (b *bucket) take(r rate, now time.Time) (ok bool, remaining, reset, retryAfter int) {
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(float64(r.burst), b.tokens+el*r.perSecond)
	}
	if now.After(b.last) {
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		ok = true
	} else {
		retryAfter = max(1, int(math.Ceil((1-b.tokens)/r.perSecond)))
	}
	remaining = int(math.Floor(b.tokens))
	reset = int(math.Ceil((float64(r.burst) - b.tokens) / r.perSecond))
	return ok, remaining, reset, retryAfter
}

// limit spends a token of k's bucket b, sets the RateLimit-* headers, and
// answers 429 with Retry-After when the bucket is empty.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, k *apiKey, b Bucket) bool {
	if !s.cfg.rateLimits {
		return true
	}
	spec := s.cfg.rates[b]
	now := s.now()
	s.keysMu.Lock()
	bk := k.buckets[b]
	if bk == nil {
		bk = &bucket{tokens: float64(spec.burst), last: now}
		k.buckets[b] = bk
	}
	ok, remaining, reset, retryAfter := bk.take(spec, now)
	s.keysMu.Unlock()
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(spec.burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(reset))
	if ok {
		return true
	}
	h.Set("Retry-After", strconv.Itoa(retryAfter))
	problem.Write(w, problem.Details{Type: errBase + "rate-limited", Status: http.StatusTooManyRequests,
		Title:    "Too Many Requests",
		Detail:   fmt.Sprintf("Rate limit exceeded for this key; retry after %d seconds.", retryAfter),
		Instance: r.URL.Path})
	return false
}
