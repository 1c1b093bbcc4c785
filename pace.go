// Rate-limit pacing, the client's side: the model of each bucket is
// package internal/pace; this file names the buckets, holds a model for
// each and reads the RateLimit headers. The call runs the model around
// each attempt (call.go: pace, learn, holdStop).

package synthient

import (
	"net/http"
	"time"

	"github.com/synthient-go/synthient/internal/pace"
)

// bucket names the rate limit an operation counts against (api-v4.md §5).
// The zero value, noBucket, is never paced.
type bucket uint8

const (
	noBucket       bucket = iota // /health and the storage host: no rate limit
	lookupBucket                 // LookupIP and LookupIPs, which the API counts as one
	domainBucket                 // LookupDomain
	accountBucket                // Account
	streamBucket                 // opening a stream
	exportBucket                 // export listings and meta
	downloadBucket               // the API leg of a download
	bucketCount
)

var bucketNames = [bucketCount]string{"", "lookup", "domain", "account", "stream", "export", "download"}

// String returns the bucket's name for logs, such as "lookup".
func (b bucket) String() string { return bucketNames[b] }

// pacer holds the client's model of each rate-limit bucket (package
// internal/pace). Its methods are safe for concurrent use. A nil *pacer
// paces nothing (WithoutPacing).
type pacer struct {
	// maxHold is the longest turn an attempt waits for, the client's
	// MaxRetryAfter: the model is only a model, and a longer wait (from
	// headers that say a bucket refills a token an hour, say) is not taken
	// on its word: the attempt goes, and the server answers.
	maxHold time.Duration
	buckets [bucketCount]pace.Bucket
}

// newPacer returns a pacer that knows nothing yet, that holds an attempt
// at most maxHold.
func newPacer(maxHold time.Duration) *pacer {
	return &pacer{maxHold: maxHold}
}

// rateLimitOf reads the RateLimit headers of h; ok reports that all three
// are present and usable (a positive limit). It allocates nothing.
func rateLimitOf(h http.Header) (limit, remaining int, reset time.Duration, ok bool) {
	limit, okL := headerInt(h, "Ratelimit-Limit")
	remaining, okR := headerInt(h, "Ratelimit-Remaining")
	seconds, okS := headerInt(h, "Ratelimit-Reset")
	if !okL || !okR || !okS || limit <= 0 {
		return 0, 0, 0, false
	}
	return limit, remaining, resetDuration(seconds), true
}
