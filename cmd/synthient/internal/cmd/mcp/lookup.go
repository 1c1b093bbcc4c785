package mcp

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
)

// maxIPs is the most addresses one lookup_ip call takes: one request's
// worth (at most 900 credits).
const maxIPs = synthient.MaxBatchSize

type lookupIPIn struct {
	IPs []string `json:"ips" jsonschema:"the IPv4 or IPv6 addresses to look up: one, or up to 1000 at once"`
}

type lookupIPOut struct {
	Results            []ipResult `json:"results" jsonschema:"one per address of ips, in order"`
	LookedUp           int        `json:"looked_up" jsonschema:"addresses looked up"`
	Invalid            int        `json:"invalid" jsonschema:"addresses that are not addresses: never sent"`
	NotSent            int        `json:"not_sent" jsonschema:"addresses not sent: nothing charged, safe to send again"`
	MayHaveBeenCharged int        `json:"may_have_been_charged" jsonschema:"addresses whose request reached the API and failed after: they may have been charged"`
	Rejected           int        `json:"rejected" jsonschema:"addresses the API refused, charging nothing"`
	outcome
}

// ipResult is the outcome of one address of lookup_ip.
type ipResult struct {
	IP      string              `json:"ip" jsonschema:"the address as given"`
	Outcome string              `json:"outcome" jsonschema:"looked_up, invalid, not_sent, may_have_been_charged or rejected"`
	Lookup  *synthient.IPLookup `json:"lookup,omitempty" jsonschema:"what the API knows of the address, when looked up"`
	Cached  bool                `json:"cached,omitempty" jsonschema:"the answer came from the server's cache, free"`
	// CacheAgeSeconds is set with Cached.
	CacheAgeSeconds *int64     `json:"cache_age_seconds,omitempty" jsonschema:"how old the cached answer is, in seconds"`
	Shared          bool       `json:"shared,omitempty" jsonschema:"the answer came from an identical lookup in flight (another call's request), free"`
	DuplicateOf     *int       `json:"duplicate_of,omitempty" jsonschema:"the index in ips of the same address earlier: looked up once"`
	Error           *toolError `json:"error,omitempty" jsonschema:"why the address was not looked up"`
}

func addLookupIP(srv *gomcp.Server, t *tools) {
	addTool(srv, t, tool{
		name: "lookup_ip", title: "Look up IP addresses", billed: true,
		bounds: []bound{{name: "ips", min: 1, max: maxIPs}},
		description: `Look up what Synthient knows of IP addresses: network (ASN, ISP, type), location, and 90 days of intelligence (risk score, proxy and VPN categories, behaviour, providers, devices).
Cost: 1 credit for one address; for many at once, ceil(0.9 x n) credits for the n distinct valid addresses not in the cache (2 addresses cost 2, 10 cost 9). Answers from the server's cache, or shared with an identical lookup in flight, are free.
Each address gets an outcome: looked_up, invalid (never sent), not_sent (nothing charged), may_have_been_charged (the request reached the API and failed after) or rejected (refused, nothing charged).`,
	}, t.lookupIP)
}

func (t *tools) lookupIP(ctx context.Context, in lookupIPIn) (*lookupIPOut, error) {
	if len(in.IPs) == 1 {
		return t.lookupOne(ctx, in.IPs[0])
	}
	return t.lookupMany(ctx, in.IPs)
}

// parseAddr parses ips[i].
func parseAddr(s string, i int) (netip.Addr, error) {
	ip, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return ip, argError(fmt.Sprintf("ips[%d]", i), "%q is not an IPv4 or IPv6 address", s)
	}
	return ip, nil
}

// lookupOne looks up one address, alone: a repeat from any session shares
// its request while it is in flight, and its answer in the cache after.
func (t *tools) lookupOne(ctx context.Context, s string) (*lookupIPOut, error) {
	out := &lookupIPOut{Results: []ipResult{{IP: s}}}
	r := &out.Results[0]
	ip, err := parseAddr(s, 0)
	if err == nil {
		var l *synthient.IPLookup
		if l, err = t.client.LookupIP(ctx, ip); err == nil {
			r.Outcome = outcomeLookedUp
			r.take(l, callCostOf(ctx).shared.Load())
			if !r.Cached && !r.Shared {
				out.CreditsSpent = 1
			}
			out.count()
			return out, nil
		}
		err = invalidArg("ips[0]", err)
	}
	r.Outcome = outcomeOf(err, callCostOf(ctx).shared.Load())
	if r.Outcome == outcomeMaybe {
		out.CreditsMayHaveSpent = 1
	}
	r.Error = t.toolError(err, r.Outcome == outcomeMaybe)
	out.count()
	return out, err
}

