package transport

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimeoutStartsAtTheWrite: on a reused keep-alive connection, whose
// read for the next answer began while it sat idle, the client's
// transport bounds the wait from when the request was written, not from
// when the connection went idle. On fake time, over in-memory
// connections: idle 1.2 s, then an answer 1.3 s after the write is within
// a timeout of 2 s (counted from the idle read it would be 2.5 s), and one
// 2.1 s after the write is not.
func TestTimeoutStartsAtTheWrite(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const timeout = 2 * time.Second
		var requests atomic.Int32
		delays := map[int32]time.Duration{2: 1300 * time.Millisecond, 3: 2100 * time.Millisecond}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(delays[requests.Add(1)]):
			case <-r.Context().Done():
				return
			}
			_, _ = io.WriteString(w, "{}")
		}), ReadHeaderTimeout: time.Hour}
		ln := newPipeListener()
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close() //nolint:errcheck // the test's server: nothing to lose

		tr := New(timeout, time.Second, nil)
		defer tr.CloseIdleConnections()
		var dials atomic.Int32
		tr.DialContext = func(context.Context, string, string) (net.Conn, error) {
			dials.Add(1)
			return &deadlineConn{Conn: ln.dial(), timeout: timeout, armed: true}, nil
		}
		get := func() error {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://pipe/", http.NoBody) // POST: net/http never replays it on a new connection
			require.NoError(t, err)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close() //nolint:errcheck // read to its end
			_, err = io.ReadAll(resp.Body)
			return err
		}

		require.NoError(t, get(), "the first request")
		time.Sleep(1200 * time.Millisecond) // the connection idles, its read pending
		require.NoError(t, get(), "an answer 1.3 s after the write, on the reused connection")
		assert.Equal(t, int32(1), dials.Load(), "connections: the second request reused the first's")
		time.Sleep(1200 * time.Millisecond)
		err := get()
		require.ErrorIs(t, err, os.ErrDeadlineExceeded, "an answer 2.1 s after the write")
	})
}

// pipeListener is a net.Listener of in-memory connections (net.Pipe),
// which a synctest bubble's fake time can run.
type pipeListener struct {
	conns chan net.Conn
	done  <-chan struct{}
	close context.CancelFunc
}

func newPipeListener() *pipeListener {
	ctx, cancel := context.WithCancel(context.Background())
	return &pipeListener{conns: make(chan net.Conn), done: ctx.Done(), close: cancel}
}

// dial returns the client's end of a new connection, once the server
// accepted the other.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.done:
		_ = server.Close()
	}
	return client
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.close()
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
