package synthienttest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/problem"
)

const apiPrefix = "/api/v4"

// The route templates that Inject and Arrivals take, and that Request.Route
// holds. RouteStorage names the export storage host; the empty route is any
// path the fake does not know.
const (
	RouteHealth       = "/health"
	RouteAccount      = "/account/me"
	RouteLookupIP     = "/lookup/ip/{ip}"
	RouteLookupIPs    = "/lookup/ips"
	RouteLookupDomain = "/lookup/domain/{domain}"
	RouteExports      = "/feeds/{feed}/export"
	RouteExportMeta   = "/feeds/{feed}/export/{id}/meta"
	RouteDownload     = "/feeds/{feed}/export/{id}"
	RouteStream       = "/feeds/{feed}/stream"
	RouteStorage      = "storage"
)

// route is an endpoint of the API origin: the template that names it, the
// method it answers, its path pattern, and what a request needs before the
// handler runs.
type route struct {
	name   string // RouteHealth, ...
	method string // GET (HEAD too) or POST
	// path is the pattern of the path after /api/v4/: literal segments and
	// {ip}, {domain}, {date} and {hour}, each one non-empty segment, and
	// {feed}, one segment or helio/<name> (see params).
	path string
	// scope is the scope a key needs for the feed in the path (the zero
	// Feed when there is none); nil for a route that needs no key.
	scope  func(synthient.Feed) string
	bucket Bucket
	handle handler
}

// handler answers a request that passed its route's checks; k is nil on a
// route that needs no key.
type handler func(s *Server, w http.ResponseWriter, r *http.Request, k *apiKey, p params)

// basicScope is the scope of the account and lookup routes.
func basicScope(synthient.Feed) string { return ScopeBasic }

// apiRoutes is the API origin's route table. A path takes the first route
// whose pattern it matches, so an export's meta is matched before an hour
// named "meta".
var apiRoutes = []route{
	{RouteHealth, http.MethodGet, "health", nil, "", (*Server).handleHealth},
	{RouteAccount, http.MethodGet, "account/me", basicScope, BucketAccount, (*Server).handleAccount},
	{RouteLookupIP, http.MethodGet, "lookup/ip/{ip}", basicScope, BucketLookup, (*Server).handleLookupIP},
	{RouteLookupIPs, http.MethodPost, "lookup/ips", basicScope, BucketLookup, (*Server).handleLookupIPs},
	{RouteLookupDomain, http.MethodGet, "lookup/domain/{domain}", basicScope, BucketDomain, (*Server).handleLookupDomain},
	{RouteStream, http.MethodGet, "feeds/{feed}/stream", StreamScope, BucketStream, (*Server).handleStream},
	{RouteExports, http.MethodGet, "feeds/{feed}/export", ExportScope, BucketExport, (*Server).handleExports},
	{RouteDownload, http.MethodGet, "feeds/{feed}/export/{date}", ExportScope, BucketDownload, (*Server).handleDownload},
	{RouteExportMeta, http.MethodGet, "feeds/{feed}/export/{date}/meta", ExportScope, BucketExport, (*Server).handleExportMeta},
	{RouteDownload, http.MethodGet, "feeds/{feed}/export/{date}/{hour}", ExportScope, BucketDownload, (*Server).handleDownload},
	{RouteExportMeta, http.MethodGet, "feeds/{feed}/export/{date}/{hour}/meta", ExportScope, BucketExport, (*Server).handleExportMeta},
}

// knownRoutes are the routes Inject takes.
var knownRoutes = func() map[string]bool {
	known := map[string]bool{RouteStorage: true}
	for _, rt := range apiRoutes {
		known[rt.name] = true
	}
	return known
}()

// params are the variable parts of an API path.
type params struct {
	value   string // {ip} or {domain}, unescaped
	feedSeg string // {feed} as sent: "proxies", "helio/http"
	feed    synthient.Feed
	known   bool   // feedSeg names a feed
	date    string // {date} as sent: "latest" or YYYY-MM-DD
	hour    string // {hour} as sent, "" when absent
}

// matchRoute returns the route of an escaped request path and its
// variables; nil when no route matches.
func matchRoute(escaped string) (*route, params) {
	rest, ok := strings.CutPrefix(escaped, apiPrefix+"/")
	if !ok {
		return nil, params{}
	}
	segs := strings.Split(rest, "/")
	for i := range apiRoutes {
		if p, ok := apiRoutes[i].match(segs); ok {
			return &apiRoutes[i], p
		}
	}
	return nil, params{}
}

