#!/bin/bash
# `hotpage record` for real on this machine with the software page-fault
# source (no PMU needed): every touched address is in the trace, per task
# and system-wide; Ctrl-C and --duration end cleanly with a complete trace;
# bad command lines and unusable sources give clear errors.
set -u
RUNFILES="${TEST_SRCDIR:-$PWD}/${TEST_WORKSPACE:-hotpage}"
HOTPAGE="$RUNFILES/tools/hotpage"
TOUCH="$RUNFILES/sampler/perf/touch_pages"
WORKLOAD="$RUNFILES/tests/workloads/locality_workload"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/record.XXXXXX")
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
contains() { grep -qF -- "$2" <<<"$1"; }

PAGES=4096
for mode in per-task system-wide; do
  extra=(); [ $mode = system-wide ] && extra=(--system-wide)
  out=$("$HOTPAGE" record --source pagefault --cpu-budget 0 "${extra[@]}" -o "$T/$mode.hpt" \
        -- "$TOUCH" --pages $PAGES --threads 2 --out "$T/$mode.addr" 2>&1); rc=$?
  check "$mode: record exits 0" test $rc -eq 0
  check "$mode: says which source and why" contains "$out" "page-fault source requested"
  check "$mode: summary names the file" contains "$out" "to $T/$mode.hpt"
  [ $mode = system-wide ] && check "system-wide: says why" contains "$out" "system-wide: system-wide rings requested"
  base=$(sed -E 's/.*base=(0x[0-9a-f]+).*/\1/' "$T/$mode.addr")
  # Expected addresses: base + i*4096 + (i*64 % 4096).
  for ((i = 0; i < PAGES; i++)); do printf '0x%x\n' $((base + i * 4096 + (i * 64) % 4096)); done | sort >"$T/want"
  "$HOTPAGE" dump "$T/$mode.hpt" >"$T/dump"; rc=$?
  check "$mode: the trace is complete (dump exits 0)" test $rc -eq 0
  awk '!/^#/ { print $5 }' "$T/dump" | sort >"$T/all"
  comm -12 "$T/want" "$T/all" >"$T/got"
  check "$mode: all $PAGES touched addresses recorded ($(wc -l <"$T/got"))" test "$(wc -l <"$T/got")" -eq $PAGES
  check "$mode: each exactly once" test "$(grep -cxFf "$T/want" "$T/all")" -eq $PAGES
  ntids=$(awk '!/^#/ { print $2 }' "$T/dump" | sort -u | wc -l)
  check "$mode: samples from the threads too ($ntids tids)" test "$ntids" -ge 3
  # Two threads fault on two CPUs at once: their rings interleave in time,
  # and the trace must still be in time order (reorder_buffer.h).
  ooo=$(awk '!/^#/ { t = $4 + 0; if (t < prev) bad++; if (t > prev) prev = t } END { print bad + 0 }' "$T/dump")
  check "$mode: samples in time order ($ooo out of order)" test "$ooo" -eq 0
done

# A long-running target: --duration, then Ctrl-C.
sleep 30 & SLEEPER=$!
start=$(date +%s%N)
out=$("$HOTPAGE" record --pid $SLEEPER --source pagefault --duration 1 -o "$T/d.hpt" 2>&1); rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--duration 1: exits 0" test $rc -eq 0
check "--duration 1: stops in about a second ($ms ms)" test $ms -lt 5000
check "--duration: says why it stopped" contains "$out" "--duration 1 s reached"
"$HOTPAGE" record --pid $SLEEPER --source pagefault -o "$T/c.hpt" 2>"$T/c.err" & REC=$!
sleep 1
kill -INT $REC
wait $REC; rc=$?
check "Ctrl-C: exits 0" test $rc -eq 0
check "Ctrl-C: says so" grep -q "interrupted" "$T/c.err"
"$HOTPAGE" dump --stats "$T/c.hpt" >/dev/null; rc=$?
check "Ctrl-C: the trace is complete" test $rc -eq 0
kill $SLEEPER 2>/dev/null; wait $SLEEPER 2>/dev/null

