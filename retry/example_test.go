package retry_test

import (
	"context"
	"fmt"
	"time"

	"github.com/synthient-go/synthient/retry"
)

func ExampleParseRetryAfter() {
	now := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{
		"120",                           // delay-seconds
		"Sun, 01 Mar 2026 12:00:30 GMT", // an HTTP-date, against now
		"Sun, 01 Mar 2026 11:00:00 GMT", // a date in the past: no wait
		"1.5",                           // unusable: treated as absent
	} {
		wait, ok := retry.ParseRetryAfter([]string{v}, "", now)
		fmt.Println(wait, ok)
	}

	// With the response's Date field, an HTTP-date is measured against it.
	wait, ok := retry.ParseRetryAfter([]string{"Sun, 01 Mar 2026 12:00:30 GMT"}, "Sun, 01 Mar 2026 12:00:25 GMT", now)
	fmt.Println(wait, ok)
	// Output:
	// 2m0s true
	// 30s true
	// 0s true
	// 0s false
	// 5s true
}

// Decide judges one attempt; its Decision says whether to send the request
// again, after which wait, or why to stop.
func ExampleCall_Decide() {
	p := retry.New(retry.Billed)
	p.Rand = func() float64 { return 1 } // no jitter, for a stable output
	call := p.Start()
	ctx := context.Background()

	d := call.Decide(ctx, retry.Attempt{Status: 429, RetryAfter: []string{"3"}})
	fmt.Println(d.Retry, d.Wait, d.Attempt, d.MaxAttempts)

	d = call.Decide(ctx, retry.Attempt{Status: 503})
	fmt.Println(d.Retry, d.Reason)
	// Output:
	// true 3s 1 3
	// false may_have_been_processed
}
