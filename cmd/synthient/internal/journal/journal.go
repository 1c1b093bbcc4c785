// Package journal records a bulk lookup as it goes, so that a run cut
// short, also by SIGKILL, can be resumed without sending an address
// twice.
//
// The journal is a file of records, one per line, each its CRC-32C and
// its JSON:
//
//	1c9b0a3e {"t":"journal","v":1}
//	5e2f7d10 {"t":"sent","ips":["203.0.113.7","8.8.8.8"]}
//	0b7c44a1 {"t":"done","ip":"203.0.113.7","o":"looked_up"}
//
// A request's addresses are recorded, and synced to disk, before the
// request is sent (Sent); each address's outcome after the run handled it
// (Done): a looked-up address once its result was printed. Reading the
// journal back, an address is looked up when its outcome says so,
// possibly charged (Unknown) when it was sent and has no outcome or an
// unknown one, and safe to send again when it was not sent or was
// rejected. A last record cut short (a crash while it was written) is
// ignored, and cut off by Open (Read, for a dry run, changes nothing); a
// damaged record before the last is a *Error. A journal is a regular
// file: anything else is refused.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/internal/safefile"
)

// State is what a journal knows of an address.
type State uint8

const (
	// None means the journal has no record of the address.
	None State = iota
	// LookedUp means an earlier run looked the address up and printed it.
	LookedUp
	// Unknown means an earlier run sent the address and recorded no
	// answer, or an unknown outcome: it may have been charged.
	Unknown
	// Retry means an earlier run did not send the address, or the API
	// rejected it without a charge: it is safe to send again.
	Retry
)

// version is the journal format this package writes and reads.
const version = 1

// maxRecord bounds a record: a request of 1000 IPv6 addresses takes
// about 42 KB.
const maxRecord = 1 << 20

// Error is a journal that cannot be used: not a journal, a version this
// package does not read, damaged before its last record, or in use by
// another run.
type Error struct {
	Path string
	Line int // the record's line, from 1; 0 when it is not about one
	Msg  string
	Err  error // the cause, if any
}

