package synthienttest

import (
	"fmt"
	"net/http"
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
