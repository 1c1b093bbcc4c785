// The call's side of the credit budget (WithCreditBudget): sendStep
// reserves each billed attempt's cost before pacing (reserve), record
// keeps or refunds it once the attempt ended (settleCredits), and an
// attempt not sent after all gives it back (refund). See docs/budgets.md.

package synthient

import (
	"context"
	"errors"
	"log/slog"

	"github.com/synthient-go/synthient/retry"
)

// reserve reserves the cost of the call's next attempt from the client's
// budget. It reports false, with the budget's error in cl.unsent, when
// the budget refuses it or fails: the attempt is not sent. Without a
// budget, or for a free request, it does nothing.
func (cl *call) reserve(ctx context.Context) bool {
	b := cl.c.budget
	if b == nil || cl.op.credits == 0 {
		return true
	}
	r, err := b.Reserve(ctx, cl.op.credits)
	if err != nil {
		cl.unsent = unsent{budgetErr: err}
		if errors.Is(err, ErrCreditBudget) {
			cl.obs.countCredits(0, 0, cl.op.credits)
		}
		return false
	}
	cl.reservation = &r
	cl.obs.countCredits(r.Credits, 0, 0)
	return true
}

// settleCredits keeps or refunds the reservation of the attempt that just
// ended, a: it is refunded when the API cannot have charged the attempt
// (it never reached the server, or got a 4xx: a refusal the API does not
// bill), and kept otherwise (a success, a 5xx, an unknown outcome). A
// retry after a refund reserves again; one after a kept reservation too,
// so that no two attempts that may both be charged share one.
func (cl *call) settleCredits(ctx context.Context, a retry.Attempt) {
	if cl.reservation == nil {
		return
	}
	if a.Err != nil && !cl.attemptReached(a.Failure) || a.Err == nil && a.Status >= 400 && a.Status < 500 {
		cl.refund(ctx)
		return
	}
	cl.reservation = nil // spent: the API charged it, or may have
}

// refund gives the reservation of the call's latest attempt back to the
// budget: the attempt was not sent, or the API charged nothing for it.
// The refund is not cut short by ctx's end. A budget that fails to refund
// keeps the credits counted as spent (it over-counts, never under); the
// failure is logged.
func (cl *call) refund(ctx context.Context) {
	r := cl.reservation
	if r == nil {
		return
	}
	cl.reservation = nil
	if r.Credits <= 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := cl.c.budget.Refund(ctx, *r, r.Credits); err != nil {
		cl.logBudget(ctx, slog.LevelWarn, "refund failed", err)
		return
	}
	cl.obs.countCredits(0, r.Credits, 0)
}

// budgetStop stops the call whose next attempt the credit budget did not
// let go: refused (retry.CreditBudgetExhausted) or failed
// (retry.CreditBudgetFailed). Nothing was sent for the attempt, which is
// not counted.
func (cl *call) budgetStop(ctx context.Context) error {
	err := cl.unsent.budgetErr
	reason := retry.CreditBudgetFailed
	if errors.Is(err, ErrCreditBudget) {
		reason = retry.CreditBudgetExhausted
	}
	cl.logBudget(ctx, slog.LevelInfo, string(reason), err)
	if oc := cl.obs; oc != nil {
		oc.reason = reason
	}
	return budgetStopError(cl.meta(reason), err, &cl.last, cl.reached)
}

// logBudget writes an event of the credit budget to the client's logger:
// the call's stop for it (what is the stop reason) or a refund that
// failed, with the budget's error err.
func (cl *call) logBudget(ctx context.Context, level slog.Level, what string, err error) {
	lg := cl.c.logger
	if lg == nil || !lg.Enabled(ctx, level) {
		return
	}
	lg.LogAttrs(ctx, level, "synthient: credit budget",
		slog.String("method", cl.op.method),
		slog.String("route", cl.op.route),
		slog.Int("attempt", cl.attempt()),
		slog.Int64("credits", cl.op.credits),
		slog.String("event", what),
		slog.String("error", err.Error()))
}

// budgetStopped reports whether err is the error of a call that the credit
// budget stopped before sending (refused or failed).
func budgetStopped(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.StopReason == retry.CreditBudgetExhausted || e.StopReason == retry.CreditBudgetFailed
}
