package synthient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synthient-go/synthient"
	"github.com/synthient-go/synthient/synthienttest"
)

// The soak: many mixed calls from many goroutines against one fake, with
// about one call in ten meeting an injected fault of some kind. It checks
// what must hold however the calls interleave: no goroutine or file
// descriptor is left behind, every failure is a typed error, and no call
// sent more requests than its retry class allows.

const (
	skCalls      = 10_000
	skWorkers    = 64
	skMaxRetries = 2
	skSeed       = 20260610
	// skOversized bounds the 16 MiB stream lines, which cost the most.
	skOversized = 4
)

type skKind int

const (
	skLookupIP skKind = iota
	skLookupIPs
	skLookupDomain
	skAccount
	skExportMeta
	skListExports
	skDownload
	skStream
	skKinds
)

var skKindNames = [...]string{"LookupIP", "LookupIPs", "LookupDomain", "Account", "ExportMeta", "ListExports", "DownloadExport", "Stream"}

// skWeights is the mix of calls, out of 10.
var skWeights = [skKinds]int{2, 1, 2, 1, 1, 1, 1, 1}

// skRoute is the API route each kind of call sends to.
var skRoute = [skKinds]string{
	synthienttest.RouteLookupIP, synthienttest.RouteLookupIPs, synthienttest.RouteLookupDomain,
	synthienttest.RouteAccount, synthienttest.RouteExportMeta, synthienttest.RouteExports,
	synthienttest.RouteDownload, synthienttest.RouteStream,
}

var skBilled = [skKinds]bool{skLookupIP: true, skLookupIPs: true, skLookupDomain: true}

// skFaults are the faults a call may meet: every status the rules name,
// and every way a connection can fail. Slow headers outlast the client's
// 200 ms timeout; a slow body stays within it.
var skFaults = []synthienttest.Fault{
	{Kind: synthienttest.FaultStatus, Status: 429, RetryAfter: "0"},
	{Kind: synthienttest.FaultStatus, Status: 429},
	{Kind: synthienttest.FaultStatus, Status: 500},
	{Kind: synthienttest.FaultStatus, Status: 502},
	{Kind: synthienttest.FaultStatus, Status: 503},
	{Kind: synthienttest.FaultStatus, Status: 504},
	{Kind: synthienttest.FaultStatus, Status: 404},
	{Kind: synthienttest.FaultCloseAfterRequest},
	{Kind: synthienttest.FaultResetMidBody},
	{Kind: synthienttest.FaultSlowHeaders, Delay: 400 * time.Millisecond},
	{Kind: synthienttest.FaultSlowBody, Size: 512, Delay: 2 * time.Millisecond},
	{Kind: synthienttest.FaultTruncatedBody},
}

var skOversizedLine = synthienttest.Fault{Kind: synthienttest.FaultOversizedLine, Size: synthient.MaxLineSize + 64}

// skSeen is an answer as the response hook saw it.
type skSeen struct {
	status     int
	retryAfter bool
}

// skResult is what one call did.
type skResult struct {
	kind skKind
	path string // the unique escaped path of a LookupIP or LookupDomain call
	err  error
}

// skOpenFDs counts this process's open file descriptors.
func skOpenFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(ents)
}

