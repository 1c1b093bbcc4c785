package synthient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/synthienttest"
)

// Raw sends a path below the base URL, in any of the forms it takes, with
// the key, and returns the answer open.
func TestRaw(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	for _, path := range []string{"account/me", "/account/me", "/api/v4/account/me", srv.URL + "/account/me"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			r, err := c.Raw(callCtx(t), http.MethodGet, path, nil)
			require.NoError(t, err)
			defer r.Body.Close() //nolint:errcheck // the answer is read or not needed: Close says nothing the test checks
			assert.Equal(t, 200, r.Status)
			assert.NotEmpty(t, r.RequestID)
			var acct synthient.Account
			require.NoError(t, json.NewDecoder(r.Body).Decode(&acct))
			assert.Equal(t, "grace@example.com", acct.Email)
		})
	}
	// Cleanup, not defer: the subtests above run after this function.
	batchAnswer, err := c.Raw(callCtx(t), http.MethodPost, "lookup/ips", []byte(`{"ips":["1.1.1.1","8.8.8.8"]}`))
	require.NoError(t, err)
	t.Cleanup(func() { _ = batchAnswer.Body.Close() })
	var batch struct{ Results []synthient.IPLookup }
	require.NoError(t, json.NewDecoder(batchAnswer.Body).Decode(&batch))
	assert.Len(t, batch.Results, 2)
	pageAnswer, err := c.Raw(callCtx(t), http.MethodGet, "feeds/proxies/export?limit=2", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pageAnswer.Body.Close() })
	var page synthient.ExportPage
	require.NoError(t, json.NewDecoder(pageAnswer.Body).Decode(&page))
	assert.Len(t, page.Exports, 2, "the query is sent")
}

// A billed route keeps the billed rules: a 503 is not sent again; a free
// route is retried; a route the SDK does not know is billed.
func TestRawRetryClass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, route string
		arrivals                  int
		err                       bool
	}{
		{"a lookup is billed", http.MethodGet, "lookup/ip/8.8.8.8", synthienttest.RouteLookupIP, 1, true},
		{"a batch is billed", http.MethodPost, "lookup/ips", synthienttest.RouteLookupIPs, 1, true},
		{"a domain lookup is billed", http.MethodGet, "lookup/domain/example.com", synthienttest.RouteLookupDomain, 1, true},
		{"the account is standard", http.MethodGet, "account/me", synthienttest.RouteAccount, 2, false},
		{"a listing is standard", http.MethodGet, "feeds/helio/http/export", synthienttest.RouteExports, 2, false},
		{"a meta is standard", http.MethodGet, "feeds/proxies/export/latest/meta", synthienttest.RouteExportMeta, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeServer(t)
			srv.Inject(tt.route, 1, synthienttest.Fault{Status: 503})
			c := fakeClient(t, srv, synthient.WithMaxRetries(1))
			var body []byte
			if tt.method == http.MethodPost {
				body = []byte(`{"ips":["1.1.1.1"]}`)
			}
			r, err := c.Raw(callCtx(t), tt.method, tt.path, body)
			if tt.err {
				var ae *synthient.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, 503, ae.Status)
				var base *synthient.Error
				require.ErrorAs(t, err, &base)
				assert.Equal(t, retry.MayHaveBeenProcessed, base.StopReason)
			} else {
				require.NoError(t, err)
				_ = r.Body.Close()
			}
			assert.Equal(t, tt.arrivals, srv.Arrivals(tt.route), "requests")
		})
	}
}

// A download's API leg comes back as its 307, the presigned URL in its
// Location; a stream comes back open, its events read as they come.
func TestRawRedirectAndStream(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	r, err := c.Raw(callCtx(t), http.MethodGet, "feeds/proxies/export/latest", nil)
	require.NoError(t, err)
	_ = r.Body.Close()
	assert.Equal(t, http.StatusTemporaryRedirect, r.Status)
	assert.True(t, strings.HasPrefix(r.Header.Get("Location"), srv.StorageURL), "Location %q", r.Header.Get("Location"))
	assert.Zero(t, srv.Arrivals(synthienttest.RouteStorage), "not followed")

	r, err = c.Raw(callCtx(t), http.MethodGet, "feeds/proxies/stream", nil)
	require.NoError(t, err)
	defer r.Body.Close() //nolint:errcheck // the answer is read or not needed: Close says nothing the test checks
	line, err := bufio.NewReader(r.Body).ReadString('\n')
	require.NoError(t, err)
	var ev synthient.ProxyEvent
	require.NoError(t, json.Unmarshal([]byte(line), &ev))
	assert.NotEmpty(t, ev.IP)
}

// A path that leaves the base URL, or a method that is none, is refused
// before anything is sent.
func TestRawRefusesPaths(t *testing.T) {
	t.Parallel()
	c, srv := setup(t)
	for _, path := range []string{"", "https://evil.example/api/v4/account/me", "//evil.example/x", "../health",
		"feeds/../../x", "feeds/%2e%2e/%2e%2e/x", "account/me#frag", "lookup/ip/1.1.1.1?x=%zz"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			_, err := c.Raw(callCtx(t), http.MethodGet, path, nil)
			assert.ErrorIs(t, err, synthient.ErrInvalidArgument, "Raw(%q)", path)
		})
	}
	// A method is an RFC 9110 token: nothing else reaches net/http.
	for _, method := range []string{"GET /x", "GET@evil", "", "G\x00T", "PO\"ST", "GET(x)", "GÉT", "GET{}", "GET\x7f"} {
		_, err := c.Raw(callCtx(t), method, "health", nil)
		require.ErrorIs(t, err, synthient.ErrInvalidArgument, "Raw(%q)", method)
		assert.Contains(t, err.Error(), fmt.Sprintf("method %q is not an HTTP method", method))
	}
	assert.Empty(t, srv.Requests(), "requests sent")
	var ae *synthient.APIError
	r, err := c.Raw(callCtx(t), http.MethodGet, "no/such/route", nil)
	require.ErrorAs(t, err, &ae, "an unknown route: %v", err)
	assert.Equal(t, 404, ae.Status)
	assert.Nil(t, r)
}

// Raw sends any path of the API with the client's key and the retry class
// of its route, for what no typed method covers (the CLI's api command).
func ExampleClient_Raw() {
	srv := synthienttest.NewServer()
	defer srv.Close()
	c, err := srv.NewClient()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	r, err := c.Raw(context.Background(), http.MethodGet, "account/me", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Body.Close() //nolint:errcheck // the answer is read or not needed: Close says nothing the test checks
	var acct struct {
		Email string `json:"email"`
	}
	if err := json.NewDecoder(r.Body).Decode(&acct); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Status, acct.Email)
	// Output: 200 grace@example.com
}
