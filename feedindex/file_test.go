package feedindex_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/feedindex"
)

// filled returns an index of random rows, on testNow, and the model of
// its rows.
func filled(t testing.TB, seed uint64, maxAge time.Duration) (*feedindex.Index, *model) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7)) //nolint:gosec // a seeded draw, the same each run: nothing to guess
	m := &model{maxAge: maxAge, now: testNow}
	ix, err := feedindex.New(feedindex.WithMaxAge(maxAge), feedindex.WithClock(func() time.Time { return testNow }))
	require.NoError(t, err)
	t.Cleanup(func() { ix.Close() })
	px, ja, an := randomRows(r, 60, m)
	addRows(t, ix, synthient.FeedProxies, px)
	addRows(t, ix, synthient.FeedJA4T, ja)
	addRows(t, ix, synthient.FeedAnonymizers, an)
	return ix, m
}

func TestSaveAndOpen(t *testing.T) {
	t.Parallel()
	for _, maxAge := range []time.Duration{0, 6 * time.Hour} {
		t.Run(maxAge.String(), func(t *testing.T) {
			t.Parallel()
			ix, m := filled(t, 3, maxAge)
			path := filepath.Join(t.TempDir(), "index.synidx")
			require.NoError(t, ix.Save(path))
			opened, err := feedindex.Open(path, feedindex.WithClock(func() time.Time { return testNow }))
			require.NoError(t, err)
			defer opened.Close()
			assert.Equal(t, maxAge, opened.MaxAge(), "the file's maximum age")
			var buf bytes.Buffer
			_, err = ix.WriteTo(&buf)
			require.NoError(t, err)
			loaded, err := feedindex.Load(buf.Bytes(), feedindex.WithClock(func() time.Time { return testNow }))
			require.NoError(t, err)
			for _, a := range probes() {
				want := m.lookup(a.WithZone("").Unmap())
				assert.Equal(t, want, opened.Lookup(nil, a), "%s", a)
				assert.Equal(t, want, loaded.Lookup(nil, a), "%s", a)
			}
		})
	}
}

// TestOpenAfterAnAddition adds rows to an opened index: the new snapshot
// keeps reading the tables of the file it did not change.
func TestOpenAfterAnAddition(t *testing.T) {
	t.Parallel()
	ix, m := filled(t, 4, 0)
	path := filepath.Join(t.TempDir(), "index.synidx")
	require.NoError(t, ix.Save(path))
	opened, err := feedindex.Open(path)
	require.NoError(t, err)
	defer opened.Close()
	px, _, _ := randomRows(rand.New(rand.NewPCG(9, 9)), 20, m) //nolint:gosec // a seeded draw, the same each run: nothing to guess
	f := writeRows(t, px)
	xf := openExport(t, f)
	_, err = opened.AddFile(synthient.FeedProxies, "2026-06-10/13", xf)
	require.NoError(t, err)
	// The rows of the other feeds of randomRows are not added: leave them
	// out of the model.
	m.rows = m.rows[:len(m.rows)-3*20]
	for i := range px {
		a := mustAddr(px[i].IP)
		m.rows = append(m.rows, modelRow{a, a, feedindex.Hit{Feed: synthient.FeedProxies, Provider: px[i].Provider, Type: px[i].Type,
			CountryCode: px[i].CountryCode, ASN: int(px[i].ASN), LastSeen: time.Unix(px[i].Timestamp, 0).UTC()}})
	}
	for _, a := range probes() {
		assert.Equal(t, m.lookup(a.WithZone("").Unmap()), opened.Lookup(nil, a), "%s", a)
	}
	assert.Equal(t, []string{"2026-06-10/13"}, opened.Stats().Feeds[0].Exports)
}

