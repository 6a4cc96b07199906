#!/usr/bin/env bash
# Desktop smoke test: starts the real desktop binary (WebKitGTK window) under
# Xvfb on a throwaway data directory, waits for its window, takes a screenshot
# of the screen and checks that it shows a rendered UI rather than a blank or
# single-colour window.
#
# Usage: scripts/desktop-smoke.sh [screenshot.png]
# Env:   AIRLOCK_BIN                 binary to start (default build/bin/airlock)
#        AIRLOCK_SMOKE_MIN_COLOURS   distinct colours required (default 50)
#        AIRLOCK_SMOKE_WINDOW_WAIT   seconds to wait for the window (default 40)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${AIRLOCK_BIN:-$root/build/bin/airlock}"
shot="${1:-$root/build/desktop-smoke.png}"
min_colours="${AIRLOCK_SMOKE_MIN_COLOURS:-50}"
window_wait="${AIRLOCK_SMOKE_WINDOW_WAIT:-40}"
title="Airlock"

fail() {
	echo "desktop-smoke: FAIL: $*" >&2
	exit 1
}

# Re-run this script inside a private X server; -a picks a free display number
# so parallel runs and a developer's own display are never touched.
if [[ -z "${AIRLOCK_SMOKE_IN_XVFB:-}" ]]; then
	for tool in xvfb-run xauth xdotool import convert; do
		command -v "$tool" >/dev/null 2>&1 ||
			fail "$tool not found: run 'go tool task deps:system' (Debian: xvfb xauth xdotool imagemagick)"
	done
	[[ -x "$bin" ]] || fail "$bin not found or not executable: run 'go tool task build' first"
	# Absolute paths: the inner run must not depend on the caller's directory.
	case "$shot" in /*) ;; *) shot="$PWD/$shot" ;; esac
	case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
	export AIRLOCK_SMOKE_IN_XVFB=1 AIRLOCK_BIN="$bin"
	exec xvfb-run -a -s "-screen 0 1280x800x24" bash "${BASH_SOURCE[0]}" "$shot"
fi

mkdir -p "$(dirname "$shot")"
rm -f "$shot"
work="$(mktemp -d)"
log="$work/airlock.log"
pid=""

stop_app() {
	[[ -n "$pid" ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "desktop-smoke: app still alive 5 s after SIGTERM, sending SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
	pid=""
}

show_log() {
	echo "---- last lines of the app's output ($log) ----" >&2
	tail -n 40 "$log" >&2 || true
	echo "----" >&2
}

cleanup() {
	stop_app
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A fresh data dir (no user config, no single-instance clash with a running
# Airlock) and an ephemeral port (no clash with anything on 4750).
"$bin" --data-dir "$work/data" --addr 127.0.0.1:0 >"$log" 2>&1 &
pid=$!
echo "desktop-smoke: started $bin (pid $pid) on $DISPLAY, data dir $work/data"

window=""
for ((i = 0; i < window_wait * 2; i++)); do
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid" && status=0 || status=$?
		pid=""
		show_log
		fail "the app exited (status $status) before its window appeared"
	fi
	# xdotool matches names case-insensitively, and GTK keeps an unmapped
	# leader window named after the binary ("airlock"): look only at visible
	# windows and compare the title case-sensitively.
	for w in $(xdotool search --onlyvisible --name "^$title" 2>/dev/null || true); do
		if [[ "$(xdotool getwindowname "$w" 2>/dev/null || true)" == "$title"* ]]; then
			window="$w"
			break
		fi
	done
	[[ -n "$window" ]] && break
	sleep 0.5
done
if [[ -z "$window" ]]; then
	show_log
	fail "no window titled '$title' within ${window_wait} s"
fi
echo "desktop-smoke: window $window found: '$(xdotool getwindowname "$window" 2>/dev/null || echo "?")'"

# Give the web view time to load and render the UI. A loaded-but-blank web
# view has very few colours, so retry a few times before calling it blank.
sleep 3
colours=0
for attempt in 1 2 3 4 5; do
	kill -0 "$pid" 2>/dev/null || { show_log; fail "the app exited while rendering"; }
	import -window root "$shot"
	colours="$(convert "$shot" -format %k info:)"
	echo "desktop-smoke: screenshot $attempt: $colours distinct colours"
	((colours > min_colours)) && break
	sleep 3
done

# Still up after rendering: a crash on start-up must fail here too.
kill -0 "$pid" 2>/dev/null || { show_log; fail "the app exited right after rendering"; }
stop_app

if ((colours <= min_colours)); then
	show_log
	fail "screenshot $shot looks blank: $colours distinct colours (need more than $min_colours)"
fi
echo "desktop-smoke: OK: window '$title' rendered, $colours distinct colours"
echo "desktop-smoke: screenshot: $shot"
