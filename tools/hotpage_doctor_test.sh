#!/bin/bash
# End-to-end checks of `hotpage doctor` on the built binary: on this machine
# (whatever it has: the exit status must follow the "source" fact), as JSON
# (parsed by python3 and by hotpage's own strict reader), on fake trees (a
# PEBS server, a machine where nothing may run, a tree whose symlink points
# outside it), and with --pid.
set -u
HOTPAGE="$(dirname "$0")/hotpage"
[ -x "$HOTPAGE" ] || HOTPAGE="$TEST_SRCDIR/$TEST_WORKSPACE/tools/hotpage"
JSON_EXPECT="$TEST_SRCDIR/$TEST_WORKSPACE/tests/vm/json_expect"
fails=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
contains() { grep -qF -- "$2" <<<"$1"; }
lacks() { ! grep -qF -- "$2" <<<"$1"; }
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/doctor.XXXXXX")

out=$("$HOTPAGE" --help); rc=$?
check "hotpage --help lists doctor" contains "$out" "doctor"
out=$("$HOTPAGE" doctor --help); rc=$?
check "doctor --help exits 0" test $rc -eq 0
for flag in "--json" "--sysfs-root DIR" "--pid PID" "--source SRC"; do
  check "doctor --help documents $flag" contains "$out" "$flag"
done
out=$("$HOTPAGE" doctor --source magic 2>&1); rc=$?
check "unknown source exits 2" test $rc -eq 2
check "unknown source is named" contains "$out" "unknown source 'magic'"
out=$("$HOTPAGE" doctor --pid 0 2>&1); rc=$?
check "--pid 0 exits 2" test $rc -eq 2
out=$("$HOTPAGE" doctor --sysfs-root /nonexistent/x 2>&1); rc=$?
check "missing root exits 1" test $rc -eq 1

# This machine, whatever it has.
out=$("$HOTPAGE" doctor); rc=$?
echo "$out"
check "doctor exits 0 or 1" test $rc -le 1
if contains "$out" "ok  source:"; then want=0; else want=1; fi
check "exit status follows the source fact (want $want, got $rc)" test $rc -eq $want
check "every line is one fact" test -z "$(grep -vE '^(ok|no)  [a-z_.]+: ' <<<"$out")"
for fact in kernel source plan cap_perfmon cap_sys_nice cap_sys_admin \
    perf_event_paranoid mpol_preferred_many weighted_interleave memory_tiers \
    hmat damon soft_dirty numa_balancing demotion; do
  check "fact $fact" grep -qE "^(ok|no)  $fact: " <<<"$out"
done
check "a PMU fact" grep -qE "^(ok|no)  pmu(\.[a-z_]+)?: " <<<"$out"
check "facts that are not ok say the fix" \
  test -z "$(grep '^no  ' <<<"$out" | grep -v -- ' -- fix: ')"

"$HOTPAGE" doctor --json >"$T/live.json"; jrc=$?
check "--json exits as the text form" test $jrc -eq $rc
if [ $rc -eq 0 ]; then ok=true; else ok=false; fi
printf '{"source_ok": %s}' $ok >"$T/live.expect.json"
check "--json: strict parse, source_ok matches the exit" \
  "$JSON_EXPECT" "$T/live.expect.json" "$T/live.json"
check "--json: python3 reads facts of {name, ok, value, fix}" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["facts"], list) and d["facts"], d
for f in d["facts"]:
    assert sorted(f) == ["fix", "name", "ok", "value"], f
    assert isinstance(f["ok"], bool), f
names = [f["name"] for f in d["facts"]]
assert "source" in names and "plan" in names, names
' "$T/live.json"

# --pid: a live child of ours (same user: move_pages allowed), then a pid
# that does not exist.
sleep 30 & child=$!
# Until the child has exec'd, its comm is this shell's: wait for "sleep"
# (a loaded machine once ran doctor in that window).
for _ in $(seq 1 100); do
  [ "$(cat /proc/$child/comm 2>/dev/null)" = sleep ] && break
  sleep 0.05
