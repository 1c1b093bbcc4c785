package synthient_test

// Tests of credits.go: the call path with a credit budget
// (WithCreditBudget), mostly on the fake API, whose count of the credits
// it took is the truth. In every case the fake's credits never exceed what
// the budget counts as spent, which never exceeds the budget.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// budgeted is a client with a credit budget, of a fake API without rate
// limits (a 429 comes only from a fault).
type budgeted struct {
	srv   *synthienttest.Server
	c     *synthient.Client
	b     synthient.CreditBudget
	start int64 // the fake key's credits at the start
}

// newBudgeted starts the fake with srvOpts and returns a client of it
// with a budget of credits that never refills; opts come last.
func newBudgeted(t testing.TB, credits int64, srvOpts []synthienttest.Option, opts ...synthient.Option) *budgeted {
	t.Helper()
	srv := fakeServer(t, append([]synthienttest.Option{synthienttest.WithoutRateLimits()}, srvOpts...)...)
	b := synthient.NewCreditBudget(credits, 0)
	c := fakeClient(t, srv, append([]synthient.Option{synthient.WithCreditBudget(b)}, opts...)...)
	return &budgeted{srv: srv, c: c, b: b, start: srv.Credits(srv.APIKey)}
}

// fakeSpent returns the credits the fake took from its key.
func (bt *budgeted) fakeSpent() int64 { return bt.start - bt.srv.Credits(bt.srv.APIKey) }

// balance returns the budget's balance.
func (bt *budgeted) balance(t testing.TB) synthient.CreditBalance {
	t.Helper()
	bal, err := bt.b.Balance(context.Background())
	require.NoError(t, err)
	return bal
}

// requireAccounts checks that the budget spent wantSpent and the fake
// took wantFake, and the invariant: fake <= spent <= the budget.
func (bt *budgeted) requireAccounts(t testing.TB, wantSpent, wantFake int64) {
	t.Helper()
	bal, fake := bt.balance(t), bt.fakeSpent()
	assert.LessOrEqual(t, fake, bal.Spent, "the fake took more credits than the budget counts")
	assert.LessOrEqual(t, bal.Spent, bal.Credits, "the budget spent more than it has")
	assert.Equal(t, wantSpent, bal.Spent, "budget spent")
	assert.Equal(t, wantFake, fake, "fake's credits taken")
}

// creditOp is a billed operation of the accounting matrix: its route, the
// cost of each request it sends, in order, and the call.
type creditOp struct {
	name  string
	route string
	costs []int64
	call  func(ctx context.Context, c *synthient.Client) error
}

// bulkAddrs are the 25 addresses of the matrix's LookupIPsAll: three
// requests of 10, 10 and 5 addresses, one at a time.
var bulkAddrs = testAddrs(25)

func creditOps() []creditOp {
	return []creditOp{
		{name: "LookupIP", route: synthienttest.RouteLookupIP, costs: []int64{1}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.LookupIP(ctx, testAddr(1))
			return err
		}},
		{name: "LookupDomain", route: synthienttest.RouteLookupDomain, costs: []int64{1}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.LookupDomain(ctx, "example.org", nil)
			return err
		}},
		{name: "LookupIPs", route: synthienttest.RouteLookupIPs, costs: []int64{9}, call: func(ctx context.Context, c *synthient.Client) error {
			_, err := c.LookupIPs(ctx, testAddrs(10))
			return err
		}},
		{name: "LookupIPsAll", route: synthienttest.RouteLookupIPs, costs: []int64{9, 9, 5}, call: func(ctx context.Context, c *synthient.Client) error {
			return bulkErr(c.LookupIPsAll(ctx, slices.Values(bulkAddrs), &synthient.BulkParams{BatchSize: 10, Concurrency: 1}))
		}},
	}
}

