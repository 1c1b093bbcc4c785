package fakeserver

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synthient-go/synthient/cmd/synthient/internal/clierr"
	"github.com/synthient-go/synthient/synthienttest"
)

// routeNames are the short names --fault takes for the fake's routes, and
// the routes' own templates.
var routeNames = map[string]string{
	"health":        synthienttest.RouteHealth,
	"account":       synthienttest.RouteAccount,
	"lookup-ip":     synthienttest.RouteLookupIP,
	"lookup-ips":    synthienttest.RouteLookupIPs,
	"lookup-domain": synthienttest.RouteLookupDomain,
	"exports":       synthienttest.RouteExports,
	"meta":          synthienttest.RouteExportMeta,
	"download":      synthienttest.RouteDownload,
	"stream":        synthienttest.RouteStream,
	"storage":       synthienttest.RouteStorage,
}

// faultKinds are the kinds of fault --fault takes by name, beside an
// HTTP status.
var faultKinds = map[string]synthienttest.FaultKind{
	"close-after-request": synthienttest.FaultCloseAfterRequest,
	"reset-mid-body":      synthienttest.FaultResetMidBody,
	"slow-headers":        synthienttest.FaultSlowHeaders,
	"slow-body":           synthienttest.FaultSlowBody,
	"truncated-body":      synthienttest.FaultTruncatedBody,
}

// fault is one --fault ROUTE=FAULT[@N]: what the fake does to the next N
// requests of the route (N is "all" for every one).
type fault struct {
	route string
	n     int // -1: every request
	f     synthienttest.Fault
}

// parseFault parses --fault ROUTE=FAULT[@N]: ROUTE a short name
// (lookup-ips) or a route template (/lookup/ips); FAULT a status (503), a
// status with Retry-After (429:2), or a kind of fault, slow-headers:DUR
// for its wait; N how many requests, or all (default 1).
func parseFault(s string) (fault, error) {
	bad := func(why string) (fault, error) {
		return fault{}, clierr.Usagef("--fault %s: %s (ROUTE=FAULT[@N], such as lookup-ips=503@2, account=close-after-request, stream=reset-mid-body@all)", s, why)
	}
	route, spec, ok := strings.Cut(s, "=")
	if !ok {
		return bad("no =")
	}
	fl := fault{n: 1}
	if r, ok := routeNames[route]; ok {
		fl.route = r
	} else if isRoute(route) {
		fl.route = route
	} else {
		return bad("unknown route " + strconv.Quote(route) + " (one of " + strings.Join(sortedKeys(routeNames), ", ") + ")")
	}
	if spec, count, ok := strings.Cut(spec, "@"); ok {
		switch n, err := strconv.Atoi(count); {
		case count == "all":
			fl.n = -1
		case err != nil || n < 1:
			return bad("the count after @ is a number from 1, or all")
		default:
			fl.n = n
		}
		return fl.withSpec(spec, bad)
	}
	return fl.withSpec(spec, bad)
}

// withSpec sets the fault of spec.
func (fl fault) withSpec(spec string, bad func(string) (fault, error)) (fault, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	if k, ok := faultKinds[kind]; ok {
		fl.f.Kind = k
		if arg != "" {
			d, err := time.ParseDuration(arg)
			if err != nil || d < 0 {
				return bad("the wait after : is a duration, such as 2s")
			}
			fl.f.Delay = d
		}
		return fl, nil
	}
	status, err := strconv.Atoi(kind)
	if err != nil || status < 200 || status > 599 {
		return bad("unknown fault " + strconv.Quote(spec) + " (an HTTP status, or one of " + strings.Join(sortedKeys(faultKinds), ", ") + ")")
	}
	fl.f.Status, fl.f.RetryAfter = status, arg
	return fl, nil
}

// isRoute reports whether s is one of the fake's route templates.
func isRoute(s string) bool {
	for _, r := range routeNames {
		if r == s {
			return true
		}
	}
	return false
}

// parseSize parses --export-size: bytes, or with a K, M or G suffix
// (binary units).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > (8<<30)/mult {
		return 0, fmt.Errorf("not a size of 8 bytes to 8G: give bytes, or 64K, 4M, 1G")
	}
	if n*mult < 8 {
		return 0, fmt.Errorf("below 8 bytes")
	}
	return n * mult, nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
