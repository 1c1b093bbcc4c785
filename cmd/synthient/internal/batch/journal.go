package batch

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
	"github.com/synthient-go/synthient/cmd/synthient/internal/render"
)

// errEarlierRun is the error of an address a journal holds as sent and
// not answered: an earlier run sent it and recorded no outcome, or an
// unknown one.
var errEarlierRun = errors.New("sent by an earlier run that recorded no answer (in the journal); --resend-unknown sends them again")

// journalRun keeps a run's journal: it records each request before the
// SDK sends it, and each address's outcome once the run handled it (a
// looked-up one once printed), and tells the run which addresses the
// journal settles. A nil *journalRun, for a run without a journal, does
// nothing.
type journalRun struct {
	j      *journal.Journal
	resend bool // --resend-unknown: send again what the journal holds as possibly charged
	// sent are the addresses of the requests recorded and not done, each
	// with its request, synced once the request's addresses are all done.
	// The keys of sent and met are unmapped: an IPv4-mapped IPv6 address
	// is the IPv4 address it maps, as for the SDK.
	sent map[netip.Addr]*sentRequest
	// met are the addresses the journal settles that this run read: a
	// second occurrence is a duplicate.
	met map[netip.Addr]bool
	// printed are looked-up addresses written to a table not flushed yet.
	printed []netip.Addr
	err     error // the first error writing the journal
	// unrecorded counts, by outcome, the addresses sent whose outcome the
	// journal could not record (its writes failed): a run resumed with it
	// takes them for possibly charged.
	unrecorded map[synthient.BulkOutcome]int64
}

// sentRequest counts the addresses of one request not done yet.
type sentRequest struct{ left int }

func newJournalRun(j *journal.Journal, resend bool) *journalRun {
	if j == nil {
		return nil
	}
	return &journalRun{j: j, resend: resend, sent: map[netip.Addr]*sentRequest{}, met: map[netip.Addr]bool{}}
}

// skip reports whether ip is settled by the journal, and is not to be
// sent: looked up earlier, or possibly charged (without --resend-unknown).
func (jr *journalRun) skip(ip netip.Addr) bool {
	switch jr.j.State(ip) {
	case journal.LookedUp:
		return true
	case journal.Unknown:
		return !jr.resend
	}
	return false
}

// beforeSend records a request's addresses before the SDK sends them
// (synthient.BulkParams.BeforeSend).
func (jr *journalRun) beforeSend(addrs []netip.Addr) error {
	if err := jr.j.Sent(addrs); err != nil {
		jr.keep(err)
		return err
	}
	req := &sentRequest{}
	for _, ip := range addrs {
		if ip = ip.Unmap(); jr.sent[ip] == nil {
			jr.sent[ip] = req
			req.left++
		}
	}
	return nil
}

// settled returns the state the journal gives ip, an address it settles
// that the run read, and whether this is its first occurrence.
func (jr *journalRun) settled(ip netip.Addr) (journal.State, bool) {
	first := !jr.met[ip.Unmap()]
	jr.met[ip.Unmap()] = true
	return jr.j.State(ip), first
}

// done records the outcome o of ip, when its request was recorded; once
// the request's addresses are all done, it syncs the journal.
func (jr *journalRun) done(ip netip.Addr, o synthient.BulkOutcome) {
	if jr == nil {
		return
	}
	req, ok := jr.sent[ip.Unmap()]
	if !ok {
		return // never sent (the run stopped before), or a duplicate
	}
	delete(jr.sent, ip.Unmap())
	if err := jr.j.Done(ip, o); err != nil {
		jr.keep(err)
		if jr.unrecorded == nil {
			jr.unrecorded = map[synthient.BulkOutcome]int64{}
		}
		jr.unrecorded[o]++
	}
	if req.left--; req.left == 0 {
		jr.keep(jr.j.Sync())
	}
}

// print notes that ip's result went into a table that is not flushed yet:
// it is done once the table is (flushed).
func (jr *journalRun) print(ip netip.Addr) {
	if jr != nil {
		jr.printed = append(jr.printed, ip)
	}
}

// flushed records as looked up the addresses whose rows a table just
// wrote out.
func (jr *journalRun) flushed() {
	if jr == nil {
		return
	}
	for _, ip := range jr.printed {
		jr.done(ip, synthient.LookedUp)
	}
	jr.printed = jr.printed[:0]
}

func (jr *journalRun) keep(err error) {
	if err != nil && jr.err == nil {
		jr.err = err
	}
}

// close syncs and closes the journal, and returns the first error
// writing it, which says how many outcomes the journal lacks for it.
func (jr *journalRun) close() error {
	if jr == nil {
		return nil
	}
	jr.keep(jr.j.Close())
	if jr.err == nil || len(jr.unrecorded) == 0 {
		return jr.err
	}
	return fmt.Errorf("%w; it lacks the outcome of %s", jr.err, unrecordedText(jr.unrecorded))
}

// unrecordedText says how many addresses sent have no outcome in the
// journal, which a resumed run takes for possibly charged, and what they
// came to where that is something else.
func unrecordedText(n map[synthient.BulkOutcome]int64) string {
	total := n[synthient.LookedUp] + n[synthient.NotSent] + n[synthient.Rejected] + n[synthient.Unknown]
	text := render.Plural(total, "address", "addresses") + ", which a run resumed with it reports as possibly charged"
	var were []string
	if n[synthient.LookedUp] > 0 {
		were = append(were, fmt.Sprintf("%d looked up and printed", n[synthient.LookedUp]))
	}
	if retry := n[synthient.NotSent] + n[synthient.Rejected]; retry > 0 {
		were = append(were, fmt.Sprintf("%d not sent or rejected, safe to send again", retry))
	}
	if len(were) > 0 && n[synthient.Unknown] > 0 {
		were = append(were, fmt.Sprintf("%d possibly charged", n[synthient.Unknown]))
	}
	if len(were) > 0 {
		text += " (of them: " + strings.Join(were, "; ") + ")"
	}
	return text
}
