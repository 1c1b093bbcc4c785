package retry_test

import (
	"context"
	"testing"
	"time"

	"github.com/synthient-go/synthient/retry"
)

// TestDecideSuccessAllocatesNothing: judging a first attempt that
// succeeded, the hot path of every call, allocates nothing, with a quota
// and a deadline.
func TestDecideSuccessAllocatesNothing(t *testing.T) {
	p := retry.New(retry.Standard)
	p.Quota = retry.NewQuota(500, 10, 5)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	var call retry.Call
	for _, a := range []retry.Attempt{
		{Status: 200},
		{Status: 307, Accepted: true, RetryAfter: []string{"5"}},
	} {
		allocs := testing.AllocsPerRun(1000, func() {
			call.Reset(p)
			if d := call.Decide(ctx, a); d.Retry || d.Reason != "" {
				t.Fatalf("decision %+v, want success", d)
			}
		})
		if allocs != 0 {
			t.Errorf("Decide(%+v) allocates %v times per call, want 0", a, allocs)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	p := retry.New(retry.Standard)
	p.Quota = retry.NewQuota(500, 10, 5)
	ctx := context.Background()
	b.Run("success", func(b *testing.B) {
		b.ReportAllocs()
		var call retry.Call
		a := retry.Attempt{Status: 200}
		for b.Loop() {
			call.Reset(p)
			call.Decide(ctx, a)
		}
	})
	b.Run("retry-after-503", func(b *testing.B) {
		b.ReportAllocs()
		var call retry.Call
		a := retry.Attempt{Status: 503, RetryAfter: []string{"1"}}
		for b.Loop() {
			call.Reset(p)
			call.Decide(ctx, a)
		}
	})
}
