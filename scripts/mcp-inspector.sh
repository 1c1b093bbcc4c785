#!/usr/bin/env bash
# Checks synthient mcp with the MCP Inspector's command-line mode, against the
# in-process fake (--fake): lists the tools (with --strict, which reports the
# schemas' portability problems) and calls each one, failing when a call is an
# error or has no structured content. Run from anywhere.
#
# The inspector needs Node >= 22.19: the npm package node@22 provides one. Both
# are installed once under ${XDG_CACHE_HOME:-~/.cache}/synthient-tools, never in
# the repository. Each call starts a new server, and so a new fake.
set -euo pipefail
cd "$(dirname "$0")/.."

inspector_version=2.12.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/synthient-tools/mcp-inspector-$inspector_version"
if [ ! -x "$cache/node_modules/.bin/inspector" ] || [ ! -x "$cache/node_modules/.bin/node" ]; then
  echo "== installing node@22 and @modelcontextprotocol/inspector@$inspector_version in $cache"
  mkdir -p "$cache"
  npm install --no-audit --no-fund --loglevel=error --prefix "$cache" node@22 "@modelcontextprotocol/inspector@$inspector_version" >/dev/null
fi
export PATH="$cache/node_modules/.bin:$PATH"
echo "== node $(node --version), inspector $(inspector --version 2>/dev/null || echo "$inspector_version")"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/synthient" ./cmd/synthient
server=("$tmp/synthient" --fake mcp)

# summary reads a tools/call result on stdin and prints its first lines of
# text and credits; it fails on an error result or one without structured
# content.
summary='
let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
  const r = JSON.parse(s);
  const text = (r.content || []).map(c => c.text || "").join("\n").split("\n");
  console.log("   " + text.slice(0, 3).join("\n   ") + (text.length > 4 ? "\n   ..." : ""));
  console.log("   " + text[text.length - 1] + "  isError=" + !!r.isError + " structuredContent=" + (r.structuredContent ? "yes" : "no"));
  if (r.isError || !r.structuredContent) process.exit(1);
});'

echo "== tools/list --strict"
inspector --cli --method tools/list --strict -- "${server[@]}" 2>"$tmp/list.err" >"$tmp/list.json"
grep -v '^synthient mcp: ' "$tmp/list.err" | tail -n 1
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const t of r.tools) {
  const a = t.annotations || {};
  console.log(`   ${t.name.padEnd(20)} readOnly=${a.readOnlyHint} idempotent=${a.idempotentHint} outputSchema=${t.outputSchema ? "yes" : "no"}`);
}' "$tmp/list.json"

call() {
  local tool=$1
  shift
  echo "== tools/call $tool $*"
  inspector --cli --method tools/call --tool-name "$tool" ${1:+--tool-arg "$@"} -- "${server[@]}" 2>/dev/null | node -e "$summary"
}
call get_account
call list_feed_streams
call list_feed_snapshots stream=proxies limit=3
call feed_snapshot_meta stream=honeypot_http date=latest
call sample_stream stream=anonymizers count=3 timeout_seconds=30
call lookup_ip 'ips=["8.8.8.8"]'
call lookup_ip 'ips=["1.1.1.1","203.0.113.7","not an address"]'
call lookup_domain domain=example.com limit=3
echo "== every tool answered"
