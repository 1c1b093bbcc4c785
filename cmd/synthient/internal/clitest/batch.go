package clitest

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/synthient-go/synthient/synthienttest"
)

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (w FailWriter) Write([]byte) (int, error) { return 0, w.Err }

// Addrs returns n distinct public addresses in canonical form, every
// seventh an IPv6 one.
func Addrs(n int) []string {
	out := make([]string, n)
	for i := range out {
		if i%7 == 6 {
			out[i] = netip.AddrFrom16([16]byte{0x2a, 0x00, 0x14, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)}).String()
			continue
		}
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], uint32(46)<<24+uint32(i)*97)
		out[i] = netip.AddrFrom4(a).String()
	}
	return out
}

// BatchCall is lookup ips --file - against srv, with extra flags.
func BatchCall(srv *synthienttest.Server, input string, flags ...string) Call {
	c := Against(srv, append([]string{"-o", "json", "lookup", "ips", "--file", "-"}, flags...)...)
	c.Stdin = strings.NewReader(input)
	return c
}

// AssertChargedOnce checks that srv charged no address twice.
func AssertChargedOnce(t testing.TB, srv *synthienttest.Server) {
	t.Helper()
	seen := map[netip.Addr]bool{}
	for _, ip := range srv.ChargedIPs() {
		assert.False(t, seen[ip], "%s was charged twice", ip)
		seen[ip] = true
	}
}

// ReadLines returns the lines of a file.
func ReadLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // a file the test named, in its temporary directory
	require.NoError(t, err)
	return Lines(string(b))
}

// AssertAddrs checks that got is want, in order. It names the first
// difference instead of printing thousands of addresses.
func AssertAddrs(t testing.TB, want, got []string, what string) bool {
	t.Helper()
	if slices.Equal(got, want) {
		return true
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	at := func(s []string) string {
		if i < len(s) {
			return strconv.Quote(s[i])
		}
		return "the end"
	}
	return assert.Fail(t, what+": not the addresses wanted, in order",
		"%d addresses, want %d; the first difference is at %d: %s, want %s", len(got), len(want), i, at(got), at(want))
}

// GroupRe matches the report of a run of failed addresses: its lines, its
// count, what its outcome means, and the request's error.
var GroupRe = regexp.MustCompile(`^synthient: lines? (\d+)(?:-(\d+))?: (\d+) address(?:es)? (.*?): (.*)$`)

// PassThrough is a fault that answers normally (the real answer, sent in
// one chunk), to let the first request of a route through an Inject queue.
var PassThrough = synthienttest.Fault{Kind: synthienttest.FaultSlowBody, Size: 64 << 20, Delay: time.Millisecond}

// SummaryRe matches the summary of lookup ips; the count of addresses
// looked up earlier is there in a run with a journal.
var SummaryRe = regexp.MustCompile(`^synthient: (\d+) address(?:es)? read: (\d+) looked up, (?:(\d+) looked up earlier \(in the journal\), )?(\d+) invalid, (\d+) not sent, (\d+) rejected, ` +
	`(\d+) unknown \(possibly charged\), (\d+) duplicates? not sent again; credits: (\d+) spent, (\d+) possibly spent$`)

// Summary is the summary of a lookup ips run.
type Summary struct {
	Read, LookedUp, Earlier, Invalid, NotSent, Rejected, Unknown, Duplicates, Credits, MaybeCredits int64
}

// ParseSummary finds the summary on stderr, as a terminal shows it, and
// checks that it accounts for every address line read, each once.
func ParseSummary(t testing.TB, stderr string) Summary {
	t.Helper()
	for _, l := range Screen(stderr) {
		m := SummaryRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var n [10]int64
		for i := range n {
			n[i], _ = strconv.ParseInt(m[i+1], 10, 64) // an absent count is 0
		}
		s := Summary{n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9]}
		assert.Equal(t, s.Read, s.LookedUp+s.Earlier+s.Invalid+s.NotSent+s.Rejected+s.Unknown+s.Duplicates,
			"the summary's outcomes do not add up to the addresses read: %s", l)
		return s
	}
	require.FailNow(t, "no summary on stderr", "%.2000s", stderr)
	return Summary{}
}

// Groups returns the reports of runs of failed addresses on stderr.
func Groups(stderr string) [][]string {
	var out [][]string
	for _, l := range Lines(stderr) {
		if m := GroupRe.FindStringSubmatch(l); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// FileLines returns the lines of a file that may be absent (nil then).
func FileLines(t testing.TB, path string) []string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return ReadLines(t, path)
}

// OutFiles returns paths for --failed and --unknown in a new directory,
// and the flags that name them.
func OutFiles(t testing.TB) (failed, unknown string, flags []string) {
	t.Helper()
	dir := t.TempDir()
	failed, unknown = filepath.Join(dir, "failed.txt"), filepath.Join(dir, "unknown.txt")
	return failed, unknown, []string{"--failed", failed, "--unknown", unknown}
}

// CancelAfter is a stdout that calls Cancel after N lines, as Ctrl-C
// would once N results were printed.
type CancelAfter struct {
	N      int
	Cancel context.CancelFunc

	mu    sync.Mutex
	buf   bytes.Buffer
	lines int
}

func (w *CancelAfter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.lines += bytes.Count(p, []byte("\n")); w.lines >= w.N {
		w.Cancel()
	}
	return len(p), nil
}

// String returns what was written.
func (w *CancelAfter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
