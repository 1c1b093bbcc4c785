package synthienttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/problem"
)

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

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request, _ *apiKey, _ params) {
	s.mu.Lock()
	sick := append([]string(nil), s.sick...)
	s.mu.Unlock()
	if len(sick) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, synthient.Health{Status: "unhealthy", Problems: sick})
		return
	}
	writeJSON(w, http.StatusOK, synthient.Health{Status: "ok"})
}

func (s *Server) handleAccount(w http.ResponseWriter, _ *http.Request, k *apiKey, _ params) {
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

func (s *Server) handleLookupIP(w http.ResponseWriter, r *http.Request, k *apiKey, p params) {
	addr, ok := parseIP(p.value)
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

func (s *Server) handleLookupIPs(w http.ResponseWriter, r *http.Request, k *apiKey, _ params) {
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

func (s *Server) handleLookupDomain(w http.ResponseWriter, r *http.Request, k *apiKey, p params) {
	errs := map[string][]string{}
	name, ok := checkDomain(p.value)
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

// SetUnhealthy makes /health answer 503 with these problems; no problems
// makes it healthy again.
func (s *Server) SetUnhealthy(problems ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sick = append([]string(nil), problems...)
}
