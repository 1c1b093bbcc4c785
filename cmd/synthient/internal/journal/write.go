package journal

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/netip"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/safefile"
)

// State returns what the journal held of ip when it was opened: what
// earlier runs recorded. What this run records shows in the next Open. An
// IPv4-mapped IPv6 address is the IPv4 address it maps, as for the SDK:
// either spelling has the state of both.
func (j *Journal) State(ip netip.Addr) State { return j.state[ip.Unmap()] }

// Counts returns how many addresses the journal had, when it was opened,
// in each state but None: looked up, possibly charged, safe to send again.
func (j *Journal) Counts() (lookedUp, unknown, retry int) {
	return j.counts[LookedUp], j.counts[Unknown], j.counts[Retry]
}

// Torn reports that the journal's last record was cut short (a crash while
// it was written) and was cut off when it was opened.
func (j *Journal) Torn() bool { return j.torn }

// Path returns the journal's path.
func (j *Journal) Path() string { return j.path }

// Sent records that the addresses of one request are about to be sent,
// and syncs the journal to disk: once it returns nil, a crash leaves them
// possibly charged, never forgotten. An error means the request must not
// be sent.
func (j *Journal) Sent(addrs []netip.Addr) error {
	ips := make([]string, len(addrs))
	for i, ip := range addrs {
		ips[i] = ip.String()
	}
	if err := j.write(record{T: "sent", IPs: ips}); err != nil {
		return err
	}
	return j.Sync()
}

// Done records the outcome o of ip, which Sent recorded: for LookedUp,
// once its result was printed. It does not sync; Sync does, once a
// request's addresses are all done, and Close.
func (j *Journal) Done(ip netip.Addr, o synthient.BulkOutcome) error {
	return j.write(record{T: "done", IP: ip.String(), Outcome: o.String()})
}

// Sync syncs the records written to disk.
func (j *Journal) Sync() error {
	if j.err != nil {
		return j.err
	}
	if err := j.f.Sync(); err != nil {
		j.err = fmt.Errorf("journal %s: %w", j.path, err)
	}
	return j.err
}

// Close syncs and closes the journal, and returns the first error writing
// it. It does nothing for a journal Read returned.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	err := j.Sync()
	// Closing the file releases the lock; unlocking first releases it at
	// once on Windows, where a close may release it later.
	_ = safefile.Unlock(j.f) // the close below releases it anyway
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("journal %s: %w", j.path, cerr)
	}
	return err
}

// encode returns the line of rec: its CRC-32C, a space, its JSON and a
// newline.
func encode(rec record) []byte {
	body, _ := json.Marshal(rec) // strings and an int: it cannot fail
	line := make([]byte, 0, len(body)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(body, castagnoli))
	return append(append(line, body...), '\n')
}

// write appends one record, in one write: a crash leaves it whole or cut
// short at its end, which the next Open cuts off.
func (j *Journal) write(rec record) error {
	if j.err != nil {
		return j.err
	}
	var w io.Writer = j.f
	if j.w != nil {
		w = j.w
	}
	if _, err := w.Write(encode(rec)); err != nil {
		j.err = fmt.Errorf("journal %s: %w", j.path, err)
	}
	return j.err
}

// WriteThrough makes the journal write its records through wrap(file),
// where file is the journal's open file: the tests' way to make writes
// fail as a full disk does, after some bytes. Sync and Close still act on
// the file. Call it before anything is recorded.
func (j *Journal) WriteThrough(wrap func(file io.Writer) io.Writer) {
	j.w = wrap(j.f)
}
