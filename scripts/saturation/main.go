// Command saturation measures a team's clients under one saturated rate
// limit (issues 13 and 23): callers calling LookupIP in a loop against the
// fake API, whose lookup bucket is set to rate per second with burst, for
// a duration, each call with its own timeout. The callers are split
// between procs OS processes (this binary started again, procs times) and,
// in each, between clients *synthient.Client values, all with the same
// key: one team on one bucket. Each setup runs with pacing on, with
// synthient.WithoutPacing, and as issue 13's client (no pacing, 5
// retry-quota tokens per 429 retry), each against a fresh fake, and prints
// per run the calls that succeeded against the rate limit's allowance
// (burst + rate*duration: the efficiency), the requests the fake received
// and the share it answered 429, the calls that failed, and the p50 and
// p99 latency of the calls that ended.
//
//	go run ./scripts/saturation [-procs 1] [-clients 1] [-goroutines 64] [-rate 20] [-burst 20] [-duration 15s] [-timeout 10s] [-pacing on|off|issue13]
//
// A call still running when the run ends is cut by it and counted apart,
// neither a success nor a failure. The figures are in docs/performance.md,
// "Rate-limit saturation" and "A team on one rate limit"; scripts/bench.sh
// runs this command too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// config is the run's flags.
type config struct {
	duration, timeout          time.Duration
	procs, clients, goroutines int
	burst                      int
	rate                       float64
}

// result is what one run, or one process of it, counted.
type result struct {
	Successes, Failures, Cut int
	Reasons                  map[string]int  // failures by stop reason
	Latencies                []time.Duration // of the calls that ended, success or failure
	requests, throttled      int             // the fake's counts, in the parent only
}

// modes are the clients compared, by name.
var modes = []struct {
	name string
	opts []synthient.Option
}{
	{"on", nil},
	{"off", []synthient.Option{synthient.WithoutPacing()}},
	// Issue 13's client: no pacing, and 5 quota tokens per 429 retry.
	{"issue13", []synthient.Option{synthient.WithoutPacing(), synthient.WithRetryQuota(500, 10, 5)}},
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 15*time.Second, "how long the callers start calls")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "each call's context timeout")
	flag.IntVar(&cfg.procs, "procs", 1, "OS processes the callers are split between")
	flag.IntVar(&cfg.clients, "clients", 1, "clients in each process, the process's callers split between them")
	flag.IntVar(&cfg.goroutines, "goroutines", 64, "callers in all")
	flag.Float64Var(&cfg.rate, "rate", 20, "the lookup bucket's refill, per second")
	flag.IntVar(&cfg.burst, "burst", 20, "the lookup bucket's burst")
	only := flag.String("pacing", "", `run only with pacing "on", "off" or "issue13" (off, and 5 quota tokens per 429 retry); all by default`)
	// A child process's own flags: the fake to call, its key, the
	// callers of this process, and when they start.
	child := flag.Bool("child", false, "run as one process of a run (internal)")
	url := flag.String("url", "", "the fake's base URL (internal)")
	key := flag.String("key", "", "the fake's key (internal)")
	start := flag.Int64("start", 0, "when the callers start, in Unix nanoseconds (internal)")
	flag.Parse()
	if err := check(cfg); err != nil {
		fail(err)
	}
	if *child {
		mode, ok := modeOpts(*only)
		if !ok {
			fail(fmt.Errorf("unknown -pacing %q", *only))
		}
		r, err := runProcess(cfg, *url, *key, time.Unix(0, *start), mode)
		if err != nil {
			fail(err)
		}
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fail(err)
		}
		return
	}
	allowed := cfg.burst + int(cfg.rate*cfg.duration.Seconds())
	fmt.Printf("# %d callers in %d process(es) x %d client(s), LookupIP for %v, %v per call; lookup bucket %g/s, burst %d: %d allowed\n",
		cfg.goroutines, cfg.procs, cfg.clients, cfg.duration, cfg.timeout, cfg.rate, cfg.burst, allowed)
	fmt.Printf("%-8s %10s %10s %9s %9s %8s %7s %6s %8s %8s  %s\n",
		"pacing", "successes", "efficiency", "requests", "429s", "429 %", "failed", "cut", "p50", "p99", "failures by stop reason")
	for _, mode := range modes {
		if *only != "" && *only != mode.name {
			continue
		}
		r, err := run(cfg, mode.name)
		if err != nil {
			fail(err)
		}
		p50, p99 := percentile(r.Latencies, 0.50), percentile(r.Latencies, 0.99)
		fmt.Printf("%-8s %10d %10.3f %9d %9d %7.2f%% %7d %6d %8s %8s  %s\n", mode.name,
			r.Successes, float64(r.Successes)/float64(allowed), r.requests, r.throttled,
			100*float64(r.throttled)/float64(max(r.requests, 1)), r.Failures, r.Cut,
			p50.Round(time.Millisecond), p99.Round(time.Millisecond), reasons(r.Reasons))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "saturation:", err)
	os.Exit(1)
}

