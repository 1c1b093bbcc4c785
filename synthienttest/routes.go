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

var knownRoutes = map[string]bool{
	RouteHealth: true, RouteAccount: true, RouteLookupIP: true, RouteLookupIPs: true,
	RouteLookupDomain: true, RouteExports: true, RouteExportMeta: true, RouteDownload: true,
	RouteStream: true, RouteStorage: true,
}

// params are the variable parts of an API path.
type params struct {
	value   string // {ip} or {domain}, unescaped
	feedSeg string // "proxies", "helio/http"
	feed    synthient.Feed
	known   bool   // feedSeg is a known feed
	date    string // {date}: "latest" or YYYY-MM-DD
	hour    string // {hour}, "" when absent
}

// matchAPI returns the route template of an escaped request path, "" when
// it matches none.
func matchAPI(escaped string) (string, params) {
	var p params
	rest, ok := strings.CutPrefix(escaped, apiPrefix+"/")
	if !ok {
		return "", p
	}
	segs := strings.Split(rest, "/")
	seg := func(i int) string {
		v, err := url.PathUnescape(segs[i])
		if err != nil {
			return "\x00"
		}
		return v
	}
	switch {
	case len(segs) == 1 && segs[0] == "health":
		return RouteHealth, p
	case len(segs) == 2 && segs[0] == "account" && segs[1] == "me":
		return RouteAccount, p
	case len(segs) == 3 && segs[0] == "lookup" && segs[1] == "ip" && segs[2] != "":
		p.value = seg(2)
		return RouteLookupIP, p
	case len(segs) == 2 && segs[0] == "lookup" && segs[1] == "ips":
		return RouteLookupIPs, p
	case len(segs) == 3 && segs[0] == "lookup" && segs[1] == "domain" && segs[2] != "":
		p.value = seg(2)
		return RouteLookupDomain, p
	case len(segs) >= 3 && segs[0] == "feeds":
	default:
		return "", p
	}
	var tail []string
	if segs[1] == "helio" && len(segs) >= 4 {
		p.feedSeg, tail = "helio/"+segs[2], segs[3:]
	} else {
		p.feedSeg, tail = segs[1], segs[2:]
	}
	p.feed, p.known = feedBySegment(p.feedSeg)
	switch {
	case len(tail) == 1 && tail[0] == "stream":
		return RouteStream, p
	case len(tail) == 1 && tail[0] == "export":
		return RouteExports, p
	case len(tail) == 2 && tail[0] == "export" && tail[1] != "":
		p.date = tail[1]
		return RouteDownload, p
	case len(tail) == 3 && tail[0] == "export" && tail[1] != "" && tail[2] == "meta":
		p.date = tail[1]
		return RouteExportMeta, p
	case len(tail) == 3 && tail[0] == "export" && tail[1] != "" && tail[2] != "":
		p.date, p.hour = tail[1], tail[2]
		return RouteDownload, p
	case len(tail) == 4 && tail[0] == "export" && tail[1] != "" && tail[2] != "" && tail[3] == "meta":
		p.date, p.hour = tail[1], tail[2]
		return RouteExportMeta, p
	}
	return "", p
}

// feedSegment returns the URL path segment of a feed ("helio/http").
func feedSegment(f synthient.Feed) string {
	if rest, ok := strings.CutPrefix(string(f), "honeypot_"); ok {
		return "helio/" + rest
	}
	return string(f)
}

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
	route, p := matchAPI(r.URL.EscapedPath())
	sw := s.begin(w, r, route)
	if f, ok := s.takeFault(route, sw.e); ok {
		s.runFault(sw, r, route, f, func(w http.ResponseWriter) { s.handleAPI(w, r, route, p) })
		return
	}
	s.handleAPI(sw, r, route, p)
}

// handleAPI answers a request on the API origin, faults aside.
func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request, route string, p params) {
	if route == "" {
		notFound(w, r, "No such endpoint.")
		return
	}
	want := http.MethodGet
	if route == RouteLookupIPs {
		want = http.MethodPost
	}
	if r.Method != want && !(want == http.MethodGet && r.Method == http.MethodHead) {
		if want == http.MethodGet {
			w.Header().Set("Allow", "GET, HEAD")
		} else {
			w.Header().Set("Allow", want)
		}
		problem.Write(w, problem.Details{Type: errBase + "method-not-allowed", Status: http.StatusMethodNotAllowed,
			Detail: r.Method + " is not allowed here.", Instance: r.URL.Path})
		return
	}
	if route == RouteHealth {
		s.handleHealth(w)
		return
	}
	k, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	var scope string
	var b Bucket
	switch route {
	case RouteAccount:
		scope, b = ScopeBasic, BucketAccount
	case RouteLookupIP, RouteLookupIPs:
		scope, b = ScopeBasic, BucketLookup
	case RouteLookupDomain:
		scope, b = ScopeBasic, BucketDomain
	default:
		if !p.known {
			notFound(w, r, fmt.Sprintf("No feed %q.", p.feedSeg))
			return
		}
		switch route {
		case RouteStream:
			scope, b = StreamScope(p.feed), BucketStream
		case RouteDownload:
			scope, b = ExportScope(p.feed), BucketDownload
		default:
			scope, b = ExportScope(p.feed), BucketExport
		}
	}
	if !k.hasScope(scope) {
		forbidden(w, r, scope)
		return
	}
	if !s.limit(w, r, k, b) {
		return
	}
	switch route {
	case RouteAccount:
		s.handleAccount(w, k)
	case RouteLookupIP:
		s.handleLookupIP(w, r, k, p.value)
	case RouteLookupIPs:
		s.handleLookupIPs(w, r, k)
	case RouteLookupDomain:
		s.handleLookupDomain(w, r, k, p.value)
	case RouteExports:
		s.handleExports(w, r, p)
	case RouteExportMeta:
		s.handleExportMeta(w, r, p)
	case RouteDownload:
		s.handleDownload(w, r, p)
	case RouteStream:
		s.handleStream(w, r, k, p.feed)
	}
}
