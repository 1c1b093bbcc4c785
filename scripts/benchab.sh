#!/usr/bin/env bash
# Compares the call path of two commits side by side: the LookupIP
# benchmarks (the SDK and plain net/http in each binary) and the otel
# module's, built from each commit and run in turns, one run of each at a
# time, so that a change of load on the machine falls on both alike. Then
# benchstat: each commit's SDK against its own plain net/http, and the two
# commits' SDK against each other.
#
#   scripts/benchab.sh BEFORE [AFTER]   # AFTER defaults to the work tree
#   COUNT=10 scripts/benchab.sh v0.1.0  # more turns (default 8)
#   BENCH='BenchmarkLookupIP$' ...      # another benchmark pattern
#
# After the turns, each side's serial SDK LookupIP runs once more under the
# CPU and memory profilers (bench-ab/<side>.cpu, <side>.mem); the script
# prints the top of each, the client's side only (stacks through package
# synthient), for `go tool pprof` to read further.
set -euo pipefail
cd "$(dirname "$0")/.."

before=${1:?usage: scripts/benchab.sh BEFORE [AFTER]}
after=${2:-}
count=${COUNT:-8}
bench=${BENCH:-BenchmarkLookupIP(Observer)?$}
dir=${OUT:-bench-ab}
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

rm -rf "$dir" && mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/before" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

# build SIDE TREE: the root package's and the otel module's test binaries.
build() {
  (cd "$2" && go test -c -o "$dir/$1.test" . && cd otel && go test -c -o "$dir/$1-otel.test" .)
}
git worktree add -q --detach "$tmp/before" "$before"
build before "$tmp/before"
if [ -n "$after" ]; then
  git worktree add -q --detach "$tmp/after" "$after"
  build after "$tmp/after"
else
  build after .
fi

echo "# $(go version); $(uname -sm); $(nproc) cores; before $(git rev-parse --short "$before"), after ${after:-work tree $(git rev-parse --short HEAD)}" | tee "$dir/header"
for i in $(seq "$count"); do
  for side in before after; do
    "$dir/$side.test" -test.run '^$' -test.bench "$bench" -test.benchmem -test.count 1 >> "$dir/$side.txt"
    (cd otel && "$dir/$side-otel.test" -test.run '^$' -test.bench . -test.benchmem -test.count 1) >> "$dir/$side-otel.txt"
  done
done

for side in before after; do
  echo
  echo "== $side: the SDK against plain net/http (delta: plain relative to sdk)"
  $benchstat -col /impl -filter '/impl:(sdk OR plain)' "$dir/$side.txt"
  echo
  echo "== $side: LookupIP with and without observers"
  $benchstat -col /observer "$dir/$side.txt" "$dir/$side-otel.txt"
done
echo
echo "== before against after"
$benchstat "$dir/before.txt" "$dir/after.txt"
$benchstat "$dir/before-otel.txt" "$dir/after-otel.txt"
for side in before after; do
  serial=(-test.run '^$' -test.bench 'BenchmarkLookupIP$/^mode=serial$/^impl=sdk$' -test.benchtime 20000x)
  "$dir/$side.test" "${serial[@]}" -test.cpuprofile "$dir/$side.cpu" >/dev/null
  "$dir/$side.test" "${serial[@]}" -test.memprofile "$dir/$side.mem" -test.memprofilerate 1 >/dev/null
  echo
  echo "== $side: CPU of the client's side, cumulative (serial LookupIP)"
  go tool pprof -top -cum -nodecount 30 -focus 'synthient-go/synthient\.' "$dir/$side.test" "$dir/$side.cpu" 2>/dev/null | sed -n '6,40p'
  echo
  echo "== $side: objects allocated by the client's side (serial LookupIP)"
  go tool pprof -top -sample_index=alloc_objects -nodecount 25 -focus 'synthient-go/synthient\.' "$dir/$side.test" "$dir/$side.mem" 2>/dev/null | sed -n '5,35p'
done
