package iostreams_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// Tests of progress.go: the count bar and the bytes bar.

// A count bar draws its first count at once, holds back the counts added
// soon after, and draws them once counting pauses: at rest it shows the
// exact count. End draws what it held, and nothing is drawn after it.
func TestCountBarExactAtRest(t *testing.T) {
	t.Parallel()
	var w clitest.SyncBuffer
	bar := iostreams.NewCountBar(&w, 100, "counting")
	bar.Add(1)
	assert.Contains(t, w.String(), "(1/100)", "the first count, at once")
	for range 9 {
		bar.Add(1)
	}
	// Only a bar that never draws what it held takes a minute.
	assert.Eventually(t, func() bool { return strings.Contains(w.String(), "(10/100)") }, time.Minute, time.Millisecond,
		"the count at rest: %q", w.String())

	bar.Add(5)
	bar.End(-1)
	assert.Contains(t, w.String(), "(15/100)", "the count held, drawn by End")
	drawn := w.String()
	bar.Add(1)
	assert.Equal(t, drawn, w.String(), "drawn after End")
}

// A bar of an unknown total learns it at End, and shows 100%.
func TestCountBarLearnsTotal(t *testing.T) {
	t.Parallel()
	var w clitest.SyncBuffer
	bar := iostreams.NewCountBar(&w, -1, "counting")
	bar.Add(3)
	assert.Contains(t, w.String(), "(3/-)")
	bar.End(3)
	assert.Contains(t, w.String(), "100%")
	assert.Contains(t, w.String(), "(3/3)")
}

// A bytes bar shows no rate for a transfer that has run less than a
// second (a download from a fake on the same host is done in
// microseconds: its "rate" would be tens of GB/s), nor when it finishes
// that soon; once the transfer has run a second it shows one.
func TestBytesBarRate(t *testing.T) {
	t.Parallel()
	rate := regexp.MustCompile(`[0-9.]+ [kMGT]?B/s`)
	for _, tt := range []struct {
		name  string
		steps []time.Duration // the clock at each Set64, from the first
		want  bool
	}{
		{"done in microseconds", []time.Duration{0, time.Microsecond, 2 * time.Microsecond}, false},
		{"done in under a second", []time.Duration{0, 400 * time.Millisecond, 900 * time.Millisecond}, false},
		{"a transfer of seconds", []time.Duration{0, 500 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var w clitest.SyncBuffer
			bar := iostreams.NewBytesBar(&w, 1<<20, "downloading")
			now := time.Date(2026, 6, 10, 14, 20, 0, 0, time.UTC)
			var at time.Duration
			bar.SetClock(func() time.Time { return now.Add(at) })
			for i, step := range tt.steps {
				at = step
				require.NoError(t, bar.Set64(int64(i+1)<<18))
			}
			require.NoError(t, bar.Finish())
			assert.Contains(t, w.String(), "100%", "the finished bar")
			assert.Equal(t, tt.want, rate.MatchString(w.String()), "a rate in %q", w.String())
		})
	}
}
