package synthienttest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	c := newClient(t, srv)
	ctx := context.Background()
	h, err := c.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ok", h.Status)

	r := do(t, rawClient(t), "GET", srv.URL+"/health", "", "")
	assert.Equal(t, 200, r.Status)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.JSONEq(t, `{"status":"ok"}`, string(r.Body))
	assert.Regexp(t, uuidRE, r.Header.Get("X-Request-Id"))
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		assert.Empty(t, r.Header.Values(h), "/health has no %s", h)
	}

	srv.SetUnhealthy("lookup backend unreachable")
	_, err = c.Health(ctx)
	apiErr := errAs[*synthient.APIError](t, err)
	assert.Equal(t, 503, apiErr.Status)
	assert.Equal(t, "lookup backend unreachable", apiErr.Detail)
	r = do(t, rawClient(t), "GET", srv.URL+"/health", "", "")
	assert.JSONEq(t, `{"status":"unhealthy","problems":["lookup backend unreachable"]}`, string(r.Body))
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"), "an unhealthy answer is plain JSON")

	srv.SetUnhealthy()
	_, err = c.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, 5, srv.Arrivals(synthienttest.RouteHealth))
	for _, req := range srv.Requests() {
		assert.False(t, req.APIKey, "the SDK sent /health a key")
	}
}

func TestAccount(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t)
	ctx := context.Background()
	acct, err := newClient(t, srv).Account(ctx)
	require.NoError(t, err)
	assert.Equal(t, "grace@example.com", acct.Email)
	assert.Equal(t, "OWNER", acct.Organization.Relation, "Server.APIKey's relation")
	assert.Equal(t, int64(synthienttest.DefaultCredits), acct.LookupQuota.Credits)
	require.NotNil(t, acct.APIKey)
	assert.Equal(t, "synthienttest", acct.APIKey.Name)

	other, err := newClientKey(t, srv, srv.AddKey([]string{synthienttest.ScopeBasic}, 7)).Account(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ADMIN", other.Organization.Relation, "an added key's relation")
	assert.Equal(t, []string{synthienttest.ScopeBasic}, other.Scopes)
	assert.Equal(t, int64(7), other.LookupQuota.Credits)
	require.NotNil(t, other.APIKey)
	assert.NotEqual(t, acct.APIKey.ID, other.APIKey.ID)
}
