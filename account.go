package synthient

import (
	"context"
	"net/http"
	"time"

	"github.com/synthient-go/synthient/retry"
)

// Account describes the caller's account, team and key.
type Account struct {
	FirstName    string       `json:"first_name"`
	LastName     string       `json:"last_name"`
	Email        string       `json:"email"`
	Organization Organization `json:"organization"`
	// Scopes lists what the key may do, such as BASIC or PROXY_FEEDS (an
	// open set).
	Scopes      []string    `json:"scopes"`
	LookupQuota LookupQuota `json:"lookup_quota"`
	// APIKey describes the key making the call; nil when the API omits it.
	APIKey *APIKeyInfo `json:"api_key,omitempty"`
}

// Organization is the team an account belongs to.
type Organization struct {
	ID   string `json:"id"` // opaque
	Name string `json:"name"`
	// Relation is OWNER, ADMIN or MEMBER.
	Relation string `json:"relation"`
}

// LookupQuota is the team's lookup credit balance.
type LookupQuota struct {
	// Credits is the number of lookup credits left.
	Credits int64 `json:"credits"`
	// ResetsIn is the number of seconds until the balance refills.
	ResetsIn int64 `json:"resets_in"`
}

// ResetsInDuration returns ResetsIn as a Duration.
func (q LookupQuota) ResetsInDuration() time.Duration {
	return time.Duration(q.ResetsIn) * time.Second
}

// APIKeyInfo describes an API key.
type APIKeyInfo struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Health is the API's health.
type Health struct {
	// Status is "ok" when every dependency is reachable.
	Status string `json:"status"`
	// Problems lists what is unreachable; empty when healthy.
	Problems []string `json:"problems,omitempty"`
}

// Account returns the caller's account: names, team, scopes and lookup
// credits. It is free. The request follows the standard retry class: it is
// sent again after a 429 with a usable Retry-After, a 500, 502, 503 or 504,
// and a network failure or timeout (not a TLS error).
func (c *Client) Account(ctx context.Context) (_ *Account, err error) {
	ctx, call := c.startCall(ctx, "Account", retry.Standard)
	defer call.end(&err)
	op := &operation{
		name:   "Account",
		method: http.MethodGet,
		route:  "/account/me",
		path:   "/account/me",
		class:  retry.Standard,
		accept: mediaJSON,
		bucket: accountBucket,
	}
	var out Account
	m, err := c.getJSON(ctx, op, &out)
	if err != nil {
		return nil, err
	}
	if out.Email == "" && out.Scopes == nil {
		return nil, shapeError(m, "response is not an account")
	}
	return &out, nil
}

// Health reports whether the API and its dependencies are up. It sends no
// API key. An unhealthy API answers 503, returned as an *APIError whose
// Detail lists the problems. Health reports a failure at once: it is sent
// again only after a 429 with a usable Retry-After.
func (c *Client) Health(ctx context.Context) (_ *Health, err error) {
	ctx, call := c.startCall(ctx, "Health", retry.Billed)
	defer call.end(&err)
	op := &operation{
		name:   "Health",
		method: http.MethodGet,
		route:  "/health",
		path:   "/health",
		class:  retry.Billed,
		noKey:  true,
		accept: mediaJSON,
	}
	var out Health
	m, err := c.getJSON(ctx, op, &out)
	if err != nil {
		return nil, err
	}
	if out.Status == "" {
		return nil, shapeError(m, `response has no "status"`)
	}
	return &out, nil
}
