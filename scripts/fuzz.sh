#!/usr/bin/env bash
# Runs every fuzz target of the repository (each `func FuzzX` in a test
# file) for FUZZTIME (default 3s) with go test's fuzzer. A target that
# finds a failing input stops the run; go test writes the input under the
# package's testdata/fuzz/ and the message says how to replay it.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-3s}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
n=0
while IFS=: read -r file name; do
	dir="./$(dirname "$file")"
	echo "fuzz $name ($dir, $fuzztime)"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$dir" >"$log" 2>&1 || { cat "$log"; exit 1; }
	tail -n1 "$log"
	n=$((n + 1))
done < <(grep -rHo --include='*_test.go' --exclude-dir=.tools --exclude-dir=node_modules --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*' . | sed -e 's|^\./||' -e 's|:func |:|' | sort)
echo "$n fuzz targets passed"
