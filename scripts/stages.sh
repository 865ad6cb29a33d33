#!/usr/bin/env bash
# Runs the Makefile targets given, in order, and times each: the first that
# fails stops the run. At the end (or at the failure) it prints one line a
# stage with its seconds, and writes the same table to
# artifacts/stages.txt, so a CI log says where its time went.
# Usage: bash scripts/stages.sh deps vet unit race smoke conformance acp
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p artifacts
report=artifacts/stages.txt
: >"$report"
start=$(date +%s)
status=0
for stage in "$@"; do
	t0=$(date +%s)
	echo "==> make $stage"
	if ! make --no-print-directory "$stage"; then
		status=1
	fi
	t1=$(date +%s)
	printf '%-12s %5d s%s\n' "$stage" $((t1 - t0)) "$([ $status -ne 0 ] && echo '  FAILED')" >>"$report"
	[ $status -eq 0 ] || break
done
printf '%-12s %5d s\n' total $(($(date +%s) - start)) >>"$report"
echo "==> time by stage"
cat "$report"
exit $status
