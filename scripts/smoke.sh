#!/usr/bin/env bash
# Smoke test of the desktop window: seeds a data directory with a real
# session (headless `tally run` against the scripted demo model served by
# scripts/llmtestd), opens `./tally --data DIR` under Xvfb (or the current
# DISPLAY), waits for a window named "Tally", and saves a screenshot to
# artifacts/smoke.png. Exits non-zero with a clear message on failure.
# Expects ./tally to be built (make smoke does that).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "smoke: $*" >&2; exit 1; }

[ -x ./tally ] || fail "./tally is missing; run 'make build' first"
./tally help >/dev/null 2>&1 || fail "'./tally help' failed; the binary is broken"
for tool in xdotool import; do
	command -v "$tool" >/dev/null || fail "$tool is not installed; run scripts/deps.sh"
done

. scripts/common.sh
with_tmp

# A display: the current one, or a private Xvfb on a free number.
need_display

# The scripted model server.
go build -o "$tmp/llmtestd" ./scripts/llmtestd || fail "cannot build scripts/llmtestd"
ws="$tmp/workspace"
mkdir -p "$ws"
"$tmp/llmtestd" --workspace "$ws" >"$tmp/llmtestd.out" 2>"$tmp/llmtestd.err" &
pids+=($!)
url=""
for _ in $(seq 100); do
	url=$(head -n1 "$tmp/llmtestd.out" 2>/dev/null || true)
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || fail "the scripted model server printed no URL: $(cat "$tmp/llmtestd.err")"

# Seed a real session headless.
data="$tmp/data"
export OPENAI_API_KEY=dummy
./tally run --data "$data" --base-url "$url" --yes --workspace "$ws" --session smoke \
	"The calculator's Add function gives wrong results. Find the bug, fix it and run the tests." \
	>"$tmp/run.out" 2>"$tmp/run.err" || fail "seeding the session failed: $(tail -n3 "$tmp/run.err")"

# Open the window on the seeded data.
OPENAI_BASE_URL="$url" LANG=en_US.UTF-8 ./tally --data "$data" >"$tmp/tally.log" 2>&1 &
app=$!
pids+=("$app")
win=$(wait_window "$app" "$tmp/tally.log")
sleep 3 # let the session load and render

mkdir -p artifacts
import -window root artifacts/smoke.png || fail "could not take a screenshot"
size=$(stat -c %s artifacts/smoke.png 2>/dev/null || echo 0)
[ "$(head -c 8 artifacts/smoke.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "artifacts/smoke.png is not a PNG"
[ "$size" -gt 20000 ] || fail "artifacts/smoke.png is only $size bytes; the window looks empty"
colors=$(identify -format %k artifacts/smoke.png 2>/dev/null || echo 0)
[ "$colors" -gt 16 ] || fail "artifacts/smoke.png has only $colors colours; the window looks blank"
echo "smoke: ok (window $win, artifacts/smoke.png, $size bytes, $colors colours)"
