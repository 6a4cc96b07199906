#!/usr/bin/env bash
# Prints a stamp of the source the airlock binaries are built from: a hash of
# every file the Go build reads (Go sources, go.mod/go.sum, embedded files,
# the built UI). The desktop and headless builds of one tree get the same
# stamp, so the desktop binary knows it may hand its commands to the headless
# one beside it (handoff.go). No git needed: a tree with uncommitted changes
# gets its own stamp. It fails (and so does the build) rather than print
# anything but 32 hex digits.
set -euo pipefail
cd "$(dirname "$0")/../.."
if command -v sha256sum >/dev/null; then
  sum() { sha256sum; }
  sums() { xargs -0 sha256sum; }
else
  sum() { shasum -a 256; } # macOS
  sums() { xargs -0 shasum -a 256; }
fi
stamp=$({
  ls ./*.go go.mod go.sum
  find backend cmd third_party frontend/dist -name node_modules -prune -o -type f -print
} | LC_ALL=C sort | tr '\n' '\0' | sums | sum | cut -c1-32)
if ! [[ $stamp =~ ^[0-9a-f]{32}$ ]]; then
  echo "stamp.sh: could not hash the source (got '$stamp')" >&2
  exit 1
fi
echo "$stamp"
