#!/bin/bash
# `hotpage import` + `hotpage dump` agree with `perf script` sample for
# sample, on files recorded here by Debian's perf in file, pipe and -z mode
# with two events, data addresses, physical addresses, weights and CPUs.
# Also: the real old-format files import with their loss/throttle counts,
# and bad input gives clear errors.
set -u
RUNFILES="${TEST_SRCDIR:-$PWD}/${TEST_WORKSPACE:-hotpage}"
HOTPAGE="$RUNFILES/tools/hotpage"
TOUCH="$RUNFILES/sampler/perf/touch_pages"
DATA="$RUNFILES/sampler/perf/testdata"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/import.XXXXXX")
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }

if ! command -v perf >/dev/null; then
  echo "perf is not installed (Debian's linux-perf; tools/setup.sh installs it)"; exit 1
fi

# perf script -> dump's columns: pid tid cpu time_ns vaddr paddr weight data_src
from_perf() {
  perf script -i "$1" -F pid,tid,cpu,time,addr,phys_addr,weight,data_src --ns 2>/dev/null |
    awk '{ split($1, pt, "/"); cpu = $2; gsub(/[][]/, "", cpu); t = $3; sub(/:$/, "", t);
           split(t, s, "."); ns = s[1] * 1000000000 + s[2];
           # after the time: addr, data_src, its decoding (words), weight, phys_addr
           printf "%d %d %d %.0f 0x%s 0x%s %d 0x%s\n", pt[1], pt[2], cpu + 0, ns, $4, $NF, $(NF-1), $5 }'
}

record() {  # record MODE OUT
  local mode=$1 out=$2 args=(-q -e page-faults -e minor-faults -c 1 -d --phys-data -W --sample-cpu)
  case $mode in
    file) perf record "${args[@]}" -o "$out" -- "$TOUCH" --pages 64 --threads 2 >/dev/null 2>&1 ;;
    pipe) perf record "${args[@]}" -o - -- "$TOUCH" --pages 64 --threads 2 --out "$T/addr.txt" 2>/dev/null >"$out" ;;
    zstd) perf record "${args[@]}" -z -o "$out" -- "$TOUCH" --pages 64 --threads 2 >/dev/null 2>&1 ;;
  esac
}

for mode in file pipe zstd; do
  f="$T/$mode.data"
  record $mode "$f"
  check "$mode: perf recorded" test -s "$f"
  "$HOTPAGE" import "$f" -o "$T/$mode.hpt" 2>"$T/$mode.err"; rc=$?
  check "$mode: import exits 0" test $rc -eq 0
  "$HOTPAGE" dump "$T/$mode.hpt" | grep -v '^#' | sort -s -n -k4,4 >"$T/$mode.ours"
  from_perf "$f" | sort -s -n -k4,4 >"$T/$mode.perf"
  n=$(wc -l <"$T/$mode.perf")
  check "$mode: perf script has samples ($n)" test "$n" -gt 128
  if cmp -s "$T/$mode.ours" "$T/$mode.perf"; then
    echo "ok   $mode: $n samples identical to perf script (pid tid cpu time vaddr paddr weight data_src)"
  else
    echo "FAIL $mode: differs from perf script:"; diff "$T/$mode.perf" "$T/$mode.ours" | head -10
    fails=$((fails + 1))
  fi
done

# Real old-format files: counts carried into the trace.
"$HOTPAGE" import "$DATA/perf.data.throttle-3.8" -o "$T/thr.hpt" 2>/dev/null
summary=$("$HOTPAGE" dump "$T/thr.hpt" | tail -n 1)
check "throttle-3.8: 68 throttled, 64 unthrottled, 14980 skipped ($summary)" \
  grep -q "samples=0 lost=0 throttled=68 unthrottled=64 skipped=14980" <<<"$summary"
"$HOTPAGE" import "$DATA/perf.data.lost_samples-4.4" -o "$T/lost.hpt" 2>/dev/null
summary=$("$HOTPAGE" dump "$T/lost.hpt" | tail -n 1)
check "lost_samples-4.4: lost=2 ($summary)" grep -q "lost=2 " <<<"$summary"
"$HOTPAGE" import "$DATA/perf.data.piped.target.throttled-3.4" -o "$T/piped.hpt" 2>/dev/null
summary=$("$HOTPAGE" dump "$T/piped.hpt" | tail -n 1)
check "piped-3.4: throttled=1 unthrottled=1 ($summary)" grep -q "throttled=1 unthrottled=1 skipped=228" <<<"$summary"

# A page-fault recording (software page-fault events only) imports as
# page-fault samples, with a page-fault header: fault rates are not priced
# as access rates (sampler/sample.h SamplesCountAccesses). Pipe mode too:
# its attrs come as records before the first sample.
"$HOTPAGE" import "$DATA/pagefaults.dd.perf.data" -o "$T/pf.hpt" 2>/dev/null
out=$("$HOTPAGE" dump --header --stats "$T/pf.hpt")
check "pagefaults.dd: header source=pagefault" grep -qx "# source=pagefault" <<<"$out"
check "pagefaults.dd: 9 pagefault samples" grep -qx "# source=pagefault samples=9" <<<"$out"
check "pagefaults.dd: event named in the header" grep -q "^# event_config=imported from .*: page-faults freq=4000$" <<<"$out"
"$HOTPAGE" import "$DATA/touch16.pipe.perf.data" -o "$T/pfpipe.hpt" 2>/dev/null
out=$("$HOTPAGE" dump --header --stats "$T/pfpipe.hpt")
check "touch16.pipe: header source=pagefault" grep -qx "# source=pagefault" <<<"$out"
check "touch16.pipe: 276 pagefault samples" grep -qx "# source=pagefault samples=276" <<<"$out"
check "touch16.pipe: events named in the header" grep -q "^# event_config=imported from .*: page-faults period=1, minor-faults period=1$" <<<"$out"
# PMU events (no data addresses in these old files) keep perf-data.
out=$("$HOTPAGE" dump --header "$T/piped.hpt")
check "piped-3.4 (cycles): header source=perf-data" grep -qx "# source=perf-data" <<<"$out"

# Errors.
out=$("$HOTPAGE" import "$DATA/touch16.file.txt" -o "$T/x.hpt" 2>&1); rc=$?
check "not perf.data: exit 1" test $rc -eq 1
check "not perf.data: says so" grep -q "not a perf.data file" <<<"$out"
head -c 3000 "$T/file.data" >"$T/cut.data"
out=$("$HOTPAGE" import "$T/cut.data" -o "$T/cut.hpt" 2>&1); rc=$?
check "truncated: exit 1" test $rc -eq 1
out=$("$HOTPAGE" import "$T/file.data" 2>&1); rc=$?
check "no -o: usage error" test $rc -eq 2
out=$("$HOTPAGE" import "$T/file.data" -o "$T/file.data" 2>&1); rc=$?
check "in == out refused" test $rc -eq 2

rm -rf "$T"
echo "$fails failed"
[ $fails -eq 0 ]
