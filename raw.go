package synthient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/synthient-go/synthient/internal/bulk"
	"github.com/synthient-go/synthient/retry"
)

// RawResponse is the answer of a Raw call: a 2xx, or the 3xx of a
// download's API leg, which Raw does not follow. The caller must close
// Body.
type RawResponse struct {
	Status    int
	Header    http.Header
	RequestID string
	// Body is the answer's body, open: a stream's is read as it comes.
	// Reading it is never retried.
	Body io.ReadCloser
}

// Raw sends one request of any method to any path below the client's base
// URL (with its query), with the client's key, its pacing, its observer
// and the retry class of the route the path names: billed for the lookups
// (sent again only after a 429 with a usable Retry-After), standard for
// the account, export listings, meta, a download's API leg and opening a
// stream, and billed, the careful class, for any path the SDK does not
// know. body, when not nil, is sent as JSON. It is the call under the
// CLI's api command, for what no typed method covers.
//
// method is an HTTP method: an RFC 9110 token ("GET", "POST"; letters,
// digits and !#$%&'*+-.^_`|~), sent in upper case; any other string gives
// an error matching ErrInvalidArgument, and nothing is sent.
//
// path is relative to the base URL ("account/me", "/lookup/ip/8.8.8.8",
// "feeds/proxies/export?limit=5"), or an absolute URL that starts with
// it; a leading /api/v4 that the base URL ends with is taken once. A path
// that leaves the base URL (another host, "..", a fragment) gives an
// error matching ErrInvalidArgument, and nothing is sent.
//
// An error status is returned as the other methods return it (an
// *APIError), a 3xx only for a download's API leg, whose Location is the
// storage host's presigned URL. The call's observer sees it end when Raw
// returns, before its body is read.
//
// With a credit budget (WithCreditBudget), a lookup route reserves its
// cost before it is sent, as the typed methods do: 1 credit for
// /lookup/ip/{ip} and /lookup/domain/{domain}; for POST /lookup/ips
// ceil(0.9 n) for the n distinct entries of body's "ips" array (every
// distinct JSON value, as the API may count it at most), or 900, the most
// a batch costs, when body does not hold such an array. Every other path,
// one the SDK does not know included, is taken as free.
func (c *Client) Raw(ctx context.Context, method, path string, body []byte) (_ *RawResponse, err error) {
	route := rawRoute(method, c.relativePath(path))
	ctx, call := c.startCall(ctx, "Raw", route.class)
	defer call.end(&err)
	op, err := c.rawOperation(method, path, body, route)
	if err != nil {
		return nil, err
	}
	resp, _, err := c.do(ctx, op) //nolint:bodyclose // the body is RawResponse.Body, which the caller closes
	if err != nil {
		return nil, err
	}
	return &RawResponse{Status: resp.StatusCode, Header: headerCopy(resp.Header), RequestID: resp.Header.Get("X-Request-Id"), Body: resp.Body}, nil
}

// relativePath returns path relative to the base URL, as Raw takes it,
// without its query; "" when it is not below the base URL.
func (c *Client) relativePath(path string) string {
	if rest, ok := strings.CutPrefix(path, c.base+"/"); ok {
		path = rest
	} else if strings.Contains(path, "://") || strings.HasPrefix(path, "//") {
		return "" // another origin
	}
	if base, err := url.Parse(c.base); err == nil && strings.HasSuffix(base.Path, "/api/v4") {
		path = strings.TrimPrefix(strings.TrimPrefix(path, "/"), "api/v4/")
	}
	path, _, _ = strings.Cut(strings.TrimPrefix(path, "/"), "?")
	return path
}

// rawOperation builds the operation of a Raw call.
func (c *Client) rawOperation(method, path string, body []byte, route rawRoutes) (*operation, error) {
	rel := c.relativePath(path)
	switch {
	case !httpguts.ValidHeaderFieldName(method): // an RFC 9110 token, as a header name is
		return nil, invalid("Raw: method %q is not an HTTP method", method)
	case rel == "":
		return nil, invalid("Raw: %q is not a path below the base URL %s", path, c.base)
	}
	_, query, _ := strings.Cut(path, "?")
	u, err := url.Parse("/" + rel)
	if err != nil || strings.Contains(path, "#") || u.Host != "" {
		return nil, invalid("Raw: %q is not a path below the base URL %s", path, c.base)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." || seg == "." {
			return nil, invalid("Raw: %q leaves the base URL (a . or .. segment)", path)
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, invalid("Raw: the query of %q does not parse", path)
	}
	op := &operation{
		name:     "Raw",
		method:   strings.ToUpper(method),
		route:    route.template,
		path:     u.EscapedPath(),
		query:    q,
		body:     body,
		class:    route.class,
		noKey:    route.noKey,
		accept:   route.accept,
		redirect: route.redirect,
		raw:      route.redirect,
		bucket:   route.bucket,
	}
	if c.budget != nil {
		op.credits = rawCost(route.template, body)
	}
	return op, nil
}

