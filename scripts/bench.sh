#!/usr/bin/env bash
# Reproduces the figures of docs/performance.md: every benchmark, the SDK
# beside plain net/http + encoding/json doing the same work in the same run,
# then benchstat's comparison (the impl=plain column against impl=sdk).
#
#   scripts/bench.sh              # 6 runs of each, about 8 minutes, then
#                                 # the rate-limit saturation runs (4 min)
#                                 # and the 2-minute lookup-cache runs (ZIPF=0
#                                 # skips them)
#   COUNT=10 scripts/bench.sh     # more runs, tighter intervals
#
# Run it on a quiet machine: other load on the cores shifts both sides, but
# not always equally.
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-6}
out=${OUT:-bench.out}
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

{
  echo "# $(go version); $(uname -sm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  go test -run '^$' -bench . -benchmem -count "$count" . ./retry/ ./cmd/synthient/
  # The otel module's OpenTelemetry observer (its own go.mod).
  (cd otel && go test -run '^$' -bench . -benchmem -count "$count" .)
  # The redis module's cache on a redis-server on loopback (its own go.mod;
  # the benchmarks start the server, which must be on PATH).
  (cd redis && go test -run '^$' -bench . -benchmem -count "$count" .)
} | tee "$out"

echo
echo "== SDK against plain net/http (delta: plain relative to sdk)"
$benchstat -col /impl -filter '/impl:(sdk OR plain)' "$out"
echo
echo "== LookupIP without an observer and with one (the root package's no-op one, the otel module's),"
echo "   and otelhttp's transport on the client (observer=transport is its baseline: the same plain transport bare)"
$benchstat -col /observer -filter '/observer:(off OR nop OR otel OR transport OR otelhttp)' "$out"
echo
echo "== lookup cache: a hit beside a cache written by hand (a sync.Map of JSON, Redis GET of JSON)"
$benchstat -col /impl -filter '/impl:(sdk OR plainmap OR plainredis)' "$out"
echo
echo "== the rest"
$benchstat -filter '-/impl:(sdk OR plain OR plainmap OR plainredis) -/observer:(off OR nop OR otel OR transport OR otelhttp)' "$out"

# What the lookup cache and shared requests save: 1,000,000 LookupIP calls
# drawn from 10,000 addresses with a Zipf law, without and with a cache,
# then bulk lookups of the same draws (see docs/performance.md, "Lookup
# cache"); about 2 minutes. ZIPF=0 skips it.
if [ "${ZIPF:-1}" != 0 ]; then
  echo
  echo "== lookup cache: requests and credits"
  go run ./scripts/zipf | tee -a "$out"
  # The two libraries the memory cache could be built on.
  (cd scripts/cachecompare && go run .) | tee -a "$out"
fi

# One client under a saturated rate limit, pacing on, off, and issue 13's
# client: one 15 s run each at 20/s burst 20, then one 10 s run each at the
# published 100/s burst 200, a fixed scenario rather than a benchmark of b.N operations (see
# docs/performance.md, "Rate-limit saturation"). SATURATION=0 skips it.
if [ "${SATURATION:-1}" != 0 ]; then
  echo
  echo "== rate-limit saturation"
  go run ./scripts/saturation | tee -a "$out"
  # The fake's published lookup limit, as issue 13 first measured it.
  go run ./scripts/saturation -rate 100 -burst 200 -goroutines 32 -duration 10s | tee -a "$out"
  # A team on one bucket (issue 23): the 64 callers split between 4 and 16
  # OS processes, at 20/s burst 20 and at the published 100/s burst 200,
  # pacing on and off ("A team on one rate limit").
  for limit in "-rate 20 -burst 20" "-rate 100 -burst 200"; do
    for procs in 4 16; do
      go run ./scripts/saturation -procs "$procs" $limit -pacing on | tee -a "$out"
      go run ./scripts/saturation -procs "$procs" $limit -pacing off | tee -a "$out"
    done
  done
fi
