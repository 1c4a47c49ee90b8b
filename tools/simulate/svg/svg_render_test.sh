#!/bin/bash
# Renders svg_demo's SVG in headless Chromium (Debian's `chromium`) and
# checks the screenshot with png_check: the right size, many colours, the
# heatmap and tiers panels mostly painted, the chart's lines present. A
# malformed SVG renders as Chromium's XML error page and fails all of that.
#
# HOTPAGE_CHROMIUM overrides the browser binary. Runtime: about 3 s.
set -u
here="$(dirname "$0")"
DEMO="$here/svg_demo"
[ -x "$DEMO" ] || DEMO="$TEST_SRCDIR/$TEST_WORKSPACE/tools/simulate/svg/svg_demo"
PNG_CHECK="$here/png_check"
[ -x "$PNG_CHECK" ] || PNG_CHECK="$TEST_SRCDIR/$TEST_WORKSPACE/tools/simulate/svg/png_check"

CHROMIUM="${HOTPAGE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$CHROMIUM" ] || [ ! -x "$CHROMIUM" ]; then
  echo "FAIL chromium not found: this test renders the SVG in Debian's headless chromium;" \
       "install it with 'bash tools/setup.sh' (or 'apt-get install chromium')" >&2
  exit 1
fi

T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/svg_render.XXXXXX")
trap 'rm -rf "$T"' EXIT

if ! "$DEMO" --layout "$T/demo.svg" >"$T/layout"; then
  echo "FAIL svg_demo did not write the SVG" >&2
  exit 1
fi
# "document W H" and "NAME X Y W H" lines.
declare -A rect
while read -r name a b c d; do rect[$name]="$a $b $c $d"; done <"$T/layout"
read -r doc_w doc_h _ _ <<<"${rect[document]}"
region() {  # region NAME MIN_NONWHITE MIN_COLORS: the plot area, 2 px inside its frame
  local x y w h
  read -r x y w h <<<"${rect[$1]}"
  echo "$1=$((x + 2)),$((y + 2)),$((w - 4)),$((h - 4)):$2:$3"
}

start=$(date +%s%N)
# --headless (the new headless mode in Chromium 156), no sandbox (the test
# may run as root or inside Bazel's sandbox), a throwaway profile and HOME.
HOME="$T" timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --no-first-run --user-data-dir="$T/profile" --window-size="$doc_w,$doc_h" \
  --screenshot="$T/demo.png" "file://$T/demo.svg" >"$T/chromium.log" 2>&1
rc=$?
echo "chromium: exit $rc in $(( ($(date +%s%N) - start) / 1000000 )) ms"
if [ ! -s "$T/demo.png" ]; then
  echo "FAIL chromium wrote no screenshot (exit $rc); its log:" >&2
  tail -20 "$T/chromium.log" >&2
  exit 1
fi

# Heatmap: every cell has accesses (the demo's background); tiers: every
# row has pages; chart: five lines over white, so few pixels but their
# colours.
"$PNG_CHECK" "$T/demo.png" --size "$doc_w,$doc_h" --min-colors 200 \
  --region "$(region heatmap 0.95 8)" \
  --region "$(region tiers 0.95 5)" \
  --region "$(region chart 0.02 6)"
