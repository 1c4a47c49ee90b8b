#!/bin/bash
# `hotpage simulate --svg` on a bundled trace: the SVG is written, is
# well-formed enough for Chromium to render it (a malformed SVG renders as
# Chromium's XML error page), and the rendering is a real picture: many
# colours, the heatmap area (the upper part) mostly painted, the chart's
# lines present. The same inputs give a byte-identical SVG.
set -u
HOTPAGE="$TEST_SRCDIR/$TEST_WORKSPACE/tools/hotpage"
TRACE="$TEST_SRCDIR/$TEST_WORKSPACE/tests/traces/gups_shift.hpt"
PNG_CHECK="$TEST_SRCDIR/$TEST_WORKSPACE/tools/simulate/svg/png_check"
CHROMIUM="${HOTPAGE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/simsvg.XXXXXX")
trap 'rm -rf "$T"' EXIT

"$HOTPAGE" simulate "$TRACE" --ratio 1:4 --svg "$T/a.svg" >"$T/table" 2>"$T/err" || { bad "simulate --svg failed: $(cat "$T/err")"; exit 1; }
"$HOTPAGE" simulate "$TRACE" --ratio 1:4 --svg "$T/b.svg" >/dev/null 2>&1
[ -s "$T/a.svg" ] && ok "SVG written ($(wc -c <"$T/a.svg") bytes)" || bad "no SVG"
cmp -s "$T/a.svg" "$T/b.svg" && ok "byte-identical on a second run" || bad "two runs gave different SVGs"
head -c 300 "$T/a.svg" | grep -q "<svg" && ok "an SVG document" || bad "not an SVG document"
for want in "hotpage simulate: gups_shift.hpt" "time (s)" "virtual address" "0x7f" "oracle" "tpp" "memtis" "first-touch"; do
  grep -qF "$want" "$T/a.svg" && ok "labelled: $want" || bad "missing label: $want"
done
if grep -qE '<(script|image|foreignObject)|xlink:href="http|href="http' "$T/a.svg"; then bad "external or scripted content"; else ok "self-contained"; fi
"$HOTPAGE" simulate "$TRACE" --svg /nonexistent/dir/x.svg >/dev/null 2>"$T/err2"; rc=$?
[ "$rc" = 1 ] && grep -q "x.svg" "$T/err2" && ok "unwritable --svg: exit 1 naming the file" || bad "unwritable --svg: exit $rc, $(cat "$T/err2")"

if [ -z "$CHROMIUM" ] || [ ! -x "$CHROMIUM" ]; then
  bad "chromium not found: install it with 'bash tools/setup.sh' (or 'apt-get install chromium')"
  exit 1
fi
w=$(head -c 400 "$T/a.svg" | grep -o 'width="[0-9]*"' | head -n 1 | grep -o '[0-9]*')
h=$(head -c 400 "$T/a.svg" | grep -o 'height="[0-9]*"' | head -n 1 | grep -o '[0-9]*')
HOME="$T" timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$T/profile" --window-size="$w,$h" --screenshot="$T/a.png" "file://$T/a.svg" >"$T/chromium.log" 2>&1
[ -s "$T/a.png" ] || { bad "chromium wrote no screenshot: $(tail -5 "$T/chromium.log")"; exit 1; }
# Heatmap: the band from 12% to 33% of the height, inside the plot;
# chart: the bottom fifth.
hx=$((w / 8)); hw=$((w * 3 / 4)); hy=$((h * 12 / 100)); hh=$((h * 21 / 100))
cy=$((h * 78 / 100)); ch=$((h * 17 / 100))
if "$PNG_CHECK" "$T/a.png" --size "$w,$h" --min-colors 200 \
    --region "heatmap=$hx,$hy,$hw,$hh:0.5:8" --region "chart=$hx,$cy,$hw,$ch:0.01:5" >"$T/png.out" 2>&1; then
  ok "rendered by chromium: $(tr '\n' ' ' <"$T/png.out" | cut -c1-200)"
else
  bad "the rendering is not a picture: $(cat "$T/png.out")"
fi
echo "simulate --svg test: $fails failed"
exit $fails
