// Package retry holds the Synthient API's retry rules as plain policy: which
// failures of an operation may be sent again (its Class), how long to wait
// before each retry, and why a call stops. It knows no HTTP client library:
// package retryhttp (retry/retryhttp) runs it on go-retryablehttp, for the
// synthient client and for anyone else.
//
// # Classes
//
// Billed operations (lookups, health) are sent again only after a 429 with a
// usable Retry-After: the rate limiter turned the request away before any
// work was done, so nothing is charged twice. Standard operations (account,
// export listings and meta, the API leg of a download, opening a stream) are
// also sent again after a 500, 502, 503 or 504 and after a network failure
// or timeout before any response, except a TLS error. Never is for what must
// not be repeated: a storage download, anything after a 2xx response's
// headers. A 429 without a usable Retry-After is returned at once in every
// class.
//
// # Waiting
//
// The wait before retry k is drawn uniformly from [0.75*b, b] with
// b = min(Base*2^k, Max), and is never shorter than the response's
// Retry-After. A Retry-After longer than MaxRetryAfter stops the call at
// once. Before every wait the caller's deadline is checked: a wait that
// would pass it stops the call instead of being shortened. MaxTotalDelay
// bounds the sum of a call's waits, and a Quota the retries of all calls
// that share it. ParseRetryAfter reads Retry-After strictly: delay-seconds
// or one of RFC 9110's three HTTP-date forms, anything else counts as
// absent.
//
// # Use
//
// A Policy is configuration; Start gives the Call that judges one call's
// attempts with Decide. Every decision that stops carries a StopReason.
// ClassifyError tells what a transport error means for retrying. With
// go-retryablehttp, retryhttp.Client builds a client for one call, or
// retryhttp.CheckRetry and retryhttp.Backoff plug into one of your own;
// retryhttp.NoReplay keeps net/http from re-sending a request the policy
// did not allow:
//
//	call := retry.New(retry.Standard).Start() // one Call per call
//	resp, err := retryhttp.Client(call, sharedHTTPClient).Do(req)
//	if err == nil && call.Last().Reason != "" {
//		log.Printf("gave up: %s", call.Last().Reason)
//	}
//
// A Policy is safe for concurrent use as long as it is not modified; a Call
// belongs to one call at a time; a Quota is safe for concurrent use.
package retry
