package synthient_test

// Tests of budget.go: the in-memory CreditBudget (NewCreditBudget) and
// WithCreditBudget. The client's use of a budget is in credits_test.go.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// balanceOf returns b's balance.
func balanceOf(t *testing.T, b synthient.CreditBudget) synthient.CreditBalance {
	t.Helper()
	bal, err := b.Balance(context.Background())
	require.NoError(t, err)
	return bal
}

func TestWithCreditBudgetRefusesBadBudgets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b    synthient.CreditBudget
	}{
		{"nil", nil},
		{"negative credits", synthient.NewCreditBudget(-1, 0)},
		{"negative window", synthient.NewCreditBudget(10, -time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := synthient.NewClient(testKey, synthient.WithCreditBudget(tc.b))
			requireInvalid(t, err)
		})
	}
}

func TestInvalidCreditBudgetMethodsFail(t *testing.T) {
	t.Parallel()
	b := synthient.NewCreditBudget(-5, 0)
	ctx := t.Context()
	_, err := b.Reserve(ctx, 1)
	requireInvalid(t, err)
	requireInvalid(t, b.Refund(ctx, synthient.CreditReservation{Credits: 1, ID: "1"}, 1))
	_, err = b.Balance(ctx)
	requireInvalid(t, err)
}

func TestCreditBudgetReserveAndRefund(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := synthient.NewCreditBudget(10, 0)

	r1, err := b.Reserve(ctx, 4)
	require.NoError(t, err)
	assert.Equal(t, int64(4), r1.Credits)
	assert.True(t, r1.Window.IsZero(), "a budget that never refills has no window")
	r2, err := b.Reserve(ctx, 6)
	require.NoError(t, err)
	assert.NotEqual(t, r1.ID, r2.ID, "each reservation has its own ID")

	_, err = b.Reserve(ctx, 1)
	require.ErrorIs(t, err, synthient.ErrCreditBudget, "nothing is left")
	assert.Contains(t, err.Error(), "1 credit needed, 0 left of 10")

	require.NoError(t, b.Refund(ctx, r1, 3))
	require.NoError(t, b.Refund(ctx, r1, 3), "a second refund is no error")
	bal := balanceOf(t, b)
	assert.Equal(t, synthient.CreditBalance{Credits: 10, Spent: 7, Left: 3}, bal, "a second refund of r1 gave nothing back")

	_, err = b.Reserve(ctx, 4)
	require.ErrorIs(t, err, synthient.ErrCreditBudget, "4 do not fit in 3: nothing is taken")
	r3, err := b.Reserve(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(0), balanceOf(t, b).Left)

	require.NoError(t, b.Refund(ctx, r3, 3))
	assert.Equal(t, int64(7), balanceOf(t, b).Spent)
}

func TestCreditBudgetRefusesBadArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, b synthient.CreditBudget, r synthient.CreditReservation) error
	}{
		{"reserve 0", func(ctx context.Context, b synthient.CreditBudget, _ synthient.CreditReservation) error {
			_, err := b.Reserve(ctx, 0)
			return err
		}},
		{"reserve negative", func(ctx context.Context, b synthient.CreditBudget, _ synthient.CreditReservation) error {
			_, err := b.Reserve(ctx, -3)
			return err
		}},
		{"refund 0", func(ctx context.Context, b synthient.CreditBudget, r synthient.CreditReservation) error {
			return b.Refund(ctx, r, 0)
		}},
		{"refund more than reserved", func(ctx context.Context, b synthient.CreditBudget, r synthient.CreditReservation) error {
			return b.Refund(ctx, r, 3)
		}},
		{"refund a reservation never made", func(ctx context.Context, b synthient.CreditBudget, _ synthient.CreditReservation) error {
			return b.Refund(ctx, synthient.CreditReservation{Credits: 2, ID: "99"}, 2)
		}},
		{"refund a foreign ID", func(ctx context.Context, b synthient.CreditBudget, _ synthient.CreditReservation) error {
			return b.Refund(ctx, synthient.CreditReservation{Credits: 2, ID: "redis:7"}, 2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := synthient.NewCreditBudget(10, 0)
			r, err := b.Reserve(t.Context(), 2)
			require.NoError(t, err)
			requireInvalid(t, tc.call(t.Context(), b, r))
			assert.Equal(t, int64(2), balanceOf(t, b).Spent, "the bad call changed the balance")
		})
	}
}

func TestCreditBudgetZeroRefusesEverything(t *testing.T) {
	t.Parallel()
	b := synthient.NewCreditBudget(0, time.Hour)
	_, err := b.Reserve(t.Context(), 1)
	require.ErrorIs(t, err, synthient.ErrCreditBudget)
}

// A budget with a window refills at the start of each window, aligned to
// UTC, and a refund after the window ended gives nothing back. synctest's
// clock starts at 2000-01-01 00:00 UTC.
func TestCreditBudgetWindows(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		time.Sleep(90 * time.Minute) // 01:30 UTC
		b := synthient.NewCreditBudget(5, 24*time.Hour)
		midnight := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

		r, err := b.Reserve(ctx, 5)
		require.NoError(t, err)
		assert.True(t, r.Window.Equal(midnight), "the window starts at 00:00 UTC, got %v", r.Window)
		bal := balanceOf(t, b)
		assert.Equal(t, int64(0), bal.Left)
		assert.Equal(t, 24*time.Hour, bal.Window)
		assert.True(t, bal.Resets.Equal(midnight.Add(24*time.Hour)), "resets at the next midnight, got %v", bal.Resets)
		_, err = b.Reserve(ctx, 1)
		require.ErrorIs(t, err, synthient.ErrCreditBudget)

		time.Sleep(22*time.Hour + 30*time.Minute) // the next day, 00:00 UTC
		bal = balanceOf(t, b)
		assert.Equal(t, synthient.CreditBalance{Credits: 5, Left: 5, Window: 24 * time.Hour, Resets: midnight.Add(48 * time.Hour)}, bal)

		r2, err := b.Reserve(ctx, 2)
		require.NoError(t, err)
		require.NoError(t, b.Refund(ctx, r, 5), "a refund into a window that ended")
		assert.Equal(t, int64(2), balanceOf(t, b).Spent, "the old window's refund gave nothing back in the new one")
		require.NoError(t, b.Refund(ctx, r2, 2))
		assert.Equal(t, int64(0), balanceOf(t, b).Spent)
	})
}

// Many goroutines reserving at once never take more than the budget.
func TestCreditBudgetConcurrentReserves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := synthient.NewCreditBudget(1000, 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := int64(0)
	for range 16 {
		wg.Go(func() {
			for range 200 {
				r, err := b.Reserve(ctx, 3)
				if err != nil {
					if !errors.Is(err, synthient.ErrCreditBudget) {
						t.Errorf("Reserve: %v, want an error matching ErrCreditBudget", err)
					}
					continue
				}
				mu.Lock()
				taken += r.Credits
				mu.Unlock()
				if r.ID[len(r.ID)-1] == '7' {
					if err := b.Refund(ctx, r, r.Credits); err != nil {
						t.Errorf("Refund: %v", err)
					}
					mu.Lock()
					taken -= r.Credits
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	bal := balanceOf(t, b)
	assert.Equal(t, taken, bal.Spent, "the balance is what was taken and not refunded")
	assert.LessOrEqual(t, bal.Spent, int64(1000))
	assert.Equal(t, 1000-bal.Spent, bal.Left)
}
