#!/usr/bin/env bash
# The client side of the MCP conformance suite: the suite runs this with
# the URL of the server of one scenario (and MCP_CONFORMANCE_SCENARIO,
# MCP_CONFORMANCE_CONTEXT set). It drives the tally binary as a user
# would: add the server, sign in, probe it and call its tool.
set -euo pipefail
url="$1"
here="$(cd "$(dirname "$0")" && pwd)"
tally="${TALLY:-$here/../../tally}"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
export HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" TALLY_KEYCHAIN=off
# The suite's authorization server answers at once with a redirect to
# Tally's loopback address, so the "browser" only follows it.
export BROWSER="$here/browser.sh"
cd "$home"
scenario="${MCP_CONFORMANCE_SCENARIO:-}"
context="${MCP_CONFORMANCE_CONTEXT:-}"
add=(mcp add conformance --url "$url")
client_id="$(printf '%s' "$context" | sed -n 's/.*"client_id" *: *"\([^"]*\)".*/\1/p')"
client_secret="$(printf '%s' "$context" | sed -n 's/.*"client_secret" *: *"\([^"]*\)".*/\1/p')"
[ -z "$client_id" ] || add+=(--client-id "$client_id")
[ -z "$client_secret" ] || add+=(--client-secret "$client_secret")
case "$scenario" in
auth/basic-cimd) add+=(--client-metadata-url "https://conformance-test.local/client-metadata.json") ;;
esac
"$tally" "${add[@]}" >&2
case "$scenario" in
initialize)
	"$tally" mcp list --probe >&2 ;;
tools_call)
	"$tally" mcp call conformance add_numbers '{"a":5,"b":3}' >&2 ;;
elicitation-sep1034-client-defaults)
	"$tally" mcp call conformance test_client_elicitation_defaults --yes >&2 ;;
sse-retry)
	"$tally" mcp call conformance test_reconnection >&2 ;;
auth/*)
	"$tally" mcp login conformance >&2
	"$tally" mcp list --probe >&2
	"$tally" mcp call conformance test-tool >&2 ;;
*)
	echo "client.sh: unknown scenario ${scenario:-(none)}" >&2
	exit 2 ;;
esac
