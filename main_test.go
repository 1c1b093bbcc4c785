package synthient_test

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/synthient-go/synthient"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testKey is the API key the tests use; no error or log line may hold it.
const testKey = "test-key-6f1d2c3b-secret"

// fastBackoff keeps retries in tests from sleeping through a real backoff.
var fastBackoff = synthient.WithBackoff(time.Millisecond, 2*time.Millisecond)

// newClient returns a client for the API at baseURL (including /api/v4)
// with tiny backoffs, closed when the test ends.
func newClient(t testing.TB, baseURL string, opts ...synthient.Option) *synthient.Client {
	t.Helper()
	all := append([]synthient.Option{synthient.WithBaseURL(baseURL), fastBackoff}, opts...)
	c, err := synthient.NewClient(testKey, all...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// logBuffer is a concurrency-safe buffer for a JSON slog handler.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newLogger returns a Debug-level JSON logger writing to a new buffer.
func newLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
