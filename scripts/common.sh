# Sourced by the test scripts (smoke.sh, acp/run.sh, appmemory/run.sh),
# which define fail (say why and exit).

# with_tmp sets tmp, a new temporary directory, and pids, the processes
# the script starts; when the script exits, they are stopped and tmp is
# removed.
with_tmp() {
	tmp=$(mktemp -d)
	pids=()
	trap cleanup EXIT
}

cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}

# need_display keeps the current DISPLAY or starts a private Xvfb on a
# free number ($1 is its size, 1280x800 unless given), adding its PID to
# pids and its log to "$tmp".
need_display() {
	[ -n "${DISPLAY:-}" ] && return 0
	command -v Xvfb >/dev/null || fail "no DISPLAY and Xvfb is not installed; run scripts/deps.sh"
	local n=90
	while [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; do
		n=$((n + 1))
		[ "$n" -lt 200 ] || fail "no free X display number between :90 and :199"
	done
	Xvfb ":$n" -screen 0 "${1:-1280x800}x24" -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
	pids+=($!)
	export DISPLAY=":$n"
	for _ in $(seq 50); do
		[ -e "/tmp/.X11-unix/X$n" ] && break
		sleep 0.1
	done
	[ -e "/tmp/.X11-unix/X$n" ] || fail "Xvfb did not start on :$n: $(cat "$tmp/xvfb.log")"
}

# wait_window waits up to 60 s for a window named Tally of the process
# $1 and prints its ID; $2 is the process's log, quoted on failure.
wait_window() {
	local win=""
	for _ in $(seq 120); do
		win=$(xdotool search --name Tally 2>/dev/null | head -n1 || true)
		[ -n "$win" ] && break
		kill -0 "$1" 2>/dev/null || fail "tally exited before showing a window: $(tail -n5 "$2")"
		sleep 0.5
	done
	[ -n "$win" ] || fail "no window named 'Tally' appeared within 60 s: $(tail -n5 "$2")"
	echo "$win"
}
