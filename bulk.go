package synthient

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"

	"github.com/synthient-go/synthient/internal/bulk"
	"github.com/synthient-go/synthient/retry"
)

// Defaults and bounds of BulkParams.
const (
	// DefaultBulkConcurrency is the requests a bulk lookup has in flight
	// at once when BulkParams.Concurrency is zero.
	DefaultBulkConcurrency = 4
	// MaxBulkConcurrency is the most requests a bulk lookup has in flight
	// at once.
	MaxBulkConcurrency = 64
)

// BulkParams are the options of LookupIPsAll. The zero value, like a nil
// *BulkParams, sends MaxBatchSize addresses per request, DefaultBulkConcurrency
// requests at once, and each distinct address once.
type BulkParams struct {
	// Concurrency is the most requests in flight at once, 1 to
	// MaxBulkConcurrency; zero means DefaultBulkConcurrency. The client's
	// rate-limit pacing spaces them out further when the team's limit is
	// reached.
	Concurrency int
	// BatchSize is the most addresses per request, 1 to MaxBatchSize; zero
	// means MaxBatchSize, the cheapest per address.
	BatchSize int
	// KeepDuplicates sends every occurrence of an address. By default an
	// address that occurred earlier in the input is not sent again: it is
	// answered from its first occurrence (see BulkResult.Duplicate). An
	// IPv4-mapped IPv6 address (::ffff:192.0.2.7) is the IPv4 address it
	// maps (RFC 4291 2.5.5.2): one occurrence of either is a repeat of the
	// other.
	KeepDuplicates bool
	// BeforeSend, when not nil, is called with the addresses of each
	// request before the request is sent, in the order the requests are
	// sent, on the goroutine that ranges over the results (between two
	// yields). It is for a record that must exist before an address can
	// have been charged, such as the journal that lets an interrupted run
	// resume without sending an address twice. It must not keep or modify
	// the slice. When it returns an error, that request is not sent and the
	// run stops as after a 402: its addresses, and every address not sent
	// yet, are NotSent with the error it returned.
	BeforeSend func(addrs []netip.Addr) error
}

// BulkOutcome says what became of one address of a bulk lookup, and so
// whether it is safe to send it again.
type BulkOutcome uint8

const (
	// LookedUp means the API answered; BulkResult.Lookup holds the result
	// (unless the address is a duplicate).
	LookedUp BulkOutcome = iota + 1
	// Invalid means the zero netip.Addr or an address with a zone, never sent.
	// Its error matches ErrInvalidArgument.
	Invalid
	// NotSent means the run stopped before the address's request left the
	// client (the context ended, the API's credits or the client's credit
	// budget ran out, the client was closed, a rate-limit hold would have
	// passed the deadline), or the request provably never reached the API.
	// Nothing was charged: it is safe to send again.
	NotSent
	// Unknown means the request was written and then failed (a network failure,
	// a 5xx, an answer without this address's result), so the API may
	// have done the work and charged for it (stop reason
	// may_have_been_processed). Sending it again blindly can charge twice.
	Unknown
	// Rejected means the API refused the request with an error that charged
	// nothing (402, 401, 403, 422, a 429 not waited out); the error is
	// the *APIError. It is safe to send again once the cause is fixed.
	Rejected
)

// String returns "looked_up", "invalid", "not_sent", "unknown" or
// "rejected".
func (o BulkOutcome) String() string {
	switch o {
	case LookedUp:
		return "looked_up"
	case Invalid:
		return "invalid"
	case NotSent:
		return "not_sent"
	case Unknown:
		return "unknown"
	case Rejected:
		return "rejected"
	}
	return "BulkOutcome(" + strconv.Itoa(int(o)) + ")"
}

