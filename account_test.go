package synthient_test

// Tests of account.go: Account and Health.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
)

// accountExample is the JSON example of /account/me of the API reference
// (api-v4.md §7).
const accountExample = `{
  "first_name": "Grace",
  "last_name": "Hopper",
  "email": "grace@example.com",
  "organization": {"id": "2f0c9d1e-6b7a-4c55-9e1d-0a4b3c2d1e0f", "name": "Example Labs", "relation": "ADMIN"},
  "scopes": ["BASIC", "PROXY_FEEDS", "PROXY_FIREHOSE"],
  "lookup_quota": {"credits": 49910, "resets_in": 1209600},
  "api_key": {"id": "7d3b0a52-1c9e-4f0b-8a6d-2e5f4c3b2a19", "name": "ci-key", "created_at": "2026-09-01T12:00:00Z"}
}`

func TestAccountDecodesEveryField(t *testing.T) {
	t.Parallel()
	api := newMockAPI(t, answerJSON(http.StatusOK, accountExample))
	c := api.Client(t)
	got, err := c.Account(context.Background())
	require.NoError(t, err)
	a := api.RequireOne(t, http.MethodGet, "/api/v4/account/me")
	assert.Equal(t, testKey, a.Header.Get("X-Api-Key"))
	require.NotNil(t, got.APIKey, "APIKey")
	created := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	assert.True(t, got.APIKey.CreatedAt.Equal(created), "APIKey.CreatedAt = %v, want %v", got.APIKey.CreatedAt, created)
	assert.Equal(t, &synthient.Account{
		FirstName: "Grace", LastName: "Hopper", Email: "grace@example.com",
		Organization: synthient.Organization{ID: "2f0c9d1e-6b7a-4c55-9e1d-0a4b3c2d1e0f", Name: "Example Labs", Relation: "ADMIN"},
		Scopes:       []string{"BASIC", "PROXY_FEEDS", "PROXY_FIREHOSE"},
		LookupQuota:  synthient.LookupQuota{Credits: 49910, ResetsIn: 1209600},
		APIKey:       &synthient.APIKeyInfo{ID: "7d3b0a52-1c9e-4f0b-8a6d-2e5f4c3b2a19", Name: "ci-key", CreatedAt: got.APIKey.CreatedAt},
	}, got)
	assert.Equal(t, 14*24*time.Hour, got.LookupQuota.ResetsInDuration(), "ResetsInDuration")

	without := strings.Replace(accountExample, `,
  "api_key": {"id": "7d3b0a52-1c9e-4f0b-8a6d-2e5f4c3b2a19", "name": "ci-key", "created_at": "2026-09-01T12:00:00Z"}`, "", 1)
	require.NotEqual(t, accountExample, without, "the example has no api_key to remove")
	c = newMockAPI(t, answerJSON(http.StatusOK, without)).Client(t)
	got, err = c.Account(context.Background())
	require.NoError(t, err, "without api_key")
	assert.Nil(t, got.APIKey, "APIKey, when absent")
	assert.Equal(t, "grace@example.com", got.Email, "Email")
}

func TestHealth(t *testing.T) {
	t.Parallel()
	t.Run("ok", func(t *testing.T) {
		t.Parallel()
		api := newMockAPI(t, answerJSON(http.StatusOK, `{"status":"ok"}`))
		c := api.Client(t)
		h, err := c.Health(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "ok", h.Status, "Status")
		assert.Empty(t, h.Problems, "Problems")
		a := api.RequireOne(t, http.MethodGet, "/api/v4/health")
		assert.NotContains(t, a.Header, http.CanonicalHeaderKey("X-Api-Key"), "X-Api-Key sent to /health")
		for k, vs := range a.Header {
			for _, v := range vs {
				assert.NotContains(t, v, testKey, "header %s holds the key", k)
			}
		}
	})
	t.Run("unhealthy", func(t *testing.T) {
		t.Parallel()
		unhealthy := answerJSON(http.StatusServiceUnavailable, `{"status":"unhealthy","problems":["lookup backend unreachable","feed store down"]}`)
		api := newMockAPI(t, unhealthy.Then(answerJSON(http.StatusOK, `{"status":"ok"}`)))
		c := api.Client(t)
		_, err := c.Health(context.Background())
		ae := requireAPIErr(t, err, http.StatusServiceUnavailable)
		assert.Contains(t, ae.Detail, "lookup backend unreachable", "Detail, want both problems")
		assert.Contains(t, ae.Detail, "feed store down", "Detail, want both problems")
		reqs := api.Requests()
		require.Len(t, reqs, 1, "requests sent")
		assert.Empty(t, reqs[0].Header.Get("X-Api-Key"), "X-Api-Key sent to /health")
	})
}
