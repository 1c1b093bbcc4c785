#!/usr/bin/env bash
# The pinned versions of the tools the scripts install, and a function that
# installs one. Sourced by scripts/lint.sh, scripts/release-check.sh and
# scripts/apicheck.sh:
#
#   . scripts/tools.sh
#   golangci_lint=$(tool golangci-lint)   # its path; built once, then reused
#
# Each tool is built from the Go module proxy at its pinned version with
# `go install`, into its own folder under $SYNTHIENT_TOOLS (by default
# ~/.cache/synthient-tools/NAME-VERSION), so that a version change builds the
# new one and an older one in PATH is never used.

# NAME=module/path/to/cmd@version
declare -A tool_pins=(
  [golangci-lint]=github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
  [goreleaser]=github.com/goreleaser/goreleaser/v2@v2.15.1
)

# tool NAME prints the path of NAME at its pinned version, building it first
# when it is missing (golangci-lint takes about 1.5 minutes on 2 cores,
# goreleaser about 4; then nothing).
tool() {
  local name=$1 pin=${tool_pins[$1]:?unknown tool $1}
  local dir=${SYNTHIENT_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/synthient-tools}/$name-${pin##*@}
  if [ ! -x "$dir/$name" ]; then
    echo "building $pin into $dir" >&2
    GOBIN=$dir go install "$pin" >&2
  fi
  echo "$dir/$name"
}
