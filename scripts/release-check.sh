#!/usr/bin/env bash
# Checks the release configuration (.goreleaser.yaml) with the pinned
# goreleaser (scripts/tools.sh), then makes a snapshot build of the CLI for
# this machine's platform from a fresh clone of HEAD, as a release is made
# from a clean checkout, and checks that the binary knows its commit:
# `synthient version` must name HEAD, and its build information must hold
# the revision and its time. Run by .ci/run.
#
#   scripts/release-check.sh          # check + snapshot build (about 1.5
#                                     # minutes on 2 cores with a warm cache)
#   KEEP=1 scripts/release-check.sh   # keep the clone and its dist/
#
# A full snapshot of every platform: `goreleaser release --snapshot --clean`
# in a clone (about 6 binaries, several minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tools.sh
goreleaser=$(tool goreleaser)

echo "goreleaser check"
"$goreleaser" check

tmp=$(mktemp -d)
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT; fi
# A clone, not the work tree: the Go toolchain reads the commit from a .git
# folder (a worktree's .git file it does not follow), and a clone holds
# HEAD as committed, with nothing untracked to mark it modified.
git clone -q --no-local . "$tmp/src"
head=$(git rev-parse HEAD)
(cd "$tmp/src" && "$goreleaser" build --snapshot --clean --single-target)

bin=$(find "$tmp/src/dist" -type f \( -name synthient -o -name synthient.exe \) | head -1)
[ -n "$bin" ] || { echo "release-check: the snapshot build made no synthient binary" >&2; exit 1; }
info=$(go version -m "$bin")
version=$("$bin" version)
echo "$version"
grep -q "vcs.revision=$head" <<<"$info" || {
  echo "release-check: the binary's build information lacks vcs.revision=$head:" >&2
  echo "$info" >&2
  exit 1
}
grep -q "vcs.time=" <<<"$info" || { echo "release-check: no vcs.time in the binary's build information" >&2; exit 1; }
grep -q "commit ${head:0:12}" <<<"$version" || {
  echo "release-check: \`synthient version\` does not name commit ${head:0:12}" >&2
  exit 1
}
echo "release-check: ok: $(basename "$(dirname "$bin")"), commit ${head:0:12}"
