#!/bin/bash
# Regenerates every `hotpage simulate` golden (sim_golden.bzl) from the
# current code. Run it only when a change of the reports is intended, and
# say why in the commit:
#   bash tools/simulate/update_goldens.sh [PATTERN]
# PATTERN (a grep -E expression) limits it to matching _update targets.
set -euo pipefail
cd "$(dirname "$0")/../.."
targets=$(bazel query 'attr(tags, "sim_golden_update", //...)' 2>/dev/null | grep -E "${1:-.}" || true)
if [[ -z $targets ]]; then
  echo "update_goldens.sh: no golden update targets${1:+ matching '$1'}" >&2
  exit 1
fi
for t in $targets; do
  echo "== $t"
  bazel run "$t"
done