// rawCost returns what a Raw request of the route template, with body,
// can cost: 1 for a lookup of an address or a domain, and for a batch
// lookup ceil(0.9 n) for the n distinct entries of the body's "ips" (each
// entry counted as the API might read it at most: every distinct JSON
// value, valid or not), or the most a batch can cost when the body does
// not read as one. Every other route is free.
func rawCost(template string, body []byte) int64 {
	switch template {
	case "/lookup/ip/{ip}", "/lookup/domain/{domain}":
		return 1
	case "/lookup/ips":
	default:
		return 0
	}
	var req struct {
		IPs []json.RawMessage `json:"ips"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.IPs == nil {
		return int64(bulk.Cost(MaxBatchSize))
	}
	distinct := make(map[string]struct{}, len(req.IPs))
	for _, v := range req.IPs {
		distinct[string(v)] = struct{}{}
	}
	return int64(bulk.Cost(len(distinct)))
}

// rawRoutes is what Raw knows of a route.
type rawRoutes struct {
	template string // for logs: "/lookup/ip/{ip}"; the path itself when unknown
	class    retry.Class
	bucket   bucket
	accept   []string
	noKey    bool // /health
	redirect bool // a download's API leg: its 307 is the answer
}

// rawRoute returns the route of method and path (relative to the base
// URL, without the query): billed, with no rate limit of its own, for one
// the SDK does not know.
func rawRoute(method, path string) rawRoutes {
	r := rawRoutes{template: "/" + path, class: retry.Billed, accept: mediaJSON}
	seg := strings.Split(path, "/")
	if len(seg) >= 2 && seg[0] == "feeds" && seg[1] == "helio" && len(seg) >= 3 {
		seg = append([]string{"feeds", "helio/" + seg[2]}, seg[3:]...) // a honeypot feed: two segments
	}
	get := method == http.MethodGet || method == http.MethodHead
	switch {
	case get && path == "health":
		r.template, r.noKey = "/health", true
	case get && path == "account/me":
		r.template, r.class, r.bucket = "/account/me", retry.Standard, accountBucket
	case get && len(seg) == 3 && seg[0] == "lookup" && seg[1] == "ip":
		r.template, r.bucket = "/lookup/ip/{ip}", lookupBucket
	case method == http.MethodPost && path == "lookup/ips":
		r.template, r.bucket = "/lookup/ips", lookupBucket
	case get && len(seg) == 3 && seg[0] == "lookup" && seg[1] == "domain":
		r.template, r.bucket = "/lookup/domain/{domain}", domainBucket
	case get && len(seg) >= 3 && seg[0] == "feeds":
		r.class = retry.Standard
		r.route(seg[2:])
	}
	return r
}

// route sets what a GET below /feeds/{feed}/ is, from its segments after
// the feed.
func (r *rawRoutes) route(rest []string) {
	switch {
	case len(rest) == 1 && rest[0] == "stream":
		r.template, r.bucket, r.accept = "/feeds/{feed}/stream", streamBucket, mediaNDJSON
	case len(rest) == 1 && rest[0] == "export":
		r.template, r.bucket = "/feeds/{feed}/export", exportBucket
	case len(rest) >= 3 && rest[0] == "export" && rest[len(rest)-1] == "meta":
		r.template, r.bucket = "/feeds/{feed}/export/{id}/meta", exportBucket
	case (len(rest) == 2 || len(rest) == 3) && rest[0] == "export":
		r.template, r.bucket, r.accept, r.redirect = "/feeds/{feed}/export/{id}", downloadBucket, mediaOctets, true
	default:
		r.class = retry.Billed // a route the SDK does not know
	}
}