// BulkResult is the outcome of one address of a bulk lookup.
type BulkResult struct {
	// Index is the address's position in the input, from 0.
	Index int64
	// IP is the address as read, also when the input spelled it as an
	// IPv4-mapped IPv6 address and the request sent its IPv4 form.
	IP netip.Addr
	// Outcome says what became of the address.
	Outcome BulkOutcome
	// Lookup is the API's result when Outcome is LookedUp and the address
	// is not a duplicate; nil otherwise. It points into the answer of the
	// address's request, which it keeps in memory while it is held.
	Lookup *IPLookup
	// Duplicate reports that the address occurred earlier in the input,
	// at FirstIndex (maybe in its other spelling, IPv4 or IPv4-mapped
	// IPv6), and was not sent again: it shares that occurrence's
	// Outcome and error, and the result yielded there. A duplicate is
	// never charged.
	Duplicate bool
	// FirstIndex is the index of the address's first occurrence; Index
	// when it is not a duplicate.
	FirstIndex int64
	// Cached reports that Lookup came from the client's cache (see
	// WithCache): nothing was sent for the address, Outcome is LookedUp and
	// Credits 0; Lookup.CachedAt says when the API gave the answer.
	Cached bool
	// Credits is set on one address of each request the API answered or
	// may have processed: what the API charges for that whole request,
	// ceil(0.9 n) for its n distinct addresses. It is on the request's
	// first address looked up (an answer that lacks some addresses was
	// charged all the same), else on its first address (Unknown). It is 0
	// on every other result, so that the sum over the LookedUp results is
	// the credits the run spent, and over the Unknown ones what it may
	// have spent as well.
	Credits int
}

// LookupIPsAll looks up every address of addrs and yields one result per
// address, in input order, with the address's error: nil when Outcome is
// LookedUp, else the reason for its outcome (see BulkOutcome). Use
// slices.Values for a slice.
//
// addrs is read lazily, as requests are sent: any number of addresses can
// be looked up in memory bounded by the batch size and concurrency (and a
// set of the distinct addresses, for duplicates). Valid addresses are
// gathered into requests of p.BatchSize (LookupIPs, billed: never sent
// again after a failure that may have reached the API), at most
// p.Concurrency at once. p may be nil.
//
// Every address read gets exactly one result. After an error that would
// fail every later request as well (402, 401, 403, a closed client, a
// request the client's credit budget refused or failed to reserve; see
// WithCreditBudget) nothing more is sent, not even a request that was about to leave when
// the error came back: the rest of the input is still read and yielded as
// NotSent with that error. When ctx ends, nothing more is sent or read;
// the addresses already read are yielded, as NotSent, or with the outcome
// of their request if it was in flight. Breaking out of the loop stops
// sending and reading at once; LookupIPsAll returns once the requests in
// flight are answered, which it does not cancel.
//
// An invalid p (a Concurrency or BatchSize out of range) or a nil addrs
// makes the sequence yield a single BulkResult with Index and FirstIndex
// -1, no address and Outcome Invalid, with an error matching
// ErrInvalidArgument; nothing is read or sent.
//
// Memory: the input is not held, but by default the set of the distinct
// addresses seen is, to answer repeats: about 40 bytes per distinct IPv4
// address and 60 per IPv6 address (Go maps included), some 350 MiB for 9
// million. KeepDuplicates keeps no set, and the run's memory is then flat
// whatever the input's length.
//
// Results are yielded as soon as they are settled and every earlier
// address was yielded: a request's answer is taken in whenever the run
// gets to it (before reading each address, and while it waits), not only
// when Concurrency requests are in flight. addrs is read on the caller's
// goroutine, between yields, so while it blocks (a pipe waiting for its
// next line) nothing is yielded: the answers that came back meanwhile are
// taken in, and their results yielded, as soon as it gives its next
// address or ends, before anything more is sent. A batch leaves when it is
// full or addrs ends. An addrs that can block should end when ctx does.
//
// With a cache (WithCache), each distinct valid address is looked for
// there first, BatchSize addresses at a time (one round trip to a
// BatchCache): one found is yielded LookedUp and Cached, with Credits 0,
// and is not sent; the requests are formed of the others only, still
// BatchSize addresses each. After a refusal (402, 401, 403), an address
// found in the cache is still yielded from it; after ctx ended, nothing
// more is looked for. The answers the requests get are stored in the
// cache. PlanLookupIPsAll knows nothing of the cache.
//
// Each range over the sequence reads addrs afresh. The client may be used
// concurrently meanwhile.
func (c *Client) LookupIPsAll(ctx context.Context, addrs iter.Seq[netip.Addr], p *BulkParams) iter.Seq2[BulkResult, error] {
	return func(yield func(BulkResult, error) bool) {
		cfg, err := bulkSettings(p)
		if err == nil && addrs == nil {
			err = invalid("LookupIPsAll: nil address sequence")
		}
		if err != nil {
			yield(BulkResult{Index: -1, FirstIndex: -1, Outcome: Invalid}, err)
			return
		}
		r := newBulkRun(ctx, c, cfg, yield)
		defer r.wait()
		r.run(addrs)
	}
}

