package transport_test

// Tests of transport.go: a connection is opened within the open timeout,
// TLS handshake included, and each read on it is bounded by the timeout.
// They wait for real timeouts of a few milliseconds, on a loopback
// listener that accepts and then says nothing (nettest.Silent); they
// assert on the errors, never on the time taken.

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/nettest"
	"github.com/synthient-go/synthient/internal/transport"
)

// TestHandshakeWithinTheOpenTimeout: a TLS handshake that gets no answer
// fails when the open timeout runs out, as a dial error that says so
// (os.ErrDeadlineExceeded, as net.Dialer's own timeout); when the caller's
// context ends first, the error is the context's.
func TestHandshakeWithinTheOpenTimeout(t *testing.T) {
	t.Parallel()
	addr := nettest.NewSilent(t, nil).Addr
	tr := transport.New(time.Minute, 20*time.Millisecond, nil)
	defer tr.CloseIdleConnections()

	_, err := tr.DialTLSContext(context.Background(), "tcp", addr)
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "dial", op.Op, "a failed handshake is a dial error: nothing was sent")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "the open timeout")

	tr = transport.New(time.Minute, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = tr.DialTLSContext(ctx, "tcp", addr)
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "dial", op.Op)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the caller's deadline")
	assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "not the open timeout")
}

// TestReadWithinTheTimeout: a read that gets nothing fails when the
// timeout runs out, on a plain connection and after a write.
func TestReadWithinTheTimeout(t *testing.T) {
	t.Parallel()
	addr := nettest.NewSilent(t, nil).Addr
	tr := transport.New(20*time.Millisecond, time.Minute, nil)
	conn, err := tr.DialContext(context.Background(), "tcp", addr)
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	_, err = conn.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	require.NoError(t, err)
	_, err = conn.Read(make([]byte, 1))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "a read timeout: %v", err)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
}
