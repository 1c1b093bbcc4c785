package synthienttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/synthient-go/synthient"
)

// parseIP parses a lookup address: an IPv4 or IPv6 literal without a zone.
func parseIP(v string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(v)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a, true
}

// handleLookupIP answers /lookup/ip/{ip}, for 1 credit.
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
	s.logCharged(addr)
	writeJSON(w, http.StatusOK, s.ipAnswer(addr, now))
}

// batchCost is what a batch of n unique valid addresses costs:
// ceil(n × 0.9).
func batchCost(n int) int64 { return int64((n*9 + 9) / 10) }

// handleLookupIPs answers POST /lookup/ips: the lookups of the distinct
// valid addresses of the batch, in first-seen order, billed at batchCost.
func (s *Server) handleLookupIPs(w http.ResponseWriter, r *http.Request, k *apiKey, _ params) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBody+1))
	if err != nil {
		badRequest(w, r, "The request body could not be read.")
		return
	}
	entries, errs := batchEntries(body)
	if errs != nil {
		validation(w, r, errs)
		return
	}
	addrs, errs := batchAddrs(entries)
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
	s.logCharged(addrs...)
	for i, a := range addrs {
		out.Results[i] = s.ipAnswer(a, now)
	}
	writeJSON(w, http.StatusOK, out)
}

// maxBatchBody is the largest batch body the fake reads.
const maxBatchBody = 1 << 20

// batchEntries returns the ips array of a batch body, 1 to 1000 entries,
// or the validation errors of a body that has none.
func batchEntries(body []byte) ([]json.RawMessage, map[string][]string) {
	sizeErr := map[string][]string{"ips": {"must contain between 1 and 1000 entries"}}
	if len(body) > maxBatchBody {
		return nil, sizeErr
	}
	var req struct {
		IPs *[]json.RawMessage `json:"ips"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "ips" {
			return nil, map[string][]string{"ips": {"must be an array of IP addresses"}}
		}
		return nil, map[string][]string{"body": {"must be a JSON object with an ips array"}}
	}
	switch {
	case req.IPs == nil:
		return nil, map[string][]string{"ips": {"is required"}}
	case len(*req.IPs) == 0 || len(*req.IPs) > 1000:
		return nil, sizeErr
	}
	return *req.IPs, nil
}

// batchAddrs returns the distinct valid addresses of a batch's entries in
// first-seen order, and an error for each entry that is not an address
// ("ips[3]").
func batchAddrs(entries []json.RawMessage) ([]netip.Addr, map[string][]string) {
	errs := map[string][]string{}
	seen := map[netip.Addr]bool{}
	var addrs []netip.Addr
	for i, raw := range entries {
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
	return addrs, errs
}

// handleLookupDomain answers /lookup/domain/{domain}, for 1 credit: at
// most limit (default 50, at most 1000) recent events.
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
	writeJSON(w, http.StatusOK, s.domainAnswer(name, limit, now))
}

// checkDomain validates a domain name (LDH labels, at least two, at most
// 253 octets) and returns it in lower case without a final dot.
func checkDomain(raw string) (string, bool) {
	name := strings.ToLower(strings.TrimSuffix(raw, "."))
	if name == "" || len(name) > 253 {
		return "", false
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 || slices.ContainsFunc(labels, badLabel) {
		return "", false
	}
	return name, true
}

// badLabel reports whether l is not a domain label: 1 to 63 letters,
// digits, hyphens and underscores, without a hyphen at either end.
func badLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return true
	}
	return strings.ContainsFunc(l, func(c rune) bool {
		return !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_')
	})
}
