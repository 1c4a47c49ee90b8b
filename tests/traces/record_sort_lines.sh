#!/bin/bash
# Records tests/traces/sort_lines.hpt from a real program: GNU coreutils
# `sort` (Debian's) sorting a 4 MB generated text file, every memory access
# traced by Valgrind's Lackey tool and converted to PEBS-like samples by
# `hotpage_trace_gen lackey` (tools/trace_gen/lackey.h).
#
#   bazel build //tools/trace_gen:hotpage_trace_gen
#   bash tests/traces/record_sort_lines.sh [OUT.hpt] [LOG.zst]
#
# Needs valgrind, coreutils, zstd and Debian's python3 (for the input).
# Took 3.5 min on the 2-core build machine shared with other builds (Lackey
# prints 110M lines); converting a kept log takes under a minute.
# LOG.zst keeps Lackey's output (zstd -1) and, when it exists already, is
# converted again instead of re-running Valgrind. A new recording is not
# byte-identical (a new pid, possibly another address layout); the README
# records the run checked in.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=${GEN:-$PWD/bazel-bin/tools/trace_gen/hotpage_trace_gen}
OUT=$(realpath -m "${1:-$HERE/sort_lines.hpt}")
LOG=$(realpath -m "${2:-${TMPDIR:-/tmp}/sort_lines.lackey.zst}")
PY=${PY:-/usr/bin/python3}
# Period 10 as record_sqlite_kv.sh, fixed seed for the latency jitter, but
# time stretched x400 (lackey.h, "Time scale"): the sort is 77M
# instructions, a sixth of the SQLite run, and x100 would give it 5.6 s,
# too few 1 s policy intervals to see its phases. x400 reads as the same
# program on 4x the input sampled at a 4x longer period (PEBS period 4000).
CONVERT=("$GEN" lackey --sample-period 10 --time-scale 400 --seed 1 -o "$OUT" -)

if [ ! -s "$LOG" ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/sort_lines.XXXXXX")
  trap 'rm -rf "$W"' EXIT
  cd "$W"
  "$PY" "$HERE/sort_lines/gen_lines.py" 4000000 >input.txt
  echo "recording: $(valgrind --version), $(sort --version | head -1), $("$PY" --version), input $(wc -lc <input.txt) (lines bytes), $(date -u +%FT%TZ)" >&2
  # C locale: bytewise comparisons (memcmp), not strcoll. One thread
  # (--parallel=1) and a buffer that holds the whole input (-S 64M): one
  # in-memory sort, no temporary files.
  LC_ALL=C valgrind --tool=lackey --trace-mem=yes --log-fd=3 \
      sort --parallel=1 -S 64M -o sorted.txt input.txt \
      3>&1 1>/dev/null 2>/dev/null | zstd -q -1 -o "$LOG"
  echo "recorded: $(date -u +%FT%TZ)" >&2
fi
zstdcat "$LOG" | "${CONVERT[@]}"
