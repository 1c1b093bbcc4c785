package batch_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// --failed and --unknown may name a file that is not a regular one: a
// named pipe a reader drains (waited for until it has one), or a device
// such as /dev/null. It is written as it is, not emptied first.
func TestListNotARegularFile(t *testing.T) {
	t.Parallel()
	in := clitest.Addrs(10)
	input := strings.Join(in, "\n") + "\n"
	for _, tt := range []struct {
		name, flag string
		fault      synthienttest.Fault
		fifo       bool
	}{
		{"--failed, a named pipe", "--failed", synthienttest.Fault{Status: 422}, true},
		{"--unknown, a named pipe", "--unknown", synthienttest.Fault{Status: 503}, true},
		{"--failed, a device", "--failed", synthienttest.Fault{Status: 422}, false},
		{"--unknown, a device", "--unknown", synthienttest.Fault{Status: 503}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			srv.Inject(synthienttest.RouteLookupIPs, 1, tt.fault)
			path := os.DevNull
			read := make(chan string, 1)
			if tt.fifo {
				path = filepath.Join(t.TempDir(), "fifo")
				clitest.MakeFIFO(t, path)
				go func() {
					f, err := os.Open(path) //nolint:gosec // the test's named pipe: the reader the run waits for
					if !assert.NoError(t, err) {
						read <- ""
						return
					}
					defer f.Close() //nolint:errcheck // opened read-only: closing it loses nothing
					b, err := io.ReadAll(f)
					assert.NoError(t, err)
					read <- string(b)
				}()
			}
			r := clitest.Bounded(t, clitest.BatchCall(srv, input, tt.flag, path))
			clitest.RequireCode(t, r, clierr.API)
			assert.Contains(t, r.Stderr, "(in "+tt.flag+" "+path+")")
			if tt.fifo {
				assert.Equal(t, input, <-read, "the addresses the named pipe carried")
			}
		})
	}
}

// An output file (--failed, --unknown, --journal) that is the regular
// file stdout or stderr writes to (as /dev/stdout is with > results.csv,
// /dev/stderr with 2> log) is refused with exit 2 before anything is
// sent: emptying it would lose what is in it, and a journal's records
// would overwrite the results (--journal /dev/stdout > out.csv), which the
// next run could not read back as a journal. The file is left as it was:
// empty, as > leaves it, for a journal; holding earlier results for a
// list.
func TestOutputFileIsStdStream(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--failed", "--unknown", "--journal"} {
		for _, stream := range []string{"stdout", "stderr"} {
			t.Run(flag+" "+stream, func(t *testing.T) {
				t.Parallel()
				srv := clitest.NewServer(t)
				dir := t.TempDir()
				file := filepath.Join(dir, stream+".txt")
				before := "9.9.9.9 looked up earlier\n"
				if flag == "--journal" {
					before = "" // > out.csv: a journal would take it for a new one
				}
				require.NoError(t, os.WriteFile(file, []byte(before), 0o600))
				f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0) //nolint:gosec // a file of the test's temporary directory
				require.NoError(t, err)
				t.Cleanup(func() { _ = f.Close() }) // nothing is written to it by the test
				link := filepath.Join(dir, "dev-"+stream)
				require.NoError(t, os.Symlink(file, link)) // as /dev/stdout is
				c := clitest.BatchCall(srv, "1.1.1.1\n", flag, link)
				if stream == "stdout" {
					c.StdoutTo = f
				} else {
					c.StderrTo = f
				}
				r := c.Run(t)
				clitest.RequireCode(t, r, clierr.Usage)
				got, err := os.ReadFile(file) //nolint:gosec // a file of the test's temporary directory
				require.NoError(t, err)
				msg := r.Stderr
				if stream == "stderr" {
					msg = strings.TrimPrefix(string(got), before) // what the command wrote after it
					got = got[:len(got)-len(msg)]
				}
				assert.Contains(t, msg, "synthient: "+flag+" "+link+" is the file "+stream+" writes to")
				assert.Equal(t, before, string(got), "the file of "+stream)
				assert.Empty(t, srv.Requests(), "requests sent")
			})
		}
	}
}
