package mcp

import (
	"context"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

type lookupDomainIn struct {
	Domain string `json:"domain" jsonschema:"the domain name to look up, such as example.com"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most recent events to return, 1 to 1000 (default 50)"`
}

type lookupDomainOut struct {
	*synthient.DomainLookup
	Cached bool `json:"cached" jsonschema:"the answer came from the server's cache, free"`
	// CacheAgeSeconds is set with Cached.
	CacheAgeSeconds *int64 `json:"cache_age_seconds,omitempty" jsonschema:"how old the cached answer is, in seconds"`
	Shared          bool   `json:"shared,omitempty" jsonschema:"the answer came from an identical lookup in flight (another call's request), free"`
	outcome
}

func addLookupDomain(srv *gomcp.Server, t *tools) {
	addTool(srv, t, tool{
		name: "lookup_domain", title: "Look up a domain", billed: true,
		bounds: []bound{{name: "limit", min: 1, max: 1000}},
		description: `Look up Synthient's honeypot intelligence for a domain: its events in 24 hours and 30 days, unique source addresses, top ASN, subdomains, ports and countries, hourly activity, and recent events.
Cost: 1 credit. Free when answered from the server's cache (kept at most an hour) or shared with an identical lookup in flight.`,
	}, t.lookupDomain)
}

func (t *tools) lookupDomain(ctx context.Context, in lookupDomainIn) (*lookupDomainOut, error) {
	d, err := t.client.LookupDomain(ctx, in.Domain, &synthient.DomainLookupParams{Limit: in.Limit})
	out := &lookupDomainOut{Shared: callCostOf(ctx).shared.Load()}
	if err != nil {
		if !out.Shared && mayHaveCharged(err) {
			out.CreditsMayHaveSpent = 1
		}
		return &lookupDomainOut{outcome: out.outcome}, invalidArg("domain", err)
	}
	out.DomainLookup = d
	if !d.CachedAt.IsZero() {
		out.Cached, out.CacheAgeSeconds = true, ptr(ageSeconds(d.CachedAt))
	}
	if !out.Cached && !out.Shared {
		out.CreditsSpent = 1
	}
	return out, nil
}

// text renders the lookup as the CLI's lookup domain does.
func (o *lookupDomainOut) text() string {
	var b strings.Builder
	_ = render.WriteDomain(&b, o.DomainLookup) // a Builder does not fail
	switch {
	case o.Cached:
		b.WriteString("\nAnswer: from the cache, " + itoa(*o.CacheAgeSeconds) + " s old (free)\n")
	case o.Shared:
		b.WriteString("\nAnswer: shared with an identical lookup in flight (free)\n")
	default:
		b.WriteString("\nAnswer: fresh from the API\n")
	}
	return b.String()
}