// skSettle waits (up to 10 s, polling) until f() <= want, and returns f().
func skSettle(f func() int, want int) int {
	deadline := time.Now().Add(10 * time.Second)
	for n := f(); ; n = f() {
		if n <= want || time.Now().After(deadline) {
			return n
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

// skTyped reports why err is not a typed error of the SDK, or "".
func skTyped(err error) string {
	var base *synthient.Error
	if !errors.As(err, &base) {
		return "errors.As(err, new(*synthient.Error)) fails"
	}
	switch e := err.(type) {
	case *synthient.APIError, *synthient.ConnectionError, *synthient.TimeoutError, *synthient.DecodeError:
		return ""
	case *synthient.Error:
		if e.StopReason == "" {
			return "a bare *synthient.Error without a stop reason"
		}
		return ""
	}
	return fmt.Sprintf("a %T", err)
}

func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: skipped with -short")
	}
	clk := synthienttest.NewManualClock(time.Date(2026, time.June, 10, 14, 20, 0, 0, time.UTC))
	srv := synthienttest.NewServer(
		synthienttest.WithClock(clk.Now),
		synthienttest.WithoutRateLimits(),
		synthienttest.WithCredits(1<<40),
		synthienttest.WithStreamLimit(10*skWorkers),
		synthienttest.WithEventInterval(2*time.Millisecond),
		synthienttest.WithExportSize(4096),
	)
	defer srv.Close()

	goroutines0, fds0 := runtime.NumGoroutine(), skOpenFDs(t)

	// The hook learns the status of every answer that reached the client,
	// and whether a 429 carried a Retry-After (by request id), and counts
	// the download redirects.
	var (
		seen      sync.Map // request id -> skSeen
		redirects atomic.Int64
	)
	hook := func(ri *synthient.ResponseInfo) error {
		seen.Store(ri.RequestID, skSeen{status: ri.Status, retryAfter: ri.Header.Get("Retry-After") != ""})
		if ri.Status == http.StatusTemporaryRedirect {
			redirects.Add(1)
		}
		return nil
	}
	// The default retry quota stays on: with nine calls in ten succeeding
	// it rarely runs dry, and when it does the call stops with
	// quota_exhausted, which the checks below accept.
	c, err := synthient.NewClient(srv.APIKey,
		synthient.WithBaseURL(srv.URL), fastBackoff,
		synthient.WithMaxRetries(skMaxRetries),
		synthient.WithTimeout(200*time.Millisecond),
		synthient.WithResponseHook(hook),
	)
	if err != nil {
		t.Fatal(err)
	}

	exportIDs := []string{"latest", "2026-06-09", "2026-06-08", "2026-06-10/00", "2026-06-10/07", "2026-06-10/13"}
	var (
		next      atomic.Int64
		oversized atomic.Int64
		faulted   atomic.Int64
		results   = make([]skResult, skCalls)
		wg        sync.WaitGroup
	)
	start := time.Now()
	for range skWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= skCalls {
					return
				}
				rng := rand.New(rand.NewPCG(skSeed, uint64(i)))
				var kind skKind
				for w := rng.IntN(10); ; kind++ {
					if w -= skWeights[kind]; w < 0 {
						break
					}
				}
				if rng.IntN(10) == 0 {
					route := skRoute[kind]
					f := skFaults[rng.IntN(len(skFaults))]
					switch {
					case kind == skDownload && rng.IntN(2) == 0:
						route = synthienttest.RouteStorage
					case kind == skStream && rng.IntN(8) == 0 && oversized.Add(1) <= skOversized:
						f = skOversizedLine
					}
					srv.Inject(route, 1, f)
					faulted.Add(1)
				}
				results[i] = skCall(c, rng, kind, i, exportIDs)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	c.Close()

	// No goroutine and no file descriptor is left behind.
	goroutines := skSettle(runtime.NumGoroutine, goroutines0)
	fds := skSettle(func() int { return skOpenFDs(t) }, fds0+2)
	if goroutines > goroutines0 {
		t.Errorf("%d goroutines after the soak, %d before", goroutines, goroutines0)
	}
	if fds > fds0+2 {
		t.Errorf("%d open files after the soak, %d before", fds, fds0)
	}

	// The request log, by path and by route. An arrival justifies a retry
	// of a standard call when its answer never reached the client (no
	// answer, or none before the timeout) or was a 500, 502, 503, 504 or a
	// 429 with Retry-After; of a billed call only in the last case.
	log := srv.Requests()
	byPath := map[string][]synthienttest.Request{}
	arrivals := map[string]int{}
	justified := map[string]int{}       // standard class
	justifiedBilled := map[string]int{} // billed class
	for _, r := range log {
		arrivals[r.Route]++
		byPath[r.Path] = append(byPath[r.Path], r)
		v, ok := seen.Load(r.RequestID)
		s, _ := v.(skSeen)
		switch {
		case !ok:
			justified[r.Route]++
		case s.status == http.StatusTooManyRequests && s.retryAfter:
			justified[r.Route]++
			justifiedBilled[r.Route]++
		case s.status == 500, s.status == 502, s.status == 503, s.status == 504:
			justified[r.Route]++
		}
	}
	// retriedAfter429 reports whether an arrival's answer reached the
	// client as a 429 with Retry-After.
	retriedAfter429 := func(r synthienttest.Request) bool {
		v, _ := seen.Load(r.RequestID)
		s, ok := v.(skSeen)
		return ok && s.status == http.StatusTooManyRequests && s.retryAfter
	}

	calls := map[skKind]int{}
	succeeded := map[skKind]int{}
	failures := map[string]int{}
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 20 {
			t.Errorf(format, args...)
		}
	}
	for i, res := range results {
		calls[res.kind]++
		name := skKindNames[res.kind]
		var base *synthient.Error
		if res.err == nil {
			succeeded[res.kind]++
		} else {
			if why := skTyped(res.err); why != "" {
				report("call %d (%s): error %v is %s", i, name, res.err, why)
				continue
			}
			errors.As(res.err, &base)
			key := fmt.Sprintf("%T", res.err)
			if base.StopReason != "" {
				key += " " + string(base.StopReason)
			}
			failures[name+": "+key]++
			limit := 1 + skMaxRetries
			if res.kind == skDownload {
				limit++ // the storage request counts as an attempt
			}
			if base.Attempts < 1 || base.Attempts > limit {
				report("call %d (%s): %d attempts, want 1 to %d: %v", i, name, base.Attempts, limit, res.err)
			}
		}
		if res.path == "" {
			continue
		}
		// A billed call with a unique path: every arrival after the first
		// follows a 429 that carried a Retry-After.
		got := byPath[res.path]
		switch {
		case len(got) == 0 && res.err == nil:
			report("call %d (%s %s): succeeded but never arrived", i, name, res.path)
		case len(got) > 1+skMaxRetries:
			report("call %d (%s %s): arrived %d times, more than 1+MaxRetries", i, name, res.path, len(got))
		case base != nil && len(got) > base.Attempts:
			report("call %d (%s %s): arrived %d times but the error counts %d attempts", i, name, res.path, len(got), base.Attempts)
		}
		for k := 1; k < len(got); k++ {
			prev := got[k-1]
			if !retriedAfter429(prev) {
				report("call %d (%s %s): sent again (arrival %d of %d) after status %d (faulted %v), not a 429 with Retry-After",
					i, name, res.path, k+1, len(got), prev.Status, prev.Faulted)
			}
		}
	}

	// Calls without unique paths, route by route: each arrival beyond the
	// first of a call answers an outcome its class retries.
	for kind := range skKinds {
		route, n := skRoute[kind], calls[kind]
		if n == 0 {
			t.Errorf("no %s call in the mix", skKindNames[kind])
			continue
		}
		allowed := n + justified[route]
		if skBilled[kind] {
			allowed = n + justifiedBilled[route]
		}
		allowed = min(allowed, n*(1+skMaxRetries))
		if got := arrivals[route]; got > allowed || got < succeeded[kind] {
			t.Errorf("%s: %d arrivals for %d calls (%d succeeded), want %d to %d", skKindNames[kind], got, n, succeeded[kind], succeeded[kind], allowed)
		}
	}
	// The storage leg is never retried: one request per redirect at most.
	if got, want := int64(arrivals[synthienttest.RouteStorage]), redirects.Load(); got > want || want > int64(calls[skDownload]) {
		t.Errorf("storage: %d arrivals after %d redirects for %d downloads", got, want, calls[skDownload])
	}

	var lines []string
	for k, v := range failures {
		lines = append(lines, fmt.Sprintf("%6d  %s", v, k))
	}
	sort.Strings(lines)
	t.Logf("%d calls from %d goroutines in %v, %d faults injected, %d requests; goroutines %d -> %d, open files %d -> %d; failures:\n%s",
		skCalls, skWorkers, elapsed.Round(time.Millisecond), faulted.Load(), len(log), goroutines0, goroutines, fds0, fds, strings.Join(lines, "\n"))
}

