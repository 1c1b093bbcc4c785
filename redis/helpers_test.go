package redis_test

// The package's test harness: real redis-server processes on free loopback
// ports (the shared one of TestMain, and ones of their own for the tests
// that kill, pause or restart theirs), go-redis clients of them, and the
// fake API with clients that cache in Redis.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	synthredis "github.com/synthient-go/synthient/redis"
	"github.com/synthient-go/synthient/synthienttest"
)

// shared is the redis-server of TestMain.
var shared *server

// server is a redis-server process on a loopback port, without
// persistence: a restart starts it empty.
type server struct {
	addr string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// startServer starts a redis-server on addr, or on a free loopback port
// when addr is "". It fails when redis-server is not on PATH.
func startServer(addr string) (*server, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not on PATH (apt-get install redis-server; .ci/run installs it): %w", err)
	}
	s := &server{addr: addr}
	for try := 0; ; try++ {
		if addr == "" {
			s.addr, err = freeAddr()
			if err != nil {
				return nil, err
			}
		}
		if err = s.run(path); err == nil || addr != "" || try == 4 {
			return s, err
		}
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr() (string, error) {
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close() //nolint:errcheck // a listener opened for its port only: nothing to lose
	return ln.Addr().String(), nil
}

// run starts the process and waits, up to a minute, for it to answer.
func (s *server) run(path string) error {
	host, port, _ := net.SplitHostPort(s.addr)
	cmd := exec.Command(path, "--bind", host, "--port", port, "--save", "", "--appendonly", "no", //nolint:gosec,noctx // redis-server from PATH with the test's arguments; it lives until the test stops it, past any context
		"--protected-mode", "no", "--loglevel", "warning", "--dir", os.TempDir())
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	rdb := goredis.NewClient(&goredis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close() //nolint:errcheck // a probe client of the test: nothing to lose
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		select {
		case <-done:
			return fmt.Errorf("redis-server on %s exited at start", s.addr)
		default:
		}
		switch {
		case err == nil:
			return nil
		case time.Now().After(deadline):
			s.kill()
			return fmt.Errorf("redis-server on %s does not answer: %w", s.addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// signal sends sig to the process.
func (s *server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// kill kills the process (SIGKILL, as a crash would) and waits for it.
func (s *server) kill() {
	s.signal(syscall.SIGCONT) // a paused one too
	s.signal(syscall.SIGKILL)
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done != nil {
		<-done
	}
}

// restart starts the process again on the same address, empty.
func (s *server) restart(t testing.TB) {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	require.NoError(t, err)
	require.NoError(t, s.run(path))
}

// own starts a redis-server of the test's own, killed when it ends.
func own(t testing.TB) *server {
	t.Helper()
	s, err := startServer("")
	require.NoError(t, err)
	t.Cleanup(s.kill)
	return s
}

// redisClient returns a go-redis client of s set as the package
// documentation advises, closed when the test ends.
func redisClient(t testing.TB, s *server) *goredis.Client {
	t.Helper()
	rdb := goredis.NewClient(&goredis.Options{
		Addr:                  s.addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           100 * time.Millisecond,
		ReadTimeout:           time.Minute,
		WriteTimeout:          time.Minute,
		MaxRetries:            -1,
		DialerRetries:         1,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// prefixes numbers the prefixes of newCache, each its own.
var prefixes atomic.Int64

// newCache returns a Cache on s with opts and a prefix of its own, its
// go-redis client and the prefix.
func newCache(t testing.TB, s *server, opts ...synthredis.Option) (*synthredis.Cache, *goredis.Client, string) {
	t.Helper()
	rdb := redisClient(t, s)
	prefix := fmt.Sprintf("test:%s:%d:", t.Name(), prefixes.Add(1))
	// A timeout that only a hang outlasts, unless opts set one: a timeout
	// is a failure, which starts a cool-down.
	c, err := synthredis.New(rdb, append([]synthredis.Option{synthredis.WithPrefix(prefix), synthredis.WithTimeout(time.Minute)}, opts...)...)
	require.NoError(t, err)
	return c, rdb, prefix
}

// fake starts the fake API, closed when the test ends.
func fake(t testing.TB) *synthienttest.Server {
	t.Helper()
	srv := synthienttest.NewServer()
	t.Cleanup(srv.Close)
	return srv
}

// ends is an Observer that keeps each call's CallEnd.
type ends struct {
	mu  sync.Mutex
	all []synthient.CallEnd
}

func (e *ends) StartCall(ctx context.Context, _ synthient.CallStart) context.Context { return ctx }
func (e *ends) StartRequest(ctx context.Context, _ synthient.RequestStart) context.Context {
	return ctx
}
func (e *ends) EndRequest(context.Context, synthient.RequestEnd) {}
func (e *ends) Hold(context.Context, synthient.PacingHold)       {}
func (e *ends) EndCall(_ context.Context, end synthient.CallEnd) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, end)
}

// last returns the last CallEnd.
func (e *ends) last() synthient.CallEnd {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.all[len(e.all)-1]
}

// client returns a client of srv caching in cache, reporting to a new
// ends, closed when the test ends.
func client(t testing.TB, srv *synthienttest.Server, cache synthient.Cache) (*synthient.Client, *ends) {
	t.Helper()
	e := &ends{}
	c, err := srv.NewClient(synthient.WithCache(cache), synthient.WithObserver(e),
		synthient.WithBackoff(time.Millisecond, 2*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, e
}

// callCtx is the context of a call under test: a watchdog of 2 minutes,
// which only a hang outlasts.
func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// isUnavailable reports whether err is the cache's cool-down error.
func isUnavailable(err error) bool { return errors.Is(err, synthredis.ErrUnavailable) }

// hostile is a TCP server that passes for a Redis until a command named in
// its garbage comes: it answers that one with the raw bytes given (or, for
// endless, a line that never ends). Otherwise it answers as a Redis 5
// does to a client of RESP3 (HELLO refused, so the client speaks RESP2):
// CLIENT and SELECT with OK, PING with PONG, GET with nil, SET with OK.
type hostile struct {
	addr    string
	garbage map[string]string // command (upper case) → the raw reply
	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
}

// endless is the garbage of a line that never ends: "+aaaa…", sent until
// the client hangs up.
const endless = "\x00endless"

// startHostile starts a hostile server with garbage, stopped (its
// connections closed) when the test ends.
func startHostile(t testing.TB, garbage map[string]string) *hostile {
	t.Helper()
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := &hostile{addr: ln.Addr().String(), garbage: garbage, ln: ln}
	h.wg.Go(h.accept)
	t.Cleanup(h.stop)
	return h
}

func (h *hostile) accept() {
	for {
		conn, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		h.conns = append(h.conns, conn)
		h.mu.Unlock()
		h.wg.Go(func() { h.serve(conn) })
	}
}

// stop closes the listener and every connection, and waits for their
// goroutines.
func (h *hostile) stop() {
	_ = h.ln.Close()
	h.mu.Lock()
	for _, c := range h.conns {
		_ = c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// serve answers the commands of one connection until it closes.
func (h *hostile) serve(conn net.Conn) {
	defer conn.Close() //nolint:errcheck // the test's server: nothing to lose
	rd := bufio.NewReader(conn)
	for {
		name, err := readCommand(rd)
		if err != nil {
			return
		}
		reply, ok := h.garbage[name]
		switch {
		case ok && reply == endless:
			sendEndless(conn)
			return
		case !ok:
			reply = normalReply(name)
		}
		if _, err := io.WriteString(conn, reply); err != nil {
			return
		}
	}
}

// normalReply is what the hostile server answers to name when it is not
// among its garbage.
func normalReply(name string) string {
	switch name {
	case "HELLO":
		return "-ERR unknown command 'HELLO'\r\n"
	case "PING":
		return "+PONG\r\n"
	case "GET":
		return "$-1\r\n"
	}
	return "+OK\r\n"
}

// sendEndless writes "+" and then 'a's until the client hangs up.
func sendEndless(conn net.Conn) {
	if _, err := io.WriteString(conn, "+"); err != nil {
		return
	}
	chunk := []byte(strings.Repeat("a", 32<<10))
	for {
		if _, err := conn.Write(chunk); err != nil {
			return
		}
	}
}

// readCommand reads one command, an array of bulk strings, and returns
// its name in upper case.
func readCommand(rd *bufio.Reader) (string, error) {
	n, err := readHeader(rd, '*')
	if err != nil {
		return "", err
	}
	var name string
	for i := range n {
		size, err := readHeader(rd, '$')
		if err != nil {
			return "", err
		}
		arg := make([]byte, size+2)
		if _, err := io.ReadFull(rd, arg); err != nil {
			return "", err
		}
		if i == 0 {
			name = strings.ToUpper(string(arg[:size]))
		}
	}
	return name, nil
}

// readHeader reads a line "<kind><n>\r\n" and returns n (at most 1 MiB).
func readHeader(rd *bufio.Reader, kind byte) (int, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 4 || line[0] != kind {
		return 0, fmt.Errorf("not a %q header: %q", kind, line)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(line[1:], "\r\n"))
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("bad header %q", line)
	}
	return n, nil
}
