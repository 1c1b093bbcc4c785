package synthienttest

import (
	"net/netip"
	"strings"
	"time"

	"github.com/synthient-go/synthient"
)

// WithIPLookup pins the answer for the address r.IP: LookupIP and
// LookupIPs answer r, as given, in place of the answer the fake makes up,
// so that a test can ask for exactly the case it checks (a risk score of
// 59, no intelligence, an address in another country). It is billed as
// any lookup. Giving the same address again replaces its answer. A zero
// or zoned r.IP makes NewServer panic.
func WithIPLookup(r synthient.IPLookup) Option {
	return func(c *config) {
		if !r.IP.IsValid() || r.IP.Zone() != "" {
			panic("synthienttest: WithIPLookup needs the result's IP, a valid address without a zone")
		}
		if c.ipAnswers == nil {
			c.ipAnswers = map[netip.Addr]synthient.IPLookup{}
		}
		c.ipAnswers[r.IP] = r
	}
}

// WithDomainLookup pins the answer for the domain r.Domain (matched in
// any case, without a final dot), as WithIPLookup does for an address:
// LookupDomain answers r, its recent events cut to the request's limit
// (default 50) as the API does. An empty r.Domain makes NewServer panic.
func WithDomainLookup(r synthient.DomainLookup) Option {
	return func(c *config) {
		name, ok := checkDomain(r.Domain)
		if !ok {
			panic("synthienttest: WithDomainLookup needs the result's Domain, a valid domain name")
		}
		if c.domainAnswers == nil {
			c.domainAnswers = map[string]synthient.DomainLookup{}
		}
		c.domainAnswers[name] = r
	}
}

// WithSeed makes the answers the fake makes up for lookups, and the
// events of its streams, those of seed: a server of another seed answers
// other networks, locations, risk scores and events, each as
// deterministic. Export files do not change with it. The default, 0, is
// the data every fake serves unless told otherwise.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.seed = seed }
}

// WithLatency delays every answer of the API origin by d, measured from
// its arrival, before any check or injected fault (the storage host is not
// delayed): a slow API for people and tests to interrupt. The wait ends
// early when the client goes away or the server closes. A negative d makes
// NewServer panic.
func WithLatency(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			panic("synthienttest: negative latency")
		}
		c.latency = d
	}
}

// ChargedIPs returns every address a lookup charged for, in the order
// charged: one entry for a LookupIP, one per distinct address of a
// LookupIPs batch. An address that appears twice was charged twice. Reset
// clears it.
func (s *Server) ChargedIPs() []netip.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]netip.Addr(nil), s.charged...)
}

// logCharged records that a lookup charged for addrs.
func (s *Server) logCharged(addrs ...netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.charged = append(s.charged, addrs...)
}

// ipAnswer is the answer for addr: the pinned one (WithIPLookup), else
// the one the fake makes up.
func (s *Server) ipAnswer(addr netip.Addr, now time.Time) synthient.IPLookup {
	if r, ok := s.cfg.ipAnswers[addr]; ok {
		return r
	}
	return lookupIP(addr, now, s.cfg.seed)
}

// domainAnswer is the answer for the domain name with at most limit
// recent events: the pinned one (WithDomainLookup), else the one the fake
// makes up.
func (s *Server) domainAnswer(name string, limit int, now time.Time) synthient.DomainLookup {
	r, ok := s.cfg.domainAnswers[strings.ToLower(strings.TrimSuffix(name, "."))]
	if !ok {
		return lookupDomain(name, limit, now, s.cfg.seed)
	}
	if len(r.RecentEvents) > limit {
		r.RecentEvents = r.RecentEvents[:limit:limit]
	}
	return r
}
