#!/bin/bash
# The README's first command (after <!-- run-command -->) keeps working: its
# hotpage part (after the setup and build steps, which CI does itself) runs
# against the built binary from the repository root, prints the comparison
# table with every policy and writes the SVG it names.
set -u
ROOT="$TEST_SRCDIR/$TEST_WORKSPACE"
README="$ROOT/README.md"
HOTPAGE="$ROOT/tools/hotpage"
line=$(awk '/<!-- run-command -->/ { getline; getline; print; exit }' "$README")
[ -n "$line" ] || { echo "FAIL no command after <!-- run-command --> in README.md"; exit 1; }
echo "README: $line"
case "$line" in
  *"bash tools/setup.sh && bazel build //tools:hotpage && bazel-bin/tools/hotpage "*) ;;
  *) echo "FAIL the run-command does not set up, build, then run bazel-bin/tools/hotpage"; exit 1 ;;
esac
cmd="${line#*bazel-bin/tools/hotpage }"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/readme.XXXXXX")
trap 'rm -rf "$T"' EXIT
cp -rL "$ROOT/tests" "$T/tests"
cd "$T" || exit 1
# shellcheck disable=SC2086  # the README's words, split as a shell would
eval "\"$HOTPAGE\" $cmd" >out.txt 2>err.txt || { echo "FAIL exit $?: $(cat err.txt)"; exit 1; }
cat out.txt
fails=0
for p in oracle hotpage first-touch tpp memtis; do
  grep -q "^$p " out.txt || { echo "FAIL no $p row"; fails=$((fails + 1)); }
done
svg=$(echo "$cmd" | grep -o -- '--svg [^ ]*' | cut -d' ' -f2)
if [ -n "$svg" ]; then
  [ -s "$svg" ] && echo "ok   wrote $svg ($(wc -c <"$svg") bytes)" || { echo "FAIL no $svg"; fails=$((fails + 1)); }
fi
exit $fails
