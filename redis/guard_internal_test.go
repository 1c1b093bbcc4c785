package redis

// Tests of the guard's framing: frames, on streams cut at every place.

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanAll scans stream in chunks of size (all of it at once for 0) and
// returns the first error and the state it leaves.
func scanAll(stream string, size int) (*frames, error) {
	f := &frames{}
	if size == 0 {
		size = len(stream) + 1
	}
	for len(stream) > 0 {
		k := min(size, len(stream))
		if err := f.scan([]byte(stream[:k])); err != nil {
			return f, err
		}
		stream = stream[k:]
	}
	return f, nil
}

func TestFrames(t *testing.T) {
	t.Parallel()
	nest := func(n int) string { return strings.Repeat("*1\r\n", n) + ":1\r\n" }
	for _, tc := range []struct {
		name    string
		stream  string
		refused string // "" when passed on
	}{
		{"simple string, error, number", "+OK\r\n-ERR no\r\n:42\r\n,1.5\r\n#t\r\n(12345\r\n_\r\n", ""},
		{"a bulk string holding CRLFs and headers", "$12\r\n$9999999999\r\n\r\n+OK\r\n", ""},
		{"nil, empty string, empty array", "$-1\r\n$0\r\n\r\n*-1\r\n*0\r\n%0\r\n", ""},
		{"a map of arrays", "%2\r\n+a\r\n*2\r\n:1\r\n:2\r\n$1\r\nb\r\n~1\r\n=7\r\ntxt:abc\r\n+OK\r\n", ""},
		{"an attribute before a reply", "*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n+OK\r\n", ""},
		{"a push between replies", ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n+OK\r\n", ""},
		{"the largest string", "$67108864\r\n", ""},
		{"the largest array", "*1048576\r\n", ""},
		{"nested as deep as allowed", nest(maxDepth), ""},
		{"malformed, for go-redis to refuse", "$-5\r\n*-2\r\n?x\r\n\r\n", ""},
		{"a string of 2^62", "$4611686018427387904\r\n", "a length over 67108864 after '$'"},
		{"a string of 64 MiB and a byte", "$67108865\r\n", "a length over 67108864 after '$'"},
		{"a bulk error of 64 GiB", "!68719476736\r\n", "a length over 67108864 after '!'"},
		{"a verbatim string of 64 GiB", "=68719476736\r\n", "a length over 67108864 after '='"},
		{"an array of 2^40", "*1099511627776\r\n", "a length over 1048576 after '*'"},
		{"a set of 2^40", "~1099511627776\r\n", "a length over 1048576 after '~'"},
		{"a push of 2^40", ">1099511627776\r\n", "a length over 1048576 after '>'"},
		{"a map of 2^19 pairs and one", "%524289\r\n", "over 1048576 elements announced"},
		{"an attribute of 2^19 pairs and one", "|524289\r\n", "over 1048576 elements announced"},
		{"a negative length of 2^62", "$-4611686018427387904\r\n", "a length over 67108864 after '$'"},
		{"a length with a sign", "$+5\r\n", `'+' in a length after '$'`},
		{"a length in another base", "*0x10\r\n", `'x' in a length after '*'`},
		{"arrays announcing 2^20 and more", "*2\r\n*1048575\r\n", "over 1048576 elements announced"},
		{"arrays of 2^20 one after another", "*1048576\r\n" + strings.Repeat(":1\r\n", 1<<20) + "*1048576\r\n", ""},
		{"nested too deep", nest(maxDepth + 1), "aggregates nested over 64 deep"},
		{"a line without end", "+" + strings.Repeat("a", maxLine+1), "a line of over 65536 bytes"},
		{"an error line without end", "-" + strings.Repeat("a", maxLine+1), "a line of over 65536 bytes"},
		{"a length line without end", "$" + strings.Repeat("0", maxLine+1), "a line of over 65536 bytes"},
		{"a line as long as allowed", "+" + strings.Repeat("a", maxLine-1) + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, size := range []int{0, 1, 2, 3, 7} {
				f, err := scanAll(tc.stream, size)
				if tc.refused == "" {
					require.NoError(t, err, "chunks of %d", size)
					checkFrames(t, f)
					continue
				}
				require.Error(t, err, "chunks of %d", size)
				assert.Equal(t, "synthient/redis: refused Redis's reply: "+tc.refused, err.Error())
			}
		})
	}
}

// TestCheckedConnFailsForGood: after a refused reply, every read of the
// connection fails, without its bytes.
func TestCheckedConnFailsForGood(t *testing.T) {
	t.Parallel()
	c := &checkedConn{Conn: &stringConn{r: strings.NewReader("$68719476736\r\n+OK\r\n")}}
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	require.NoError(t, err, "the line is not over yet")
	assert.Equal(t, 8, n)
	n, err = c.Read(buf)
	require.Error(t, err)
	assert.Zero(t, n)
	n, err2 := c.Read(buf)
	assert.Zero(t, n)
	assert.Equal(t, err, err2)
}

// checkFrames checks the invariants of f.
func checkFrames(t *testing.T, f *frames) {
	t.Helper()
	var sum int64
	for _, a := range f.open {
		require.Positive(t, a.left)
		sum += a.left
	}
	require.Equal(t, sum, f.left)
	require.LessOrEqual(t, f.left, int64(maxOpen))
	require.LessOrEqual(t, len(f.open), maxDepth)
	require.LessOrEqual(t, f.skip, int64(maxString+2))
}

// FuzzFrames: whatever the stream and however it is cut, frames never
// panics, keeps its invariants, and comes to the same verdict and state.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "$5\r\nhello\r\n", "*2\r\n$1\r\na\r\n:1\r\n", "%1\r\n+k\r\n|1\r\n+a\r\n+b\r\n*0\r\n",
		"$-1\r\n", "*1048576\r\n", "$68719476736\r\n", strings.Repeat("*1\r\n", 70)} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, stream string, size uint8) {
		whole, errWhole := scanAll(stream, 0)
		cut, errCut := scanAll(stream, int(size))
		require.Equal(t, errWhole, errCut)
		if errWhole == nil {
			checkFrames(t, whole)
			require.Equal(t, whole, cut)
		}
	})
}

// stringConn is a net.Conn that reads from r.
type stringConn struct {
	net.Conn
	r *strings.Reader
}

func (c *stringConn) Read(p []byte) (int, error) { return c.r.Read(p) }