// skCall makes call i of kind.
func skCall(c *synthient.Client, rng *rand.Rand, kind skKind, i int, exportIDs []string) skResult {
	ctx := context.Background()
	feed := synthient.Feeds[rng.IntN(len(synthient.Feeds))]
	res := skResult{kind: kind}
	switch kind {
	case skLookupIP:
		ip := netip.AddrFrom4([4]byte{198, 18 + byte(i>>16), byte(i >> 8), byte(i)})
		res.path = "/api/v4/lookup/ip/" + ip.String()
		_, res.err = c.LookupIP(ctx, ip)
	case skLookupIPs:
		ips := make([]netip.Addr, 1+rng.IntN(5))
		for k := range ips {
			ips[k] = netip.AddrFrom4([4]byte{100, 64 + byte(k), byte(i >> 8), byte(i)})
		}
		_, res.err = c.LookupIPs(ctx, ips)
	case skLookupDomain:
		name := fmt.Sprintf("soak-%d.example.net", i)
		res.path = "/api/v4/lookup/domain/" + name
		_, res.err = c.LookupDomain(ctx, name, &synthient.DomainLookupParams{Limit: 3})
	case skAccount:
		_, res.err = c.Account(ctx)
	case skExportMeta:
		_, res.err = c.ExportMeta(ctx, feed, exportIDs[rng.IntN(len(exportIDs))])
	case skListExports:
		_, res.err = c.ListExports(ctx, feed, &synthient.ListExportsParams{Limit: 5})
	case skDownload:
		_, res.err = c.DownloadExport(ctx, feed, exportIDs[rng.IntN(len(exportIDs))], io.Discard)
	case skStream:
		want, n := 1+rng.IntN(3), 0
		for _, err := range c.StreamRaw(ctx, feed) {
			if err != nil {
				res.err = err
				break
			}
			if n++; n >= want {
				break
			}
		}
	}
	return res
}
