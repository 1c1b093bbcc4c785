package feedindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/exports"
)

// A Follower keeps an index fresh: it applies each feed's stream events as
// they arrive, and adds each feed's newest hourly export once it is
// listed. A stream that ends (the API closes streams after about 30
// minutes; networks fail) is opened again as synthient.ReconnectDelay
// says; what it sent meanwhile is lost, as streams have no replay, so the
// time from the last event before to the first event after is a Gap of
// the feed, and the follower adds the exports that cover it: the hourly
// export of each hour it spans, or the daily one when the hourly one is
// gone. A gap stays open, in Status, until they are added; one that no listed export covers stays open. The time
// before the follower started, from the last row the index holds of the
// feed (or, for an empty index, from the start), is a gap too.
//
// Lookups never wait for the follower: events are merged into the index
// every flush interval (WithFlushInterval), and an export is read beside
// the index and then published whole. The follower spends no credit:
// streams, listings and downloads are free.
type Follower struct {
	c      *synthient.Client
	ix     *Index
	cfg    followConfig
	mu     sync.Mutex
	feeds  []*feedState
	loaded map[string]bool // "feed/id" of the exports added
	// hookMu makes the calls of the event function one at a time; it is
	// never held with mu, so that the function may call Status.
	hookMu sync.Mutex
}

// feedState is a follower's state of one feed; its fields are guarded by
// the Follower's mu.
type feedState struct {
	slot      int
	status    FeedStatus
	pending   []rawRow
	lastEvent int64 // Unix seconds of the last event; 0 before the first
}

// FeedStatus is the state of one feed of a follower.
type FeedStatus struct {
	Feed synthient.Feed
	// Connected reports an open stream.
	Connected bool
	// Events counts the events received; Reconnects the streams opened
	// after the first.
	Events, Reconnects int64
	// LastEvent is the time of the last event (the zero Time before the
	// first).
	LastEvent time.Time
	// Gaps are the feed's open gaps, oldest first.
	Gaps []Gap
	// Exports are the ids of the exports the follower added, oldest
	// first.
	Exports []string
	// Err is the last error of the feed's stream or exports, nil if none.
	Err error
}

// Gap is a time a feed's stream may have sent events the follower did
// not see: from the last event before the stream ended (or from the last
// row the index held, when the follower started) to the first event
// after it was opened again (the zero Time while it is not).
type Gap struct {
	From, To time.Time
}

// FollowEvent tells what a follower did, for WithFollowEvents.
type FollowEvent struct {
	Kind FollowEventKind
	Feed synthient.Feed
	// Export is the id of the export of ExportAdded.
	Export string
	// Added is what ExportAdded and EventsAdded read.
	Added Added
	// Gap is the gap of GapOpened and GapClosed.
	Gap Gap
	// Err is the error of StreamEnded (nil for a clean close) and Failed.
	Err error
}

// FollowEventKind is the kind of a FollowEvent.
type FollowEventKind int

// The kinds of FollowEvent.
const (
	// StreamOpened: a stream delivered its first event.
	StreamOpened FollowEventKind = iota + 1
	// StreamEnded: a stream ended; Err says why.
	StreamEnded
	// GapOpened and GapClosed: a gap opened, or closed as exports covering
	// it were added.
	GapOpened
	GapClosed
	// ExportAdded: an export was added to the index.
	ExportAdded
	// EventsAdded: a flush merged stream events into the index.
	EventsAdded
	// Failed: listing or adding an export, or merging events, failed; the
	// follower tries again at the next poll.
	Failed
)