// bulkErr ranges over a bulk run and returns its first error.
func bulkErr(seq func(func(synthient.BulkResult, error) bool)) error {
	var first error
	for _, err := range seq {
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// creditFault is what happens to the first request of an operation: the
// fault injected (nil for none), or, with cut, a wait for the headers
// during which the caller's context ends. ok says that the call
// succeeds, kept that the request's reservation is kept, charged that the
// fake takes its credits, stops that a bulk run sends nothing more after
// it.
type creditFault struct {
	name                     string
	fault                    *synthienttest.Fault
	cut                      bool
	ok, kept, charged, stops bool
}

func creditFaults() []creditFault {
	kind := func(k synthienttest.FaultKind) *synthienttest.Fault { return &synthienttest.Fault{Kind: k} }
	status := func(code int, retryAfter string) *synthienttest.Fault {
		return &synthienttest.Fault{Kind: synthienttest.FaultStatus, Status: code, RetryAfter: retryAfter}
	}
	return []creditFault{
		{name: "answered", ok: true, kept: true, charged: true},
		{name: "503", fault: status(503, ""), kept: true},
		{name: "500", fault: status(500, ""), kept: true},
		{name: "connection closed after the request", fault: kind(synthienttest.FaultCloseAfterRequest), kept: true},
		{name: "reset mid-body", fault: kind(synthienttest.FaultResetMidBody), kept: true, charged: true},
		{name: "truncated body", fault: kind(synthienttest.FaultTruncatedBody), kept: true, charged: true},
		{name: "429 waited out", fault: status(429, "0"), ok: true, kept: true, charged: true},
		{name: "429 without Retry-After", fault: status(429, "")},
		{name: "429 past MaxRetryAfter", fault: status(429, "3600")},
		{name: "402", fault: status(402, ""), stops: true},
		{name: "401", fault: status(401, ""), stops: true},
		{name: "403", fault: status(403, ""), stops: true},
		{name: "422", fault: status(422, "")},
		{name: "context ended in flight", fault: &synthienttest.Fault{Kind: synthienttest.FaultSlowHeaders, Delay: time.Hour}, cut: true, kept: true, stops: true},
	}
}

// cutOnArrival returns a context that ends once srv received a request on
// route.
func cutOnArrival(t *testing.T, srv *synthienttest.Server, route string) context.Context {
	ctx, cancel := context.WithCancel(callCtx(t))
	t.Cleanup(cancel)
	go func() {
		for srv.Arrivals(route) == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	return ctx
}

// The accounting matrix: each billed operation, with each fault on its
// first request. The budget keeps what may have been charged and gives
// back what cannot have been; the fake never took more than it kept.
func TestCreditBudgetAccounts(t *testing.T) {
	t.Parallel()
	for _, op := range creditOps() {
		for _, f := range creditFaults() {
			t.Run(op.name+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				bt := newBudgeted(t, 100, nil)
				if f.fault != nil {
					bt.srv.Inject(op.route, 1, *f.fault)
				}
				ctx := callCtx(t)
				if f.cut {
					ctx = cutOnArrival(t, bt.srv, op.route)
				}
				err := op.call(ctx, bt.c)
				if f.ok {
					require.NoError(t, err)
				} else {
					require.Error(t, err)
				}
				var wantSpent, wantFake int64
				for i, cost := range op.costs {
					first := i == 0
					if first && f.kept || !first && !f.stops {
						wantSpent += cost
					}
					if first && f.charged || !first && !f.stops {
						wantFake += cost
					}
				}
				bt.requireAccounts(t, wantSpent, wantFake)
			})
		}
	}
}

// The fake itself out of credits: its 402 is refunded, and a bulk run
// stops at it.
func TestCreditBudgetRefundsTheFakes402(t *testing.T) {
	t.Parallel()
	for _, op := range creditOps() {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			bt := newBudgeted(t, 100, []synthienttest.Option{synthienttest.WithCredits(0)})
			_ = requireAPIErr(t, op.call(callCtx(t), bt.c), http.StatusPaymentRequired)
			bt.requireAccounts(t, 0, 0)
		})
	}
}

