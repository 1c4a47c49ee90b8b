#!/bin/bash
# `hotpage record|attach --print-events --sysfs-root DIR` on fake machine
# trees built here: a non-hybrid PEBS server (Skylake-SP-like), a hybrid
# Alder Lake (cpu_core with mem-loads-aux on CPUs 0-3, cpu_atom on 4-7) and
# an AMD Zen 3 on Linux 5.15 (IBS needs PERF_SAMPLE_RAW there). Nothing is
# opened: the plan is printed and the command exits 0.
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
put() {  # put FILE CONTENT
  mkdir -p "$(dirname "$1")" && printf '%s\n' "$2" >"$1"
}
D=$(mktemp -d "${TEST_TMPDIR:-/tmp}/print_events.XXXXXX")
PMUS=sys/bus/event_source/devices

intel_formats() {  # intel_formats ROOT PMU
  put "$1/$PMUS/$2/format/event" "config:0-7"
  put "$1/$PMUS/$2/format/umask" "config:8-15"
  put "$1/$PMUS/$2/format/ldlat" "config1:0-15"
}

# --- Skylake-SP-like: one "cpu" PMU, mem-loads and mem-stores, 4 CPUs.
S="$D/skx"
intel_formats "$S" cpu
put "$S/$PMUS/cpu/type" 4
put "$S/$PMUS/cpu/events/mem-loads" "event=0xcd,umask=0x1,ldlat=3"
put "$S/$PMUS/cpu/events/mem-stores" "event=0xd0,umask=0x82"
put "$S/sys/devices/system/cpu/online" "0-3"
put "$S/proc/sys/kernel/osrelease" "6.1.0-13-amd64"
for t in 4242 4243 4244; do mkdir -p "$S/proc/4242/task/$t"; done

out=$("$HOTPAGE" record --print-events --sysfs-root "$S" 2>&1); rc=$?
check "skx: record --print-events exits 0" test $rc -eq 0
echo "$out" >"$D/skx.json"
cat >"$D/skx.expect.json" <<'JSON'
{"source": "pebs", "encoder": "sysfs", "per_task": true, "tasks": 1,
 "fds_needed": 4,
 "events": [{"name": "cpu/mem-loads,ldlat=30/", "pmu": "cpu", "type": 4,
             "config": 461, "config1": 30, "config2": 0,
             "sample_period": 50000,
             "sample_type": ["IP", "TID", "TIME", "ADDR", "CPU", "PERIOD",
                             "DATA_SRC", "IDENTIFIER", "WEIGHT_STRUCT"],
             "precise_ip": 2, "cpus": [0, 1, 2, 3], "group": 0,
             "leader": true, "per_task": true, "keep_samples": true}]}
JSON
check "skx: the plan" "$JSON_EXPECT" "$D/skx.expect.json" "$D/skx.json"
check "skx: says the sysfs aliases stand in for libpfm4" \
  contains "$out" '"encoder_note": "--sysfs-root '
check "skx: rlimit_nofile is reported" contains "$out" '"rlimit_nofile": '

# Stores are their own group; --pid counts the target's threads.
out=$("$HOTPAGE" record --print-events --sysfs-root "$S" --stores --pid 4242 \
  --sample-period 2003 2>&1); rc=$?
check "skx --stores: exits 0" test $rc -eq 0
echo "$out" >"$D/skx_st.json"
cat >"$D/skx_st.expect.json" <<'JSON'
{"tasks": 3, "fds_needed": 24,
 "events": [{"config": 461, "sample_period": 2003, "group": 0, "leader": true},
            {"name": "cpu/mem-stores/", "config": 33488, "sample_period": 2003,
             "group": 1, "leader": true}]}
JSON
check "skx --stores: stores in a group of their own" \
  "$JSON_EXPECT" "$D/skx_st.expect.json" "$D/skx_st.json"

