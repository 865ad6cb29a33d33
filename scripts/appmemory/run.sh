#!/usr/bin/env bash
# The desktop app's memory with a long session, as a user sees it: seeds a
# session of 10,000 messages (scripts/appmemory/seed, the same one the
# UI's benchmarks use), opens it in ./tally under Xvfb (or the current
# DISPLAY) at 1280×800, and pages through the whole chat from the
# keyboard (Home, then Page Down to the end, then Page Up to the top),
# PASSES times (default 3). It prints the resident set (VmRSS) and its
# private part (RssAnon: Go's heap and the C heap, without the shared
# libraries) at open, the peak while paging, 3 s after each pass and
# 30 s after the last (the renderer frees a text's texture 15 s after it
# was last drawn, and the app then hands that memory back).
#
#   make build && bash scripts/appmemory/run.sh
#
# Under Xvfb, Mesa's software renderer runs in the process: its libraries
# (about 100 MB, file-backed) and its textures count in VmRSS.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "appmemory: $*" >&2; exit 1; }

[ -x ./tally ] || fail "./tally is missing; run 'make build' first"
for tool in xdotool; do
	command -v "$tool" >/dev/null || fail "$tool is not installed; run scripts/deps.sh"
done
passes=${PASSES:-3}
messages=${MESSAGES:-10000}

. scripts/common.sh
with_tmp

need_display 1280x800

mkdir -p "$tmp/data" "$tmp/workspace" "$tmp/home"
go run ./scripts/appmemory/seed --data "$tmp/data" --workspace "$tmp/workspace" --messages "$messages" >/dev/null ||
	fail "seeding the session failed"

HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" TALLY_KEYCHAIN=off LANG=en_US.UTF-8 \
	./tally --data "$tmp/data" >"$tmp/tally.log" 2>&1 &
app=$!
pids+=("$app")
win=$(wait_window "$app" "$tmp/tally.log")
xdotool windowsize "$win" 1280 800
xdotool windowmove "$win" 0 0
sleep 5 # the session opens on its own: the only one, and the last used

mb() { awk -v k="$1:" '$1 == k { printf "%d", $2 / 1024 }' "/proc/$app/status"; }
show() { printf '%-28s VmRSS %4d MB   RssAnon %4d MB\n' "$1" "$(mb VmRSS)" "$(mb RssAnon)"; }
show "open"

# A click on the chat gives it the keyboard: in the middle of the
# window's left half, on a message's text.
xdotool mousemove 600 400 click 1
sleep 0.5
# A sampler keeps the highest VmRSS seen.
( while kill -0 "$app" 2>/dev/null; do
	r=$(mb VmRSS)
	[ "$r" -gt "$(cat "$tmp/peak" 2>/dev/null || echo 0)" ] && echo "$r" >"$tmp/peak"
	sleep 0.05
done ) &
pids+=($!)
# From the top, a page at a time down past the end (Page Down moves a
# view less a line; the seeded chat is about 2,000 views tall), and up
# past the top again.
keys=${KEYS:-2400}
for p in $(seq "$passes"); do
	xdotool key Home
	xdotool key --delay 8 --repeat "$keys" Next
	xdotool key --delay 8 --repeat "$keys" Prior
	sleep 3
	show "3 s after pass $p (peak $(cat "$tmp/peak"))"
done
sleep 30
show "30 s after the last"
kill -0 "$app" 2>/dev/null || fail "tally exited: $(tail -n5 "$tmp/tally.log")"