// A request whose cost does not fit is not sent: its error matches
// ErrCreditBudget, a *ConnectionError with NotSent, stop reason
// credit_budget_exhausted, no attempt.
func TestCreditBudgetRefusesWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	for _, op := range creditOps()[:3] {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			bt := newBudgeted(t, op.costs[0]-1, nil)
			err := op.call(callCtx(t), bt.c)
			require.ErrorIs(t, err, synthient.ErrCreditBudget)
			_ = requireConnErr(t, err, true, false)
			_ = requireStop(t, err, 0, retry.CreditBudgetExhausted)
			assert.Contains(t, err.Error(), "refused by the credit budget (request not sent)")
			assert.Zero(t, bt.srv.Arrivals(op.route), "requests sent")
			bt.requireAccounts(t, 0, 0)
		})
	}
}

// A bulk run sends what fits and stops at the first request that does
// not: every address left is NotSent with the budget's error.
func TestLookupIPsAllStopsAtTheBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		credits      int64
		lookedUp     int
		wantSpent    int64
		wantRequests int
	}{
		{credits: 8, lookedUp: 0, wantSpent: 0, wantRequests: 0},
		{credits: 9, lookedUp: 10, wantSpent: 9, wantRequests: 1},
		{credits: 22, lookedUp: 20, wantSpent: 18, wantRequests: 2},
		{credits: 23, lookedUp: 25, wantSpent: 23, wantRequests: 3},
	} {
		t.Run(fmt.Sprint(tc.credits, " credits"), func(t *testing.T) {
			t.Parallel()
			bt := newBudgeted(t, tc.credits, nil)
			outcomes := map[synthient.BulkOutcome]int{}
			for r, err := range bt.c.LookupIPsAll(callCtx(t), slices.Values(bulkAddrs), &synthient.BulkParams{BatchSize: 10, Concurrency: 1}) {
				outcomes[r.Outcome]++
				if r.Outcome == synthient.NotSent {
					require.ErrorIs(t, err, synthient.ErrCreditBudget, "address %d", r.Index)
					_ = requireStop(t, err, 0, retry.CreditBudgetExhausted)
				}
			}
			want := map[synthient.BulkOutcome]int{synthient.LookedUp: tc.lookedUp, synthient.NotSent: 25 - tc.lookedUp}
			for o, n := range want {
				if n == 0 {
					delete(want, o)
				}
			}
			assert.Equal(t, want, outcomes)
			assert.Equal(t, tc.wantRequests, bt.srv.Arrivals(synthienttest.RouteLookupIPs), "requests sent")
			bt.requireAccounts(t, tc.wantSpent, tc.wantSpent)
		})
	}
}

// gatedBudget is a CreditBudget over another whose Reserve fails as fail
// says, for the n-th reservation (from 1).
type gatedBudget struct {
	synthient.CreditBudget
	n    atomic.Int64
	fail func(n int64) error
}

func (g *gatedBudget) Reserve(ctx context.Context, credits int64) (synthient.CreditReservation, error) {
	if err := g.fail(g.n.Add(1)); err != nil {
		return synthient.CreditReservation{}, err
	}
	return g.CreditBudget.Reserve(ctx, credits)
}

// A retry after a refunded 429 reserves again; when the budget refuses
// it, the error matches ErrCreditBudget and reaches the 429.
func TestCreditBudgetRefusesARetry(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, synthienttest.WithoutRateLimits())
	inner := synthient.NewCreditBudget(10, 0)
	b := &gatedBudget{CreditBudget: inner, fail: func(n int64) error {
		if n == 2 {
			return fmt.Errorf("%w: taken by another caller meanwhile", synthient.ErrCreditBudget)
		}
		return nil
	}}
	c := fakeClient(t, srv, synthient.WithCreditBudget(b))
	srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "0"})

	_, err := c.LookupIP(callCtx(t), testAddr(1))
	require.ErrorIs(t, err, synthient.ErrCreditBudget)
	_ = requireAPIErr(t, err, http.StatusTooManyRequests)
	_ = requireStop(t, err, 1, retry.CreditBudgetExhausted)
	assert.Equal(t, 1, srv.Arrivals(synthienttest.RouteLookupIP), "the retry was not sent")
	bal, err := inner.Balance(t.Context())
	require.NoError(t, err)
	assert.Zero(t, bal.Spent, "the 429's reservation was given back")
}