# --- Alder Lake hybrid: cpu_core (aux) on 0-3, cpu_atom on 4-7.
H="$D/adl"
intel_formats "$H" cpu_core
intel_formats "$H" cpu_atom
put "$H/$PMUS/cpu_core/type" 8
put "$H/$PMUS/cpu_core/cpus" "0-3"
put "$H/$PMUS/cpu_core/events/mem-loads" "event=0xcd,umask=0x1,ldlat=3"
put "$H/$PMUS/cpu_core/events/mem-loads-aux" "event=0x03,umask=0x82"
put "$H/$PMUS/cpu_atom/type" 10
put "$H/$PMUS/cpu_atom/cpus" "4-7"
put "$H/$PMUS/cpu_atom/events/mem-loads" "event=0xd0,umask=0x5,ldlat=3"
put "$H/sys/devices/system/cpu/online" "0-7"
put "$H/proc/sys/kernel/perf_event_max_sample_rate" "100000"

for cmd in record attach; do
  out=$("$HOTPAGE" $cmd --print-events --sysfs-root "$H" 2>&1); rc=$?
  check "adl: $cmd --print-events exits 0" test $rc -eq 0
  echo "$out" >"$D/adl_$cmd.json"
  cat >"$D/adl.expect.json" <<'JSON'
{"source": "pebs", "encoder": "sysfs", "per_task": true, "fds_needed": 12,
 "events": [{"name": "cpu_core/mem-loads-aux/", "pmu": "cpu_core", "type": 8,
             "config": 33283, "sample_period": 1073741824,
             "cpus": [0, 1, 2, 3], "group": 0, "leader": true,
             "keep_samples": false},
            {"name": "cpu_core/mem-loads,ldlat=30/", "pmu": "cpu_core",
             "type": 8, "config": 461, "config1": 30,
             "cpus": [0, 1, 2, 3], "group": 0, "leader": false,
             "keep_samples": true},
            {"name": "cpu_atom/mem-loads,ldlat=30/", "pmu": "cpu_atom",
             "type": 10, "config": 1488, "config1": 30, "precise_ip": 2,
             "cpus": [4, 5, 6, 7], "group": 1, "leader": true,
             "keep_samples": true}]}
JSON
  check "adl: $cmd plans one group per core PMU on its CPUs" \
    "$JSON_EXPECT" "$D/adl.expect.json" "$D/adl_$cmd.json"
done

# --- AMD Zen 3 on 5.15: ibs_op with cnt_ctl; RAW for the data address.
A="$D/zen3"
put "$A/$PMUS/ibs_op/type" 11
put "$A/$PMUS/ibs_op/format/cnt_ctl" "config:19"
put "$A/sys/devices/system/cpu/online" "0-1"
put "$A/proc/sys/kernel/osrelease" "5.15.0-91-generic"
out=$("$HOTPAGE" record --print-events --sysfs-root "$A" --pid 1 2>&1); rc=$?
check "zen3: record --print-events exits 0" test $rc -eq 0
echo "$out" >"$D/zen3.json"
cat >"$D/zen3.expect.json" <<'JSON'
{"source": "ibs", "per_task": false, "tasks": 1, "fds_needed": 2,
 "encoder_note": "",
 "events": [{"name": "ibs_op/cnt_ctl=1/", "pmu": "ibs_op", "type": 11,
             "config": 524288, "sample_period": 1500000,
             "sample_type": ["IP", "TID", "TIME", "ADDR", "CPU", "PERIOD",
                             "RAW", "DATA_SRC", "IDENTIFIER",
                             "WEIGHT_STRUCT"],
             "precise_ip": 0, "cpus": [0, 1], "group": 0, "leader": true,
             "per_task": false}]}
JSON
check "zen3: IBS with RAW before 6.1, system-wide" \
  "$JSON_EXPECT" "$D/zen3.expect.json" "$D/zen3.json"
check "zen3: the plan says why RAW" contains "$out" "< 6.1"

# --- The CPU model libpfm4 would see is the tree's DIR/proc/cpuinfo, never
# this machine's: two trees that differ only there plan differently.
check "no cpuinfo in the tree: says the model is unknown" \
  contains "$(cat "$D/skx.json")" "/proc/cpuinfo: the CPU model is unknown"
