# Guest side of //tests/attach:attach_spill_vm_test (topology
# small-dram+cxl: node 0 = CPUs + 512 MiB, node 1 = CPU-less 1536 MiB).
# The workload first touches 640 MiB with node 0 preferred: node 0 fills
# to the kernel's watermark with its pages and the rest spills to node 1,
# so 6 of its 8 hot clusters start on node 0 and 2 on node 1, with node 0
# below hotpage's low watermark. hotpage must make room by demoting the
# cold pages, not the hot clusters already there, and bring the spilled
# ones up. With DAMON the cold pages are tracked: its regions average a
# hot cluster's accesses over cold neighbours, so every 2 MiB chunk of the
# area has a count (measured: the watermark demotions took 9216 such
# pages, the hot set was on node 0 after 1.1 s, untracked_victims 0). The
# sweep of pages never sampled (EngineOptions::sweep_untracked_fast) is
# for page-precise sources (PEBS, IBS; tested in policy/engine_test.cc)
# and hint faults (attach_spill_hintfault_guest.sh: the same layout).
# Here untracked_victims is reported, not checked.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)

echo "node 0 free before: $(free0) kB"
hot_set_workload --mib=640 --clusters=8 --cluster_mib=2 --thp=never --prefer_node=0 --layout=/tmp/l &
W=$!
wait_file /tmp/l || bad "workload started"
c=$(attach_vm_check count $W /tmp/l)
h=$(attach_vm_check counthot $W /tmp/l)
echo "node 0 free after the first touch: $(free0) kB; area: $c; hot set: $h"
case "$c" in *"node0=0 "*) bad "nothing on node 0 after the first touch ($c)" ;; esac
case "$h" in *"node1=0 "*) bad "no hot cluster spilled to node 1 ($h)" ;; *) ok "hot clusters spilled to node 1 ($h)" ;; esac
hotpage attach --pid $W --source damon --interval-ms 500 --stats-json /tmp/s.json --quiet 2>/tmp/a.log &
A=$!
if r=$(attach_vm_check wait90 $W /tmp/l 0 90); then ok "hot set on node 0: $r"; else bad "hot set: $r"; fi
# It stays there: the sweep's victims are the cold pages, not the hot set.
sleep 5
if r=$(attach_vm_check wait90 $W /tmp/l 0 5); then ok "hot set still on node 0 after 5 s: $r"; else bad "hot set left node 0: $r"; fi
echo "node 0 free: $(free0) kB; $(attach_vm_check count $W /tmp/l)"
kill -TERM $A; wait $A; rc=$?
[ $rc -eq 0 ] && ok "attach exits 0" || bad "attach exit status $rc"
untracked=$(json_num /tmp/s.json untracked_victims)
demoted=$(json_num /tmp/s.json demoted_pages)
promoted=$(json_num /tmp/s.json promoted_pages)
[ "${demoted:-0}" -gt 0 ] && ok "demoted $demoted pages, promoted $promoted (untracked victims ${untracked:-0})" || bad "no demotion (demoted=${demoted:-0})"
free_kb=$(free0)
[ "$free_kb" -gt 8000 ] && ok "node 0 kept free memory (${free_kb} kB)" || bad "node 0 ran dry (${free_kb} kB)"
echo "--- stats"; cat /tmp/s.json; tail -n 4 /tmp/a.log
kill -TERM $W; wait $W && ok "workload data intact" || bad "workload data check"
echo "attach spill VM test: $fails failed"
exit $fails