func (k FollowEventKind) String() string {
	switch k {
	case StreamOpened:
		return "stream opened"
	case StreamEnded:
		return "stream ended"
	case GapOpened:
		return "gap opened"
	case GapClosed:
		return "gap closed"
	case ExportAdded:
		return "export added"
	case EventsAdded:
		return "events added"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("FollowEventKind(%d)", int(k))
}

// A FollowOption configures NewFollower.
type FollowOption func(*followConfig) error

type followConfig struct {
	feeds     []synthient.Feed
	poll      time.Duration
	flush     time.Duration
	dir       string
	onEvent   func(FollowEvent)
	reconnect func(error) (time.Duration, bool)
}

// WithFollowFeeds sets the feeds to follow (default: all of Feeds).
func WithFollowFeeds(feeds ...synthient.Feed) FollowOption {
	return func(c *followConfig) error {
		if len(feeds) == 0 {
			return errors.New("feedindex: WithFollowFeeds() names no feed")
		}
		for _, f := range feeds {
			if _, ok := slotOf(f); !ok {
				return fmt.Errorf("feedindex: WithFollowFeeds: feed %q names no addresses", f)
			}
		}
		c.feeds = slices.Compact(slices.Clone(feeds))
		return nil
	}
}

// WithPollInterval sets how often the exports are listed (default 5
// minutes; at least 1 ms).
func WithPollInterval(d time.Duration) FollowOption {
	return interval("WithPollInterval", d, func(c *followConfig) { c.poll = d })
}

// WithFlushInterval sets how often stream events are merged into the
// index (default 1 second; at least 1 ms): a lookup sees an event at
// most this late.
func WithFlushInterval(d time.Duration) FollowOption {
	return interval("WithFlushInterval", d, func(c *followConfig) { c.flush = d })
}

// interval returns the option name(d), which set sets: an error for a d
// below 1 ms.
func interval(name string, d time.Duration, set func(*followConfig)) FollowOption {
	return func(c *followConfig) error {
		if d < time.Millisecond {
			return fmt.Errorf("feedindex: %s(%v): below 1ms", name, d)
		}
		set(c)
		return nil
	}
}

// WithDownloadDir sets the directory exports are downloaded to, each
// removed once added (default: os.TempDir()).
func WithDownloadDir(dir string) FollowOption {
	return func(c *followConfig) error {
		if dir == "" {
			return errors.New("feedindex: WithDownloadDir(\"\")")
		}
		c.dir = dir
		return nil
	}
}

// WithFollowEvents sets a function called with each FollowEvent, from
// the follower's goroutines, one call at a time. It may call Status; a
// slow one holds the goroutine that reports (a stream, the poll or the
// flush) up.
func WithFollowEvents(fn func(FollowEvent)) FollowOption {
	return func(c *followConfig) error {
		if fn == nil {
			return errors.New("feedindex: WithFollowEvents(nil)")
		}
		c.onEvent = fn
		return nil
	}
}

// WithReconnectDelay sets how long to wait before opening a stream again
// after it ended with err (nil for a clean close), and whether to open it
// at all (default synthient.ReconnectDelay: at once after a clean close,
// max(Retry-After, 2s) after other errors, never after a 401 or 403).
func WithReconnectDelay(fn func(err error) (time.Duration, bool)) FollowOption {
	return func(c *followConfig) error {
		if fn == nil {
			return errors.New("feedindex: WithReconnectDelay(nil)")
		}
		c.reconnect = fn
		return nil
	}
}

// NewFollower returns a follower that keeps ix fresh with c's streams
// and exports; Run starts it. A nil client or index, or an invalid
// option, is an error matching synthient.ErrInvalidArgument.
func NewFollower(c *synthient.Client, ix *Index, opts ...FollowOption) (*Follower, error) {
	if c == nil || ix == nil {
		return nil, fmt.Errorf("%w: feedindex: NewFollower needs a client and an index", synthient.ErrInvalidArgument)
	}
	cfg := followConfig{feeds: slices.Clone(Feeds), poll: 5 * time.Minute, flush: time.Second, dir: os.TempDir(),
		onEvent: func(FollowEvent) {}, reconnect: synthient.ReconnectDelay}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: feedindex: a nil FollowOption", synthient.ErrInvalidArgument)
		}
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("%w: %w", synthient.ErrInvalidArgument, err)
		}
	}
	f := &Follower{c: c, ix: ix, cfg: cfg, loaded: map[string]bool{}}
	for _, feed := range cfg.feeds {
		slot, _ := slotOf(feed)
		f.feeds = append(f.feeds, &feedState{slot: slot, status: FeedStatus{Feed: feed}})
	}
	return f, nil
}

// Status returns the state of each feed followed, in the order of
// WithFollowFeeds.
func (f *Follower) Status() []FeedStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FeedStatus, len(f.feeds))
	for i, fs := range f.feeds {
		out[i] = fs.status
		out[i].Gaps = slices.Clone(fs.status.Gaps)
		out[i].Exports = slices.Clone(fs.status.Exports)
	}
	return out
}

// Run follows the feeds until ctx ends, and returns ctx's error then, or
// until a stream may not be opened again (a 401 or 403, see
// WithReconnectDelay), and returns that stream's error. The events
// received are merged into the index before Run returns. Run may be
// called once.
func (f *Follower) Run(ctx context.Context) error {
	s := f.ix.cur.Load()
	if s == nil {
		return ErrClosed
	}
	start := time.Unix(f.ix.now(), 0).UTC()
	f.mu.Lock()
	for _, fs := range f.feeds {
		m := s.meta.Feeds[fs.slot]
		for _, id := range m.Exports {
			f.loaded[string(fs.status.Feed)+"/"+id] = true
		}
		from := start
		if m.Updated > 0 {
			from = time.Unix(m.Updated, 0).UTC()
		}
		fs.status.Gaps = []Gap{{From: from}}
	}
	f.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, fs := range f.feeds {
		wg.Go(func() {
			if err := f.stream(ctx, fs); err != nil {
				cancel(err)
			}
		})
	}
	wg.Go(func() { f.poll(ctx) })
	f.flushLoop(ctx)
	wg.Wait()
	f.flush()
	return context.Cause(ctx)
}

