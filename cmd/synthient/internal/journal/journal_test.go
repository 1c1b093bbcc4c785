package journal_test

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
	"github.com/synthient-go/synthient/internal/safefile"
)

var (
	a1 = netip.MustParseAddr("203.0.113.1")
	a2 = netip.MustParseAddr("203.0.113.2")
	a3 = netip.MustParseAddr("2001:db8::3")
	a4 = netip.MustParseAddr("203.0.113.4")
)

// step is one write of a journal, and the states it leaves.
type step struct {
	write func(j *journal.Journal) error
	after map[netip.Addr]journal.State
}

// history is a run: two requests, their outcomes; a4's request rejected,
// then sent again and looked up.
var history = []step{
	{func(j *journal.Journal) error { return j.Sent([]netip.Addr{a1, a2, a3}) },
		map[netip.Addr]journal.State{a1: journal.Unknown, a2: journal.Unknown, a3: journal.Unknown}},
	{func(j *journal.Journal) error { return j.Done(a1, synthient.LookedUp) },
		map[netip.Addr]journal.State{a1: journal.LookedUp, a2: journal.Unknown, a3: journal.Unknown}},
	{func(j *journal.Journal) error { return j.Done(a2, synthient.Unknown) },
		map[netip.Addr]journal.State{a1: journal.LookedUp, a2: journal.Unknown, a3: journal.Unknown}},
	{func(j *journal.Journal) error { return j.Done(a3, synthient.NotSent) },
		map[netip.Addr]journal.State{a1: journal.LookedUp, a2: journal.Unknown, a3: journal.Retry}},
	{func(j *journal.Journal) error { return j.Sent([]netip.Addr{a4}) },
		map[netip.Addr]journal.State{a1: journal.LookedUp, a2: journal.Unknown, a3: journal.Retry, a4: journal.Unknown}},
	{func(j *journal.Journal) error { return j.Done(a4, synthient.Rejected) },
		map[netip.Addr]journal.State{a1: journal.LookedUp, a2: journal.Unknown, a3: journal.Retry, a4: journal.Retry}},
	{func(j *journal.Journal) error { return j.Sent([]netip.Addr{a4}) },
		map[netip.Addr]journal.State{a1: journal.LookedUp, a2: journal.Unknown, a3: journal.Retry, a4: journal.Unknown}},
	{func(j *journal.Journal) error { return j.Done(a4, synthient.LookedUp) },
		map[netip.Addr]journal.State{a1: journal.LookedUp, a2: journal.Unknown, a3: journal.Retry, a4: journal.LookedUp}},
}

// written writes history to a new journal in dir and returns its bytes
// and the file's size after each step (ends[0] is the header's).
func written(t *testing.T, dir string) (data []byte, ends []int) {
	t.Helper()
	path := filepath.Join(dir, "full.journal")
	j, err := journal.Open(path)
	require.NoError(t, err)
	size := func() int {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return int(fi.Size())
	}
	ends = append(ends, size())
	for _, s := range history {
		require.NoError(t, s.write(j))
		ends = append(ends, size())
	}
	require.NoError(t, j.Close())
	data, err = os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	require.NoError(t, err)
	return data, ends
}

// states returns what j knows of the four addresses.
func states(j *journal.Journal) map[netip.Addr]journal.State {
	out := map[netip.Addr]journal.State{}
	for _, ip := range []netip.Addr{a1, a2, a3, a4} {
		if st := j.State(ip); st != journal.None {
			out[ip] = st
		}
	}
	return out
}

// A journal cut at any byte, on a record boundary or inside a record,
// opens: it knows what its whole records say, and a record cut short is
// cut off, so that the next record written is whole.
func TestOpenCutAnywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, ends := written(t, dir)
	for cut := 0; cut <= len(data); cut++ {
		whole := 0 // the steps whose records are whole in data[:cut]
		for whole+1 < len(ends) && ends[whole+1] <= cut {
			whole++
		}
		want := map[netip.Addr]journal.State{}
		if whole > 0 {
			want = history[whole-1].after
		}
		path := filepath.Join(dir, "cut.journal")
		require.NoError(t, os.WriteFile(path, data[:cut], 0o600))
		j, err := journal.Open(path)
		require.NoError(t, err, "cut at byte %d of %d", cut, len(data))
		assert.Equal(t, want, states(j), "cut at byte %d", cut)
		onBoundary := slicesContains(ends, cut) || cut == 0
		assert.Equal(t, !onBoundary, j.Torn(), "cut at byte %d: torn", cut)
		// Writing on: the record is whole, and read back.
		require.NoError(t, j.Sent([]netip.Addr{netip.MustParseAddr("198.51.100.9")}), "cut at byte %d", cut)
		require.NoError(t, j.Close())
		j, err = journal.Open(path)
		require.NoError(t, err, "cut at byte %d, written on", cut)
		assert.Equal(t, journal.Unknown, j.State(netip.MustParseAddr("198.51.100.9")), "cut at byte %d", cut)
		assert.Equal(t, want, states(j), "cut at byte %d, written on", cut)
		require.NoError(t, j.Close())
	}
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// header is the first line of a journal of version v, its checksum
// right.
func header(v int) []byte {
	body := fmt.Sprintf(`{"t":"journal","v":%d}`, v)
	return fmt.Appendf(nil, "%08x %s\n", crc32.Checksum([]byte(body), crc32.MakeTable(crc32.Castagnoli)), body)
}

