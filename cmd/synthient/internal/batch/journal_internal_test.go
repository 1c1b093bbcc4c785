package batch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/cmd/synthient/internal/journal"
	"github.com/synthient-go/synthient/cmd/synthient/internal/output"
	"github.com/synthient-go/synthient/cmd/synthient/internal/redact"
	"github.com/synthient-go/synthient/cmd/synthient/internal/textsafe"
	"github.com/synthient-go/synthient/synthienttest"
)

// Tests of journal.go that need a journal whose writes fail: the disk
// under it fills up.

// failAfter passes the first left bytes on to w, then fails as a full
// disk does (a write cut short, then none).
type failAfter struct {
	w    io.Writer
	left int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.left {
		f.left -= len(p)
		return f.w.Write(p)
	}
	n, _ := f.w.Write(p[:f.left]) // what fits; the error below is the one that counts
	f.left = 0
	return n, syscall.ENOSPC
}

// lacksRe finds how many outcomes the run's error says the journal lacks.
var lacksRe = regexp.MustCompile(`it lacks the outcome of (\d+) address`)

// A journal whose writes fail after K bytes (a full disk), whatever K:
// the run's error names the journal and says how many addresses sent it
// could not record the outcome of, which is exactly how many a run
// resumed with it reports as possibly charged; the looked-up ones it
// did record and those add up to the addresses printed, and the summary
// counts what was printed.
func TestJournalWritesFail(t *testing.T) {
	t.Parallel()
	srv := synthienttest.NewServer(synthienttest.WithoutRateLimits())
	t.Cleanup(srv.Close)
	c, err := srv.NewClient()
	require.NoError(t, err)
	var in strings.Builder
	for i := range 100 {
		fmt.Fprintf(&in, "198.51.%d.%d\n", i/250, i%250+1)
	}
	lacking := map[bool]int{} // runs by whether the journal lacked outcomes
	for k := 0; k <= 9000; k += 300 {
		path := filepath.Join(t.TempDir(), "run.journal")
		j, err := journal.Open(path)
		require.NoError(t, err)
		j.WriteThrough(func(file io.Writer) io.Writer { return &failAfter{w: file, left: k} })
		var stdout, stderr bytes.Buffer
		describe := func(err error) string { return err.Error() }
		cfg := &Config{Printer: &output.Printer{Format: output.JSON, Out: &stdout, Err: &stderr, Describe: describe},
			Err: &stderr, Describe: describe, Secrets: &redact.Redactor{}, Journal: j, Stdout: &stdout}
		runErr := cfg.Run(context.Background(), c, Input{R: strings.NewReader(in.String()), Total: -1},
			&synthient.BulkParams{BatchSize: 10, Concurrency: 2}, nil, nil)

		printed := int64(strings.Count(stdout.String(), "\n"))
		assert.Contains(t, textsafe.Unpaint(stderr.String()), fmt.Sprintf(": %d looked up,", printed), "K=%d: the summary counts what was printed", k)
		lacks := int64(0)
		if runErr != nil {
			assert.Contains(t, runErr.Error(), "journal "+path+": no space left on device", "K=%d", k)
			if m := lacksRe.FindStringSubmatch(runErr.Error()); m != nil {
				lacks, _ = strconv.ParseInt(m[1], 10, 64)
				assert.Contains(t, runErr.Error(), "which a run resumed with it reports as possibly charged (of them: "+m[1]+" looked up and printed)", "K=%d", k)
			}
		}
		lacking[lacks > 0]++
		r, err := journal.Read(path)
		require.NoError(t, err, "K=%d: the journal reads back", k)
		lookedUp, unknown, _ := r.Counts()
		assert.Equal(t, lacks, int64(unknown), "K=%d: possibly charged on resume: %v", k, runErr)
		assert.Equal(t, printed, int64(lookedUp)+lacks, "K=%d: looked up, recorded or not", k)
	}
	assert.Positive(t, lacking[true], "runs whose journal lacked outcomes")
	assert.Positive(t, lacking[false], "runs whose journal lacked none")
}