done
out=$("$HOTPAGE" doctor --pid $child); rc=$?
check "--pid: the target is found" contains "$out" "ok  pid: pid $child (sleep)"
check "--pid: move_pages allowed on our own child" contains "$out" "ok  move_pages: allowed on pid $child"
check "--pid: descriptors counted per thread" contains "$out" "x 1 thread of pid $child"
kill $child; wait $child 2>/dev/null
out=$("$HOTPAGE" doctor --pid 4194303); rc=$?
check "--pid: a missing pid is a fact" contains "$out" "no  pid: pid 4194303: no such process"

# A Sapphire Rapids-like tree: PEBS with the aux leader, 8 CPUs.
S=$T/spr
P=$S/sys/bus/event_source/devices/cpu
mkdir -p $P/format $P/events $P/caps $S/proc/sys/kernel $S/proc/self \
  $S/sys/devices/system/cpu
echo 4 >$P/type
echo sapphire_rapids >$P/caps/pmu_name
echo config:0-7 >$P/format/event; echo config:8-15 >$P/format/umask
echo config1:0-15 >$P/format/ldlat
echo event=0xcd,umask=0x1,ldlat=3 >$P/events/mem-loads
echo event=0x03,umask=0x82 >$P/events/mem-loads-aux
echo 6.8.0 >$S/proc/sys/kernel/osrelease
echo 2 >$S/proc/sys/kernel/perf_event_paranoid
printf 'CapEff:\t0000000000000000\n' >$S/proc/self/status
echo 0-7 >$S/sys/devices/system/cpu/online
out=$("$HOTPAGE" doctor --sysfs-root "$S"); rc=$?
check "PEBS tree exits 0" test $rc -eq 0
check "PEBS tree: the PMU line" contains "$out" "ok  pmu.cpu: type 4; sapphire_rapids; all CPUs; PEBS load latency"
check "PEBS tree: source pebs" contains "$out" "ok  source: pebs can run"
check "PEBS tree: the aux group in the plan" contains "$out" "cpu/mem-loads-aux/"
check "PEBS tree: 2 events x 8 CPUs" contains "$out" "the plan needs 16 "
"$HOTPAGE" doctor --sysfs-root "$S" --json >"$T/spr.json"
printf '{"source": "pebs", "source_ok": true}' >"$T/spr.expect.json"
check "PEBS tree json" "$JSON_EXPECT" "$T/spr.expect.json" "$T/spr.json"

out=$("$HOTPAGE" doctor --sysfs-root "$S" --source ibs); rc=$?
check "PEBS tree, --source ibs: exits 1" test $rc -eq 1
check "PEBS tree, --source ibs: says why" contains "$out" "no  source: ibs cannot run: no AMD IBS op PMU"

# Nothing may run: paranoid 3, no capabilities, no PMU, no DAMON.
echo 3 >$S/proc/sys/kernel/perf_event_paranoid
rm -r $P
out=$("$HOTPAGE" doctor --sysfs-root "$S"); rc=$?
check "nothing-runs tree exits 1" test $rc -eq 1
check "nothing-runs tree: the source fact says why" contains "$out" "no  source: --source auto: no sample source can run"
check "nothing-runs tree: paranoid's fix" contains "$out" "kernel.perf_event_paranoid=2"

# A symlink in the tree that points at the live file resolves inside the
# tree (here: to nothing), never to the live /proc.
rm $S/proc/sys/kernel/perf_event_paranoid
ln -s /proc/sys/kernel/perf_event_paranoid $S/proc/sys/kernel/perf_event_paranoid
out=$("$HOTPAGE" doctor --sysfs-root "$S"); rc=$?
check "symlink out of the tree is not followed" contains "$out" "no  perf_event_paranoid: absent"

rm -rf "$T"
echo "$fails failed"
[ $fails -eq 0 ]