// A budget whose store fails sends nothing: the error says the budget
// failed and wraps the store's error; a bulk run stops at it.
func TestCreditBudgetStoreFailure(t *testing.T) {
	t.Parallel()
	errStore := errors.New("store unreachable")
	for _, op := range creditOps() {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeServer(t, synthienttest.WithoutRateLimits())
			b := &gatedBudget{CreditBudget: synthient.NewCreditBudget(100, 0), fail: func(int64) error { return errStore }}
			lg, logs := newLogger()
			c := fakeClient(t, srv, synthient.WithCreditBudget(b), synthient.WithLogger(lg))
			err := op.call(callCtx(t), c)
			require.ErrorIs(t, err, errStore)
			require.NotErrorIs(t, err, synthient.ErrCreditBudget)
			_ = requireConnErr(t, err, true, false)
			_ = requireStop(t, err, 0, retry.CreditBudgetFailed)
			assert.Contains(t, err.Error(), "credit budget failed (request not sent): store unreachable")
			assert.Zero(t, srv.Arrivals(op.route), "requests sent")
			assert.Contains(t, logs.String(), `"event":"credit_budget_failed"`)
		})
	}
}

// Answers from the cache and calls that share a request reserve nothing:
// 16 identical lookups at once, then 16 more, cost one credit.
func TestCreditBudgetCacheAndSharingAreFree(t *testing.T) {
	t.Parallel()
	bt := newBudgeted(t, 5, []synthienttest.Option{synthienttest.WithLatency(20 * time.Millisecond)},
		synthient.WithCache(synthient.NewMemoryCache(100, time.Hour)))
	for range 2 {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				_, err := bt.c.LookupIP(callCtx(t), testAddr(7))
				assert.NoError(t, err)
			})
		}
		wg.Wait()
	}
	_, err := bt.c.LookupIPs(callCtx(t), []netip.Addr{testAddr(7)})
	require.NoError(t, err, "a LookupIPs answered from the cache")
	bt.requireAccounts(t, 1, 1)
}

// ctxBudget is a CreditBudget that draws on the budget its call's context
// names (as the mcp command's per-session budgets do).
type ctxBudget struct {
	byName map[string]synthient.CreditBudget
}

type budgetName struct{}

func (cb ctxBudget) of(ctx context.Context) synthient.CreditBudget {
	return cb.byName[ctx.Value(budgetName{}).(string)]
}

func (cb ctxBudget) Reserve(ctx context.Context, credits int64) (synthient.CreditReservation, error) {
	return cb.of(ctx).Reserve(ctx, credits)
}

func (cb ctxBudget) Refund(ctx context.Context, r synthient.CreditReservation, credits int64) error {
	return cb.of(ctx).Refund(ctx, r, credits)
}

func (cb ctxBudget) Balance(ctx context.Context) (synthient.CreditBalance, error) {
	return cb.of(ctx).Balance(ctx)
}

// A caller that shared the request of a leader whose budget refused it
// asks again, on its own budget, and gets its answer.
func TestCreditBudgetRefusalIsTheLeadersOwn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		api := newMockAPI(t, answerJSON(http.StatusOK, `{"ip":"1.2.3.4"}`))
		empty, full := synthient.NewCreditBudget(0, 0), synthient.NewCreditBudget(5, 0)
		gate := &gatedBudget{CreditBudget: ctxBudget{byName: map[string]synthient.CreditBudget{"empty": empty, "full": full}},
			fail: func(n int64) error {
				if n == 1 {
					<-release // the leader's reservation waits until the follower joined
				}
				return nil
			}}
		c := api.Client(t, synthient.WithCreditBudget(gate), synthient.WithoutPacing())

		var leaderErr, followerErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), budgetName{}, "empty"))
			defer cancel()
			_, leaderErr = c.LookupIP(ctx, testIP)
		})
		synctest.Wait() // the leader waits in Reserve
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), budgetName{}, "full"))
			defer cancel()
			_, followerErr = c.LookupIP(ctx, testIP)
		})
		synctest.Wait() // the follower waits for the leader's answer
		close(release)
		wg.Wait()

		require.ErrorIs(t, leaderErr, synthient.ErrCreditBudget)
		require.NoError(t, followerErr, "the follower's own budget has credits")
		assert.Len(t, api.Requests(), 1, "requests")
		bal, err := full.Balance(t.Context())
		require.NoError(t, err)
		assert.Equal(t, int64(1), bal.Spent, "the follower's budget paid")
	})
}

