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

# --trace_out: the workload's own access stream as an .hpt trace. It must
# decode (hotpage dump), carry the period and the switch times in its header,
# and its pages must be exactly the hot sets: no sample before the run's
# start (the first-touch pass is not sampled), every sample of phase K is
# a page of phase K's hot set (from the layout file of that phase), and with
# a period coprime with the set's size every hot page is sampled. (A worker
# takes the switch at the end of its pass: phase 0's pages may follow the
# switch time until the first sample of phase 1's set, never after it.)
# The period is large enough that the buffer cannot fill on a fast machine:
# 1.5 s of touches is 250M here (4M samples at period 61, which overflowed
# --trace_max_samples on CI), 250k at period 1021, and 1021 is still coprime
# with the 1024-page hot set, so every hot page is sampled once a phase has
# 1024 samples (1M touches, about 6 ms of this run).
hp=tools/hotpage
"$w" --mib=16 --clusters=2 --cluster_mib=2 --thp=never --switch_after_ms=600 --duration_ms=1500 \
  --layout="$tmp/l3" --trace_out="$tmp/t.hpt" --trace_period=1021 --trace_max_samples=4000000 >"$tmp/out3" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/l3" ] && break; sleep 0.05; done
cp "$tmp/l3" "$tmp/l3.phase0"
for _ in $(seq 1 100); do grep -q '^phase 1$' "$tmp/l3" && break; sleep 0.02; done
cp "$tmp/l3" "$tmp/l3.phase1"
wait $pid || bad "trace run exit $?: $(cat "$tmp/out3")"
grep -q "trace $tmp/t.hpt: [0-9]* samples, period 1021, 0 dropped" "$tmp/out3" \
  && ok "trace written: $(grep 'trace ' "$tmp/out3")" || bad "no trace line: $(cat "$tmp/out3")"
if "$hp" dump --header "$tmp/t.hpt" >"$tmp/dump" 2>"$tmp/dump.err"; then
  ok "trace decodes ($(grep -c -v '^#' "$tmp/dump") samples)"
else
  bad "hotpage dump failed: $(cat "$tmp/dump.err")"
fi
grep -q 'sample_period=1021\|period=1021' "$tmp/dump" && ok "header has the period" || bad "header: $(grep '^#' "$tmp/dump" | head -5)"
start_ns=$(grep -o 'start_ns=[0-9]*' "$tmp/dump" | head -n 1 | cut -d= -f2)
sw=$(grep -o 'switch_ns=[0-9,]*' "$tmp/dump" | head -n 1 | cut -d= -f2)
[ -n "$start_ns" ] && [ -n "$sw" ] && ok "header has start_ns=$start_ns switch_ns=$sw" || bad "no start/switch in header"
# awk: hot page sets of both phases from the layouts, then every sample.
res=$(awk -v start="$start_ns" -v sw="$sw" '
  function hex(s,  i, c, v) { v = 0; s = tolower(substr(s, 3));
    for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
    return v }
  FILENAME ~ /phase[01]$/ {
    ph = substr(FILENAME, length(FILENAME)) + 0
    if ($1 == "base") base = hex($2)
    if ($1 == "bytes") bytes = $2
    if ($1 == "hot") for (a = hex($2); a < hex($3); a += 4096) { hot[ph, (a - base) / 4096] = 1; nhot[ph]++ }
    next }
  /^#/ { next }
  { t = $4; pg = int((hex($5) - base) / 4096)
    if (pg < 0 || pg * 4096 >= bytes) { outside++; next }
    if (t < start) { init++; next }
    ph = (t < s1) ? 0 : (t < s2 ? 1 : 2)
    if (ph == 2) { later++; next }
    # A worker switches at the end of its current pass: the previous set
    # may still show until its first sample of the new one.
    if (ph == 1 && !any1 && ((0, pg) in hot)) { tail0++; next }
    if (!((ph, pg) in hot)) { wrong[ph]++; next }
    if (ph == 1) any1 = 1
    if (!((ph, pg) in seen)) { seen[ph, pg] = 1; got[ph]++ } }
  BEGIN { n = split(sw, s, ","); s1 = s[1] + 0; s2 = (n > 1) ? s[2] + 0 : 1e30 }
  END { printf "tail0=%d init=%d outside=%d hot0=%d seen0=%d wrong0=%d hot1=%d seen1=%d wrong1=%d\n",
          tail0, init, outside, nhot[0], got[0], wrong[0] + 0, nhot[1], got[1], wrong[1] + 0 }
' "$tmp/l3.phase0" "$tmp/l3.phase1" "$tmp/dump")
echo "trace check: $res"
eval "$(echo "$res" | tr ' ' '\n' | sed 's/^/c_/')"
[ "$c_outside" = 0 ] && ok "every sample is in the area" || bad "samples outside the area: $res"
[ "$c_init" = 0 ] && ok "first-touch pass not sampled" || bad "samples before the start: $res"
[ "$c_hot0" = 1024 ] && [ "$c_hot1" = 1024 ] || bad "layout hot sets: $res"
[ "$c_wrong0" = 0 ] && [ "$c_wrong1" = 0 ] && ok "every phase sample is a page of that phase's hot set" || bad "off-set samples: $res"
[ "$c_seen0" = "$c_hot0" ] && [ "$c_seen1" = "$c_hot1" ] && ok "every hot page of both phases sampled" \
  || bad "hot pages sampled: $res"
"$w" --mib=16 --trace_out="$tmp/x.hpt" >/dev/null 2>&1
[ $? = 2 ] && ok "--trace_out without --trace_period is a usage error" || bad "--trace_out alone accepted"

echo "hot_set_workload_test: $fails failed"
exit $fails
