// Command saturation measures one client under a saturated rate limit
// (issue 13): goroutines calling LookupIP in a loop on one client against
// the fake API, whose lookup bucket is set to rate per second with burst,
// for a duration, each call with its own timeout. It runs with pacing on,
// with synthient.WithoutPacing, and as issue 13's client (no pacing, 5
// retry-quota tokens per 429 retry), each against a fresh fake, and prints
// per run the calls that succeeded (against the rate limit's allowance,
// burst + rate*duration), the requests the fake received and the 429s it
// answered, and the calls that failed.
//
//	go run ./scripts/saturation [-duration 15s] [-goroutines 64] [-rate 20] [-burst 20] [-timeout 10s] [-pacing on|off]
//
// A call still running when the run ends is cut by it and counted apart,
// neither a success nor a failure. The figures are in docs/performance.md,
// "Rate-limit saturation"; scripts/bench.sh runs this command too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// config is the run's flags.
type config struct {
	duration, timeout time.Duration
	goroutines, burst int
	rate              float64
}

// result is what one run counted.
type result struct {
	successes, failures, cut int
	requests, throttled      int
	reasons                  map[string]int // failures by stop reason
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 15*time.Second, "how long the goroutines start calls")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "each call's context timeout")
	flag.IntVar(&cfg.goroutines, "goroutines", 64, "goroutines sharing the client")
	flag.Float64Var(&cfg.rate, "rate", 20, "the lookup bucket's refill, per second")
	flag.IntVar(&cfg.burst, "burst", 20, "the lookup bucket's burst")
	only := flag.String("pacing", "", `run only with pacing "on", "off" or "issue13" (off, and 5 quota tokens per 429 retry); all by default`)
	flag.Parse()
	allowed := cfg.burst + int(cfg.rate*cfg.duration.Seconds())
	fmt.Printf("# %d goroutines, one client, LookupIP for %v, %v per call; lookup bucket %g/s, burst %d: %d allowed\n",
		cfg.goroutines, cfg.duration, cfg.timeout, cfg.rate, cfg.burst, allowed)
	fmt.Printf("%-8s %10s %10s %9s %9s %8s %7s %6s  %s\n",
		"pacing", "successes", "of allowed", "requests", "429s", "429 %", "failed", "cut", "failures by stop reason")
	for _, mode := range []struct {
		name string
		opts []synthient.Option
	}{
		{"on", nil},
		{"off", []synthient.Option{synthient.WithoutPacing()}},
		// Issue 13's client: no pacing, and 5 quota tokens per 429 retry.
		{"issue13", []synthient.Option{synthient.WithoutPacing(), synthient.WithRetryQuota(500, 10, 5)}},
	} {
		if *only != "" && *only != mode.name {
			continue
		}
		r, err := run(cfg, mode.opts...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "saturation:", err)
			os.Exit(1)
		}
		fmt.Printf("%-8s %10d %9.1f%% %9d %9d %7.2f%% %7d %6d  %s\n", mode.name,
			r.successes, 100*float64(r.successes)/float64(allowed), r.requests, r.throttled,
			100*float64(r.throttled)/float64(max(r.requests, 1)), r.failures, r.cut, reasons(r.reasons))
	}
}

// run makes one measured run against a fresh fake, with the client
// options opts.
func run(cfg config, opts ...synthient.Option) (result, error) {
	srv := synthienttest.NewServer(synthienttest.WithRateLimit(synthienttest.BucketLookup, cfg.rate, cfg.burst))
	defer srv.Close()
	c, err := srv.NewClient(opts...)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	// The run's end cancels the calls in progress; it is no deadline of
	// theirs, which is their own timeout alone.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	time.AfterFunc(cfg.duration, stop)
	var (
		mu  sync.Mutex
		res = result{reasons: map[string]int{}}
		wg  sync.WaitGroup
	)
	for range cfg.goroutines {
		wg.Go(func() {
			for ctx.Err() == nil {
				err := call(ctx, c, cfg.timeout)
				mu.Lock()
				res.count(ctx, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, r := range srv.Requests() {
		res.requests++
		if r.Status == http.StatusTooManyRequests {
			res.throttled++
		}
	}
	return res, nil
}

// call makes one LookupIP call with its own timeout, below the run's ctx.
func call(ctx context.Context, c *synthient.Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := c.LookupIP(ctx, netip.MustParseAddr("198.51.100.23"))
	return err
}

// count adds a call's outcome: a success, a call cut by the end of the run
// (runCtx done and the error says so), or a failure.
func (r *result) count(runCtx context.Context, err error) {
	var e *synthient.Error
	switch {
	case err == nil:
		r.successes++
	case runCtx.Err() != nil && errors.Is(err, runCtx.Err()):
		r.cut++
	default:
		r.failures++
		reason := "other"
		if errors.As(err, &e) && e.StopReason != "" {
			reason = string(e.StopReason)
		}
		r.reasons[reason]++
	}
}

// reasons formats failures by reason, most first.
func reasons(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