cpuinfo() {  # cpuinfo ROOT MODEL STEPPING
  printf 'processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: %s\nmodel name\t: test CPU\nstepping\t: %s\n\n' \
    "$2" "$3" >"$1/proc/cpuinfo"
}
for t in skx:4 clx:7; do
  name=${t%%:*}
  cp -r "$S" "$D/cpu_$name"
  cpuinfo "$D/cpu_$name" 85 "${t##*:}"
  out=$("$HOTPAGE" record --print-events --sysfs-root "$D/cpu_$name" 2>&1); rc=$?
  check "$name tree: exits 0" test $rc -eq 0
  check "$name tree: libpfm4's PMU from the tree's stepping" \
    contains "$out" "\"libpfm_pmu\": \"$name\""
  check "$name tree: the model in the JSON" contains "$out" \
    "\"cpu_model\": \"GenuineIntel family 6 model 85 stepping ${t##*:} (test CPU)\""
  check "$name tree: what libpfm4 would encode there" \
    contains "$out" "$name::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30"
  check "$name tree: says the aliases stand in" \
    contains "$out" "so the plan uses the kernel's sysfs aliases"
done
cp -r "$S" "$D/cpu_snb"
cpuinfo "$D/cpu_snb" 42 7
out=$("$HOTPAGE" record --print-events --sysfs-root "$D/cpu_snb" 2>&1)
check "snb tree: libpfm4 would fail there too (D4)" \
  contains "$out" "libpfm4 knows it as snb but cannot encode"

# The machine profiles of tests/pmu/profiles: each plan names its own CPU.
P="$TEST_SRCDIR/$TEST_WORKSPACE/tests/pmu/profiles"
for t in skylake_sp:skx:"model 85 stepping 4 (Intel(R) Xeon(R) Gold 6130" \
         icelake_sp:icx:"model 106 stepping 6 (Intel(R) Xeon(R) Platinum 8380" \
         sapphire_rapids::"model 143 (Intel(R) Xeon(R) Platinum 8480+)"; do
  prof=${t%%:*}; rest=${t#*:}; pmu=${rest%%:*}; model=${rest#*:}
  # A copy: runfiles are symlinks out of the tree, which KernelFs refuses.
  cp -rL "$P/$prof" "$D/prof_$prof"
  out=$("$HOTPAGE" record --print-events --sysfs-root "$D/prof_$prof" 2>&1); rc=$?
  check "$prof: exits 0" test $rc -eq 0
  echo "$out" >"$D/$prof.json"
  check "$prof: its cpuinfo's model" contains "$out" "$model"
  check "$prof: libpfm4's PMU for it" contains "$out" "\"libpfm_pmu\": \"$pmu\""
done
check "sapphire_rapids: a model outside the table is not guessed" \
  contains "$(cat "$D/sapphire_rapids.json")" "does not name its PMU"
check "skylake_sp and icelake_sp plans differ as their cpuinfo says" \
  test "$(grep -v rlimit "$D/skylake_sp.json")" != "$(grep -v rlimit "$D/icelake_sp.json")"

# Errors and help.
out=$("$HOTPAGE" record --print-events --sysfs-root "$A" --source pebs 2>&1); rc=$?
check "pebs on an AMD tree exits 1" test $rc -eq 1
check "pebs on an AMD tree says why" contains "$out" "no PEBS"
out=$("$HOTPAGE" attach --print-events --source damon --sysfs-root "$A" 2>&1); rc=$?
check "attach --source damon --print-events is a usage error" test $rc -eq 2
out=$("$HOTPAGE" record --sysfs-root "$A" -o x.hpt --all 2>&1); rc=$?
check "--sysfs-root without --print-events is a usage error" test $rc -eq 2
out=$("$HOTPAGE" record --print-events --sysfs-root "$D/nonexistent" 2>&1); rc=$?
check "a missing root exits 1" test $rc -eq 1
for cmd in record attach; do
  out=$("$HOTPAGE" $cmd --help); rc=$?
  check "$cmd --help documents --print-events" contains "$out" "--print-events"
  check "$cmd --help documents --sysfs-root" contains "$out" "--sysfs-root DIR"
done

[ $fails -eq 0 ] && echo "PASS" || echo "$fails check(s) failed"
exit $((fails > 0))