// A pacing hold that would pass the deadline sends nothing and gives the
// reservation back (the hold as in TestPacingHoldPastDeadline: once a 429
// confirmed a spent bucket, refilling a token in 100 s).
func TestCreditBudgetRefundsAPacingHold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		spent := rateLimitKV(10, 0, 100)
		ok := answer(http.StatusOK, `{"ip":"1.2.3.4"}`, append(spent, "Content-Type", "application/json")...)
		m := newMockAPI(t, nil).Route(http.MethodGet, "/api/v4/lookup/ip/1.2.3.4",
			ok, problem(http.StatusTooManyRequests, append(spent, "Retry-After", "100")...))
		b := synthient.NewCreditBudget(10, 0)
		c := m.Client(t, synthient.WithCreditBudget(b))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err := c.LookupIP(ctx, testIP)
		require.NoError(t, err)
		_, err = c.LookupIP(ctx, testIP)
		_ = requireAPIErr(t, err, http.StatusTooManyRequests)
		_, err = c.LookupIP(ctx, testIP)
		require.ErrorIs(t, err, synthient.ErrRateLimitHold)
		assert.Len(t, m.Requests(), 2, "requests: the held one was not sent")
		bal, err := b.Balance(t.Context())
		require.NoError(t, err)
		assert.Equal(t, int64(1), bal.Spent, "the 429's and the held lookup's credits were given back")
	})
}

// A context that ends during the wait before a retry (the 429 asked for
// 30 s) sends nothing more and reserves nothing more: the 429's credit is
// given back.
func TestCreditBudgetCancelledDuringRetryWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	hook := func(ri *synthient.ResponseInfo) error {
		if ri.Status == http.StatusTooManyRequests {
			time.AfterFunc(10*time.Millisecond, cancel)
		}
		return nil
	}
	bt := newBudgeted(t, 10, nil, synthient.WithResponseHook(hook))
	bt.srv.Inject(synthienttest.RouteLookupIP, 1, synthienttest.Fault{Status: 429, RetryAfter: "30"})
	_, err := bt.c.LookupIP(ctx, testAddr(1))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, bt.srv.Arrivals(synthienttest.RouteLookupIP), "requests sent")
	bt.requireAccounts(t, 0, 0)
}

// refundFails is a CreditBudget whose Refund fails.
type refundFails struct{ synthient.CreditBudget }

func (refundFails) Refund(context.Context, synthient.CreditReservation, int64) error {
	return errors.New("refund lost")
}

// A refund that fails keeps the credits spent (the budget over-counts,
// never under) and is logged.
func TestCreditBudgetRefundFailureOverCounts(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, synthienttest.WithoutRateLimits())
	inner := synthient.NewCreditBudget(10, 0)
	lg, logs := newLogger()
	c := fakeClient(t, srv, synthient.WithCreditBudget(refundFails{inner}), synthient.WithLogger(lg))
	srv.Inject(synthienttest.RouteLookupIP, 1, statusFault(http.StatusUnprocessableEntity))
	_, err := c.LookupIP(callCtx(t), testAddr(1))
	_ = requireAPIErr(t, err, http.StatusUnprocessableEntity)
	bal, err := inner.Balance(t.Context())
	require.NoError(t, err)
	assert.Equal(t, int64(1), bal.Spent)
	assert.Contains(t, logs.String(), `"event":"refund failed"`)
	assert.Contains(t, logs.String(), `"error":"refund lost"`)
}

