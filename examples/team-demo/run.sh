#!/usr/bin/env bash
# The team demo (README.md beside this file): three scripted agents — a
# manager and two workers — run seed 001's flows through a running Airlock.
#
# It adds to that Airlock, with the airlock CLI: a project, a role granting
# the built-in file servers, the three agents (their tokens are printed by
# `airlock agents add --json` and kept in this shell only), a temporary
# folder the agents may use, and two rules that let file reads and writes
# inside that folder run without asking (so the demo runs unattended; they
# expire in an hour). Then it starts the five agent sessions — the manager
# and worker-a each have a task session and a chat session, worker-b a task
# session — as `airlock agent-script` processes at once, prints their output
# prefixed by agent and session, and exits non-zero if any script fails.
# On exit it removes the two rules and the folder permission; the project,
# agents, tasks and conversation stay, for the Board and Chat screens.
#
# Environment:
#   AIRLOCK           the airlock binary (default: `airlock` on $PATH, else
#                     build/bin/airlock-headless or build/bin/airlock of this
#                     checkout)
#   AIRLOCK_DATA_DIR  the running Airlock's data directory (default: Airlock's
#                     own default, ~/.config/airlock on Linux)
#   AIRLOCK_URL       its MCP endpoint (default: the address the running
#                     Airlock published in its data directory)
#   DEMO_ID           a suffix for the names, so the demo can run again on the
#                     same Airlock (default: the time of day, HHMMSS)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

say() { printf 'team-demo: %s\n' "$*"; }
die() { printf 'team-demo: %s\n' "$*" >&2; exit 2; }

# The airlock binary.
if [ -z "${AIRLOCK:-}" ]; then
	if command -v airlock >/dev/null 2>&1; then
		AIRLOCK=$(command -v airlock)
	elif [ -x "$root/build/bin/airlock-headless" ]; then
		AIRLOCK=$root/build/bin/airlock-headless
	elif [ -x "$root/build/bin/airlock" ]; then
		AIRLOCK=$root/build/bin/airlock
	else
		die "no airlock binary: build one (go tool task build:headless) or set AIRLOCK"
	fi
fi

# The running Airlock: its data directory (as Airlock resolves it) and the
# address it published there.
if [ -z "${AIRLOCK_DATA_DIR:-}" ]; then
	case "$(uname -s)" in
	Darwin) AIRLOCK_DATA_DIR="$HOME/Library/Application Support/airlock" ;;
	*)
		base=${XDG_CONFIG_HOME:-}
		case "$base" in /*) ;; *) base=$HOME/.config ;; esac
		AIRLOCK_DATA_DIR=$base/airlock
		;;
	esac
fi
export AIRLOCK_DATA_DIR
if [ -z "${AIRLOCK_URL:-}" ]; then
	addr=$(sed -n 's/.*"addr":"\([^"]*\)".*/\1/p' "$AIRLOCK_DATA_DIR/airlock.lock" 2>/dev/null || true)
	[ -n "$addr" ] || die "no Airlock is running on $AIRLOCK_DATA_DIR: start one (go tool task run, or airlock serve), or set AIRLOCK_DATA_DIR / AIRLOCK_URL"
	AIRLOCK_URL=http://$addr/mcp
fi

id=${DEMO_ID:-$(date +%H%M%S)}
project=team-demo-$id
role=team-demo-$id
manager=manager-$id
worker_a=worker-a-$id
worker_b=worker-b-$id
work=$(mktemp -d "${TMPDIR:-/tmp}/airlock-team-demo.XXXXXX")

# jsonField KEY reads the string value of a top-level KEY from the indented
# JSON the airlock CLI prints (--json).
jsonField() { sed -n "s/^  \"$1\": \"\\([^\"]*\\)\".*/\\1/p" | head -n 1; }

