#!/bin/bash
# Records tests/traces/sqlite_kv.hpt from a real program: SQLite (Debian's
# sqlite3) serving point lookups from a 44 MB database, every memory access
# traced by Valgrind's Lackey tool and converted to PEBS-like samples by
# `hotpage_trace_gen lackey` (tools/trace_gen/lackey.h).
#
#   bazel build //tools/trace_gen:hotpage_trace_gen
#   bash tests/traces/record_sqlite_kv.sh [OUT.hpt] [LOG.zst]
#
# Takes 12 minutes on a 2-core machine, 40+ when it is busy (Lackey prints
# 700M lines at 0.3-1M lines/s). LOG.zst keeps Lackey's output (zstd -1,
# 155 MB) and, when it exists already, is converted again (in 90 s)
# instead of re-running Valgrind. A new recording is not byte-identical (a
# new pid, possibly another address layout); the README records the run
# checked in.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=${GEN:-$PWD/bazel-bin/tools/trace_gen/hotpage_trace_gen}
OUT=$(realpath -m "${1:-$HERE/sqlite_kv.hpt}")
LOG=$(realpath -m "${2:-${TMPDIR:-/tmp}/sqlite_kv.lackey.zst}")
# One period-10 sample per 10 counted loads, time stretched x100: the same
# density as hotpage record's default PEBS period (1000) over a run 100
# times longer (lackey.h, "Time scale").
CONVERT=("$GEN" lackey --sample-period 10 --time-scale 100 --seed 1 -o "$OUT" -)

if [ ! -s "$LOG" ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/sqlite_kv.XXXXXX")
  trap 'rm -rf "$W"' EXIT
  cd "$W"
  sqlite3 kv.db <"$HERE/sqlite_kv/build.sql"
  echo "recording: $(valgrind --version), sqlite3 $(sqlite3 --version | cut -d' ' -f1), $(date -u +%FT%TZ)" >&2
  valgrind --tool=lackey --trace-mem=yes --log-fd=3 sqlite3 kv.db <"$HERE/sqlite_kv/queries.sql" \
      3>&1 1>/dev/null 2>/dev/null | zstd -q -1 -o "$LOG"
fi
zstdcat "$LOG" | "${CONVERT[@]}"
