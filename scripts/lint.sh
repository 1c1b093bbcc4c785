#!/usr/bin/env bash
# Runs golangci-lint, at the version scripts/tools.sh pins, with
# .golangci.yml on every module of the repository: the root module and each
# directory beside it with a go.mod of its own (otel/, redis/), found, not
# listed. The modules under scripts/ are tools, not published code, and are
# left out. Extra arguments go to `golangci-lint run` (for example
# `scripts/lint.sh --fix`, or a package pattern instead of ./...).
#
#   scripts/lint.sh                 # every module; exits 1 on a finding
#
# .ci/run runs it; every module has no finding, and keeps it so.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tools.sh
lint=$(tool golangci-lint)

args=("$@")
[ ${#args[@]} -gt 0 ] || args=(./...)

root=$PWD
status=0
for mod in $(git ls-files --cached --others --exclude-standard '*go.mod' | grep -v -e '^scripts/' -e '/testdata/' | sort); do
  dir=$(dirname "$mod")
  echo "== golangci-lint run ($dir)"
  (cd "$dir" && "$lint" run --config "$root/.golangci.yml" "${args[@]}") || status=1
done
exit $status