func (e *Error) Error() string {
	where := e.Path
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	if e.Err != nil {
		return fmt.Sprintf("journal %s: %s: %v", where, e.Msg, e.Err)
	}
	return fmt.Sprintf("journal %s: %s", where, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Journal is an open journal. Its methods must be called from one
// goroutine at a time.
type Journal struct {
	path  string
	f     *os.File
	state map[netip.Addr]State
	// Counts of the addresses of each State when the journal was opened.
	counts [Retry + 1]int
	// Torn reports that the last record was cut short, and cut off.
	torn bool
	err  error     // the first write error; every later write returns it
	w    io.Writer // where records are written, in place of f (WriteThrough); nil for f
}

// record is a line of the journal.
type record struct {
	T       string   `json:"t"`
	V       int      `json:"v,omitempty"`
	IPs     []string `json:"ips,omitempty"`
	IP      string   `json:"ip,omitempty"`
	Outcome string   `json:"o,omitempty"`
}

// Open opens the journal at path for a run, creating it (mode 0600) when
// it does not exist, reads what it holds, cuts off a torn last record,
// and locks it for this run: another run that opens it meanwhile gets an
// *Error. A path that is not a regular file (a named pipe, a device) is
// refused with an *Error; it is opened without blocking, so that a named
// pipe cannot hang Open.
func Open(path string) (*Journal, error) {
	f, err := openRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := safefile.TryLock(f); err != nil {
		_ = f.Close() // nothing written: the lock's error is the one to report
		return nil, &Error{Path: path, Msg: "in use by another run (it is locked)", Err: err}
	}
	j := &Journal{path: path, f: f, state: map[netip.Addr]State{}}
	end, fresh, err := j.load(f)
	if err == nil {
		err = j.ready(end, fresh)
	}
	if err != nil {
		_ = f.Close() // load's or ready's error is the one to report
		return nil, err
	}
	return j, nil
}

// Read reads the journal at path as it is, for a dry run: it takes no
// lock, creates nothing and changes nothing, also when the last record
// is torn (it is ignored). A journal a run is writing meanwhile is read
// up to its last whole record. The Journal returned answers State,
// Counts, Torn and Path; Sent, Done and Sync return an error, and Close
// does nothing. A path that does not exist is an error that
// errors.Is(err, fs.ErrNotExist); one that is not a regular file, or not
// a journal, an *Error, as for Open.
func Read(path string) (*Journal, error) {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
	j := &Journal{path: path, state: map[netip.Addr]State{}, err: &Error{Path: path, Msg: "read for a dry run: it takes no records"}}
	if _, _, err := j.load(f); err != nil {
		return nil, err
	}
	return j, nil
}

// openRegular opens path with flag as safefile.Open does (without
// blocking, so that a named pipe cannot hang it), and refuses with an
// *Error a file that is not a regular one.
func openRegular(path string, flag int) (*os.File, error) {
	f, _, err := safefile.Open(path, flag, 0o600)
	if nr := (*safefile.NotRegularError)(nil); errors.As(err, &nr) {
		return nil, &Error{Path: path, Msg: "not a regular file (" + fileKind(nr.Mode) + "): a journal is a regular file"}
	}
	return f, err
}

// fileKind names the kind of file of a mode that is not a regular
// file's, as safefile.Kind does, but for a device of either kind: "a
// device".
func fileKind(m fs.FileMode) string {
	if m&fs.ModeDevice != 0 {
		return "a device"
	}
	return safefile.Kind(m)
}

// load reads the records of r, and returns the offset after the last
// whole one, and whether the journal is fresh: empty, or its header cut
// short while it was created.
func (j *Journal) load(r io.Reader) (end int64, fresh bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	line := 0
	for {
		raw, err := readLine(br)
		if len(raw) == 0 && errors.Is(err, io.EOF) {
			break
		}
		line++
		if line == 1 {
			if err := j.checkHeader(raw); err != nil {
				return 0, false, err
			}
		}
		rec, ok := parse(raw, err)
		if !ok {
			if line == 1 && !bytes.HasPrefix(headerLine(), raw) {
				// Not a journal cut short while it was created: a file
				// of something else, which must not be overwritten.
				return 0, false, &Error{Path: j.path, Line: 1, Msg: "not a journal of synthient lookups"}
			}
			if _, perr := br.Peek(1); !errors.Is(perr, io.EOF) {
				return 0, false, &Error{Path: j.path, Line: line, Msg: "damaged record before the last: the journal cannot be trusted (delete it to start afresh)"}
			}
			j.torn = true
			break
		}
		if err := j.apply(rec, line); err != nil {
			return 0, false, err
		}
		end += int64(len(raw))
	}
	return end, end == 0, nil
}

// readLine reads one line of at most maxRecord bytes, with its newline.
// Of a longer line it keeps the first maxRecord bytes or so and reads
// the rest to its end, so that what follows it (another record, or
// nothing: the line was the last) is known.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out) <= maxRecord {
			out = append(out, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil && len(out) > maxRecord {
			err = errors.New("record too long")
		}
		return out, err
	}
}

// parse checks one line: complete (err nil, a newline), its CRC right,
// its JSON a record.
func parse(raw []byte, err error) (record, bool) {
	var rec record
	if err != nil || len(raw) < 10 || raw[8] != ' ' {
		return rec, false
	}
	body := raw[9 : len(raw)-1]
	sum, err := strconv.ParseUint(string(raw[:8]), 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum(body, castagnoli) {
		return rec, false
	}
	return rec, json.Unmarshal(body, &rec) == nil && rec.T != ""
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// headerLine is the first line of every journal.
func headerLine() []byte { return encode(record{T: "journal", V: version}) }

// checkHeader refuses a first line that is the header of a journal of
// another version (whether or not its checksum is one this version
// computes: a newer format may compute another): a newer one says to
// upgrade rather than call it not a journal.
func (j *Journal) checkHeader(raw []byte) error {
	var rec record
	body := bytes.TrimSuffix(raw, []byte("\n"))
	if len(body) < 10 || body[8] != ' ' || json.Unmarshal(body[9:], &rec) != nil {
		return nil //nolint:nilerr // no header this reads: parse and apply judge the line
	}
	if rec.T != "journal" || rec.V == version {
		return nil // this version's header, or another record: parse and apply judge it
	}
	if rec.V > version {
		return &Error{Path: j.path, Line: 1, Msg: fmt.Sprintf(
			"written by a newer synthient (journal version %d; this one reads version %d): upgrade synthient to resume it, or delete it to start afresh", rec.V, version)}
	}
	return &Error{Path: j.path, Line: 1, Msg: fmt.Sprintf("version %d, this synthient reads version %d", rec.V, version)}
}

// apply takes in the record of line.
func (j *Journal) apply(rec record, line int) error {
	if line == 1 {
		if rec.T != "journal" {
			return &Error{Path: j.path, Line: 1, Msg: "not a journal of synthient lookups"}
		}
		return nil // checkHeader refused another version
	}
	switch rec.T {
	case "sent":
		for _, s := range rec.IPs {
			ip, err := netip.ParseAddr(s)
			if err != nil {
				return &Error{Path: j.path, Line: line, Msg: "a sent address is not an IP address", Err: err}
			}
			if ip = ip.Unmap(); j.state[ip] != LookedUp {
				j.set(ip, Unknown)
			}
		}
	case "done":
		ip, err := netip.ParseAddr(rec.IP)
		if err != nil {
			return &Error{Path: j.path, Line: line, Msg: "an address is not an IP address", Err: err}
		}
		ip = ip.Unmap()
		if st := outcomeState(rec.Outcome); j.state[ip] != LookedUp && st != None {
			j.set(ip, st)
		}
	}
	return nil
}

// set sets ip's state, keeping the counts; ip is unmapped.
func (j *Journal) set(ip netip.Addr, st State) {
	if old, ok := j.state[ip]; ok {
		j.counts[old]--
	}
	j.state[ip] = st
	j.counts[st]++
}

// outcomeState is the state an outcome record leaves an address in.
func outcomeState(o string) State {
	switch o {
	case synthient.LookedUp.String():
		return LookedUp
	case synthient.Unknown.String():
		return Unknown
	case synthient.NotSent.String(), synthient.Rejected.String():
		return Retry
	}
	return None
}

// ready cuts the file at end (a torn record) and, for a new journal
// (fresh), writes the header, syncing the file and its directory; then
// it is at its end, for appending.
func (j *Journal) ready(end int64, fresh bool) error {
	if err := j.f.Truncate(end); err != nil {
		return err
	}
	if _, err := j.f.Seek(end, io.SeekStart); err != nil {
		return err
	}
	if !fresh {
		return j.f.Sync()
	}
	if err := j.write(record{T: "journal", V: version}); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(j.path))
}

// syncDir syncs the directory dir, so that a new file's name is on disk.
func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // the directory of the journal the user named
	if err != nil {
		return err
	}
	defer d.Close() //nolint:errcheck // opened read-only to sync it: Sync's error is the one that counts
	return d.Sync()
}
