#!/bin/bash
# End-to-end checks of the built `hotpage` binary: help, usage errors and
# exit statuses, and `topology` on a fake sysfs tree built here.
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

out=$("$HOTPAGE" --help); rc=$?
check "--help exits 0" test $rc -eq 0
check "--help lists topology" contains "$out" "topology"

out=$("$HOTPAGE" 2>&1); rc=$?
check "no command is a usage error" test $rc -eq 2

out=$("$HOTPAGE" frobnicate 2>&1); rc=$?
check "unknown command exits 2" test $rc -eq 2
check "unknown command is named" contains "$out" "unknown command 'frobnicate'"

out=$("$HOTPAGE" topology --bogus 2>&1); rc=$?
check "unknown flag exits 2" test $rc -eq 2
check "unknown flag is named" contains "$out" "unknown option '--bogus'"

out=$("$HOTPAGE" topology --help); rc=$?
check "topology --help exits 0" test $rc -eq 0
check "topology --help documents --sysfs-root" contains "$out" "--sysfs-root DIR"
check "topology --help documents --json" contains "$out" "--json"

out=$("$HOTPAGE" topology --sysfs-root /nonexistent/x 2>&1); rc=$?
check "missing root exits 1" test $rc -eq 1
check "missing root is named" contains "$out" "/nonexistent/x"

# A fake two-node tree: DRAM node 0 with CPUs, CPU-less node 1 with HMAT.
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tree.XXXXXX")
N=$T/sys/devices/system/node
mkdir -p $N/node0 $N/node1/access0/initiators $T/sys/devices/system/cpu/cpu0/topology
echo 0-1 > $N/online
echo 0 > $N/node0/cpulist; echo > $N/node1/cpulist
printf 'Node 0 MemTotal: 1048576 kB\nNode 0 MemFree: 524288 kB\n' > $N/node0/meminfo
printf 'Node 1 MemTotal: 2097152 kB\nNode 1 MemFree: 2097152 kB\n' > $N/node1/meminfo
echo "10 20" > $N/node0/distance; echo "20 10" > $N/node1/distance
echo 0 > $T/sys/devices/system/cpu/cpu0/topology/physical_package_id
echo 250 > $N/node1/access0/initiators/read_latency
echo 8192 > $N/node1/access0/initiators/read_bandwidth
ln -s ../../../node0 $N/node1/access0/initiators/node0

out=$("$HOTPAGE" topology --sysfs-root "$T" --json); rc=$?
check "fake tree json exits 0" test $rc -eq 0
check "json has tier_source distance" contains "$out" '"tier_source": "distance"'
check "json has node 1 latency" contains "$out" '"read_latency_ns": 250'
check "json has null write latency" contains "$out" '"write_latency_ns": null'
check "json node 1 memory" contains "$out" '"memory_bytes": 2147483648'

out=$("$HOTPAGE" topology --sysfs-root "$T"); rc=$?
check "fake tree table exits 0" test $rc -eq 0
check "table shows the CPU-less node" contains "$out" "(none)"
check "table names the package rule" contains "$out" "memory-only, by HMAT initiator"

# A root that is not UTF-8 (a Latin-1 directory name) still gives valid
# JSON: the bytes become U+FFFD. Checked by hotpage's strict parser and by
# python3's json module, which rejected the raw byte.
U="$T/caf"$'\xe9'
mkdir "$U" && cp -r "$T/sys" "$U/"
"$HOTPAGE" topology --sysfs-root "$U" --json > "$T/latin1.json"; rc=$?
check "latin-1 root json exits 0" test $rc -eq 0
printf '{"root": "%s/caf\\ufffd", "tier_source": "distance"}' "$T" > "$T/latin1.expect.json"
check "latin-1 root: strict UTF-8 parse, root with U+FFFD" "$JSON_EXPECT" "$T/latin1.expect.json" "$T/latin1.json"
if command -v python3 >/dev/null; then
  check "latin-1 root: python3 json accepts it" \
    python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read())' "$T/latin1.json"
else
  check "python3 found (tools/setup.sh installs it)" false
fi

echo garbage > $N/node1/distance
out=$("$HOTPAGE" topology --sysfs-root "$T" 2>&1); rc=$?
check "garbage distance exits 1" test $rc -eq 1
check "garbage distance names the file" contains "$out" "$N/node1/distance"
rm -rf "$T"