// ledger is an Observer that sums each call's credits by the tag its
// context carries (ledgerTag), and counts the calls begun and ended.
type ledger struct {
	mu      sync.Mutex
	started int
	ended   int
	byTag   map[string]synthient.CallEnd
}

type ledgerTag struct{}

func (l *ledger) StartCall(ctx context.Context, _ synthient.CallStart) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started++
	return ctx
}

func (*ledger) StartRequest(ctx context.Context, _ synthient.RequestStart) context.Context {
	return ctx
}
func (*ledger) EndRequest(context.Context, synthient.RequestEnd) {}
func (*ledger) Hold(context.Context, synthient.PacingHold)       {}

func (l *ledger) EndCall(ctx context.Context, e synthient.CallEnd) {
	tag, _ := ctx.Value(ledgerTag{}).(string)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended++
	if l.byTag == nil {
		l.byTag = map[string]synthient.CallEnd{}
	}
	sum := l.byTag[tag]
	sum.CreditsReserved += e.CreditsReserved
	sum.CreditsSpent += e.CreditsSpent
	sum.CreditsRefunded += e.CreditsRefunded
	sum.CreditsRefused += e.CreditsRefused
	l.byTag[tag] = sum
}

// settled reports whether every call begun has ended.
func (l *ledger) settled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started == l.ended
}

// tag returns the sum of the calls tagged tag.
func (l *ledger) tag(tag string) synthient.CallEnd {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byTag[tag]
}

// The observer counts each call's credits: reserved, spent, refunded and
// refused.
func TestCreditBudgetObserved(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                               string
		credits                            int64
		fault                              *synthienttest.Fault
		reserved, spent, refunded, refused int64
	}{
		{name: "answered", credits: 5, reserved: 1, spent: 1},
		{name: "429 waited out", credits: 5, fault: &synthienttest.Fault{Status: 429, RetryAfter: "0"}, reserved: 2, spent: 1, refunded: 1},
		{name: "422", credits: 5, fault: &synthienttest.Fault{Status: 422}, reserved: 1, refunded: 1},
		{name: "503", credits: 5, fault: &synthienttest.Fault{Status: 503}, reserved: 1, spent: 1},
		{name: "refused", credits: 0, refused: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := &ledger{}
			bt := newBudgeted(t, tc.credits, nil, synthient.WithObserver(l))
			if tc.fault != nil {
				bt.srv.Inject(synthienttest.RouteLookupIP, 1, *tc.fault)
			}
			_, _ = bt.c.LookupIP(context.WithValue(callCtx(t), ledgerTag{}, "call"), testAddr(1))
			want := synthient.CallEnd{CreditsReserved: tc.reserved, CreditsSpent: tc.spent, CreditsRefunded: tc.refunded, CreditsRefused: tc.refused}
			assert.Equal(t, want, l.tag("call"))
		})
	}
}

// The cost Raw reserves for each route.
func TestRawReservesTheRoutesCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method, path, body string
		want                     int64
	}{
		{name: "lookup ip", method: http.MethodGet, path: "lookup/ip/198.18.0.1", want: 1},
		{name: "lookup domain", method: http.MethodGet, path: "/lookup/domain/example.org?limit=3", want: 1},
		{name: "batch", method: http.MethodPost, path: "lookup/ips", body: `{"ips":["198.18.0.1","198.18.0.2","198.18.0.1"]}`, want: 2},
		{name: "batch counted at most", method: http.MethodPost, path: "lookup/ips", body: `{"ips":["198.18.0.1","198.18.0.2","::ffff:198.18.0.1","x",7]}`, want: 5},
		{name: "account", method: http.MethodGet, path: "account/me"},
		{name: "exports", method: http.MethodGet, path: "feeds/proxies/export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bt := newBudgeted(t, 100, nil)
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			resp, err := bt.c.Raw(callCtx(t), tc.method, tc.path, body)
			if err == nil {
				_ = resp.Body.Close()
			}
			assert.Equal(t, tc.want, bt.balance(t).Spent, "reserved and kept")
			assert.LessOrEqual(t, bt.fakeSpent(), bt.balance(t).Spent)
		})
	}
}