// bulkSettings returns p with its defaults, or an error matching
// ErrInvalidArgument.
func bulkSettings(p *BulkParams) (BulkParams, error) {
	var cfg BulkParams
	if p != nil {
		cfg = *p
	}
	switch {
	case cfg.Concurrency < 0 || cfg.Concurrency > MaxBulkConcurrency:
		return cfg, invalid("LookupIPsAll: concurrency %d is outside 1 to %d", cfg.Concurrency, MaxBulkConcurrency)
	case cfg.BatchSize < 0 || cfg.BatchSize > MaxBatchSize:
		return cfg, invalid("LookupIPsAll: batch size %d is outside 1 to %d", cfg.BatchSize, MaxBatchSize)
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultBulkConcurrency
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = MaxBatchSize
	}
	return cfg, nil
}

// BulkPlan is what a bulk lookup of some input would send, from
// PlanLookupIPsAll.
type BulkPlan struct {
	Addresses  int64 // addresses read
	Invalid    int64 // of which invalid, never sent
	Duplicates int64 // of which repeats of an earlier address, not sent again
	Distinct   int64 // valid addresses sent: Addresses - Invalid - Duplicates
	Requests   int64 // LookupIPs requests
	Credits    int64 // what the requests cost, ceil(0.9 n) each for n distinct addresses
}

// PlanLookupIPsAll reads addrs as LookupIPsAll with p would, and returns
// what it would send and cost, without sending anything. The figures are
// exact for a run that is not stopped, unless the input repeats a few
// addresses so often that the run sends a batch before it is full (see
// LookupIPsAll). It returns an error matching ErrInvalidArgument for an
// invalid p or a nil addrs.
func PlanLookupIPsAll(addrs iter.Seq[netip.Addr], p *BulkParams) (*BulkPlan, error) {
	cfg, err := bulkSettings(p)
	if err == nil && addrs == nil {
		err = invalid("PlanLookupIPsAll: nil address sequence")
	}
	if err != nil {
		return nil, err
	}
	var plan BulkPlan
	seen := bulk.New(!cfg.KeepDuplicates)
	batch := make(map[netip.Addr]struct{}, cfg.BatchSize) // distinct addresses of the batch being gathered, unmapped
	size := 0
	for ip := range addrs {
		plan.Addresses++
		switch {
		case checkAddr("", ip) != nil:
			plan.Invalid++
			continue
		case seen.Repeats(ip, plan.Addresses):
			plan.Duplicates++
			continue
		}
		plan.Distinct++
		batch[ip.Unmap()] = struct{}{}
		if size++; size == cfg.BatchSize {
			plan.add(len(batch))
			clear(batch)
			size = 0
		}
	}
	if size > 0 {
		plan.add(len(batch))
	}
	return &plan, nil
}

// add counts a request of n distinct addresses.
func (p *BulkPlan) add(n int) {
	p.Requests++
	p.Credits += int64(bulk.Cost(n))
}

// How one bulk lookup runs.
//
// run ranges over the input on the caller's goroutine. Each address read
// becomes an entry at the tail of the queue, which holds, in input order,
// the addresses read and not yielded yet. A valid address seen for the
// first time joins the batch being gathered; a full batch is sent on a
// goroutine of its own (send), and comes back on finished with its
// answer. Before each address is read, the batches that came back are
// taken in without waiting (collect), so that their results are yielded
// and a refusal stops the sending before anything more is sent. Entries
// are yielded from the head of the queue as soon as they are settled: an
// invalid address or a duplicate at once (a duplicate's first occurrence
// was yielded before it), a batched one when its batch came back. While
// Concurrency batches are in flight, or the queue is full, run waits for
// one to come back (receive) before reading on. So memory holds at most
// the queue, the batches in flight, and the set of distinct addresses.
//
// A refusal that every later request would get too (stopsRun) is also
// recorded by the goroutine that got it, as its answer arrives (refused):
// a batch whose goroutine finds one recorded is settled as not sent
// instead of sending, so that no request starts after a refusal was
// answered, even when run has not taken the refused batch in yet.

