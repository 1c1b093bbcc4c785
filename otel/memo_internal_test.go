package otel

import (
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counting returns a memo of the squares of ints that counts its builds.
func counting() (*memo[int, int], *int) {
	builds := new(int)
	return &memo[int, int]{build: func(k int) (int, int) {
		*builds++
		return k, k * k
	}}, builds
}

func TestMemoKeepsWhatItBuilds(t *testing.T) {
	t.Parallel()
	m, builds := counting()
	for range 3 {
		assert.Equal(t, 49, m.get(7))
	}
	assert.Equal(t, 1, *builds, "built once, then kept")
	assert.Equal(t, 64, m.get(8))
	assert.Equal(t, 2, *builds)
}

func TestMemoStopsKeepingAtItsSize(t *testing.T) {
	t.Parallel()
	m, builds := counting()
	for k := range memoSize {
		m.get(k)
	}
	require.Equal(t, memoSize, *builds)
	assert.Equal(t, memoSize*memoSize, m.get(memoSize))
	assert.Equal(t, memoSize*memoSize, m.get(memoSize))
	assert.Equal(t, memoSize+2, *builds, "a key past the size is built for each get")
	assert.Len(t, *m.m.Load(), memoSize)
	m.get(0)
	assert.Equal(t, memoSize+2, *builds, "the kept keys stay")
}

func TestMemoConcurrentGets(t *testing.T) {
	t.Parallel()
	m := &memo[string, string]{build: func(k string) (string, string) { return k, k + "!" }}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				k := strconv.Itoa((g + i) % 10)
				assert.Equal(t, k+"!", m.get(k))
			}
		})
	}
	wg.Wait()
	assert.Len(t, *m.m.Load(), 10)
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, want string
		ok        bool
	}{
		{"https://api.synthient.com/api/v4/lookup/ip/1.2.3.4", "https://api.synthient.com", true},
		{"http://127.0.0.1:8080/x?y=1", "http://127.0.0.1:8080", true},
		{"http://[::1]:8080?q", "http://[::1]:8080", true},
		{"https://storage.example#frag", "https://storage.example", true},
		{"https://storage.example", "https://storage.example", true},
		{"/relative/path", "", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			got, ok := origin(tc.url)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestHeaderCarrier(t *testing.T) {
	t.Parallel()
	h := http.Header{"X-Api-Key": {"k"}}
	c := headerCarrier(h)
	c.Set("traceparent", "00-a-b-01")
	c.Set("traceparent", "00-c-d-01")
	assert.Equal(t, []string{"00-c-d-01"}, h["Traceparent"], "canonical key, value replaced")
	assert.Equal(t, "00-c-d-01", c.Get("traceparent"))
	assert.ElementsMatch(t, []string{"X-Api-Key", "Traceparent"}, c.Keys())
}