// A last record of any length cut short (no newline: a crash while it
// was written), a huge one included, is a torn last record: Open ignores
// and cuts it off, Read ignores it; neither calls it damaged.
func TestHugeTornLastRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, _ := written(t, dir)
	for _, size := range []int{10, 64 << 10, 1 << 20, 3 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "j")
			torn := append(bytes.Clone(data), `3a3a3a3a {"t":"sent","ips":["`...)
			torn = append(torn, bytes.Repeat([]byte("1"), size)...)
			require.NoError(t, os.WriteFile(path, torn, 0o600))
			r, err := journal.Read(path)
			require.NoError(t, err, "Read")
			assert.True(t, r.Torn(), "Read: torn")
			assert.Equal(t, history[len(history)-1].after, states(r), "Read")
			j, err := journal.Open(path)
			require.NoError(t, err, "Open")
			assert.True(t, j.Torn(), "Open: torn")
			assert.Equal(t, history[len(history)-1].after, states(j), "Open")
			require.NoError(t, j.Close())
			got, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			assert.Equal(t, data, got, "Open cuts the torn record off")
		})
	}
}

// Counts gives how many addresses of each state the journal had.
func TestCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, _ := written(t, dir)
	path := filepath.Join(dir, "j")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	j, err := journal.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, j.Close()) })
	lookedUp, unknown, retry := j.Counts()
	assert.Equal(t, []int{2, 1, 1}, []int{lookedUp, unknown, retry})
	assert.Equal(t, path, j.Path())
}

// A file that is not a journal, a journal damaged before its last record,
// one of another version, and one another run holds are refused with an
// *Error, and left as they were.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, ends := written(t, dir)
	damaged := bytes.Clone(data)
	damaged[ends[0]+3] ^= 0x20 // inside the first sent record (line 2), with records after it
	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"a text file", []byte("1.1.1.1\n8.8.8.8\n"), "path:1: not a journal"},
		{"one line of text", []byte("hello\n"), "not a journal"},
		{"one line of text without a newline", []byte("1.1.1.1"), "not a journal"},
		{"another kind of record first", data[ends[0]:ends[1]], "not a journal"},
		{"damaged before the last record", damaged, "path:2: damaged record"},
		{"version 2", append(header(2), data[ends[0]:]...), "path:1: written by a newer synthient (journal version 2; this one reads version 1): upgrade synthient"},
		{"version 2, its checksum not ours", append([]byte("e8b3a9a2 {\"t\":\"journal\",\"v\":2}\n"), data[ends[0]:]...), "path:1: written by a newer synthient"},
		{"version 0", header(0), "path:1: version 0, this synthient reads version 1"},
		{"a huge record before the last", append(append(bytes.Clone(data[:ends[1]]), bytes.Repeat([]byte("x"), 3<<20)...), append([]byte("\n"), data[ends[1]:]...)...),
			"path:3: damaged record before the last"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "path")
			require.NoError(t, os.WriteFile(path, tt.data, 0o600))
			_, err := journal.Open(path)
			var je *journal.Error
			require.ErrorAs(t, err, &je, "Open = %v, want a *journal.Error", err)
			assert.Contains(t, strings.ReplaceAll(err.Error(), filepath.Dir(path)+"/", ""), tt.msg)
			got, rerr := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, rerr)
			assert.Equal(t, tt.data, got, "the file was changed")
		})
	}
	t.Run("in use", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "j")
		j, err := journal.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, j.Close()) })
		_, err = journal.Open(path)
		var je *journal.Error
		require.ErrorAs(t, err, &je)
		assert.Contains(t, err.Error(), "in use by another run")
	})
}