// bulkBatch is one request of a bulk lookup.
type bulkBatch struct {
	addrs []netip.Addr
	// Set when the batch is settled: sent and answered, or not sent.
	settled bool
	results []IPLookup          // aligned with addrs, less the missing ones
	missing map[netip.Addr]bool // addresses the answer lacked
	credit  int                 // the place in addrs of the address that carries the credits
	outcome BulkOutcome         // of the addresses that have no result
	err     error               // the request's error
	next    int                 // the next result to hand out, in order
	id      uint32              // err's number in the run's bulk.Errors; 0 until numbered
	repeats bool                // addrs may repeat an address (KeepDuplicates)
}

// entryKind says how a queued address is settled.
type entryKind uint8

const (
	entryBatched   entryKind = iota // settled when its batch is
	entryInvalid                    // settled at once
	entryDuplicate                  // settled by its first occurrence
	entryStopped                    // read after the run stopped sending
	entryProbing                    // waiting to be looked for in the cache
	entryCached                     // settled from the cache
)

// bulkEntry is one address read and not yielded yet.
type bulkEntry struct {
	index  int64
	ip     netip.Addr
	kind   entryKind
	batch  *bulkBatch // entryBatched: its batch
	pos    int        // entryBatched: its place in the batch's addrs
	lookup *IPLookup  // entryCached: the cached answer
}

// bulkRun is the state of one range over LookupIPsAll.
type bulkRun struct {
	ctx   context.Context
	c     *Client
	cfg   BulkParams
	yield func(BulkResult, error) bool

	read     int64       // addresses read
	queue    []bulkEntry // read, not yielded; queue[head:] is live
	head     int         // the first live entry
	cur      *bulkBatch  // the batch being gathered
	seen     bulk.Seen   // first occurrences, and their outcome once yielded
	inflight int         // batches sent and not received
	finished chan *bulkBatch
	errs     bulk.Errors // the errors of settled addresses, for their duplicates
	stopErr  error       // set once nothing more is to be sent
	stopID   uint32      // stopErr's place in errs
	broken   bool        // the caller broke out of the loop
	refused  refusal     // set by a batch's goroutine (see How one bulk lookup runs)

	// With a cache: the addresses waiting to be looked for in it
	// (entryProbing), and their indices.
	probe      []netip.Addr
	probeIndex []int64
}

// refusal holds the first error of a run's requests that every later
// request would get too (stopsRun), recorded by the goroutine that got it.
// It is safe for concurrent use.
type refusal struct{ p atomic.Pointer[error] }

// record keeps err if it stops the run and none was kept before.
func (f *refusal) record(err error) {
	if stopsRun(err) {
		f.p.CompareAndSwap(nil, &err)
	}
}

// err returns the refusal kept; nil for none.
func (f *refusal) err() error {
	if p := f.p.Load(); p != nil {
		return *p
	}
	return nil
}

func newBulkRun(ctx context.Context, c *Client, cfg BulkParams, yield func(BulkResult, error) bool) *bulkRun {
	return &bulkRun{
		ctx:      ctx,
		c:        c,
		cfg:      cfg,
		yield:    yield,
		cur:      &bulkBatch{repeats: cfg.KeepDuplicates},
		seen:     bulk.New(!cfg.KeepDuplicates),
		finished: make(chan *bulkBatch, cfg.Concurrency), // a sender never blocks
	}
}

// maxQueue bounds the addresses read and not yielded: beyond it the batch
// being gathered is sent early, or run waits for one in flight.
func (r *bulkRun) maxQueue() int {
	return 2 * (r.cfg.Concurrency + 1) * r.cfg.BatchSize
}

// run reads the input, sends its batches and yields every address read, in
// order, until the input ends, ctx ends or the caller breaks out.
func (r *bulkRun) run(addrs iter.Seq[netip.Addr]) {
	for ip := range addrs {
		r.add(ip)
		if !r.more() {
			break
		}
	}
	if r.broken {
		return
	}
	if r.more() { // ctx may have ended addrs
		r.lookInCache()
		if len(r.cur.addrs) > 0 && !r.broken {
			r.send(r.cur)
		}
	}
	for r.inflight > 0 && !r.broken {
		r.receive()
		r.flush()
	}
	r.flush()
}

