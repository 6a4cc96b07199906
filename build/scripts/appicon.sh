#!/usr/bin/env bash
# Regenerates build/appicon.png (1024x1024): an airlock hatch — ring with bolts,
# a two-leaf door and its latch — drawn with ImageMagick 6 (`convert`).
# Usage: build/scripts/appicon.sh [out.png]
set -euo pipefail
out="${1:-build/appicon.png}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Background: rounded square with a vertical navy gradient.
convert -size 1024x1024 gradient:'#1e40af'-'#0b1433' "$tmp/grad.png"
convert -size 1024x1024 xc:none -fill white -draw "roundrectangle 40,40 983,983 200,200" "$tmp/mask.png"
convert "$tmp/grad.png" "$tmp/mask.png" -alpha off -compose CopyOpacity -composite "$tmp/bg.png"
# Hatch: outer ring, door disc split by a vertical seam, bolts around the ring.
bolts=""
for a in 0 45 90 135 180 225 270 315; do
  x=$(awk -v a=$a 'BEGIN{printf "%d", 512+352*cos(a*3.14159265/180)}')
  y=$(awk -v a=$a 'BEGIN{printf "%d", 512+352*sin(a*3.14159265/180)}')
  bolts="$bolts circle $x,$y $((x+22)),$y"
done
convert "$tmp/bg.png" \
  -fill none -stroke '#38bdf8' -strokewidth 56 -draw "circle 512,512 512,160" \
  -stroke none -fill '#0b1433' -draw "$bolts" \
  -fill '#e2e8f0' -draw "circle 512,512 512,232" \
  -fill '#1e3a8a' -draw "rectangle 500,232 524,792" \
  -fill '#1e3a8a' -draw "roundrectangle 430,470 594,554 30,30" \
  -fill '#38bdf8' -draw "circle 512,512 512,482" \
  -depth 8 "$out"

