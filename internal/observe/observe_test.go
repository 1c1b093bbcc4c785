package observe_test

// Tests of observe.go: an observer's context lends the call its values,
// never its deadline or cancellation; its headers add, never replace.

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient/internal/observe"
)

type key string

func TestContext(t *testing.T) {
	t.Parallel()
	given, cancel := context.WithTimeout(context.WithValue(context.Background(), key("both"), "given's"), time.Hour)
	given = context.WithValue(given, key("given"), "given's")
	defer cancel()
	assert.Equal(t, given, observe.Context(given, nil), "nil: the given context")
	assert.Equal(t, given, observe.Context(given, given), "the given one: itself")

	returned := context.WithValue(context.WithValue(context.Background(), key("both"), "returned's"), key("returned"), "returned's")
	ctx := observe.Context(given, returned)
	assert.Equal(t, "returned's", ctx.Value(key("both")), "the returned context's value first")
	assert.Equal(t, "returned's", ctx.Value(key("returned")))
	assert.Equal(t, "given's", ctx.Value(key("given")), "then the given one's")
	assert.Nil(t, ctx.Value(key("neither")))
	want, _ := given.Deadline()
	got, ok := ctx.Deadline()
	require.True(t, ok, "the given context's deadline, though the returned one has none")
	assert.Equal(t, want, got)
	cancel()
	<-ctx.Done()
	require.ErrorIs(t, ctx.Err(), context.Canceled, "the given context's cancellation")
	assert.NoError(t, returned.Err())
}

func TestRequest(t *testing.T) {
	t.Parallel()
	r, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://api.test/x", nil)
	require.NoError(t, err)
	r.Header.Set("X-Api-Key", "key")
	ctx := context.WithValue(context.Background(), key("k"), "v")

	same := observe.Request(ctx, r, nil)
	assert.Equal(t, ctx, same.Context())
	assert.Equal(t, r.Header, same.Header, "nothing added: the same header")

	added := http.Header{"traceparent": {"00-abc"}, "X-Api-Key": {"observer's"}, "Baggage": {"a=1"}}
	own := observe.Request(ctx, r, added)
	assert.Equal(t, ctx, own.Context())
	assert.Equal(t, http.Header{"X-Api-Key": {"key"}, "Traceparent": {"00-abc"}, "Baggage": {"a=1"}}, own.Header,
		"added where absent, canonical; the key kept")
	assert.Equal(t, http.Header{"X-Api-Key": {"key"}}, r.Header, "the request itself is left as it was")
	added["Baggage"][0] = "changed"
	assert.Equal(t, "a=1", own.Header.Get("Baggage"), "a copy of the observer's values")
}