// more reports whether to read on: false once the caller broke out or ctx
// ended (which stops sending too).
func (r *bulkRun) more() bool {
	if r.broken {
		return false
	}
	if r.ctx.Err() != nil {
		r.stop(ctxStop(r.ctx))
		r.abandonProbe()
		return false
	}
	return true
}

// add takes in the batches that came back, queues the address read at the
// next index, sends the batch it fills, and yields what is settled.
func (r *bulkRun) add(ip netip.Addr) {
	r.collect()
	e := bulkEntry{index: r.read, ip: ip}
	r.read++
	switch {
	case checkAddr("LookupIPsAll", ip) != nil:
		e.kind = entryInvalid
	case r.seen.Repeats(ip, e.index):
		e.kind = entryDuplicate
	case r.c.cache != nil:
		e.kind = entryProbing
		r.probe, r.probeIndex = append(r.probe, ip), append(r.probeIndex, e.index)
	case r.stopErr != nil:
		e.kind = entryStopped
	default:
		e.kind, e.batch, e.pos = entryBatched, r.cur, len(r.cur.addrs)
		r.cur.addrs = append(r.cur.addrs, ip)
	}
	r.queue = append(r.queue, e)
	if len(r.probe) == r.cfg.BatchSize {
		r.lookInCache()
	}
	if len(r.cur.addrs) == r.cfg.BatchSize {
		r.send(r.cur)
	}
	r.bound()
	r.flush()
}

// lookInCache looks for the addresses waiting for it in the cache: one
// found is settled from it, one not found joins the batch being gathered
// (which is sent when full), or after a stop is not sent.
func (r *bulkRun) lookInCache() {
	if len(r.probe) == 0 {
		return
	}
	found := r.c.bulkCached(r.ctx, r.probe)
	for k, index := range r.probeIndex {
		if r.broken {
			return // nothing more is sent, or yielded
		}
		e := r.entry(index)
		switch {
		case found != nil && found[k] != nil:
			e.kind, e.lookup = entryCached, found[k]
		case r.stopErr != nil:
			e.kind = entryStopped
		default:
			e.kind, e.batch, e.pos = entryBatched, r.cur, len(r.cur.addrs)
			r.cur.addrs = append(r.cur.addrs, r.probe[k])
			if len(r.cur.addrs) == r.cfg.BatchSize {
				r.send(r.cur)
			}
		}
	}
	r.probe, r.probeIndex = r.probe[:0], r.probeIndex[:0]
}

// abandonProbe settles the addresses waiting for the cache as not sent,
// after the run stopped.
func (r *bulkRun) abandonProbe() {
	for _, index := range r.probeIndex {
		r.entry(index).kind = entryStopped
	}
	r.probe, r.probeIndex = r.probe[:0], r.probeIndex[:0]
}

// entry returns the queued entry of the address read at index, which is
// not yielded yet: the queue holds the addresses from its head on, in
// input order.
func (r *bulkRun) entry(index int64) *bulkEntry {
	return &r.queue[r.head+int(index-r.queue[r.head].index)]
}

// bound keeps the queue within maxQueue: it waits for a batch in flight,
// else sends the batch being gathered before it is full (so only an input
// that repeats a few addresses very often makes more requests than full
// batches would).
func (r *bulkRun) bound() {
	for len(r.queue)-r.head >= r.maxQueue() && !r.broken {
		switch {
		case r.inflight > 0:
			r.receive()
		case len(r.probe) > 0:
			r.lookInCache()
		case len(r.cur.addrs) > 0:
			r.send(r.cur)
		default:
			return // everything queued is settled: flush yields it
		}
		r.flush()
	}
}

// newBatch returns an empty batch to gather.
func (r *bulkRun) newBatch() *bulkBatch {
	return &bulkBatch{repeats: r.cfg.KeepDuplicates}
}