// A path that is not a regular file is refused by Open and by Read with
// an *Error naming it, at once: opening a named pipe that no one writes
// does not block.
func TestNotARegularFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, kind string
		make       func(t *testing.T, path string)
	}{
		{"named pipe", "a named pipe", clitest.MakeFIFO},
		{"device", "a device", func(t *testing.T, path string) { require.NoError(t, os.Symlink(os.DevNull, path)) }},
		{"directory", "a directory", func(t *testing.T, path string) { require.NoError(t, os.Mkdir(path, 0o700)) }},
	} {
		for name, open := range map[string]func(string) (*journal.Journal, error){"Open": journal.Open, "Read": journal.Read} {
			t.Run(tt.name+", "+name, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(t.TempDir(), "j")
				tt.make(t, path)
				_, err := open(path)
				if tt.name == "directory" && name == "Open" {
					require.ErrorIs(t, err, syscall.EISDIR) // open(2) refuses to write a directory
					return
				}
				var je *journal.Error
				require.ErrorAs(t, err, &je, "%s = %v, want a *journal.Error", name, err)
				assert.Equal(t, "journal "+path+": not a regular file ("+tt.kind+"): a journal is a regular file", err.Error())
			})
		}
	}
}

// Read reads what Open reads, and changes nothing: not the bytes (a torn
// last record is ignored, not cut off), not the time of change, and it
// takes no lock, so that it reads a journal a run holds. Its Journal
// takes no records. A journal that does not exist is fs.ErrNotExist.
func TestReadChangesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, ends := written(t, dir)
	for _, cut := range []int{0, 5, ends[0], ends[2] + 7, ends[4], len(data) - 1, len(data)} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "j")
			require.NoError(t, os.WriteFile(path, data[:cut], 0o600))
			old := time.Date(2020, time.January, 2, 3, 4, 5, 0, time.UTC)
			require.NoError(t, os.Chtimes(path, old, old))
			lock, err := os.Open(path) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			require.NoError(t, safefile.TryLock(lock), "a run's lock")
			j, err := journal.Read(path)
			require.NoError(t, err)
			got, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			require.NoError(t, err)
			assert.Equal(t, data[:cut], got, "the bytes")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.True(t, old.Equal(fi.ModTime()), "the time of change: %v", fi.ModTime())
			require.Error(t, j.Sent([]netip.Addr{a1}), "a journal read takes no records")
			require.NoError(t, j.Close())
			require.NoError(t, lock.Close()) // the run's lock goes with it

			opened, err := journal.Open(path)
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, opened.Close()) })
			assert.Equal(t, states(opened), states(j), "what Read and Open know")
			assert.Equal(t, opened.Torn(), j.Torn(), "torn")
		})
	}
	_, err := journal.Read(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// A new journal is made with mode 0600: it names the addresses looked up.
func TestOpenNewFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new.journal")
	j, err := journal.Open(path)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	j, err = journal.Open(path)
	require.NoError(t, err)
	lookedUp, unknown, retry := j.Counts()
	require.NoError(t, j.Close())
	assert.Zero(t, lookedUp+unknown+retry)
}

// FuzzOpen: whatever a journal file holds, Open never panics, and either
// refuses it with an *Error, leaving it as it was, or opens it as a
// journal that takes records; Read, before it, changes nothing, refuses
// what Open refuses and knows what Open knows.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed")
	j, err := journal.Open(path)
	require.NoError(f, err)
	require.NoError(f, j.Sent([]netip.Addr{a1, a3}))
	require.NoError(f, j.Done(a1, synthient.LookedUp))
	require.NoError(f, j.Close())
	seed, err := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
	require.NoError(f, err)
	for _, s := range [][]byte{seed, seed[:len(seed)-3], {}, []byte("x\n"), append(bytes.Clone(seed), "garbage"...)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "j")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		read, rerr := journal.Read(path)
		got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
		require.Equal(t, data, got, "Read changed the journal")
		j, err := journal.Open(path)
		require.Equal(t, err == nil, rerr == nil, "Read = %v, Open = %v", rerr, err)
		if err == nil {
			assert.Equal(t, states(j), states(read), "what Read and Open know")
		}
		if err != nil {
			var je *journal.Error
			require.ErrorAs(t, err, &je)
			got, _ := os.ReadFile(path) //nolint:gosec // a file of the test's temporary directory
			require.Equal(t, data, got, "a refused journal was changed")
			return
		}
		require.NoError(t, j.Done(a2, synthient.LookedUp))
		require.NoError(t, j.Close())
		j, err = journal.Open(path)
		require.NoError(t, err, "a journal Open took, then wrote to, does not open again")
		assert.Equal(t, journal.LookedUp, j.State(a2))
		require.NoError(t, j.Close())
	})
}