# The target exiting ends the recording.
sleep 1 & S2=$!
out=$("$HOTPAGE" record --pid $S2 --source pagefault -o "$T/e.hpt" 2>&1); rc=$?
check "target exit: exits 0" test $rc -eq 0
check "target exit: says so" contains "$out" "the targets exited"

# Errors.
out=$("$HOTPAGE" record --pid 4194000 -o "$T/x.hpt" 2>&1); rc=$?
check "missing pid: exit 1" test $rc -eq 1
check "missing pid: named" contains "$out" "pid 4194000: no such process"
out=$("$HOTPAGE" record --pid 1 2>&1); rc=$?
check "no -o: exit 2" test $rc -eq 2
out=$("$HOTPAGE" record --pid 1 --all -o "$T/x.hpt" 2>&1); rc=$?
check "--pid with --all: exit 2" test $rc -eq 2
out=$("$HOTPAGE" record --pid abc -o "$T/x.hpt" 2>&1); rc=$?
check "bad pid: exit 2" test $rc -eq 2
out=$("$HOTPAGE" record --pid 1 --source magic -o "$T/x.hpt" 2>&1); rc=$?
check "bad source: exit 2" test $rc -eq 2
out=$("$HOTPAGE" record --pid 1 --ring-kib 12 -o "$T/x.hpt" 2>&1); rc=$?
check "bad ring size: exit 2" test $rc -eq 2
if [ ! -e /sys/bus/event_source/devices/cpu/events/mem-loads ]; then
  out=$("$HOTPAGE" record --pid $$ --source pebs -o "$T/x.hpt" 2>&1); rc=$?
  check "pebs without PEBS: exit 1" test $rc -eq 1
  check "pebs without PEBS: explains and offers alternatives" contains "$out" "--source pagefault"
fi
out=$("$HOTPAGE" record -o "$T/x.hpt" -- /nonexistent/prog 2>&1); rc=$?
check "unrunnable command: reported" contains "$out" "cannot run /nonexistent/prog"
out=$("$HOTPAGE" record --pid 1 --write-faults -o "$T/x.hpt" 2>&1); rc=$?
check "--write-faults without --source pagefault: exit 2" test $rc -eq 2
check "--write-faults without --source pagefault: says what it needs" contains "$out" "--source pagefault"
out=$("$HOTPAGE" record --all --source pagefault --write-faults -o "$T/x.hpt" 2>&1); rc=$?
check "--write-faults with --all: exit 2" test $rc -eq 2

# --write-faults: repeated writes are recorded, not only first touches. The
# workload writes its 768 pages over and over; without the re-arm only their
# first touches (before recording starts) would fault. On a kernel without
# soft-dirty tracking it must refuse and say why (the guest test
# //tests/attach:attach_locality_vm_test shows the other case for sure).
"$WORKLOAD" --set_mib=1 --a_node=0 --b_node=0 --s_nodes=0 --duration_ms=6000 >/dev/null & WL=$!
sleep 1
out=$("$HOTPAGE" record --pid $WL --source pagefault --write-faults --duration 2 -o "$T/w.hpt" 2>&1); rc=$?
if [ $rc -eq 0 ]; then
  n=$("$HOTPAGE" dump "$T/w.hpt" | grep -vc '^#')
  check "--write-faults: repeated writes recorded ($n samples of 768 pages in 2 s)" test "$n" -ge 1536
  check "--write-faults: says how often it re-armed" contains "$out" "write faults re-armed"
else
  check "--write-faults on a kernel without soft-dirty: exit 1" test $rc -eq 1
  check "--write-faults on a kernel without soft-dirty: names CONFIG_MEM_SOFT_DIRTY" contains "$out" "CONFIG_MEM_SOFT_DIRTY"
fi
kill $WL 2>/dev/null; wait $WL 2>/dev/null

rm -rf "$T"
echo "$fails failed"
[ $fails -eq 0 ]