// send sends b, once fewer than Concurrency batches are in flight, and
// starts gathering the next. After a stop, b is settled as not sent
// instead.
func (r *bulkRun) send(b *bulkBatch) {
	r.cur = r.newBatch()
	for r.inflight == r.cfg.Concurrency {
		r.receive()
		r.flush()
	}
	if r.broken {
		return // nothing is sent after the caller broke out
	}
	if r.stopErr != nil {
		b.settle(NotSent, r.stopErr)
		return
	}
	if hook := r.cfg.BeforeSend; hook != nil {
		if err := hook(b.addrs); err != nil {
			b.settle(NotSent, err)
			r.stop(err)
			return
		}
	}
	r.inflight++
	go func() {
		b.lookUp(r.ctx, r.c, &r.refused)
		r.finished <- b
	}()
}

// collect takes in every batch that came back, without waiting.
func (r *bulkRun) collect() {
	for r.inflight > 0 {
		select {
		case b := <-r.finished:
			r.took(b)
		default:
			return
		}
	}
}

// receive waits for a batch in flight to come back, and takes it in.
func (r *bulkRun) receive() {
	r.took(<-r.finished)
}

// took takes in b, which came back, and stops the run after an error that
// every later request would get too.
func (r *bulkRun) took(b *bulkBatch) {
	r.inflight--
	b.settled = true
	switch {
	case r.stopErr != nil:
	case r.ctx.Err() != nil:
		r.stop(ctxStop(r.ctx))
	case stopsRun(b.err):
		r.stop(b.err)
	}
}

// ctxStop is the error of the addresses not sent because ctx ended.
func ctxStop(ctx context.Context) error {
	return stopError(meta{op: "LookupIPsAll", reason: retry.ContextDone}, ctx.Err(), nil)
}

// stop makes err the error of every address not sent yet.
func (r *bulkRun) stop(err error) {
	if r.stopErr == nil {
		r.stopErr, r.stopID = err, r.errs.Add(err)
	}
	if len(r.cur.addrs) > 0 {
		r.cur.settle(NotSent, r.stopErr)
		r.cur = r.newBatch()
	}
}

// flush yields the settled entries at the head of the queue, in order,
// until one is not settled or the caller breaks out.
func (r *bulkRun) flush() {
	for r.head < len(r.queue) && !r.broken {
		e := &r.queue[r.head]
		if e.kind == entryBatched && !e.batch.settled || e.kind == entryProbing {
			break
		}
		res, err := r.result(e)
		r.queue[r.head] = bulkEntry{} // drop its batch
		r.head++
		if !r.yield(res, err) {
			r.broken = true
		}
	}
	r.compact()
}

// compact moves the live entries to the front of the queue once most of
// it is spent, so that it does not grow with the input.
func (r *bulkRun) compact() {
	if r.head < 1024 || r.head < len(r.queue)/2 {
		return
	}
	n := copy(r.queue, r.queue[r.head:])
	clear(r.queue[n:])
	r.queue, r.head = r.queue[:n], 0
}

// result returns the result of the settled entry e, and records a first
// occurrence's outcome for its duplicates.
func (r *bulkRun) result(e *bulkEntry) (BulkResult, error) {
	res := BulkResult{Index: e.index, IP: e.ip, FirstIndex: e.index}
	var err error
	var errID uint32
	switch e.kind {
	case entryInvalid:
		res.Outcome = Invalid
		return res, fmt.Errorf("%w (index %d)", checkAddr("LookupIPsAll", e.ip), e.index)
	case entryDuplicate:
		var o uint8
		var id uint32
		res.Duplicate = true
		res.FirstIndex, o, id = r.seen.First(e.ip)
		res.Outcome = BulkOutcome(o)
		return res, r.errs.Get(id)
	case entryStopped:
		res.Outcome, err, errID = NotSent, r.stopErr, r.stopID
	case entryCached:
		res.Outcome, res.Lookup, res.Cached = LookedUp, e.lookup, true
	default:
		res.Outcome, res.Lookup, err = e.batch.take(e.ip)
		if err != nil {
			errID = e.batch.errID(&r.errs)
		}
		if e.pos == e.batch.credit {
			res.Credits = e.batch.charged()
		}
	}
	r.seen.Settle(e.ip, uint8(res.Outcome), errID)
	return res, err
}

// wait waits for the batches still in flight after the caller broke out
// of the loop (or a panic unwound it); their answers are dropped.
func (r *bulkRun) wait() {
	for ; r.inflight > 0; r.inflight-- {
		<-r.finished
	}
}

