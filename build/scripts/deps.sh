#!/usr/bin/env bash
# Installs the Debian packages Airlock needs to build the desktop binary and to
# run every test (WebKitGTK, Xvfb + screenshot tools, Chromium for the browser
# tests, fonts so screenshots show text). Idempotent: when everything is
# already installed it only runs dpkg-query and exits in well under a second.
# Without apt-get, or as a non-root user without sudo, it prints what to
# install and carries on, so the rest of a task can still try (and fail with
# its own clear message).
set -euo pipefail

packages=(
	gcc
	libc6-dev
	libgtk-3-dev
	libwebkit2gtk-4.1-dev
	pkg-config
	xvfb
	xauth
	imagemagick
	xdotool
	chromium
	fonts-dejavu-core
	fonts-noto-color-emoji
)

installed() {
	# dpkg -s also succeeds for packages removed with their config files kept,
	# so ask for the exact status instead.
	[[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: no apt-get here (not Debian/Ubuntu). Install the equivalents of:" >&2
	echo "deps:   ${packages[*]}" >&2
	echo "deps: continuing without them." >&2
	exit 0
fi

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
	echo "deps: system packages present"
	exit 0
fi

sudo=()
if [[ "$(id -u)" != 0 ]]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		# Like the non-Debian case: say what is missing and let the steps that
		# need it fail with their own errors (`run` needs only the build set).
		echo "deps: missing ${missing[*]}" >&2
		echo "deps: not root and no sudo: install them by hand; continuing without them." >&2
		exit 0
	fi
fi

echo "deps: installing ${missing[*]}"
# env passes DEBIAN_FRONTEND through sudo, which would otherwise drop it; the
# lock timeout waits out another apt run instead of failing at once.
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
"${apt[@]}" update
"${apt[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null
echo "deps: system packages installed"
