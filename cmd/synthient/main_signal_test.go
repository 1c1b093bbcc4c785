package main

// Tests of main.go: one SIGINT or SIGTERM ends the command with 130,
// whatever it waits on. The command runs as a process of its own, and
// gets a real signal.

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/cmd/synthient/internal/clitest"
	"github.com/synthient-go/synthient/synthienttest"
)

// graceVar, in the environment of the command as the test binary runs it,
// sets interruptGrace.
const graceVar = "SYNTHIENT_TEST_INTERRUPT_GRACE"

// signalOnce starts cmd, waits until ready reports that it waits where the
// test wants it, sends it sig once, and returns its exit code (-1: killed
// by a signal) and stderr. A command that ends before it is ready, or has
// not ended clitest.HangBound after the signal, fails the test: only a
// hang takes that long.
func signalOnce(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, ready func() bool) (int, string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Env = append(cmd.Env, "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	end := func(err error) (int, string) {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), stderr.String()
		}
		require.NoError(t, err)
		return 0, stderr.String()
	}
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	bound := time.After(clitest.HangBound)
	for !ready() {
		select {
		case err := <-done:
			code, out := end(err)
			t.Fatalf("the command ended (exit %d) before it waited as the test wants:\n%s", code, out)
		case <-bound:
			_ = cmd.Process.Kill()
			t.Fatalf("the command was not ready after %v", clitest.HangBound)
		case <-poll.C:
		}
	}
	require.NoError(t, cmd.Process.Signal(sig))
	select {
	case err := <-done:
		return end(err)
	case <-time.After(clitest.HangBound):
		_ = cmd.Process.Kill()
		<-done //nolint:errcheck // the kill's: the failure is reported below
		t.Fatalf("one %v did not end the command in %v:\n%s", sig, clitest.HangBound, stderr.String())
		return 0, ""
	}
}

