# Guest side of //tests/attach:attach_spill_reclaim_vm_test (topology
# small-dram+cxl: node 0 = CPUs + 512 MiB, node 1 = CPU-less 1536 MiB).
# attach_spill_hintfault_guest.sh's layout (node 0 full of the workload's
# pages, 2 of its 8 hot clusters spilled to node 1) under the hint-fault
# source, here with the kernel demoting on reclaim
# (/sys/kernel/mm/numa/demotion_enabled true, as a tiered machine is
# commonly set up). The source sees no page on node 0; the engine then
# promotes a page that faults in two scan passes into the full node and
# the kernel's reclaim demotes what its LRU holds coldest (policy/engine.h,
# "The kernel's LRU as the fast tier's evidence"): no sweep of pages never
# sampled, no engine demotion. Checked: the hot set reaches 90% on node 0
# and stays, the promotions were of that kind (reclaim_promotions), the
# kernel demoted (pgdemote_*), the engine swept nothing, the sysctls attach
# set are restored and demotion_enabled, which attach does not touch, is
# left true. Then demotion_enabled is turned off and on again while attach
# runs: the watchdog says so and the engine follows (the stats'
# reclaim_makes_room, demotion_changes). Measured (2026-12-06, TCG):
# tests/vm/README.md, "Kernel and emulator facts".
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)

vmstat_sum() { awk -v p="$1" 'index($1, p) == 1 { s += $2 } END { print s + 0 }' /proc/vmstat; }
echo true > /sys/kernel/mm/numa/demotion_enabled
echo "node 0 free before: $(free0) kB"
hot_set_workload --mib=800 --clusters=16 --cluster_mib=4 --thp=never --prefer_node=0 --then_default --layout=/tmp/l &
W=$!
wait_file /tmp/l || bad "workload started"
c=$(attach_vm_check count $W /tmp/l)
h=$(attach_vm_check counthot $W /tmp/l)
echo "node 0 free after the first touch: $(free0) kB; area: $c; hot set: $h"
case "$h" in *"node1=0 "*) bad "no hot cluster spilled to node 1 ($h)" ;; *) ok "hot clusters spilled to node 1 ($h)" ;; esac
demoted0=$(vmstat_sum pgdemote_)
hotpage attach --pid $W --source hintfault --allow-sysctl-changes --interval-ms 500 --stats-json /tmp/s.json --quiet 2>/tmp/a.log &
A=$!
if r=$(attach_vm_check wait90 $W /tmp/l 0 160); then ok "hot set on node 0: $r"; else bad "hot set: $r"; fi
sleep 5
if r=$(attach_vm_check wait90 $W /tmp/l 0 5); then ok "hot set still on node 0 after 5 s: $r"; else bad "hot set left node 0: $r"; fi
# demotion_enabled changed while attach runs (tools/attach/attach_engine.h,
# FollowKernelDemotion): the watchdog reads it every second and says so,
# and the engine leaves room to reclaim only while it is true.
mode_is() {  # mode_is true|false: the stats say so within 5 s
  for _ in 1 2 3 4 5; do
    grep -q "\"reclaim_makes_room\": $1" /tmp/s.json && return 0
    sleep 1
  done
  return 1
}
mode_is true && ok "stats: reclaim makes room" || bad "stats: $(grep reclaim_makes_room /tmp/s.json)"
# The run's own checks below read these stats: without reclaim the engine
# may sweep (untracked_victims), as it should.
cp /tmp/s.json /tmp/s0.json
echo false > /sys/kernel/mm/numa/demotion_enabled
mode_is false && ok "demotion_enabled false: followed" || bad "demotion_enabled false not followed: $(grep reclaim_makes_room /tmp/s.json)"
grep -q "demotion_enabled (/sys/kernel/mm/numa/demotion_enabled) is now false" /tmp/a.log && ok "the change was said" || bad "the change was not said: $(tail -n 3 /tmp/a.log)"
echo true > /sys/kernel/mm/numa/demotion_enabled
mode_is true && ok "demotion_enabled true again: followed" || bad "demotion_enabled true not followed"
echo "node 0 free: $(free0) kB; $(attach_vm_check count $W /tmp/l)"
kill -TERM $A; wait $A; rc=$?
[ $rc -eq 0 ] && ok "attach exits 0" || bad "attach exit status $rc"
reclaim=$(json_num /tmp/s.json reclaim_promotions)
untracked=$(json_num /tmp/s0.json untracked_victims)
promoted=$(json_num /tmp/s.json promoted_pages)
demoted=$(( $(vmstat_sum pgdemote_) - demoted0 ))
[ "${reclaim:-0}" -gt 0 ] && ok "promoted $promoted pages, $reclaim of them into the full node for reclaim" || bad "no promotion left to reclaim (reclaim_promotions=${reclaim:-0})"
[ "${untracked:-1}" -eq 0 ] && ok "no sweep of pages never sampled" || bad "the engine swept (untracked_victims=${untracked:-?})"
[ "$demoted" -gt 0 ] && ok "the kernel demoted $demoted pages" || bad "the kernel demoted nothing"
grep -q "restored kernel.numa_balancing" /tmp/a.log && ok "sysctls restored" || bad "sysctls not restored: $(tail -n 3 /tmp/a.log)"
[ "$(cat /sys/kernel/mm/numa/demotion_enabled)" = "true" ] && ok "demotion_enabled left as it was" || bad "demotion_enabled changed: $(cat /sys/kernel/mm/numa/demotion_enabled)"
changes=$(json_num /tmp/s.json demotion_changes)
[ "${changes:-0}" -eq 2 ] && ok "stats: demotion_enabled changed twice" || bad "demotion_changes=${changes:-?}"
echo "--- stats"; cat /tmp/s.json; tail -n 6 /tmp/a.log
kill -TERM $W; wait $W && ok "workload data intact" || bad "workload data check"
echo "attach spill reclaim VM test: $fails failed"
exit $fails
