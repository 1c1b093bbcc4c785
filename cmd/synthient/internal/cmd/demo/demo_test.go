package demo_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
)

// Tests of demo.go: the guided demo.

// The guided demo runs on its own fake, shows a retry and refused retries
// with their reasons, and ends well under a minute.
func TestDemo(t *testing.T) {
	t.Parallel()
	r := clitest.Call{Args: []string{"demo"}}.Run(t)
	clitest.RequireCode(t, r, 0, "demo")
	for _, want := range []string{
		"retry in",
		"stop: may_have_been_processed",
		"retry_after_exceeds_max",
		"429", "503", "502",
		"distinct addresses: 1250 looked up, 1000 unknown, 0 not sent; 1 invalid; 249 repeats",
		"credits: 1125 spent, 900 possibly spent; the fake charged 1125",
		"AllExports walked",
		"verified; API key sent to storage: false",
		"exports.Open(path).Proxies(), the first of ",
		"Done in",
	} {
		assert.Contains(t, r.Stdout, want, "demo output")
	}
	assert.Empty(t, r.Stderr, "stderr")
	assert.Less(t, r.Elapsed, 5*time.Minute, "the demo hangs") // a bound only a hang outlasts
}

// Every line of the demo fits 100 columns; it counts in words that agree
// with their numbers, says what a bulk address costs, and says what its
// progress line shows: a bar drawn (and erased once done) on a terminal,
// the callback's count elsewhere.
func TestDemoFitsAndSaysWhatItShows(t *testing.T) {
	t.Parallel()
	for _, terminal := range []bool{false, true} {
		t.Run(fmt.Sprintf("terminal=%v", terminal), func(t *testing.T) {
			t.Parallel()
			r := clitest.Call{Args: []string{"demo"}, Terminal: terminal, TTYOut: terminal}.Run(t)
			clitest.RequireCode(t, r, 0, "demo")
			for i, line := range clitest.Lines(r.Stdout) {
				assert.LessOrEqual(t, utf8.RuneCountInString(line), 100, "line %d is wider than 100 columns:\n%s", i+1, line)
			}
			// The fake's exports, and so its pages, grow with the hour of the day.
			m := regexp.MustCompile(`walked \d+ exports in (\d+) (pages?) of 10`).FindStringSubmatch(r.Stdout)
			if assert.NotNil(t, m, "the pages walked") {
				assert.Equal(t, m[1] == "1", m[2] == "page", "%q", m[0])
			}
			for _, want := range []string{
				"after 1 attempt, stop reason may_have_been_processed",
				"a bulk address costs 0.9 credit",
				"0.9 × 1250 = 1125",
			} {
				assert.Contains(t, r.Stdout, want)
			}
			for _, notWant := range []string{"1 pages", "attempt(s)", "when stderr is a terminal"} {
				assert.NotContains(t, r.Stdout, notWant)
			}
			if terminal {
				// The bar was drawn and, finished, erased: the words say
				// it was drawn, not that it is above.
				assert.Contains(t, r.Stderr, "downloading", "the bar")
				for _, line := range clitest.Screen(r.Stderr) {
					assert.NotContains(t, line, "downloading", "a line the terminal shows holds the bar")
				}
				assert.Regexp(t, `DownloadParams.Progress drew a bar while the bytes came: \d+ of \d+ bytes`, r.Stdout)
				assert.NotContains(t, r.Stdout, "above")
				return
			}
			assert.Empty(t, r.Stderr, "no bar")
			assert.Regexp(t, `DownloadParams.Progress reported \d+ of \d+ bytes \(drawn as a bar on a terminal\)`, r.Stdout)
		})
	}
}