// emit calls the event function with evs, in order.
func (f *Follower) emit(evs ...FollowEvent) {
	f.hookMu.Lock()
	defer f.hookMu.Unlock()
	for _, ev := range evs {
		f.cfg.onEvent(ev)
	}
}

// flushLoop merges the pending events every flush interval until ctx
// ends.
func (f *Follower) flushLoop(ctx context.Context) {
	t := time.NewTicker(f.cfg.flush)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.flush()
		}
	}
}

// flush merges each feed's pending events into the index.
func (f *Follower) flush() {
	for _, fs := range f.feeds {
		f.mu.Lock()
		rows := fs.pending
		fs.pending = nil
		f.mu.Unlock()
		if len(rows) == 0 {
			continue
		}
		a, err := f.ix.addEvents(fs.slot, rows)
		if err != nil {
			f.fail(fs, err)
			continue
		}
		f.emit(FollowEvent{Kind: EventsAdded, Feed: fs.status.Feed, Added: a})
	}
}

// fail records err as the last error of fs and reports it.
func (f *Follower) fail(fs *feedState, err error) {
	f.mu.Lock()
	fs.status.Err = err
	f.mu.Unlock()
	f.emit(FollowEvent{Kind: Failed, Feed: fs.status.Feed, Err: err})
}

// stream reads fs's stream, opening it again as the reconnect delay says,
// until ctx ends (nil) or the stream may not be opened again (its
// error).
func (f *Follower) stream(ctx context.Context, fs *feedState) error {
	for first := true; ; first = false {
		if !first {
			f.mu.Lock()
			fs.status.Reconnects++
			f.mu.Unlock()
		}
		err := f.readStream(ctx, fs)
		if ctx.Err() != nil {
			return nil //nolint:nilerr // ctx ended the stream: Run returns ctx's cause
		}
		f.ended(fs, err)
		wait, ok := f.cfg.reconnect(err)
		if !ok {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// readStream reads one stream of fs until it ends, and returns its error
// (nil for a clean close).
func (f *Follower) readStream(ctx context.Context, fs *feedState) error {
	switch fs.slot {
	case slotProxies:
		return readEvents(f, fs, f.c.StreamProxies(ctx), proxyRow)
	case slotJA4T:
		return readEvents(f, fs, f.c.StreamJA4T(ctx), ja4tRow)
	}
	return readEvents(f, fs, f.c.StreamAnonymizers(ctx), anonymizerRow)
}

func readEvents[E any](f *Follower, fs *feedState, events func(func(E, error) bool), row func(E) rawRow) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		f.received(fs, row(ev))
	}
	return nil
}

// received records an event of fs: the first after the stream opened
// ends the feed's open gap.
func (f *Follower) received(fs *feedState, r rawRow) {
	if evs := f.receive(fs, r); len(evs) > 0 {
		f.emit(evs...)
	}
}

// receive records r, and returns the events to report.
func (f *Follower) receive(fs *feedState, r rawRow) []FollowEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	fs.pending = append(fs.pending, r)
	fs.status.Events++
	opened := !fs.status.Connected
	fs.status.Connected = true
	if r.ts > fs.lastEvent {
		fs.lastEvent = r.ts
		fs.status.LastEvent = time.Unix(r.ts, 0).UTC()
	}
	if !opened {
		return nil
	}
	evs := []FollowEvent{{Kind: StreamOpened, Feed: fs.status.Feed}}
	if n := len(fs.status.Gaps); n > 0 && fs.status.Gaps[n-1].To.IsZero() {
		fs.status.Gaps[n-1].To = time.Unix(max(r.ts, fs.status.Gaps[n-1].From.Unix()), 0).UTC()
		evs = append(evs, FollowEvent{Kind: GapOpened, Feed: fs.status.Feed, Gap: fs.status.Gaps[n-1]})
	}
	return evs
}

// ended records the end of fs's stream: a gap opens from its last event
// (or, when it sent none, from where the previous gap began).
func (f *Follower) ended(fs *feedState, err error) {
	f.emit(FollowEvent{Kind: StreamEnded, Feed: fs.status.Feed, Err: err})
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		fs.status.Err = err
	}
	if !fs.status.Connected {
		return // no event since the gap opened: it goes on
	}
	fs.status.Connected = false
	fs.status.Gaps = append(fs.status.Gaps, Gap{From: time.Unix(fs.lastEvent, 0).UTC()})
}