// check refuses flags that would make no run.
func check(cfg config) error {
	switch {
	case cfg.procs < 1 || cfg.clients < 1:
		return errors.New("-procs and -clients must be at least 1")
	case cfg.goroutines < cfg.procs*cfg.clients:
		return errors.New("-goroutines must be at least -procs times -clients")
	case cfg.rate <= 0 || cfg.burst < 1:
		return errors.New("-rate must be positive and -burst at least 1")
	}
	return nil
}

// modeOpts returns the client options of the mode named name.
func modeOpts(name string) ([]synthient.Option, bool) {
	for _, m := range modes {
		if m.name == name {
			return m.opts, true
		}
	}
	return nil, false
}

// run makes one measured run of mode against a fresh fake: it starts the
// run's processes, this binary again with -child, collects what each
// counted, and adds the fake's counts of requests and 429s.
func run(cfg config, mode string) (result, error) {
	srv := synthienttest.NewServer(synthienttest.WithRateLimit(synthienttest.BucketLookup, cfg.rate, cfg.burst))
	defer srv.Close()
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	// The processes take a moment to start: they all begin at start.
	start := time.Now().Add(500*time.Millisecond + time.Duration(cfg.procs)*50*time.Millisecond)
	total := result{Reasons: map[string]int{}}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for i := range cfg.procs {
		callers := cfg.goroutines / cfg.procs
		if i < cfg.goroutines%cfg.procs {
			callers++
		}
		args := []string{"-child", "-url", srv.URL, "-key", srv.APIKey, "-pacing", mode,
			"-start", strconv.FormatInt(start.UnixNano(), 10),
			"-goroutines", strconv.Itoa(callers), "-clients", strconv.Itoa(cfg.clients),
			"-duration", cfg.duration.String(), "-timeout", cfg.timeout.String(),
			"-rate", strconv.FormatFloat(cfg.rate, 'g', -1, 64), "-burst", strconv.Itoa(cfg.burst)}
		wg.Go(func() {
			r, err := child(self, args)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("process %d: %w", i, err))
				return
			}
			total.add(r)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	for _, r := range srv.Requests() {
		total.requests++
		if r.Status == http.StatusTooManyRequests {
			total.throttled++
		}
	}
	return total, nil
}

// child runs one process of a run and decodes what it printed.
func child(self string, args []string) (result, error) {
	cmd := exec.Command(self, args...) //nolint:gosec,noctx // this program itself (os.Executable), run again as one process of the team; nothing cancels a run: the process ends after -duration
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, err
	}
	var r result
	return r, json.Unmarshal(out, &r)
}

// runProcess is one process of a run: cfg.clients clients on the fake at
// url, with key and the options of mode, and cfg.goroutines callers split
// between them, calling from start for cfg.duration.
func runProcess(cfg config, url, key string, start time.Time, mode []synthient.Option) (result, error) {
	clients := make([]*synthient.Client, cfg.clients)
	for i := range clients {
		c, err := synthient.NewClient(key, append([]synthient.Option{synthient.WithBaseURL(url)}, mode...)...)
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		clients[i] = c
	}
	time.Sleep(time.Until(start))
	// The run's end cancels the calls in progress; it is no deadline of
	// theirs, which is their own timeout alone.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	time.AfterFunc(cfg.duration, stop)
	var (
		mu  sync.Mutex
		res = result{Reasons: map[string]int{}}
		wg  sync.WaitGroup
	)
	var next atomic.Uint32 // the address of the next call
	for i := range cfg.goroutines {
		c := clients[i%len(clients)]
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				err := call(ctx, c, cfg.timeout, addr(next.Add(1)))
				took := time.Since(t0)
				mu.Lock()
				res.count(ctx, err, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return res, nil
}

// call makes one LookupIP call of ip with its own timeout, below the
// run's ctx.
func call(ctx context.Context, c *synthient.Client, timeout time.Duration, ip netip.Addr) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := c.LookupIP(ctx, ip)
	return err
}

// addr returns the n-th address of 10.0.0.0/8: every call of a run looks
// up an address of its own, as identical calls in flight would share one
// request.
func addr(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)}) //nolint:gosec // n's low three bytes, cut on purpose
}

// count adds a call's outcome: a success, a call cut by the end of the run
// (runCtx done and the error says so), or a failure; and, for a call that
// ended, its latency took.
func (r *result) count(runCtx context.Context, err error, took time.Duration) {
	var e *synthient.Error
	switch {
	case err == nil:
		r.Successes++
	case runCtx.Err() != nil && errors.Is(err, runCtx.Err()):
		r.Cut++
		return
	default:
		r.Failures++
		reason := "other"
		if errors.As(err, &e) && e.StopReason != "" {
			reason = string(e.StopReason)
		}
		r.Reasons[reason]++
	}
	r.Latencies = append(r.Latencies, took)
}

// add adds what one process counted.
func (r *result) add(o result) {
	r.Successes += o.Successes
	r.Failures += o.Failures
	r.Cut += o.Cut
	for k, n := range o.Reasons {
		r.Reasons[k] += n
	}
	r.Latencies = append(r.Latencies, o.Latencies...)
}

// percentile returns the p-quantile of ds (nearest rank), 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
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
