#!/bin/bash
# //tests/workloads:hot_set_workload_test, on the host (node 0 only): the
# placement flags the comparison relies on. --then_default leaves the area
# with the default policy after placing it (numa_maps "default", not
# "prefer:0"); --bind_range_mib adds a separate range bound to its node
# ("bind:0"), listed in the layout, touched on every pass (the exit data
# check counts its touches).
set -uo pipefail
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
# A kernel without NUMA cannot run this test: report it to Bazel as skipped
# (a test.xml with <skipped/>, which tests/run_tests.sh counts as a skip, not
# a pass) rather than as a passing test.
skip() {
  echo "SKIP: $*"
  [ -n "${XML_OUTPUT_FILE:-}" ] && cat >"$XML_OUTPUT_FILE" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" errors="0" skipped="1">
  <testsuite name="hot_set_workload_test" tests="1" failures="0" errors="0" skipped="1">
    <testcase name="hot_set_workload_test" status="run" result="skipped"><skipped message="$*"/></testcase>
  </testsuite>
</testsuites>
EOF
  exit 0
}
[ -r /proc/self/numa_maps ] || skip "no /proc/self/numa_maps (kernel without NUMA)"
w=tests/workloads/hot_set_workload
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

"$w" --mib=16 --clusters=2 --cluster_mib=2 --thp=never --prefer_node=0 --then_default \
  --bind_range_mib=1 --bind_range_node=0 --duration_ms=1500 --layout="$tmp/l" >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/l" ] && break; sleep 0.05; done
base=$(sed -n 's/^base 0x//p' "$tmp/l")
read -r _ bstart bend bnode < <(grep '^bind ' "$tmp/l")
[ -n "${bstart:-}" ] && [ "$bnode" = 0 ] && ok "layout lists the bind range ($bstart-$bend node $bnode)" \
  || bad "layout has no bind line: $(cat "$tmp/l")"
[ "$(( bend - bstart ))" = $((1 << 20)) ] && ok "bind range is 1 MiB" || bad "bind range size $(( bend - bstart ))"
area=$(grep "^${base} " /proc/$pid/numa_maps)
case "$area" in *" default "*) ok "area policy reset to default: $area" ;; *) bad "area policy: $area" ;; esac
brange=$(grep "^${bstart#0x} " /proc/$pid/numa_maps)
case "$brange" in *" bind:0 "*"anon=256 "*) ok "bind range bound and touched: $brange" ;; *) bad "bind range: $brange" ;; esac
wait $pid
rc=$?
[ $rc = 0 ] && ok "exit 0, data intact with the bind range: $(tail -n 1 "$tmp/out")" || bad "exit $rc: $(cat "$tmp/out")"

# Without the new flags: no bind line, the area keeps its preferred policy.
"$w" --mib=16 --clusters=2 --cluster_mib=2 --thp=never --prefer_node=0 --duration_ms=800 --layout="$tmp/l2" \
  >"$tmp/out2" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/l2" ] && break; sleep 0.05; done
base=$(sed -n 's/^base 0x//p' "$tmp/l2")
grep -q '^bind ' "$tmp/l2" && bad "bind line without --bind_range_mib" || ok "no bind line by default"
case "$(grep "^${base} " /proc/$pid/numa_maps)" in *" prefer:0 "*) ok "area keeps prefer:0 without --then_default" ;;
  *) bad "area policy without --then_default: $(grep "^${base} " /proc/$pid/numa_maps)" ;; esac
wait $pid || bad "second run exit $?"

echo "hot_set_workload_test: $fails failed"
exit $fails
