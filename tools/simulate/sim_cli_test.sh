#!/bin/bash
# `hotpage simulate` from the command line: --help, clear errors with the
# right exit status (2: bad command line, 1: bad input), the table.
set -uo pipefail
hotpage=$1
trace=$2
perf_data=$3
tmp=${TEST_TMPDIR:-/tmp}
fail=0
expect() {  # expect STATUS PATTERN -- ARGS...
  local want=$1 pattern=$2
  shift 3
  "$hotpage" simulate "$@" > "$tmp/out" 2> "$tmp/err"
  local got=$?
  if [[ $got != "$want" ]] || ! grep -qE -- "$pattern" "$tmp/out" "$tmp/err"; then
    echo "FAIL: hotpage simulate $* -> exit $got (want $want), output lacks /$pattern/:"
    cat "$tmp/out" "$tmp/err"
    fail=1
  else
    echo "ok: simulate $* -> $got"
  fi
}
expect 0 "--ratio 1:N" -- --help
expect 0 "2pkg\+cxl, 3tier" -- --help
expect 2 "give exactly one trace" --
expect 2 "expected 1:N" -- "$trace" --ratio 2:3
expect 2 "not both" -- "$trace" --ratio 1:2 --fast-capacity 1M
expect 2 "expected a size" -- "$trace" --fast-capacity lots
expect 2 "neither a preset" -- "$trace" --topology 7tier
expect 2 "unknown policy 'lru'" -- "$trace" --policy lru
expect 1 "no such file" -- "$tmp/missing.hpt"
printf 'not a trace' > "$tmp/junk.bin"
expect 1 "neither an .hpt trace" -- "$tmp/junk.bin"
head -c 3000 "$trace" > "$tmp/cut.hpt"
expect 1 "cut.hpt" -- "$tmp/cut.hpt"
expect 1 "no samples of pid 1" -- "$trace" --pid 1
expect 0 "^hotpage +[0-9.]+%" -- "$trace" --policy hotpage --quiet
expect 0 "^memtis " -- "$trace" --topology 3tier --fast-capacity 2M --quiet
# perf.data (pipe mode) is read as well as .hpt.
expect 0 "^tpp " -- "$perf_data" --quiet
expect 0 "\(perf.data\)" -- "$perf_data" --quiet
exit $fail