// poll adds exports at once and then every poll interval, until ctx
// ends.
func (f *Follower) poll(ctx context.Context) {
	t := time.NewTicker(f.cfg.poll)
	defer t.Stop()
	for {
		for _, fs := range f.feeds {
			f.pollFeed(ctx, fs)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pollFeed lists fs's exports and adds those the index needs: the newest
// hourly one, and those that cover an open gap; then it closes the gaps
// the exports added cover.
func (f *Follower) pollFeed(ctx context.Context, fs *feedState) {
	page, err := f.c.ListExports(ctx, fs.status.Feed, &synthient.ListExportsParams{Limit: 500})
	if err != nil {
		if ctx.Err() == nil {
			f.fail(fs, err)
		}
		return
	}
	for _, id := range f.wanted(fs, page.Exports) {
		if err := f.addExport(ctx, fs, id); err != nil {
			if ctx.Err() == nil {
				f.fail(fs, err)
			}
			return
		}
	}
	f.closeGaps(fs, page.Exports)
}

// wanted returns the ids of the exports of list that fs needs and that
// are not added yet, oldest first.
func (f *Follower) wanted(fs *feedState, list []synthient.Export) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	want := func(id string) {
		if !f.loaded[string(fs.status.Feed)+"/"+id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, e := range list { // newest first: the first hourly one is the newest
		if e.Kind == "hourly" {
			want(e.ID)
			break
		}
	}
	for _, g := range fs.status.Gaps {
		for _, h := range f.gapHours(g) {
			if id, ok := covering(list, h); ok {
				want(id)
			}
		}
	}
	slices.Reverse(out)
	return out
}

// gapHours returns the start of each UTC hour g spans, up to the hour of
// now for a gap that is still open, leaving out those past the maximum
// age.
func (f *Follower) gapHours(g Gap) []time.Time {
	to := g.To
	if to.IsZero() {
		to = time.Unix(f.ix.now(), 0)
	}
	from := g.From
	if c := time.Unix(int64(f.ix.cutoff()), 0); from.Before(c) {
		from = c
	}
	var out []time.Time
	for h := from.UTC().Truncate(time.Hour); !h.After(to); h = h.Add(time.Hour) {
		out = append(out, h)
	}
	return out
}

// covering returns the id of the export of list that covers the hour h:
// its hourly export, else the daily one of its day.
func covering(list []synthient.Export, h time.Time) (string, bool) {
	hourly := fmt.Sprintf("%s/%02d", h.Format(time.DateOnly), h.Hour())
	daily := h.Format(time.DateOnly)
	found := ""
	for _, e := range list {
		switch e.ID {
		case hourly:
			return hourly, true
		case daily:
			found = daily
		}
	}
	return found, found != ""
}

// addExport downloads the export id of fs and adds it to the index.
func (f *Follower) addExport(ctx context.Context, fs *feedState, id string) error {
	dir, err := os.MkdirTemp(f.cfg.dir, "feedindex-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }() // a temporary copy: nothing is lost with it
	path := filepath.Join(dir, "export.parquet")
	if _, err := f.c.DownloadExportFile(ctx, fs.status.Feed, id, path, &synthient.DownloadParams{Verify: true}); err != nil {
		return err
	}
	xf, err := exports.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = xf.Close() }() // read-only
	a, err := f.ix.AddFile(fs.status.Feed, id, xf)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.loaded[string(fs.status.Feed)+"/"+id] = true
	fs.status.Exports = append(fs.status.Exports, id)
	f.mu.Unlock()
	f.emit(FollowEvent{Kind: ExportAdded, Feed: fs.status.Feed, Export: id, Added: a})
	return nil
}

// closeGaps closes the gaps of fs whose every hour an added export of
// list covers.
func (f *Follower) closeGaps(fs *feedState, list []synthient.Export) {
	f.mu.Lock()
	var evs []FollowEvent
	open := fs.status.Gaps[:0]
	for _, g := range fs.status.Gaps {
		if g.To.IsZero() || !f.covered(fs, g, list) {
			open = append(open, g)
			continue
		}
		evs = append(evs, FollowEvent{Kind: GapClosed, Feed: fs.status.Feed, Gap: g})
	}
	fs.status.Gaps = open
	f.mu.Unlock()
	f.emit(evs...)
}

// covered reports whether added exports of list cover every hour of g.
func (f *Follower) covered(fs *feedState, g Gap, list []synthient.Export) bool {
	for _, h := range f.gapHours(g) {
		id, ok := covering(list, h)
		if !ok || !f.loaded[string(fs.status.Feed)+"/"+id] {
			return false
		}
	}
	return true
}