// match reports whether the path segments segs fit rt's pattern, and
// returns their variables.
func (rt *route) match(segs []string) (params, bool) {
	var p params
	i := 0
	for pattern := rt.path; pattern != ""; i++ {
		var want string
		want, pattern, _ = strings.Cut(pattern, "/")
		switch {
		case i >= len(segs):
			return p, false
		case want == "{feed}":
			i += p.takeFeed(segs[i:])
		case segs[i] == "" || want[0] != '{' && segs[i] != want:
			return p, false
		case want == "{ip}" || want == "{domain}":
			p.value = unescape(segs[i])
		case want == "{date}":
			p.date = segs[i]
		case want == "{hour}":
			p.hour = segs[i]
		}
	}
	return p, i == len(segs)
}

// takeFeed reads {feed} at the start of segs: helio/<name> when more
// follows it, else one segment, which may be empty. It returns how many
// segments it took past the first.
func (p *params) takeFeed(segs []string) int {
	extra := 0
	p.feedSeg = segs[0]
	if segs[0] == "helio" && len(segs) >= 3 {
		p.feedSeg, extra = "helio/"+segs[1], 1
	}
	p.feed, p.known = feedBySegment(p.feedSeg)
	return extra
}

// unescape is a path segment unescaped; a NUL, which no handler accepts,
// when it does not unescape.
func unescape(seg string) string {
	v, err := url.PathUnescape(seg)
	if err != nil {
		return "\x00"
	}
	return v
}

// hasFeed reports whether rt's path names a feed.
func (rt *route) hasFeed() bool { return strings.Contains(rt.path, "{feed}") }

// allows reports whether rt answers method: its own, and HEAD where it
// is GET.
func (rt *route) allows(method string) bool {
	return method == rt.method || rt.method == http.MethodGet && method == http.MethodHead
}

// allow is the Allow header of rt's 405 answer.
func (rt *route) allow() string {
	if rt.method == http.MethodGet {
		return "GET, HEAD"
	}
	return rt.method
}

// feedSegment returns the URL path segment of a feed ("helio/http").
func feedSegment(f synthient.Feed) string {
	if rest, ok := strings.CutPrefix(string(f), "honeypot_"); ok {
		return "helio/" + rest
	}
	return string(f)
}

// feedBySegment returns the feed of a URL path segment ("helio/http").
func feedBySegment(seg string) (synthient.Feed, bool) {
	for _, f := range synthient.Feeds {
		if feedSegment(f) == seg {
			return f, true
		}
	}
	return "", false
}

// serveAPI is the API origin's handler.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		s.refuse(w)
		return
	}
	defer s.handlers.Done()
	rt, p := matchRoute(r.URL.EscapedPath())
	name := ""
	if rt != nil {
		name = rt.name
	}
	sw := s.begin(w, r, name)
	if !s.sleep(r.Context(), s.cfg.latency) { // WithLatency
		return
	}
	if f, ok := s.takeFault(name, sw.e); ok {
		s.runFault(sw, r, name, f, func(w http.ResponseWriter) { s.handleAPI(w, r, rt, p) })
		return
	}
	s.handleAPI(sw, r, rt, p)
}

// handleAPI answers a request on the API origin, faults aside: it checks
// the path, the method, the key, the feed, the scope and the rate limit,
// in this order, and hands the request to the route's handler.
func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request, rt *route, p params) {
	if rt == nil {
		notFound(w, r, "No such endpoint.")
		return
	}
	if !rt.allows(r.Method) {
		w.Header().Set("Allow", rt.allow())
		problem.Write(w, problem.Details{Type: errBase + "method-not-allowed", Status: http.StatusMethodNotAllowed,
			Detail: r.Method + " is not allowed here.", Instance: r.URL.Path})
		return
	}
	if rt.scope == nil {
		rt.handle(s, w, r, nil, p)
		return
	}
	k, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if rt.hasFeed() && !p.known {
		notFound(w, r, fmt.Sprintf("No feed %q.", p.feedSeg))
		return
	}
	if scope := rt.scope(p.feed); !k.hasScope(scope) {
		forbidden(w, r, scope)
		return
	}
	if s.limit(w, r, k, rt.bucket) {
		rt.handle(s, w, r, k, p)
	}
}
