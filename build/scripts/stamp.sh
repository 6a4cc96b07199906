#!/usr/bin/env bash
# Prints a stamp of the source the airlock binaries are built from: a hash of
# every file the Go build reads (Go sources, go.mod/go.sum, embedded files,
# the built UI). The desktop and headless builds of one tree get the same
# stamp, so the desktop binary knows it may hand its commands to the headless
# one beside it (handoff.go). No git needed: a tree with uncommitted changes
# gets its own stamp.
set -euo pipefail
cd "$(dirname "$0")/../.."
{
  ls ./*.go go.mod go.sum
  find backend cmd third_party frontend/dist -name node_modules -prune -o -type f -print
} | LC_ALL=C sort | tr '\n' '\0' | xargs -0 sha256sum | sha256sum | cut -c1-32