rules=()
cleanup() {
	for r in "${rules[@]+"${rules[@]}"}"; do
		"$AIRLOCK" rules rm "$r" >/dev/null || say "could not remove rule $r; remove it with: airlock rules rm $r"
	done
	"$AIRLOCK" builtin remove-path "$work" >/dev/null 2>&1 || true
}
trap cleanup EXIT

say "Airlock at $AIRLOCK_URL (data directory $AIRLOCK_DATA_DIR), binary $AIRLOCK"
say "project $project: $manager above $worker_a and $worker_b; their folder $work"
"$AIRLOCK" projects add "$project" --description "the team demo (examples/team-demo)" >/dev/null
"$AIRLOCK" roles add "$role" --grant file-read --grant file-write --description "the team demo's agents: the built-in file servers" >/dev/null
tokenOf() { # NAME KIND [PARENT]
	local parent=()
	[ $# -lt 3 ] || parent=(--parent "$3")
	"$AIRLOCK" agents add "$1" --kind "$2" --role "$role" --project "$project" "${parent[@]+"${parent[@]}"}" --json | jsonField token
}
manager_token=$(tokenOf "$manager" manager)
worker_a_token=$(tokenOf "$worker_a" worker "$manager")
worker_b_token=$(tokenOf "$worker_b" worker "$manager")
for t in "$manager_token" "$worker_a_token" "$worker_b_token"; do
	[ -n "$t" ] || die "airlock agents add printed no token"
done
"$AIRLOCK" builtin allow-path "$work" >/dev/null
for server in file-read file-write; do
	rule=$("$AIRLOCK" rules add --server "$server" --auto-approve --priority 100 --expires 1h \
		--when "\$.path inside $work" --json | jsonField id)
	[ -n "$rule" ] || die "airlock rules add printed no rule id"
	rules+=("$rule")
done

vars=(--var "project=$project" --var "manager=$manager" --var "worker_a=$worker_a" --var "worker_b=$worker_b" --var "workdir=$work")

# Each session runs as a job of its own (set -m: its own process group), so
# that a failed script can stop the others instead of leaving them waiting
# for it until their timeouts.
set -m
pids=()
failed=0
stop() {
	for pid in "${pids[@]+"${pids[@]}"}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
}
trap 'failed=1; say "a session failed: stopping the others"; stop' USR1
trap 'stop; exit 130' INT TERM

session() { # LABEL TOKEN PURPOSE SCRIPT
	local label=$1 rc
	set +e # a failed script is reported below, not the end of this job
	AIRLOCK_TOKEN=$2 "$AIRLOCK" agent-script "$here/$4" --url "$AIRLOCK_URL?purpose=$3&project=$project" "${vars[@]}" 2>&1 |
		while IFS= read -r line; do printf '%-14s %s\n' "$label" "$line"; done
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] || kill -USR1 $$
	return "$rc"
}
session manager/task "$manager_token" task manager-task.yaml &
pids+=($!)
session manager/chat "$manager_token" chat manager-chat.yaml &
pids+=($!)
session worker-a/task "$worker_a_token" task worker-a-task.yaml &
pids+=($!)
session worker-a/chat "$worker_a_token" chat worker-a-chat.yaml &
pids+=($!)
session worker-b/task "$worker_b_token" task worker-b-task.yaml &
pids+=($!)

for pid in "${pids[@]}"; do
	while :; do
		rc=0
		wait "$pid" || rc=$?
		# Above 128 with the job still there: the wait was cut short by
		# the USR1 trap, not ended by the job.
		if [ "$rc" -gt 128 ] && kill -0 "$pid" 2>/dev/null; then continue; fi
		break
	done
	[ "$rc" -eq 0 ] || failed=1
done
set +m

if [ "$failed" -ne 0 ]; then
	say "FAILED: a scripted agent's expectation did not hold (see its lines above)"
	exit 1
fi
say "all five sessions passed. See it on the Board and Chat screens (project $project), or:"
say "  airlock tasks list --project $project"
say "  airlock chat list --project $project"
say "the files the agents wrote are in $work"
