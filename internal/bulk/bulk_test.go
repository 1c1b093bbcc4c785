package bulk_test

// Tests of bulk.go: costs, distinct addresses, numbered errors and the
// record of first occurrences.

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/bulk"
)

func TestCost(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]int{0: 0, 1: 1, 2: 2, 9: 9, 10: 9, 11: 10, 19: 18, 20: 18, 1000: 900} {
		assert.Equal(t, want, bulk.Cost(n), "Cost(%d)", n)
	}
}

func TestDistinct(t *testing.T) {
	t.Parallel()
	a := netip.MustParseAddr("192.0.2.1")
	mapped := netip.AddrFrom16(a.As16())
	b := netip.MustParseAddr("2001:db8::1")
	assert.Equal(t, 0, bulk.Distinct(nil))
	assert.Equal(t, 1, bulk.Distinct([]netip.Addr{a, a, mapped}), "an IPv4-mapped address is the IPv4 address")
	assert.Equal(t, 2, bulk.Distinct([]netip.Addr{a, b, b}))
}

// TestErrors: errors are numbered from 1, in turn; 0 is none; past
// MaxErrID every error has that number, the last numbered.
func TestErrors(t *testing.T) {
	t.Parallel()
	var errs bulk.Errors
	require.NoError(t, errs.Get(0))
	first, second := errors.New("first"), errors.New("second")
	require.Equal(t, uint32(1), errs.Add(first))
	require.Equal(t, uint32(2), errs.Add(second))
	assert.Same(t, first, errs.Get(1))
	assert.Same(t, second, errs.Get(2))
	for range bulk.MaxErrID - 2 {
		errs.Add(first)
	}
	last := errors.New("last")
	assert.Equal(t, uint32(bulk.MaxErrID), errs.Add(last), "past the last number")
	assert.Equal(t, uint32(bulk.MaxErrID), errs.Add(errors.New("later")), "past the last number")
	assert.Same(t, first, errs.Get(bulk.MaxErrID), "the error numbered last")
}

// TestSeen: the first occurrence of an address is recorded, its repeats
// (in either spelling of an IPv4 address) are told, and its outcome and
// error number, once settled, read back with its index; a Seen that is
// off records nothing.
func TestSeen(t *testing.T) {
	t.Parallel()
	v4 := netip.MustParseAddr("192.0.2.1")
	v6 := netip.MustParseAddr("2001:db8::1")
	s := bulk.New(true)
	require.False(t, s.Repeats(v4, 3), "a first occurrence")
	require.False(t, s.Repeats(v6, 1<<39), "another address")
	assert.True(t, s.Repeats(v4, 7), "a repeat")
	assert.True(t, s.Repeats(netip.AddrFrom16(v4.As16()), 8), "the IPv4-mapped spelling repeats the IPv4 address")
	assert.False(t, s.Repeats(netip.MustParseAddr("192.0.2.2"), 9), "a neighbour")
	index, outcome, errID := s.First(v4)
	assert.Equal(t, [3]int64{3, 0, 0}, [3]int64{index, int64(outcome), int64(errID)}, "not settled yet")

	s.Settle(v4, 2, 5)
	s.Settle(v6, bulk.MaxOutcome, bulk.MaxErrID)
	index, outcome, errID = s.First(netip.AddrFrom16(v4.As16()))
	assert.Equal(t, [3]int64{3, 2, 5}, [3]int64{index, int64(outcome), int64(errID)})
	index, outcome, errID = s.First(v6)
	assert.Equal(t, [3]int64{1 << 39, bulk.MaxOutcome, bulk.MaxErrID}, [3]int64{index, int64(outcome), int64(errID)})

	off := bulk.New(false)
	assert.False(t, off.Repeats(v4, 0))
	assert.False(t, off.Repeats(v4, 1), "off: nothing repeats")
	off.Settle(v4, 1, 1)
	index, outcome, errID = off.First(v4)
	assert.Equal(t, [3]int64{0, 0, 0}, [3]int64{index, int64(outcome), int64(errID)}, "off: nothing recorded")
}
