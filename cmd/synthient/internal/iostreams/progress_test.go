package iostreams_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/cmd/synthient/internal/iostreams"
)

// Tests of progress.go: the count bar.

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