// A batch body Raw cannot read reserves the most a batch costs; the API's
// 422 gives it back.
func TestRawBatchOfUnknownShape(t *testing.T) {
	t.Parallel()
	bt := newBudgeted(t, 899, nil)
	_, err := bt.c.Raw(callCtx(t), http.MethodPost, "lookup/ips", []byte(`{"ips":"198.18.0.1"}`))
	require.ErrorIs(t, err, synthient.ErrCreditBudget, "900 do not fit in 899")
	bt = newBudgeted(t, 900, nil)
	_, err = bt.c.Raw(callCtx(t), http.MethodPost, "lookup/ips", []byte(`not json`))
	_ = requireAPIErr(t, err, http.StatusUnprocessableEntity)
	bt.requireAccounts(t, 0, 0)
}

// randomFault returns a fault of the randomized test: most requests
// answered as usual (a slow body in one chunk), the rest failing in each
// way a billed request can.
func randomFault(r *rand.Rand) synthienttest.Fault {
	faults := []synthienttest.Fault{
		{Kind: synthienttest.FaultStatus, Status: 503},
		{Kind: synthienttest.FaultCloseAfterRequest},
		{Kind: synthienttest.FaultResetMidBody},
		{Kind: synthienttest.FaultTruncatedBody},
		{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "0"},
		{Kind: synthienttest.FaultStatus, Status: 429},
		{Kind: synthienttest.FaultStatus, Status: 402},
		{Kind: synthienttest.FaultStatus, Status: 422},
	}
	if r.IntN(3) > 0 {
		return synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 1 << 20, Delay: time.Nanosecond}
	}
	return faults[r.IntN(len(faults))]
}

// randomRun is one randomized run's work: what each call looked up, by
// its tag, to weigh the fake's charges against what the budget kept.
type randomRun struct {
	mu       sync.Mutex
	requests map[string][][]netip.Addr // each tag's requests: the addresses of each, in the order read
	next     atomic.Int64              // the next address of a call's own
}

// own returns n addresses no other call looks up.
func (rr *randomRun) own(n int) []netip.Addr {
	first := int(rr.next.Add(int64(n))) - n
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = testAddr(1000 + first + i)
	}
	return out
}

func (rr *randomRun) record(tag string, requests ...[]netip.Addr) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.requests[tag] = append(rr.requests[tag], requests...)
}

// call makes one random call, on ctx, tagged for the ledger.
func (rr *randomRun) call(ctx context.Context, t *testing.T, r *rand.Rand, c *synthient.Client, id int) {
	switch r.IntN(4) {
	case 0: // an address of a small pool: identical lookups share requests
		ip := testAddr(r.IntN(8))
		tag := "ip:" + ip.String()
		rr.record(tag)
		_, _ = c.LookupIP(context.WithValue(ctx, ledgerTag{}, tag), ip)
	case 1:
		_, _ = c.LookupDomain(context.WithValue(ctx, ledgerTag{}, "domain"), fmt.Sprintf("d%d.example.org", id), nil)
	case 2:
		addrs := rr.own(1 + r.IntN(30))
		tag := fmt.Sprint("ips:", id)
		rr.record(tag, addrs)
		_, _ = c.LookupIPs(context.WithValue(ctx, ledgerTag{}, tag), addrs)
	default:
		addrs := rr.own(5 + r.IntN(40))
		tag := fmt.Sprint("bulk:", id)
		for chunk := range slices.Chunk(addrs, 10) {
			rr.record(tag, chunk)
		}
		_ = bulkErr(c.LookupIPsAll(context.WithValue(ctx, ledgerTag{}, tag), slices.Values(addrs), &synthient.BulkParams{BatchSize: 10, Concurrency: 2}))
	}
}

// charged returns what the fake charged for the requests of tag: each
// request's cost times the times its addresses were charged (the fake
// charges a batch whole, which the test checks).
func (rr *randomRun) charged(t *testing.T, tag string, times map[netip.Addr]int) int64 {
	if ip, ok := strings.CutPrefix(tag, "ip:"); ok {
		return int64(times[netip.MustParseAddr(ip)])
	}
	var sum int64
	for _, req := range rr.requests[tag] {
		n := times[req[0]]
		for _, ip := range req {
			assert.Equal(t, n, times[ip], "%s: the fake charged a batch in part", tag)
		}
		sum += int64(n) * int64((9*len(req)+9)/10)
	}
	return sum
}