// TestHostileFiles damages a saved index in every way a reader must
// catch: each is refused with a *FormatError, whatever its checksums
// say.
func TestHostileFiles(t *testing.T) {
	t.Parallel()
	ix, _ := filled(t, 5, 0)
	var buf bytes.Buffer
	_, err := ix.WriteTo(&buf)
	require.NoError(t, err)
	good := buf.Bytes()
	sections := int(binary.LittleEndian.Uint32(good[12:]))
	// section returns the table entry of the first section of kind.
	section := func(b []byte, kind uint32) []byte {
		for i := range sections {
			if e := b[64+40*i:]; binary.LittleEndian.Uint32(e) == kind {
				return e[:40]
			}
		}
		t.Fatalf("no section of kind %d", kind)
		return nil
	}
	data := func(b []byte, kind uint32) []byte {
		e := section(b, kind)
		off, l := binary.LittleEndian.Uint64(e[16:]), binary.LittleEndian.Uint64(e[24:])
		return b[off : off+l]
	}
	tests := []struct {
		name   string
		damage func(b []byte) []byte
		is     error
	}{
		{"empty", func([]byte) []byte { return nil }, feedindex.ErrNotIndex},
		{"Parquet", func([]byte) []byte { return []byte("PAR1\x00\x00PAR1") }, feedindex.ErrNotIndex},
		{"another version", func(b []byte) []byte { b[8] = 2; return b }, feedindex.ErrVersion},
		{"a flipped bit in the header", func(b []byte) []byte { b[20] ^= 1; return b }, feedindex.ErrChecksum},
		{"a flipped bit in the section table", func(b []byte) []byte { b[64+17] ^= 1; return b }, feedindex.ErrChecksum},
		{"a flipped bit in a table", func(b []byte) []byte { b[len(b)-3] ^= 4; return b }, feedindex.ErrChecksum},
		{"cut in the data", func(b []byte) []byte { return b[:len(b)-5] }, nil},
		{"cut in the section table", func(b []byte) []byte { return b[:70] }, nil},
		{"2^31 sections", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[12:], 1<<31); return resum(b) }, nil},
		{"a section past the end", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(section(b, 7)[24:], 1<<60)
			return resum(b)
		}, nil},
		{"a count that is not the length", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(section(b, 7)[8:], 1<<40)
			return resum(b)
		}, nil},
		{"keys out of order", func(b []byte) []byte {
			lo := data(b, 6)
			lo[0], lo[1], lo[2], lo[3] = lo[2], lo[3], lo[0], lo[1]
			return resum(b)
		}, nil},
		{"a bucket table that does not add up", func(b []byte) []byte {
			idx := data(b, 5)
			binary.LittleEndian.PutUint32(idx[len(idx)-4:], 1<<30)
			return resum(b)
		}, nil},
		{"bucket bits out of range", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(section(b, 5)[36:], 31)
			return resum(b)
		}, nil},
		{"an entry naming no tuple", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(data(b, 7), 1<<20)
			return resum(b)
		}, nil},
		{"a tuple naming no string", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(data(b, 3), 1<<20)
			return resum(b)
		}, nil},
		{"a string past its bytes", func(b []byte) []byte {
			ends := data(b, 2)
			binary.LittleEndian.PutUint32(ends[len(ends)-4:], 1<<30)
			return resum(b)
		}, nil},
		{"a meta that is not JSON", func(b []byte) []byte {
			copy(data(b, 4), "{{{")
			return resum(b)
		}, nil},
		{"IPv6 keys out of order", func(b []byte) []byte {
			k := data(b, 8)
			copy(k[:16], bytes.Repeat([]byte{0xff}, 16))
			return resum(b)
		}, nil},
		{"a section of an unknown kind", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(section(b, 4), 99)
			return resum(b)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := tt.damage(bytes.Clone(good))
			_, err := feedindex.Load(b)
			var fe *feedindex.FormatError
			require.ErrorAs(t, err, &fe)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			path := filepath.Join(t.TempDir(), "index.synidx")
			require.NoError(t, os.WriteFile(path, b, 0o600))
			_, err = feedindex.Open(path)
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, path, fe.Name)
		})
	}
}

func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	_, err := feedindex.Open(t.TempDir())
	var fe *feedindex.FormatError
	require.ErrorAs(t, err, &fe)
	_, err = feedindex.Open(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestClosed(t *testing.T) {
	t.Parallel()
	ix, _ := filled(t, 6, 0)
	require.NotEmpty(t, ix.Lookup(nil, universe[1]))
	require.NoError(t, ix.Close())
	require.NoError(t, ix.Close())
	assert.Empty(t, ix.Lookup(nil, universe[1]))
	_, err := ix.WriteTo(&bytes.Buffer{})
	require.ErrorIs(t, err, feedindex.ErrClosed)
	_, err = ix.AddFile(synthient.FeedProxies, "", openExport(t, writeRows(t, []struct{ IP string }{{"1.2.3.4"}})))
	require.ErrorIs(t, err, feedindex.ErrClosed)
}

// FuzzLoad loads arbitrary bytes, starting from saved indexes: it must
// return an index or a *FormatError, never panic, and an index it
// returns must answer lookups without panicking.
func FuzzLoad(f *testing.F) {
	for seed := range uint64(3) {
		ix, _ := filled(f, seed, 0)
		var buf bytes.Buffer
		if _, err := ix.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte("SYNFIDX\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// As it is, and with checksums that match: most changes then
		// reach the checks of the content.
		for _, b := range [][]byte{b, resum(bytes.Clone(b))} {
			ix, err := feedindex.Load(b)
			if err != nil {
				var fe *feedindex.FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("%T: %v", err, err)
				}
				continue
			}
			for _, a := range probes() {
				ix.Lookup(nil, a)
			}
			ix.Stats()
		}
	})
}
