# Guest side of //tests/attach:attach_weights_vm_test (topology 2pkg+cxl:
# node 0 = cpu0 + DRAM, node 1 = cpu1 + DRAM, node 2 = CPU-less slow node).
# Rule W with DAMON's region evidence: `--weights 0:3,1:1` must put 3/4 of
# the promoted 4 KiB pages on node 0, within 5 points, although DAMON's
# evidence comes in 2 MiB chunks (one hotness entry each). With whole
# chunks as the round-robin's unit, six hot clusters split 5:1 (0.83);
# the engine splits a chunk of base pages by weight (policy/placement.h,
# rule W). A THP-backed run checks that huge pages still move whole
# (thp_migration_success grows, no split).
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
field() { echo "$1" | sed -E "s/.*$2=([0-9]+).*/\1/"; }
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

run() {  # run NAME THP CLUSTERS
  name=$1; thp=$2; clusters=$3
  rm -f /tmp/l
  hot_set_workload --mib=192 --clusters=$clusters --cluster_mib=2 --thp=$thp --prefer_node=2 --layout=/tmp/l &
  W=$!
  wait_file /tmp/l || bad "$name: workload started"
  hotpage attach --pid $W --source damon --interval-ms 500 --weights 0:3,1:1 --duration 8 --quiet 2>/tmp/a.$name.log
  c=$(attach_vm_check count $W /tmp/l)
  h=$(attach_vm_check counthot $W /tmp/l)
  n0=$(field "$c" node0); n1=$(field "$c" node1)
  echo "   $name: all $c; hot $h"
  grep -E "promoted|moved" /tmp/a.$name.log | tail -n 2
  if [ $((n0 + n1)) -gt 0 ]; then
    share=$((1000 * n0 / (n0 + n1)))
    echo "   $name: node 0 share ${share}/1000 of $((n0 + n1)) promoted pages"
    [ $share -ge 700 ] && [ $share -le 800 ] && ok "$name: node 0 got ${share}/1000 of the promoted pages" \
      || bad "$name: node 0 got ${share}/1000 of the promoted pages (want 750 +- 50)"
  else
    bad "$name: nothing promoted"
  fi
  # The hot set itself, split as the weights say: with whole chunks its
  # share depends on where the cold chunks promoted around it fell in the
  # round-robin (0.80-0.88 measured before the split).
  hn0=$(field "$h" node0); hn1=$(field "$h" node1); hot_other=$(field "$h" other)
  hot=$((hn0 + hn1 + hot_other))
  [ $((hn0 + hn1)) -ge $((hot * 2 / 3)) ] && ok "$name: $((hn0 + hn1)) of $hot hot pages on the fast nodes" \
    || bad "$name: only $((hn0 + hn1)) of $hot hot pages on the fast nodes"
  if [ $((hn0 + hn1)) -gt 0 ]; then
    hshare=$((1000 * hn0 / (hn0 + hn1)))
    [ $hshare -ge 700 ] && [ $hshare -le 800 ] && ok "$name: node 0 holds ${hshare}/1000 of the promoted hot pages" \
      || bad "$name: node 0 holds ${hshare}/1000 of the promoted hot pages (want 750 +- 50)"
  fi
  kill -TERM $W; wait $W || bad "$name: workload data check"
}

run "6 clusters" never 6
run "8 clusters" never 8

# Huge pages move whole: with THP-backed clusters every move is a whole
# folio (thp_migration_success grows; thp_migration_split does not).
s0=$(vmstat thp_migration_success); p0=$(vmstat thp_migration_split)
rm -f /tmp/l
hot_set_workload --mib=192 --clusters=6 --cluster_mib=2 --thp=always --prefer_node=2 --layout=/tmp/l &
W=$!
wait_file /tmp/l || bad "thp: workload started"
hotpage attach --pid $W --source damon --interval-ms 500 --weights 0:3,1:1 --duration 8 --quiet 2>/tmp/a.thp.log
c=$(attach_vm_check count $W /tmp/l)
s1=$(vmstat thp_migration_success); p1=$(vmstat thp_migration_split)
echo "   thp: $c; thp_migration_success +$((s1 - s0)) split +$((p1 - p0))"
grep AnonHugePages /proc/$W/smaps_rollup
[ $((s1 - s0)) -gt 0 ] && ok "thp: huge pages migrated whole (+$((s1 - s0)))" || bad "thp: no huge page migrated"
[ $((p1 - p0)) -eq 0 ] && ok "thp: no huge page split by a migration" || bad "thp: $((p1 - p0)) huge pages split by migration"
kill -TERM $W; wait $W || bad "thp: workload data check"

echo "attach weights VM test: $fails failed"
exit $fails
