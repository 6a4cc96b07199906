#!/usr/bin/env bash
# Runs the Wails v2.12.0 CLI with the given arguments, installing it into
# GOBIN first when it is missing or another version. Older CLIs (v2.9.2, the
# newest the module proxy lists) do not compile with Go 1.26, so "any wails on
# PATH" is not good enough.
set -euo pipefail

want=v2.12.0

gobin="$(go env GOBIN)"
[[ -n "$gobin" ]] || gobin="$(go env GOPATH)/bin"

version_of() { "$1" version 2>/dev/null | head -n1 | tr -d '[:space:]'; }

wails=""
for candidate in "$(command -v wails || true)" "$gobin/wails"; do
	if [[ -n "$candidate" && -x "$candidate" && "$(version_of "$candidate")" == "$want" ]]; then
		wails="$candidate"
		break
	fi
done

if [[ -z "$wails" ]]; then
	echo "wails.sh: installing the Wails CLI $want into $gobin" >&2
	go install "github.com/wailsapp/wails/v2/cmd/wails@$want"
	wails="$gobin/wails"
fi

exec "$wails" "$@"
