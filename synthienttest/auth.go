package synthienttest

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/problem"
)

// ScopeBasic is the scope of the account and lookup endpoints.
const ScopeBasic = "BASIC"

// ExportScope returns the scope a key needs for feed's exports:
// PROXY_FEEDS for proxies, else "<FEED>_FEED" (HONEYPOT_HTTP_FEED, ...).
func ExportScope(feed synthient.Feed) string {
	if feed == synthient.FeedProxies {
		return "PROXY_FEEDS"
	}
	return strings.ToUpper(string(feed)) + "_FEED"
}

// StreamScope returns the scope a key needs for feed's stream:
// PROXY_FIREHOSE for proxies, else "<FEED>_STREAM".
func StreamScope(feed synthient.Feed) string {
	if feed == synthient.FeedProxies {
		return "PROXY_FIREHOSE"
	}
	return strings.ToUpper(string(feed)) + "_STREAM"
}

// AllScopes returns every scope the fake knows: BASIC, then the export and
// stream scope of each feed.
func AllScopes() []string {
	out := []string{ScopeBasic}
	for _, f := range synthient.Feeds {
		out = append(out, ExportScope(f), StreamScope(f))
	}
	return out
}

// apiKey is a key's state; every field but the constant ones is guarded
// by Server.keysMu.
type apiKey struct {
	key     string
	id      string // api_key.id, not the key
	name    string
	created time.Time
	scopes  []string
	has     map[string]bool
	credits int64
	streams int
	buckets map[Bucket]*bucket
}

// AddKey registers a new API key with these scopes (see AllScopes,
// ExportScope, StreamScope) and lookup credits, and returns it. The key is
// UUID-shaped, as the API's are.
func (s *Server) AddKey(scopes []string, credits int64) string {
	if credits < 0 {
		panic("synthienttest: negative credits")
	}
	return s.addKey(scopes, credits, "")
}

func (s *Server) addKey(scopes []string, credits int64, name string) string {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	s.keyN++
	n := s.keyN
	if name == "" {
		name = fmt.Sprintf("key-%d", n)
	}
	k := &apiKey{
		key:     uuidFrom(fmt.Sprintf("synthienttest key %d", n)),
		id:      uuidFrom(fmt.Sprintf("synthienttest key id %d", n)),
		name:    name,
		created: time.Date(2026, time.January, 5, 9, 30, 0, 0, time.UTC).Add(time.Duration(n-1) * 26 * time.Hour),
		scopes:  append([]string{}, scopes...),
		has:     map[string]bool{},
		credits: credits,
		buckets: map[Bucket]*bucket{},
	}
	for _, sc := range scopes {
		k.has[sc] = true
	}
	s.keys[k.key] = k
	return k.key
}

// Credits returns the lookup credits left to key; -1 for an unknown key.
func (s *Server) Credits(key string) int64 {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if k, ok := s.keys[key]; ok {
		return k.credits
	}
	return -1
}

// isUUID reports whether key has the 8-4-4-4-12 hex shape of the API's
// keys.
func isUUID(key string) bool {
	if len(key) != 36 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

const errBase = "https://docs.synthient.com/errors/"

// authenticate finds the request's key, or answers 401: text/plain for a
// malformed key (as the API's edge does), problem+json otherwise.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*apiKey, bool) {
	vals := r.Header.Values("X-Api-Key")
	if len(vals) == 0 || strings.TrimSpace(vals[0]) == "" {
		problem.Write(w, problem.Details{Type: errBase + "unauthorized", Status: http.StatusUnauthorized,
			Title: "Unauthorized", Detail: "Missing API Key", Instance: r.URL.Path})
		return nil, false
	}
	key := strings.TrimSpace(vals[0])
	if len(vals) > 1 || !isUUID(key) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("401 Unauthorized: malformed API key\n"))
		return nil, false
	}
	s.keysMu.Lock()
	k, ok := s.keys[strings.ToLower(key)]
	s.keysMu.Unlock()
	if !ok {
		problem.Write(w, problem.Details{Type: errBase + "unauthorized", Status: http.StatusUnauthorized,
			Title: "Unauthorized", Detail: "Invalid API Key", Instance: r.URL.Path})
		return nil, false
	}
	return k, true
}

// hasScope reports whether k carries scope (constant after creation).
func (k *apiKey) hasScope(scope string) bool { return k.has[scope] }

func forbidden(w http.ResponseWriter, r *http.Request, scope string) {
	problem.Write(w, problem.Details{Type: errBase + "forbidden", Status: http.StatusForbidden,
		Title: "Forbidden", Detail: "This API key lacks the " + scope + " scope.", Instance: r.URL.Path})
}

// charge takes n credits from k; false (and nothing taken) when it has
// fewer.
func (s *Server) charge(k *apiKey, n int64) bool {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if k.credits < n {
		return false
	}
	k.credits -= n
	return true
}

func (s *Server) credits(k *apiKey) int64 {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	return k.credits
}

// resetsIn is the number of seconds until the credits refill: the start of
// the next UTC month.
func resetsIn(now time.Time) int64 {
	y, m, _ := now.Date()
	next := time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
	return int64(next.Sub(now) / time.Second)
}

func paymentRequired(w http.ResponseWriter, r *http.Request, need, have int64, now time.Time) {
	problem.Write(w, problem.Details{Type: errBase + "payment-required", Status: http.StatusPaymentRequired,
		Title:    "Payment Required",
		Detail:   fmt.Sprintf("Lookup credits exhausted: this request needs %d, %d left; the balance refills in %d seconds.", need, have, resetsIn(now)),
		Instance: r.URL.Path})
}

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

// WithoutRateLimits turns rate limiting off, whatever the order of the
// options (a WithRateLimit does not turn it back on): no request is
// answered 429 for its rate, and no RateLimit-* headers are sent. The
// concurrent-stream limit still applies.
func WithoutRateLimits() Option {
	return func(c *config) { c.rateLimits = false }
}

// WithRateLimit sets the rate of bucket b: perSecond must be positive and
// burst at least 1. The bucket refills on the server's clock, so a test
// with a ManualClock controls it exactly.
func WithRateLimit(b Bucket, perSecond float64, burst int) Option {
	return func(c *config) {
		if _, ok := defaultRates()[b]; !ok {
			panic("synthienttest: unknown rate-limit bucket " + strconv.Quote(string(b)))
		}
		if !(perSecond > 0) || math.IsInf(perSecond, 0) || burst < 1 {
			panic("synthienttest: a rate needs perSecond > 0 and burst >= 1")
		}
		c.rates[b] = rate{perSecond: perSecond, burst: burst}
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

// openStream counts a stream of k; false when k has the most it may.
func (s *Server) openStream(k *apiKey) bool {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if k.streams >= s.cfg.streamLimit {
		return false
	}
	k.streams++
	return true
}

func (s *Server) closeStream(k *apiKey) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	k.streams--
}

// OpenStreams returns how many streams are open, all keys together.
func (s *Server) OpenStreams() int {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	n := 0
	for _, k := range s.keys {
		n += k.streams
	}
	return n
}