// The randomized test: 8 goroutines make random billed calls (single
// lookups of a small pool, which share requests, batches and bulk runs),
// some cut short by their context, against a fake that fails one request
// in three in a random way, on a budget that runs out. Whatever happens,
// the fake's credits never exceed what the budget spent, nor that its
// credits; and for each call (or the calls that shared requests) the
// budget kept at least what the fake charged: nothing it took was given
// back.
func TestCreditBudgetRandomized(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		seed        uint64
		budget      int64
		fakeCredits int64
	}{
		{seed: 1, budget: 400, fakeCredits: synthienttest.DefaultCredits},
		{seed: 2, budget: 2000, fakeCredits: synthienttest.DefaultCredits},
		{seed: 3, budget: 2000, fakeCredits: 300}, // the fake runs out first: real 402s
	} {
		t.Run(fmt.Sprint("seed ", tc.seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(tc.seed, 0)) //nolint:gosec // a seeded test schedule, no secret
			l := &ledger{}
			bt := newBudgeted(t, tc.budget, []synthienttest.Option{synthienttest.WithCredits(tc.fakeCredits), synthienttest.WithLatency(time.Millisecond)},
				synthient.WithObserver(l))
			for _, route := range []string{synthienttest.RouteLookupIP, synthienttest.RouteLookupIPs, synthienttest.RouteLookupDomain} {
				for range 400 {
					bt.srv.Inject(route, 1, randomFault(r))
				}
			}
			rr := &randomRun{requests: map[string][][]netip.Addr{}}
			var wg sync.WaitGroup
			for g := range 8 {
				gr := rand.New(rand.NewPCG(tc.seed, uint64(g)+1)) //nolint:gosec // a seeded test schedule, no secret
				wg.Go(func() {
					for i := range 25 {
						ctx, cancel := context.WithCancel(callCtx(t))
						if gr.IntN(5) == 0 {
							time.AfterFunc(time.Duration(gr.IntN(3000))*time.Microsecond, cancel)
						}
						rr.call(ctx, t, gr, bt.c, g*1000+i)
						cancel()
					}
				})
			}
			wg.Wait()
			require.Eventually(t, l.settled, time.Minute, time.Millisecond, "every call's end reported")

			bal, fake := bt.balance(t), bt.fakeSpent()
			t.Logf("budget %d: spent %d, fake took %d", tc.budget, bal.Spent, fake)
			assert.LessOrEqual(t, fake, bal.Spent, "the fake took more than the budget counts")
			assert.LessOrEqual(t, bal.Spent, bal.Credits, "the budget spent more than it has")
			var observed int64
			for _, tag := range []string{"domain"} {
				observed += l.tag(tag).CreditsSpent
			}
			times := map[netip.Addr]int{}
			for _, ip := range bt.srv.ChargedIPs() {
				times[ip]++
			}
			tags := map[string]bool{}
			for tag := range rr.requests {
				tags[tag] = true
			}
			for tag := range tags {
				kept, charged := l.tag(tag).CreditsSpent, rr.charged(t, tag, times)
				assert.LessOrEqual(t, charged, kept, "%s: the fake charged %d, the budget kept %d", tag, charged, kept)
				observed += kept
			}
			assert.Equal(t, bal.Spent, observed, "the observer's credits spent add up to the budget's")
			var sum synthient.CallEnd
			for tag := range l.byTag {
				e := l.tag(tag)
				sum.CreditsReserved += e.CreditsReserved
				sum.CreditsRefunded += e.CreditsRefunded
				sum.CreditsRefused += e.CreditsRefused
			}
			t.Logf("reserved %d, refunded %d, refused %d", sum.CreditsReserved, sum.CreditsRefunded, sum.CreditsRefused)
		})
	}
}
