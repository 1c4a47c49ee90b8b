#!/bin/bash
# Golden test of `hotpage simulate` on one trace (sim_golden.bzl).
#
#   sim_golden.sh test|update HOTPAGE TRACE TOPOLOGY INTERVAL_MS PREFIX RATIO...
#
# For each ratio runs `hotpage simulate TRACE --policy all --topology
# TOPOLOGY --ratio RATIO --interval-ms INTERVAL_MS --report FILE` and
#   test:   runs it twice (the reports must be byte-identical), then diffs
#           the report and the table with PREFIX.<ratio>.json / .txt;
#   update: writes them there, in the source tree (under `bazel run`).
# TRACE and PREFIX are workspace-relative, so the report names the trace
# the same way in both modes.
set -euo pipefail

mode=$1 hotpage=$2 trace=$3 topology=$4 interval=$5 prefix=$6
shift 6
hotpage=$(realpath "$hotpage")
if [[ $mode == test ]]; then
  cd "${TEST_SRCDIR}/${TEST_WORKSPACE}"
  out=${TEST_TMPDIR}
elif [[ $mode == update ]]; then
  cd "${BUILD_WORKSPACE_DIRECTORY:?run the update with bazel run}"
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
else
  echo "sim_golden.sh: mode must be test or update, not '$mode'" >&2
  exit 2
fi

failed=0
for ratio in "$@"; do
  tag=${ratio/:/-}
  run() {
    "$hotpage" simulate "$trace" --policy all --topology "$topology" --ratio "$ratio" \
      --interval-ms "$interval" --quiet --report "$out/$tag.$1.json" > "$out/$tag.$1.txt" 2> "$out/$tag.$1.err" ||
      { echo "FAIL: hotpage simulate $trace --ratio $ratio exited $?:"; cat "$out/$tag.$1.err"; exit 1; }
  }
  run a
  if [[ $mode == update ]]; then
    mkdir -p "$(dirname "$prefix")"
    cp "$out/$tag.a.json" "$prefix.$tag.json"
    cp "$out/$tag.a.txt" "$prefix.$tag.txt"
    echo "updated $prefix.$tag.json and .txt:"
    cat "$out/$tag.a.txt"
    continue
  fi
  run b
  if ! cmp -s "$out/$tag.a.json" "$out/$tag.b.json"; then
    echo "FAIL: two runs at $ratio gave different reports (the simulation must be deterministic):"
    diff "$out/$tag.a.json" "$out/$tag.b.json" | head -20
    failed=1
  fi
  for ext in json txt; do
    golden="$prefix.$tag.$ext"
    if [[ ! -f $golden ]]; then
      echo "FAIL: no golden $golden; create it on purpose with: bazel run ${GOLDEN_UPDATE_TARGET:-the _update target}"
      failed=1
    elif ! diff -u "$golden" "$out/$tag.a.$ext" > "$out/$tag.diff"; then
      echo "FAIL: $trace at $ratio differs from $golden (if the change is intended, regenerate with"
      echo "      bazel run ${GOLDEN_UPDATE_TARGET:-the _update target} and give the reason in the commit):"
      head -40 "$out/$tag.diff"
      failed=1
    else
      echo "ok: $trace $topology $ratio matches $golden"
    fi
  done
done
exit $failed
