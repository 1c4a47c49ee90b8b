#!/bin/bash
# Regenerates the generated traces in tests/traces/ and their ground truth
# (sqlite_kv.hpt is recorded, not generated: record_sqlite_kv.sh). The
# output is byte-identical on every machine; traces_regen_test checks it.
# Runs from the repository root (paths are recorded in the traces).
#
#   bazel build //tools/trace_gen:hotpage_trace_gen
#   bash tests/traces/generate.sh [GENERATOR [OUT_DIR]]
set -euo pipefail
GEN=$(realpath "${1:-bazel-bin/tools/trace_gen/hotpage_trace_gen}")
OUT=$(realpath -m "${2:-tests/traces}")
cd "$(dirname "$0")/../.."
"$GEN" gups --seed 1 -o "$OUT/gups_shift.hpt" --truth "$OUT/gups_shift.truth"
"$GEN" zipf --seed 1 -o "$OUT/zipf_kv.hpt" --truth "$OUT/zipf_kv.truth"
"$GEN" scan --seed 1 -o "$OUT/scan_cold.hpt" --truth "$OUT/scan_cold.truth"
"$GEN" packages --seed 1 --topology-json tests/traces/2pkg-cxl.topology.json \
  -o "$OUT/packages_2pkg.hpt" --truth "$OUT/packages_2pkg.truth"
"$GEN" stream_mix --seed 1 -o "$OUT/stream_mix.hpt" --truth "$OUT/stream_mix.truth"
"$GEN" stream_grow --seed 1 -o "$OUT/stream_grow.hpt" --truth "$OUT/stream_grow.truth"
