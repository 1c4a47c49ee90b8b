#!/bin/bash
# Records tests/traces/xz_mixed.hpt from a real program: XZ Utils' `xz`
# (Debian's) compressing a generated file of text followed by random
# bytes, every memory access traced by Valgrind's Lackey tool and converted
# to PEBS-like samples by `hotpage_trace_gen lackey`
# (tools/trace_gen/lackey.h).
#
#   bazel build //tools/trace_gen:hotpage_trace_gen
#   bash tests/traces/record_xz_mixed.sh [OUT.hpt] [LOG.zst]
#
# Needs valgrind, xz-utils, zstd and Debian's python3 (for the input).
# Took 7 min on the 2-core build machine shared with other builds (Lackey
# prints 202M lines); converting a kept log takes under a minute.
# LOG.zst keeps Lackey's output (zstd -1) and, when it exists already, is
# converted again instead of re-running Valgrind. A new recording is not
# byte-identical (a new pid, possibly another address layout); the README
# records the run checked in.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=${GEN:-$PWD/bazel-bin/tools/trace_gen/hotpage_trace_gen}
OUT=$(realpath -m "${1:-$HERE/xz_mixed.hpt}")
LOG=$(realpath -m "${2:-${TMPDIR:-/tmp}/xz_mixed.lackey.zst}")
PY=${PY:-/usr/bin/python3}
# Fixed seed for the latency jitter as record_sqlite_kv.sh, but period 1
# and time x300 (lackey.h, "Time scale"): xz's window and tables mostly fit
# the modelled caches, so its 146M instructions make only 44,600 loads of
# 30+ cycles (period 10 would leave 4,460 samples), and its 0.076 s of
# modelled time need x300 to span 23 one-second policy intervals. Period 1
# at x300 reads as a PEBS period of 300 on a run 300 times longer.
CONVERT=("$GEN" lackey --sample-period 1 --time-scale 300 --seed 1 -o "$OUT" -)

if [ ! -s "$LOG" ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/xz_mixed.XXXXXX")
  trap 'rm -rf "$W"' EXIT
  cd "$W"
  # 256 KiB of text, then 64 KiB of random bytes (xz_mixed/gen_input.py).
  "$PY" "$HERE/xz_mixed/gen_input.py" 262144 65536 >input
  echo "recording: $(valgrind --version), $(xz --version | tr '\n' ' '), $("$PY" --version), input $(wc -c <input) bytes, $(date -u +%FT%TZ)" >&2
  # Preset 0 (LZMA2, hc3 match finder, 256 KiB dictionary: the window
  # covers the text), one thread (-T1), to stdout. Lackey makes xz cost
  # ~400 instructions a text byte and ~740 a random byte (the range coder
  # codes every literal bit), so the input is small.
  valgrind --tool=lackey --trace-mem=yes --log-fd=3 xz -0 -T1 -c input \
      3>&1 1>/dev/null 2>/dev/null | zstd -q -1 -o "$LOG"
  echo "recorded: $(date -u +%FT%TZ)" >&2
fi
zstdcat "$LOG" | "${CONVERT[@]}"
