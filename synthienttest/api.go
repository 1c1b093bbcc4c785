package synthienttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/problem"
)

const apiPrefix = "/api/v4"

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

func notFound(w http.ResponseWriter, r *http.Request, detail string) {
	problem.Write(w, problem.Details{Type: errBase + "not-found", Status: http.StatusNotFound,
		Title: "Not Found", Detail: detail, Instance: r.URL.Path})
}

func badRequest(w http.ResponseWriter, r *http.Request, detail string) {
	problem.Write(w, problem.Details{Type: errBase + "bad-request", Status: http.StatusBadRequest,
		Title: "Bad Request", Detail: detail, Instance: r.URL.Path})
}

func validation(w http.ResponseWriter, r *http.Request, errs map[string][]string) {
	problem.Write(w, problem.Details{Type: errBase + "validation", Status: http.StatusUnprocessableEntity,
		Title: "Validation error", Errors: errs, Instance: r.URL.Path})
}

// writeJSON answers code with v as JSON, with its Content-Length.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		problem.Write(w, problem.Details{Status: http.StatusInternalServerError, Detail: "encoding the response"})
		return
	}
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
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

func (s *Server) handleHealth(w http.ResponseWriter) {
	s.mu.Lock()
	sick := append([]string(nil), s.sick...)
	s.mu.Unlock()
	if len(sick) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, synthient.Health{Status: "unhealthy", Problems: sick})
		return
	}
	writeJSON(w, http.StatusOK, synthient.Health{Status: "ok"})
}

func (s *Server) handleAccount(w http.ResponseWriter, k *apiKey) {
	now := s.now()
	relation := "OWNER"
	if k.name != "synthienttest" {
		relation = "ADMIN"
	}
	writeJSON(w, http.StatusOK, synthient.Account{
		FirstName: "Grace",
		LastName:  "Hopper",
		Email:     "grace@example.com",
		Organization: synthient.Organization{
			ID:       "2f0c9d1e-6b7a-4c55-9e1d-0a4b3c2d1e0f",
			Name:     "Example Labs",
			Relation: relation,
		},
		Scopes:      append([]string{}, k.scopes...),
		LookupQuota: synthient.LookupQuota{Credits: s.credits(k), ResetsIn: resetsIn(now)},
		APIKey:      &synthient.APIKeyInfo{ID: k.id, Name: k.name, CreatedAt: k.created},
	})
}

// parseIP parses a lookup address: an IPv4 or IPv6 literal without a zone.
func parseIP(v string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(v)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a, true
}

func (s *Server) handleLookupIP(w http.ResponseWriter, r *http.Request, k *apiKey, raw string) {
	addr, ok := parseIP(raw)
	if !ok {
		validation(w, r, map[string][]string{"ip_address": {"must be a valid IP address"}})
		return
	}
	now := s.now()
	if !s.charge(k, 1) {
		paymentRequired(w, r, 1, s.credits(k), now)
		return
	}
	writeJSON(w, http.StatusOK, lookupIP(addr, now))
}

// batchCost is what a batch of n unique valid addresses costs:
// ceil(n × 0.9).
func batchCost(n int) int64 { return int64((n*9 + 9) / 10) }

func (s *Server) handleLookupIPs(w http.ResponseWriter, r *http.Request, k *apiKey) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil {
		badRequest(w, r, "The request body could not be read.")
		return
	}
	if len(body) > 1<<20 {
		validation(w, r, map[string][]string{"ips": {"must contain between 1 and 1000 entries"}})
		return
	}
	var req struct {
		IPs *[]json.RawMessage `json:"ips"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "ips" {
			validation(w, r, map[string][]string{"ips": {"must be an array of IP addresses"}})
			return
		}
		validation(w, r, map[string][]string{"body": {"must be a JSON object with an ips array"}})
		return
	}
	switch {
	case req.IPs == nil:
		validation(w, r, map[string][]string{"ips": {"is required"}})
		return
	case len(*req.IPs) == 0 || len(*req.IPs) > 1000:
		validation(w, r, map[string][]string{"ips": {"must contain between 1 and 1000 entries"}})
		return
	}
	errs := map[string][]string{}
	seen := map[netip.Addr]bool{}
	var addrs []netip.Addr
	for i, raw := range *req.IPs {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			errs[fmt.Sprintf("ips[%d]", i)] = []string{"must be a string"}
			continue
		}
		a, ok := parseIP(strings.TrimSpace(v))
		if !ok {
			errs[fmt.Sprintf("ips[%d]", i)] = []string{"must be a valid IP address"}
			continue
		}
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		errs["ips"] = []string{"must contain at least one valid IP address"}
		validation(w, r, errs)
		return
	}
	now := s.now()
	cost := batchCost(len(addrs))
	if !s.charge(k, cost) {
		paymentRequired(w, r, cost, s.credits(k), now)
		return
	}
	out := struct {
		Results []synthient.IPLookup `json:"results"`
	}{Results: make([]synthient.IPLookup, len(addrs))}
	for i, a := range addrs {
		out.Results[i] = lookupIP(a, now)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleLookupDomain(w http.ResponseWriter, r *http.Request, k *apiKey, raw string) {
	errs := map[string][]string{}
	name, ok := checkDomain(raw)
	if !ok {
		errs["domain"] = []string{"must be a valid domain name (punycode for international names, at most 253 octets)"}
	}
	limit := 50
	if vs, present := r.URL.Query()["limit"]; present {
		n, err := strconv.Atoi(strings.TrimSpace(vs[0]))
		switch {
		case err != nil || n < 1:
			errs["limit"] = []string{"must be an integer between 1 and 1000"}
		default:
			limit = min(n, 1000)
		}
	}
	if len(errs) > 0 {
		validation(w, r, errs)
		return
	}
	now := s.now()
	if !s.charge(k, 1) {
		paymentRequired(w, r, 1, s.credits(k), now)
		return
	}
	writeJSON(w, http.StatusOK, lookupDomain(name, limit, now))
}

// checkDomain validates a domain name (LDH labels, at least two, at most
// 253 octets) and returns it in lower case without a final dot.
func checkDomain(raw string) (string, bool) {
	name := strings.ToLower(strings.TrimSuffix(raw, "."))
	if name == "" || len(name) > 253 {
		return "", false
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return "", false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return name, true
}
