# Guest side of //tests/attach:attach_pressure_vm_test (topology
# small-dram+cxl: node 0 = CPUs + 512 MiB, node 1 = CPU-less 1536 MiB). The
# workload (640 MiB, starting on node 1) does not fit on node 0: once node 0
# is down to its watermarks, every new hot set must displace colder pages,
# which hotpage demotes.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)

echo "node 0 free before: $(free0) kB"
# Another process takes node 0 down to 73 MiB free: ~40 MiB above the high
# watermark (~31-33 MiB: the kernel's floor there plus 2%;
# tools/kernel_floor.h), the room this test had when the watermarks were the
# fractions alone (60 MiB free against ~20). With the fill left at 60 MiB the
# room fell to ~22 MiB: DAMON's 2 MiB regions take cold neighbours with the
# 16 MiB hot set, and in one CI run of 838bd47 the engine cycled pages in
# and out of that room (9728 ping-pong pages) with hot set A at 62% after
# 120 s.
attach_vm_check fill 0 73 >/tmp/fill.out &
F=$!
wait_file /tmp/fill.out; cat /tmp/fill.out
echo "node 0 free after the filler: $(free0) kB"
hot_set_workload --mib=640 --clusters=8 --cluster_mib=2 --thp=never --prefer_node=1 --layout=/tmp/l &
W=$!
wait_file /tmp/l || bad "workload started"
hotpage attach --pid $W --source damon --interval-ms 500 --stats-json /tmp/s.json --quiet 2>/tmp/a.log &
A=$!
if r=$(attach_vm_check wait90 $W /tmp/l 0 120); then ok "hot set A on node 0: $r"; else bad "hot set A: $r"; fi
echo "node 0 free: $(free0) kB; $(attach_vm_check count $W /tmp/l)"
sleep 3
d0=$(json_num /tmp/s.json demoted_pages)
kill -USR1 $W
for i in $(seq 1 50); do grep -q "^phase 1" /tmp/l && break; sleep 0.1; done
if r=$(attach_vm_check wait90 $W /tmp/l 0 120); then ok "hot set B on node 0 with node 0 full: $r"; else bad "hot set B: $r"; fi
sleep 1
echo "node 0 free: $(free0) kB; $(attach_vm_check count $W /tmp/l)"
kill -TERM $A; wait $A; rc=$?
[ $rc -eq 0 ] && ok "attach exits 0" || bad "attach exit status $rc"
demoted=$(json_num /tmp/s.json demoted_pages)
promoted=$(json_num /tmp/s.json promoted_pages)
[ "${demoted:-0}" -gt 0 ] && ok "demoted $demoted pages (${d0:-0} before the switch), promoted $promoted" || bad "no demotion (demoted=${demoted:-0})"
free_kb=$(free0)
[ "$free_kb" -gt 8000 ] && ok "node 0 kept free memory (${free_kb} kB)" || bad "node 0 ran dry (${free_kb} kB)"
echo "--- stats"; cat /tmp/s.json; tail -n 2 /tmp/a.log
kill -TERM $W; wait $W && ok "workload data intact" || bad "workload data check"
kill $F
echo "attach pressure VM test: $fails failed"
exit $fails