// lookUp sends the batch and keeps its answer, unless a request of the
// run was refused as every later one would be (refused): then the batch
// is not sent, and has that refusal's error.
func (b *bulkBatch) lookUp(ctx context.Context, c *Client, refused *refusal) {
	if err := refused.err(); err != nil {
		b.outcome, b.err = NotSent, err
		return
	}
	results, err := c.lookupIPs(ctx, b.addrs, false) // the run looked in the cache
	refused.record(err)
	b.err = err
	if err == nil {
		b.results, b.outcome = results, LookedUp
		return
	}
	var de *DecodeError
	if errors.As(err, &de) && len(de.Missing) > 0 {
		b.results = results
		b.missing = make(map[netip.Addr]bool, len(de.Missing))
		for _, ip := range de.Missing {
			b.missing[ip] = true
		}
		b.credit = creditPos(b.addrs, b.missing)
	}
	b.outcome = failedOutcome(err)
}

// settle settles a batch that is not sent.
func (b *bulkBatch) settle(o BulkOutcome, err error) {
	b.outcome, b.err, b.settled = o, err, true
}

// take returns the outcome of the batch's next address, ip, with its
// result or error.
func (b *bulkBatch) take(ip netip.Addr) (BulkOutcome, *IPLookup, error) {
	if b.err == nil || b.missing != nil && !b.missing[ip] {
		r := &b.results[b.next]
		b.next++
		return LookedUp, r, nil
	}
	return b.outcome, nil, b.err
}

// charged returns the credits the batch cost, or may have cost: ceil(0.9
// n) for its n distinct addresses when the API answered it or may have
// processed it, else 0.
func (b *bulkBatch) charged() int {
	if b.err != nil && b.outcome != Unknown && b.missing == nil {
		return 0
	}
	n := len(b.addrs)
	if b.repeats {
		n = bulk.Distinct(b.addrs)
	}
	return bulk.Cost(n)
}

// creditPos returns the place in addrs of the address that carries the
// credits of a batch whose answer lacked missing: the first looked up,
// else the first.
func creditPos(addrs []netip.Addr, missing map[netip.Addr]bool) int {
	for i, ip := range addrs {
		if !missing[ip] {
			return i
		}
	}
	return 0
}

// errID returns the number of the batch's error in t, adding it once.
func (b *bulkBatch) errID(t *bulk.Errors) uint32 {
	if b.id == 0 {
		b.id = t.Add(b.err)
	}
	return b.id
}

// failedOutcome returns the outcome of the addresses of a request that
// failed with err: Rejected when the API refused it before doing any
// work, NotSent when it never reached the API, Unknown otherwise.
func failedOutcome(err error) BulkOutcome {
	if budgetStopped(err) {
		return NotSent // the budget did not let it go: a first attempt, or a retry after a 429
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return Unknown // answered 200: done and charged, without a usable result
	}
	var ae *APIError
	if errors.As(err, &ae) {
		if ae.Status >= 500 {
			return Unknown
		}
		return Rejected
	}
	var ce *ConnectionError
	if errors.As(err, &ce) {
		if ce.NotSent {
			return NotSent
		}
		return Unknown
	}
	var e *Error
	if errors.As(err, &e) && e.Attempts == 0 {
		return NotSent // refused before sending: closed client, ended ctx
	}
	return Unknown
}

// stopsRun reports whether err, the error of a request, ends the sending:
// the client is closed, the credit budget refused the request or failed,
// or the API refused the key or its credits, as it would every later
// request.
func stopsRun(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrClosed) || budgetStopped(err) {
		return true
	}
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusPaymentRequired, http.StatusUnauthorized, http.StatusForbidden:
			return true
		}
	}
	return false
}

// bulkCached looks for addrs in the cache, for a bulk lookup: a call of its
// own for the observer, named LookupIPsAll, that sends nothing. It returns
// the answers found, in order (nil for a miss), or nil.
func (c *Client) bulkCached(ctx context.Context, addrs []netip.Addr) []*IPLookup {
	ctx, call := c.startCall(ctx, "LookupIPsAll", retry.Billed)
	var err error
	defer call.end(&err)
	found, hits, cerr := c.cache.ips(ctx, "LookupIPsAll", addrs)
	call.cacheFailed(cerr)
	call.cacheHit(hits, bulk.Cost(hits))
	return found
}