// lookupMany looks up many addresses as one bulk lookup (the SDK's
// LookupIPsAll): each distinct valid address not in the cache is sent
// once, and each gets its outcome. The call fails when none was looked
// up, with the error of the first that was not invalid (else of the first).
func (t *tools) lookupMany(ctx context.Context, ss []string) (*lookupIPOut, error) {
	out := &lookupIPOut{Results: make([]ipResult, len(ss))}
	var addrs []netip.Addr
	var at []int // at[k] is the index in ss of addrs[k]
	var invalid, failed error
	for i, s := range ss {
		out.Results[i].IP = s
		ip, err := parseAddr(s, i)
		if err != nil {
			invalid = cmpOr(invalid, err)
			out.Results[i].Outcome, out.Results[i].Error = outcomeInvalid, t.toolError(err, false)
			continue
		}
		addrs, at = append(addrs, ip), append(at, i)
	}
	for br, err := range t.client.LookupIPsAll(ctx, slices.Values(addrs), nil) {
		if br.Index < 0 {
			return out, err // the SDK refused its parameters (none are given): a bug
		}
		i := at[br.Index]
		r := &out.Results[i]
		r.Outcome = bulkOutcomes[br.Outcome]
		switch br.Outcome {
		case synthient.LookedUp:
			out.CreditsSpent += int64(br.Credits)
		case synthient.Unknown:
			out.CreditsMayHaveSpent += int64(br.Credits)
		}
		if br.Duplicate {
			first := &out.Results[at[br.FirstIndex]]
			r.DuplicateOf = ptr(at[br.FirstIndex])
			r.Lookup, r.Cached, r.CacheAgeSeconds = first.Lookup, first.Cached, first.CacheAgeSeconds
		} else if br.Lookup != nil {
			r.take(br.Lookup, false)
		}
		if err != nil {
			err = invalidArg(fmt.Sprintf("ips[%d]", i), err)
			failed = cmpOr(failed, err)
			r.Error = t.toolError(err, br.Outcome == synthient.Unknown)
		}
	}
	out.count()
	if out.LookedUp == 0 {
		return out, cmpOr(failed, invalid)
	}
	return out, nil
}

// cmpOr returns a, unless it is nil.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// take sets r's answer l, and where it came from.
func (r *ipResult) take(l *synthient.IPLookup, shared bool) {
	r.Lookup, r.Shared = l, shared
	if !l.CachedAt.IsZero() {
		r.Cached, r.CacheAgeSeconds = true, ptr(ageSeconds(l.CachedAt))
	}
}

// ageSeconds is how old an answer given at is, in whole seconds.
func ageSeconds(at time.Time) int64 { return max(0, int64(time.Since(at)/time.Second)) }

// count counts the outcomes of o's results.
func (o *lookupIPOut) count() {
	for _, r := range o.Results {
		switch r.Outcome {
		case outcomeLookedUp:
			o.LookedUp++
		case outcomeInvalid:
			o.Invalid++
		case outcomeNotSent:
			o.NotSent++
		case outcomeMaybe:
			o.MayHaveBeenCharged++
		case outcomeRejected:
			o.Rejected++
		}
	}
}

// text renders one address looked up as the CLI's lookup ip does, and
// many as a table of one line each.
func (o *lookupIPOut) text() string {
	var b strings.Builder
	if len(o.Results) == 1 && o.Results[0].Lookup != nil {
		_ = render.WriteIPLookup(&b, o.Results[0].Lookup) // a Builder does not fail
		b.WriteString("Answer: " + o.Results[0].source() + "\n")
		return b.String()
	}
	t := render.NewTable(&b)
	t.Row("IP", "OUTCOME", "ASN", "ISP", "TYPE", "COUNTRY", "RISK", "CATEGORIES", "ANSWER")
	for _, r := range o.Results {
		if r.Lookup == nil {
			msg := ""
			if r.Error != nil {
				msg = r.Error.Message
			}
			t.Row(r.IP, r.Outcome, "-", "-", "-", "-", "-", "-", msg)
			continue
		}
		row := render.IPRow(r.Lookup)
		for i := range row {
			row[i] = textsafe.Unpaint(row[i]) // a table measures its cells' marks: they go
		}
		t.Row(append(append([]string{r.IP, r.Outcome}, row[1:]...), r.source())...)
	}
	_ = t.Flush() // as above
	fmt.Fprintf(&b, "%d looked up, %d invalid, %d not sent, %d may have been charged, %d rejected\n",
		o.LookedUp, o.Invalid, o.NotSent, o.MayHaveBeenCharged, o.Rejected)
	return b.String()
}

// source says where r's answer came from.
func (r *ipResult) source() string {
	switch {
	case r.DuplicateOf != nil:
		return "as ips[" + strconv.Itoa(*r.DuplicateOf) + "]"
	case r.Cached:
		return "from the cache, " + itoa(*r.CacheAgeSeconds) + " s old (free)"
	case r.Shared:
		return "shared with an identical lookup in flight (free)"
	}
	return "fresh from the API"
}
