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
# node reads the scenario's context and Tally's JSON where a scenario
# needs a value from them (run.sh exports the pinned Node.js as NODE).
node="${NODE:-node}"
case "$scenario" in
initialize | request-metadata | json-schema-ref-no-deref)
	"$tally" mcp list --probe >&2 ;;
http-standard-headers)
	"$tally" mcp list --probe >&2
	"$tally" mcp call conformance test_headers >&2
	"$tally" mcp call conformance my-hyphenated-tool >&2 ;;
http-custom-headers)
	# The scenario names the calls to make, with their arguments.
	"$tally" mcp list --probe >&2
	printf '%s' "$context" | "$node" -e '
		let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
			for (const c of JSON.parse(s).toolCalls || []) console.log(c.name + "\t" + JSON.stringify(c.arguments));
		});' | while IFS=$'\t' read -r tool args; do
		"$tally" mcp call conformance "$tool" "$args" >&2 </dev/null
	done ;;
http-invalid-tool-headers)
	# Tally drops the tools whose x-mcp-header is invalid; each tool
	# the server advertised is tried, and only the valid one is there.
	"$tally" mcp list --probe >&2
	for tool in valid_tool invalid_empty_header invalid_object_header invalid_array_header invalid_null_header \
		invalid_duplicate_same_case invalid_duplicate_diff_case invalid_space_in_name invalid_colon_in_name \
		invalid_non_ascii_name invalid_control_char_name; do
		"$tally" mcp call conformance "$tool" '{"region":"us-west1","value":"v"}' >&2 || true
	done ;;
json-schema-2020-12-preservation)
	# The schema the model is given for the tool goes back to the server
	# as it is, so the server can tell what reached the model.
	schema="$("$tally" mcp list --probe --json | "$node" -e '
		let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
			for (const line of s.split("\n").filter(Boolean))
				for (const t of JSON.parse(line).Tools || [])
					if (t.RemoteName === "json_schema_2020_12_tool") console.log(JSON.stringify({schema: t.Parameters}));
		});')"
	"$tally" mcp call conformance json_schema_echo "$schema" >&2 ;;
sep-2322-client-request-state)
	# Each tool asks for a form in an input_required result; --yes
	# accepts it.
	for tool in test_mrtr_echo_state test_mrtr_unrelated test_mrtr_no_state test_mrtr_no_result_type; do
		"$tally" mcp call conformance "$tool" --yes >&2
	done ;;
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