out=$("$HOTPAGE" attach 2>&1); rc=$?
check "attach without --pid: exit 2" test $rc -eq 2
out=$("$HOTPAGE" attach --pid 1 --source magic 2>&1); rc=$?
check "attach bad source: exit 2" test $rc -eq 2
out=$("$HOTPAGE" attach --pid 1 --weights 0:x 2>&1); rc=$?
check "attach bad --weights: exit 2" test $rc -eq 2
check "attach bad --weights: named" contains "$out" "--weights"
out=$("$HOTPAGE" attach --pid 1 --keep-interleave 2 2>&1); rc=$?
check "attach bad --keep-interleave: exit 2" test $rc -eq 2
out=$("$HOTPAGE" attach --pid 1 --interval-ms 1 2>&1); rc=$?
check "attach interval out of range: exit 2" test $rc -eq 2
check "attach interval error names the range" contains "$out" "from 50 to"
out=$("$HOTPAGE" attach --pid 1 --source hintfault 2>&1); rc=$?
check "hintfault without consent: exit 2" test $rc -eq 2
check "hintfault without consent: names the sysctls" contains "$out" "kernel.numa_balancing_promote_rate_limit_MBps"
check "hintfault without consent: names the flag" contains "$out" "--allow-sysctl-changes"
out=$("$HOTPAGE" attach --pid 1 --source pebs --allow-sysctl-changes 2>&1); rc=$?
check "--allow-sysctl-changes without hintfault: exit 2" test $rc -eq 2
check "--allow-sysctl-changes without hintfault: names its users" contains "$out" "--source auto, which may choose it"
# --metrics-listen: loopback only, a port in range; --workload checked.
out=$("$HOTPAGE" attach --pid 1 --metrics-listen 0.0.0.0:9465 2>&1); rc=$?
check "attach --metrics-listen 0.0.0.0: exit 2" test $rc -eq 2
check "attach --metrics-listen 0.0.0.0: refused, says why" contains "$out" "refused: only loopback addresses"
out=$("$HOTPAGE" attach --pid 1 --metrics-listen 127.0.0.1:65536 2>&1); rc=$?
check "attach --metrics-listen bad port: exit 2" test $rc -eq 2
check "attach --metrics-listen bad port: says the range" contains "$out" "PORT is 0 to 65535"
out=$("$HOTPAGE" attach --pid 1 --workload "" 2>&1); rc=$?
check "attach --workload empty: exit 2" test $rc -eq 2
# --self-memory: slow, local or a node number, checked before the machine.
for v in fast -1 1024 "1,2"; do
  out=$("$HOTPAGE" attach --pid 1 --self-memory="$v" 2>&1); rc=$?
  check "attach --self-memory=$v: exit 2" test $rc -eq 2
  check "attach --self-memory=$v: names the values" contains "$out" "--self-memory: '$v' is not slow, local or a node number"
done
out=$("$HOTPAGE" attach --help); rc=$?
check "attach --help has --metrics-listen" contains "$out" "--metrics-listen ADDR"
check "attach --help says how to share a textfile directory" contains "$out" "hotpage-PID.prom"
check "attach --help lists hintfault and the consent flag" contains "$out" "--allow-sysctl-changes"
check "attach --help explains --write-faults" contains "$out" "/proc/PID/clear_refs"
check "attach --help gives auto's order" contains "$out" "hint faults where permitted, write faults, page faults, then damon"
check "attach --help has --self-memory" contains "$out" "--self-memory WHERE"
check "attach --help says the default keeps hotpage off the fast tier" contains "$out" "slow (default: preferred on the slowest tier's nodes)"
for src in damon pebs auto; do
  out=$("$HOTPAGE" attach --pid 1 --source $src --write-faults 2>&1); rc=$?
  check "--write-faults with --source $src: exit 2" test $rc -eq 2
  check "--write-faults with --source $src: names the page-fault sources" contains "$out" "--source pagefault"
done
# The engine flags come from one place (tools/engine_flags.h): attach and
# simulate list them with the same lines.
engine_lines() { "$HOTPAGE" "$1" --help | grep -E -- '^ +--(promote-to|weights|package-aware|keep-interleave|huge-strict|locality)\b'; }
a_lines=$(engine_lines attach); s_lines=$(engine_lines simulate)
check "attach and simulate list the same engine flags" test "$a_lines" = "$s_lines"
check "the engine flags are listed" contains "$a_lines" "--keep-interleave TOL"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  out=$(setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice "$HOTPAGE" attach --pid 1 2>&1); rc=$?
  check "attach without CAP_SYS_NICE: exit 1" test $rc -eq 1
  check "attach without CAP_SYS_NICE: names the capability" contains "$out" "CAP_SYS_NICE"
  out=$(setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin "$HOTPAGE" attach --pid 1 --source damon 2>&1); rc=$?
  check "damon without CAP_SYS_ADMIN: names it" contains "$out" "CAP_SYS_ADMIN"
fi
if [ "$(cat /sys/devices/system/node/online)" = 0 ]; then
  out=$("$HOTPAGE" attach --pid $$ 2>&1); rc=$?
  check "attach on a one-node machine: exit 1" test $rc -eq 1
  check "attach on a one-node machine: says why" contains "$out" "one memory tier"
  # --source auto (the default) takes the consent: not a usage error.
  out=$("$HOTPAGE" attach --pid $$ --allow-sysctl-changes 2>&1); rc=$?
  check "auto with --allow-sysctl-changes: past the command line" test $rc -eq 1
  check "auto with --allow-sysctl-changes: then the machine's error" contains "$out" "one memory tier"
fi

# Golden tables from sysfs trees captured in real 6.12 guests.
HOTPAGE_ABS=$(cd "$(dirname "$HOTPAGE")" && pwd)/$(basename "$HOTPAGE")
# Runfiles are symlinks out of the tree, which KernelFs (rightly) refuses
# to follow out of a --sysfs-root: copy the trees, dereferenced.
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/trees.XXXXXX")
cp -rL "$TEST_SRCDIR/$TEST_WORKSPACE/tests/testdata/sysfs/." "$dir/"
for tree in 2pkg-cxl dram-cxl; do
  out=$(cd "$dir" && "$HOTPAGE_ABS" topology --sysfs-root "$tree"); rc=$?
  check "$tree table exits 0" test $rc -eq 0
  if diff -u "$dir/$tree.topology.txt" <(printf '%s\n' "$out"); then
    echo "ok   $tree table matches golden"
  else
    echo "FAIL $tree table differs from golden (above)"; fails=$((fails + 1))
  fi
done

echo "$fails failed"
[ $fails -eq 0 ]
