// Package bulk keeps the accounts of a bulk lookup (LookupIPsAll): what
// its requests cost, which addresses repeat an earlier one and what became
// of the first, and the errors of its settled addresses, by number.
//
// The model. A request of n distinct addresses costs ceil(0.9 n) credits
// (Cost); an IPv4-mapped IPv6 address is the IPv4 address it maps (RFC
// 4291 2.5.5.2), so the two spellings are one address (Distinct, Seen).
// Seen records the first occurrence of each distinct address and, once it
// is settled, its outcome and the number of its error: 8 bytes per
// address, keyed by 4 bytes for IPv4 and 16 for IPv6, so that a run of
// millions of addresses stays small. A value packs the first occurrence's
// index (40 bits), the error's number (21 bits) and the outcome (3 bits,
// 0 until settled). Errors numbers the errors from 1; a run with more than
// MaxErrID of them gives the later ones the number MaxErrID, so their
// repeats get the error of the last one numbered.
package bulk

import "net/netip"

// Cost returns what a request of n distinct addresses costs: ceil(0.9 n).
func Cost(n int) int {
	return (9*n + 9) / 10
}

// Distinct returns the number of distinct addresses of addrs, an
// IPv4-mapped address counted as the IPv4 address it maps.
func Distinct(addrs []netip.Addr) int {
	set := make(map[netip.Addr]struct{}, len(addrs))
	for _, ip := range addrs {
		set[ip.Unmap()] = struct{}{}
	}
	return len(set)
}

// Errors numbers the errors of a run, from 1, so that Seen records one
// number per address rather than an error. The zero value is empty.
type Errors struct {
	errs []error
}

// Add appends err and returns its number: MaxErrID at most.
func (t *Errors) Add(err error) uint32 {
	t.errs = append(t.errs, err)
	return uint32(min(len(t.errs), MaxErrID))
}

// Get returns the error numbered id; nil for 0.
func (t *Errors) Get(id uint32) error {
	if id == 0 {
		return nil
	}
	return t.errs[id-1]
}

// The packing of a Seen value.
const (
	outcomeBits = 3
	errIDBits   = 21
	// MaxErrID is the largest error number a Seen value holds.
	MaxErrID = 1<<errIDBits - 1
	// MaxOutcome is the largest outcome a Seen value holds.
	MaxOutcome = 1<<outcomeBits - 1
)

// Seen records the first occurrence of each distinct address of a run and,
// once settled, its outcome. A Seen that is off (New(false), the zero
// value) records nothing: no address repeats.
type Seen struct {
	on bool
	v4 map[uint32]uint64
	v6 map[[16]byte]uint64
}

// New returns a Seen that records when on.
func New(on bool) Seen {
	if !on {
		return Seen{}
	}
	return Seen{on: true, v4: map[uint32]uint64{}, v6: map[[16]byte]uint64{}}
}

// Repeats reports whether ip occurred before; if not, it records index as
// its first occurrence.
func (s *Seen) Repeats(ip netip.Addr, index int64) bool {
	if !s.on {
		return false
	}
	if _, ok := s.get(ip); ok {
		return true
	}
	s.put(ip, uint64(index)<<(errIDBits+outcomeBits)) //nolint:gosec // an index counts the run's addresses from 0; 2^40 of them is beyond any run
	return false
}

// Settle records the outcome (at most MaxOutcome) and the error number of
// ip's first occurrence.
func (s *Seen) Settle(ip netip.Addr, outcome uint8, errID uint32) {
	if !s.on {
		return
	}
	v, _ := s.get(ip)
	index := v >> (errIDBits + outcomeBits)
	s.put(ip, index<<(errIDBits+outcomeBits)|uint64(errID)<<outcomeBits|uint64(outcome))
}

// First returns the index, outcome and error number of ip's first
// occurrence.
func (s *Seen) First(ip netip.Addr) (index int64, outcome uint8, errID uint32) {
	v, _ := s.get(ip)
	return int64(v >> (errIDBits + outcomeBits)), uint8(v & MaxOutcome), uint32(v >> outcomeBits & MaxErrID)
}

func (s *Seen) get(ip netip.Addr) (uint64, bool) {
	if ip = ip.Unmap(); ip.Is4() {
		v, ok := s.v4[ip4Key(ip)]
		return v, ok
	}
	v, ok := s.v6[ip.As16()]
	return v, ok
}

func (s *Seen) put(ip netip.Addr, v uint64) {
	if ip = ip.Unmap(); ip.Is4() {
		s.v4[ip4Key(ip)] = v
		return
	}
	s.v6[ip.As16()] = v
}

func ip4Key(ip netip.Addr) uint32 {
	b := ip.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
