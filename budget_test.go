package synthient_test

// Tests of budget.go: the in-memory CreditBudget (NewCreditBudget) and
// WithCreditBudget. The client's use of a budget is in credits_test.go.

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

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
	bal, err := b.Balance(ctx)
	require.NoError(t, err)
	assert.Equal(t, synthient.CreditBalance{Credits: 10, Spent: 7, Left: 3}, bal, "a second refund of r1 gave nothing back")

	_, err = b.Reserve(ctx, 4)
	require.ErrorIs(t, err, synthient.ErrCreditBudget, "4 do not fit in 3: nothing is taken")
	r3, err := b.Reserve(ctx, 3)
	require.NoError(t, err)
	bal, err = b.Balance(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(0), bal.Left)

	require.NoError(t, b.Refund(ctx, r3, 3))
	bal, err = b.Balance(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(7), bal.Spent)
}

func TestCreditBudgetRefusesBadArguments(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	b := synthient.NewCreditBudget(10, 0)
	r, err := b.Reserve(ctx, 2)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"reserve 0", func() error { _, err := b.Reserve(ctx, 0); return err }},
		{"reserve negative", func() error { _, err := b.Reserve(ctx, -3); return err }},
		{"refund 0", func() error { return b.Refund(ctx, r, 0) }},
		{"refund more than reserved", func() error { return b.Refund(ctx, r, 3) }},
		{"refund a reservation never made", func() error {
			return b.Refund(ctx, synthient.CreditReservation{Credits: 2, ID: "99"}, 2)
		}},
		{"refund a foreign ID", func() error {
			return b.Refund(ctx, synthient.CreditReservation{Credits: 2, ID: "redis:7"}, 2)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireInvalid(t, tc.call())
		})
	}
	bal, err := b.Balance(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), bal.Spent, "no bad call changed the balance")
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
		bal, err := b.Balance(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), bal.Left)
		assert.Equal(t, 24*time.Hour, bal.Window)
		assert.True(t, bal.Resets.Equal(midnight.Add(24*time.Hour)), "resets at the next midnight, got %v", bal.Resets)
		_, err = b.Reserve(ctx, 1)
		require.ErrorIs(t, err, synthient.ErrCreditBudget)

		time.Sleep(22*time.Hour + 30*time.Minute) // the next day, 00:00 UTC
		bal, err = b.Balance(ctx)
		require.NoError(t, err)
		assert.Equal(t, synthient.CreditBalance{Credits: 5, Left: 5, Window: 24 * time.Hour, Resets: midnight.Add(48 * time.Hour)}, bal)

		r2, err := b.Reserve(ctx, 2)
		require.NoError(t, err)
		require.NoError(t, b.Refund(ctx, r, 5), "a refund into a window that ended")
		bal, err = b.Balance(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), bal.Spent, "the old window's refund gave nothing back in the new one")
		require.NoError(t, b.Refund(ctx, r2, 2))
		bal, err = b.Balance(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(0), bal.Spent)
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
					assert.ErrorIs(t, err, synthient.ErrCreditBudget)
					continue
				}
				mu.Lock()
				taken += r.Credits
				mu.Unlock()
				if r.ID[len(r.ID)-1] == '7' {
					assert.NoError(t, b.Refund(ctx, r, r.Credits))
					mu.Lock()
					taken -= r.Credits
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	bal, err := b.Balance(ctx)
	require.NoError(t, err)
	assert.Equal(t, taken, bal.Spent, "the balance is what was taken and not refunded")
	assert.LessOrEqual(t, bal.Spent, int64(1000))
	assert.Equal(t, 1000-bal.Spent, bal.Left)
}
