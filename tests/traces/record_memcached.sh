#!/bin/bash
# Records tests/traces/memcached.hpt from a real program: memcached
# (Debian's) serving a skewed key set whose hot keys change half-way, the
# server's every memory access traced by Valgrind's Lackey tool and
# converted to PEBS-like samples by `hotpage_trace_gen lackey`
# (tools/trace_gen/lackey.h). Only the server is traced: the client
# (memcached/client.py, Debian's python3) runs natively.
#
#   bazel build //tools/trace_gen:hotpage_trace_gen
#   bash tests/traces/record_memcached.sh [OUT.hpt] [LOG.zst]
#
# Took 4.6 min on the 2-core build machine shared with other builds (Lackey
# prints 143M lines); converting a kept log takes under a minute.
# Needs valgrind, memcached, zstd and python3. LOG.zst keeps Lackey's
# output (zstd -1) and, when it exists already, is converted again instead
# of re-running Valgrind. A new recording is not byte-identical (a new pid,
# possibly another address layout; the client's requests are the same);
# the README records the run checked in.
#
# Valgrind serialises threads: memcached's worker (-t 1), its listener and
# its remaining background threads run one at a time on one host CPU, and
# Lackey's log interleaves their accesses with no thread id; the samples
# all carry Valgrind's pid as tid.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=${GEN:-$PWD/bazel-bin/tools/trace_gen/hotpage_trace_gen}
OUT=$(realpath -m "${1:-$HERE/memcached.hpt}")
LOG=$(realpath -m "${2:-${TMPDIR:-/tmp}/memcached.lackey.zst}")
PY=${PY:-/usr/bin/python3}
PORT=${PORT:-22133}
KEYS=8000   # items stored
GETS=8000   # gets per phase
# Fixed seed for the latency jitter as record_sqlite_kv.sh, but period 1
# and time x500 (lackey.h, "Time scale"): the server's 91M instructions
# make only 55,000 loads of 30+ cycles (most of its work is system calls,
# which Lackey does not see) and 0.05 s of modelled time; x500 spans 25
# one-second policy intervals. Period 1 at x500 reads as a PEBS period of
# 500 on a run 500 times longer.
CONVERT=("$GEN" lackey --sample-period 1 --time-scale 500 --seed 1 -o "$OUT" -)

if [ ! -s "$LOG" ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/memcached.XXXXXX")
  # On failure, stop the server and drop the partial log.
  trap 'rc=$?; kill "$(cat "$W/pid" 2>/dev/null)" 2>/dev/null || true; wait
        rm -rf "$W"; [ $rc -eq 0 ] || rm -f "$LOG"' EXIT
  cd "$W"
  echo "recording: $(valgrind --version), $(memcached -V), $("$PY" --version), $(date -u +%FT%TZ)" >&2
  # One worker thread, 64 MB of item memory, TCP on loopback only; the pid
  # file holds the traced process's pid (Valgrind's).
  #  - memcached sets RLIMIT_NOFILE to its connection limit (-c), and
  #    Valgrind refuses a hard limit other than its own (the shell's less
  #    the 12 descriptors it keeps): hence 1024 and 1012.
  #  - no_lru_maintainer,no_lru_crawler: those threads poll on wall-clock
  #    sleeps (down to 1 ms), and under a ~100x slower Valgrind they would
  #    take most of the serialised CPU and most of the trace.
  ulimit -n 1024
  valgrind --tool=lackey --trace-mem=yes --log-fd=3 \
      memcached -u root -t 1 -m 64 -c 1012 -U 0 -l 127.0.0.1 -p "$PORT" \
      -P "$W/pid" -o no_lru_maintainer,no_lru_crawler \
      3>&1 1>/dev/null 2>/dev/null | zstd -q -1 -o "$LOG" &
  for _ in $(seq 600); do  # wait for the server under Valgrind (up to 10 min)
    if [ -s "$W/pid" ] && (exec 5<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    sleep 1
  done
  "$PY" "$HERE/memcached/client.py" "$PORT" "$KEYS" "$GETS"
  kill -TERM "$(cat "$W/pid")"
  wait
  echo "recorded: $(date -u +%FT%TZ)" >&2
fi
zstdcat "$LOG" | "${CONVERT[@]}"