// silentServer accepts connections and reads them, and never answers: it
// returns the base URL, and reports whether a connection was accepted.
func silentServer(t *testing.T) (url string, accepted func() bool) {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(io.Discard, c) }) // until the test closes it
		}
	})
	t.Cleanup(func() {
		_ = ln.Close() // ends the accepting goroutine
		mu.Lock()
		for _, c := range conns {
			_ = c.Close() // ends its reading goroutine
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/api/v4", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(conns) > 0
	}
}

// One SIGINT or SIGTERM ends the command with 130 whatever it waits on:
// a --failed or --unknown named pipe that no one reads, stdin that sends
// nothing more, a server that never answers, fake-server serving (which
// docs/cli.md promises 130 for too), each of which the command
// leaves of itself (with a grace period longer than the test waits); and
// where the command cannot see the signal (blocked writing a stdout that
// no one reads, a --template that does not end), the process exits 130
// once the grace period is over.
func TestOneSignalEndsEveryWait(t *testing.T) {
	t.Parallel()
	addrs := strings.Join(clitest.Addrs(1000), "\n") + "\n"
	tests := []struct {
		name string
		sig  syscall.Signal
		// blind: the command cannot see the signal where it waits; the
		// grace period ends it. The others stop of themselves: their
		// grace period is longer than the test waits.
		blind bool
		// start returns the command, ready to start, and when it waits.
		start func(t *testing.T, srv *synthienttest.Server, dir string) (*exec.Cmd, func() bool)
	}{
		{"--failed, a named pipe no one reads", syscall.SIGTERM, false, listFIFO("--failed")},
		{"--unknown, a named pipe no one reads", syscall.SIGINT, false, listFIFO("--unknown")},
		{"stdin that sends nothing more", syscall.SIGTERM, false, func(t *testing.T, srv *synthienttest.Server, _ string) (*exec.Cmd, func() bool) {
			cmd := process(t, srv, "lookup", "ips", "--batch-size", "1")
			r, w, err := os.Pipe()
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = r.Close(), w.Close() }) // the test's ends of the pipe
			_, err = w.WriteString("8.8.8.8\n")
			require.NoError(t, err)
			cmd.Stdin = r
			return cmd, func() bool { return srv.Arrivals(synthienttest.RouteLookupIPs) == 1 }
		}},
		{"a server that never answers", syscall.SIGTERM, false, func(t *testing.T, srv *synthienttest.Server, _ string) (*exec.Cmd, func() bool) {
			url, accepted := silentServer(t)
			cmd := process(t, srv, "account")
			cmd.Env = append(cmd.Env, "SYNTHIENT_BASE_URL="+url) // the last one counts
			return cmd, accepted
		}},
		{"fake-server, serving", syscall.SIGTERM, false, func(t *testing.T, srv *synthienttest.Server, _ string) (*exec.Cmd, func() bool) {
			cmd := process(t, srv, "fake-server")
			out := &clitest.SyncBuffer{}
			cmd.Stdout = out
			return cmd, func() bool { return strings.Contains(out.String(), "Serving until interrupted") }
		}},
		{"fake-server, Ctrl-C", syscall.SIGINT, false, func(t *testing.T, srv *synthienttest.Server, _ string) (*exec.Cmd, func() bool) {
			cmd := process(t, srv, "fake-server", "-o", "json")
			out := &clitest.SyncBuffer{}
			cmd.Stdout = out
			return cmd, func() bool { return strings.Contains(out.String(), "base_url") }
		}},
		{"a stdout no one reads", syscall.SIGINT, true, func(t *testing.T, srv *synthienttest.Server, dir string) (*exec.Cmd, func() bool) {
			in := filepath.Join(dir, "in.txt")
			require.NoError(t, os.WriteFile(in, []byte(addrs), 0o600))
			cmd := process(t, srv, "-o", "json", "lookup", "ips", "--file", in)
			r, w, err := os.Pipe()
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = r.Close(), w.Close() }) // the test's ends of the pipe
			cmd.Stdout = w
			var once sync.Once
			began := make(chan struct{})
			return cmd, func() bool {
				once.Do(func() {
					_ = w.Close() // the command's now: a read ends when it does
					go func() {
						if n, _ := r.Read(make([]byte, 1)); n == 1 { // the output began; the test reads no more of it
							close(began)
						}
					}()
				})
				select {
				case <-began:
					return true
				default:
					return false
				}
			}
		}},
		{"a --template that does not end", syscall.SIGTERM, true, func(t *testing.T, srv *synthienttest.Server, _ string) (*exec.Cmd, func() bool) {
			nested := strings.Repeat("{{range $.scopes}}", 8) + strings.Repeat("{{end}}", 8)
			return process(t, srv, "--template", nested, "account"), func() bool { return srv.Arrivals(synthienttest.RouteAccount) == 1 }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := clitest.NewServer(t)
			cmd, ready := tt.start(t, srv, t.TempDir())
			if !tt.blind {
				cmd.Env = append(cmd.Env, graceVar+"="+(2*clitest.HangBound).String())
			}
			code, stderr := signalOnce(t, cmd, tt.sig, ready)
			assert.Equal(t, clierr.Interrupt, code, "the exit code (-1: killed by a signal); stderr:\n%s", stderr)
			if tt.blind {
				assert.Contains(t, stderr, "synthient: interrupted: the command had not stopped 3s after the signal\n")
			} else {
				assert.Contains(t, stderr, "synthient: interrupted\n")
				assert.NotContains(t, stderr, "had not stopped")
			}
		})
	}
}

// listFIFO is a bulk run whose output file flag is a named pipe that no
// one reads; it waits there once its journal is made.
func listFIFO(flag string) func(t *testing.T, srv *synthienttest.Server, dir string) (*exec.Cmd, func() bool) {
	return func(t *testing.T, srv *synthienttest.Server, dir string) (*exec.Cmd, func() bool) {
		in, fifo, journal := filepath.Join(dir, "in.txt"), filepath.Join(dir, "fifo"), filepath.Join(dir, "run.journal")
		require.NoError(t, os.WriteFile(in, []byte("8.8.8.8\n"), 0o600))
		clitest.MakeFIFO(t, fifo)
		cmd := process(t, srv, "lookup", "ips", "--file", in, "--journal", journal, flag, fifo)
		return cmd, func() bool {
			fi, err := os.Stat(journal)
			return err == nil && fi.Size() > 0
		}
	}
}
