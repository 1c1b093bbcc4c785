package retryhttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient/retry"
	"github.com/synthient-go/synthient/retry/retryhttp"
)

// A plain go-retryablehttp user plugs the Standard class in: a 503 is sent
// again after a jittered backoff, and the 200 that follows is the result.
func ExampleClient() {
	var arrivals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrivals.Add(1) == 1 {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, `{"ok":true}`)
	}))
	defer srv.Close()
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()

	p := retry.New(retry.Standard)
	p.Base, p.Max = time.Millisecond, 2*time.Millisecond // keep the example fast

	// One Call, and so one client, per call: it counts that call's retries.
	call := p.Start()
	client := retryhttp.Client(call, &http.Client{Transport: transport})
	resp, err := client.Get(srv.URL + "/account/me")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer resp.Body.Close() //nolint:errcheck // closing a response body loses no data
	fmt.Println(resp.Status, "after", arrivals.Load(), "arrivals,", call.Retries(), "retry")
	// Output: 200 OK after 2 arrivals, 1 retry
}
