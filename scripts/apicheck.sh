#!/usr/bin/env bash
# The API compatibility gate. api/NAME.txt records the exported API of each
# public package (every non-main, non-internal package of the root module
# and of the modules beside it, otel/ and redis/, found by scripts/apicheck,
# not listed here), one line per feature (see scripts/apicheck/main.go).
#
#   scripts/apicheck.sh           # the check .ci/run runs
#   scripts/apicheck.sh -w        # rewrite api/ from the code as it is
#   scripts/apicheck.sh -base REV # check the change from REV instead of
#                                 # HEAD's first parent (APICHECK_BASE=REV)
#
# The check fails when
#   1. the code's API has lost or changed a line of the record in api/: an
#      incompatible change that was not recorded; or
#   2. the record itself has lost or changed a line since the base (HEAD's
#      first parent, so the commit being checked and any uncommitted change
#      on top of it) while the "Unreleased" section of CHANGELOG.md is what
#      it was at the base.
# So an incompatible change lands only with `scripts/apicheck.sh -w` and a
# changelog line, in the same commit. A compatible addition passes; it is
# listed, and recorded by the next -w. On a merge commit the base is the
# branch merged into, so the check covers the whole branch. In a shallow
# clone without the parent, it fetches it, or checks only the tree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mode=check
base=${APICHECK_BASE:-}
while [ $# -gt 0 ]; do
  case $1 in
    -w) mode=write ;;
    -base) base=${2:?-base needs a revision}; shift ;;
    -C) repo=$(cd "${2:?-C needs a folder}" && pwd); shift ;; # for the tests
    *) echo "usage: scripts/apicheck.sh [-w] [-base REV]" >&2; exit 2 ;;
  esac
  shift
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/apicheck" && go build -o "$tmp/apicheck" .)
cd "$repo"

if [ $mode = write ]; then
  rm -f api/*.txt
  "$tmp/apicheck" write . api
  echo "apicheck: wrote api/ ($(cd api && ls | tr '\n' ' '))"
  exit 0
fi

# compare OLD NEW OUT: 0 compatible, 1 incompatible; anything else fails.
compare() {
  local rc=0
  "$tmp/apicheck" compare "$1" "$2" >"$3" || rc=$?
  [ $rc -le 1 ] || exit 2
  return $rc
}

# 1. The code against the record.
"$tmp/apicheck" write . "$tmp/code"
if ! compare api "$tmp/code" "$tmp/code.diff"; then
  echo "apicheck: the API differs from its record in api/ (-: recorded, gone or changed; +: new):"
  cat "$tmp/code.diff"
  echo "apicheck: an incompatible change. If it is meant, run scripts/apicheck.sh -w and say"
  echo "what changed under Unreleased in CHANGELOG.md, in the same commit."
  exit 1
fi
if [ -s "$tmp/code.diff" ]; then
  echo "apicheck: compatible additions, not yet in the record (scripts/apicheck.sh -w adds them):"
  cat "$tmp/code.diff"
fi

# 2. The record against the base's.
if [ -z "$base" ]; then
  if ! git rev-parse -q --verify 'HEAD^1^{commit}' >/dev/null &&
    [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    git fetch -q --deepen=1 2>/dev/null || true
  fi
  if git rev-parse -q --verify 'HEAD^1^{commit}' >/dev/null; then
    base=HEAD^1
  else
    echo "apicheck: HEAD has no parent here: the code matches its record; the record's history is not checked"
    exit 0
  fi
fi
base_id=$(git rev-parse --verify "$base^{commit}")
mkdir -p "$tmp/base"
if git ls-tree -d --name-only "$base_id" api | grep -q .; then
  git archive "$base_id" api | tar -x -C "$tmp/base"
fi
if compare "$tmp/base/api" api "$tmp/record.diff"; then
  echo "apicheck: ok: the API keeps every feature of the record at $(git rev-parse --short "$base_id")"
  exit 0
fi

# unreleased: the "Unreleased" section of the changelog on stdin.
unreleased() { awk '/^## /{on = /^## \[Unreleased\]/} on'; }
was=$(git show "$base_id:CHANGELOG.md" 2>/dev/null | unreleased || true)
now=$(unreleased <CHANGELOG.md)
echo "apicheck: the record changes incompatibly since $(git rev-parse --short "$base_id"):"
cat "$tmp/record.diff"
if [ "$was" = "$now" ]; then
  echo "apicheck: and CHANGELOG.md's Unreleased section did not change: say what changed"
  echo "for users there (under Changed), in the same commit as the record."
  exit 1
fi
echo "apicheck: ok: recorded, and CHANGELOG.md's Unreleased section says so"
