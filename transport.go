package synthient

import (
	"net/http"

	"github.com/synthient-go/synthient/retry/retryhttp"
)

// newHTTPClient returns the http.Client that sends every request of a
// client through rt:
//   - retryhttp.NoReplay makes each request one that net/http never sends again
//     on its own, and has no CloseIdleConnections: go-retryablehttp, which
//     calls the http.Client's whenever it gives up on a call, cannot empty
//     the shared pool;
//   - locationAside moves the Location of every 3xx aside;
//   - no redirect is followed: JSON endpoints take none, and downloads
//     follow their one 307 themselves.
func newHTTPClient(rt http.RoundTripper) *http.Client {
	return &http.Client{
		Transport:     retryhttp.NoReplay(locationAside{rt}),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// locationAside is a RoundTripper that moves the Location of every 3xx
// aside, to movedLocation: http.Client parses a Location before it asks
// CheckRedirect, and one that does not parse fails the request with the
// URL, presigned query and all, in the error's text; without a Location
// it returns the 3xx as it is.
type locationAside struct{ rt http.RoundTripper }

func (t locationAside) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if resp != nil && resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header != nil {
		if v, ok := resp.Header["Location"]; ok {
			delete(resp.Header, "Location")
			resp.Header[movedLocation] = v
		}
	}
	return resp, err
}

// movedLocation is the header key locationAside keeps a 3xx's Location
// under. No server can send it: net/http refuses a header name with
// parentheses.
const movedLocation = "Location (moved aside)"

// location returns the Location of a response, moved aside by
// locationAside or not.
func location(h http.Header) string {
	if v := h[movedLocation]; len(v) > 0 {
		return v[0]
	}
	return h.Get("Location")
}

// headerCopy returns a copy of a response's header as the server sent it,
// the Location back in place.
func headerCopy(h http.Header) http.Header {
	c := h.Clone()
	if v, ok := c[movedLocation]; ok {
		delete(c, movedLocation)
		c["Location"] = v
	}
	return c
}
