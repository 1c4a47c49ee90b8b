# Guest side of //tests/attach:attach_vm_test (topology dram+cxl: node 0 =
# CPUs + fast DRAM, node 1 = CPU-less slow memory). Every check prints
# "ok"/"FAIL"; the script exits with the number of failures.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
kdamonds() { cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds; }

# 1. Promotion with the DAMON source, before and after a hot-set switch.
hot_set_workload --mib=192 --clusters=8 --cluster_mib=2 --thp=never --prefer_node=1 --layout=/tmp/l1 &
W=$!
wait_file /tmp/l1 || bad "workload 1 started"
attach_vm_check count $W /tmp/l1
t0=$(cut -d' ' -f1 /proc/uptime)
hotpage attach --pid $W --source damon --interval-ms 500 --stats-json /tmp/s1.json --quiet 2>/tmp/a1.log &
A=$!
if r=$(attach_vm_check wait90 $W /tmp/l1 0 90); then ok "hot set A on node 0: $r"; else bad "hot set A: $r"; fi
kill -USR1 $W
for i in $(seq 1 50); do grep -q "^phase 1" /tmp/l1 && break; sleep 0.1; done
if r=$(attach_vm_check wait90 $W /tmp/l1 0 90); then ok "hot set B on node 0 after the switch: $r"; else bad "hot set B: $r"; fi
attach_vm_check count $W /tmp/l1
sleep 1
kill -TERM $A
wait $A; rc=$?
[ $rc -eq 0 ] && ok "attach exits 0 on SIGTERM" || bad "attach exit status $rc"
[ "$(kdamonds)" = 0 ] && ok "no kdamond left after SIGTERM" || bad "nr_kdamonds=$(kdamonds) after SIGTERM"
promoted=$(json_num /tmp/s1.json promoted_pages)
[ "${promoted:-0}" -gt 0 ] && ok "stats: promoted_pages=$promoted" || bad "stats: promoted_pages=$promoted"
for k in demoted_pages failed_pages pingpong_pages samples hot_pages hot_pages_by_node promotion_yield; do
  grep -q "\"$k\"" /tmp/s1.json && ok "stats has $k" || bad "stats lacks $k"
done
echo "--- stats"; cat /tmp/s1.json; echo "--- attach log"; tail -n 3 /tmp/a1.log
kill -TERM $W; wait $W; rc=$?
[ $rc -eq 0 ] && ok "workload 1 data intact" || bad "workload 1 exit status $rc (data check)"

# 2. --dry-run decides but moves nothing.
hot_set_workload --mib=96 --clusters=4 --cluster_mib=2 --thp=never --prefer_node=1 --layout=/tmp/l2 &
W=$!
wait_file /tmp/l2
hotpage attach --pid $W --source damon --interval-ms 500 --dry-run --duration 6 --stats-json /tmp/s2.json --quiet 2>/tmp/a2.log
rc=$?
[ $rc -eq 0 ] && ok "dry run exits 0" || { bad "dry run exit status $rc"; tail -n 5 /tmp/a2.log; }
c=$(attach_vm_check count $W /tmp/l2)
case "$c" in *"node0=0 "*) ok "dry run moved nothing ($c)" ;; *) bad "dry run moved pages ($c)" ;; esac
planned=$(json_num /tmp/s2.json planned_promotions)
[ "${planned:-0}" -gt 0 ] && ok "dry run planned $planned promotions" || bad "dry run planned ${planned:-0}"
kill -TERM $W; wait $W

# 3. A range bound to node 1 (MPOL_BIND) is never moved.
hot_set_workload --mib=96 --clusters=4 --cluster_mib=2 --thp=never --bind_node=1 --layout=/tmp/l3 &
W=$!
wait_file /tmp/l3
hotpage attach --pid $W --source damon --interval-ms 500 --duration 6 --stats-json /tmp/s3.json --quiet 2>/tmp/a3.log
c=$(attach_vm_check count $W /tmp/l3)
case "$c" in *"node0=0 "*) ok "bind range stayed on node 1 ($c)" ;; *) bad "bind range moved ($c)" ;; esac
kill -TERM $W; wait $W

# 4. The workload exiting mid-run ends attach cleanly, DAMON torn down.
hot_set_workload --mib=64 --clusters=2 --cluster_mib=2 --thp=never --prefer_node=1 --duration_ms=4000 --layout=/tmp/l4 &
W=$!
wait_file /tmp/l4
hotpage attach --pid $W --source damon --interval-ms 500 --quiet 2>/tmp/a4.log
rc=$?
[ $rc -eq 0 ] && ok "attach exits 0 when the process exits" || { bad "attach exit status $rc when the process exited"; cat /tmp/a4.log; }
[ "$(kdamonds)" = 0 ] && ok "no kdamond left after the process exited" || bad "nr_kdamonds=$(kdamonds)"
wait $W

# 5. Errors.
hotpage attach --pid 4194000 2>/tmp/e1; rc=$?
[ $rc -eq 1 ] && grep -q "4194000" /tmp/e1 && ok "missing pid: exit 1, named" || bad "missing pid: rc=$rc $(cat /tmp/e1)"
hotpage attach --pid 1 --promote-to 7 2>/tmp/e2; rc=$?
[ $rc -eq 2 ] && grep -q "node 7" /tmp/e2 && ok "bad --promote-to: exit 2, named" || bad "bad --promote-to: rc=$rc $(cat /tmp/e2)"

# An output path that cannot be written fails the run at its start (before
# any source changes the machine), not at each publication.
sleep 30 & S=$!
t0=$(cut -d' ' -f1 /proc/uptime)
hotpage attach --pid $S --source damon --stats-json /nonexistent/s.json --quiet 2>/tmp/e3; rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
if [ $rc -eq 1 ] && grep -q "cannot write /nonexistent/s.json" /tmp/e3 && [ "$(kdamonds)" = 0 ]; then
  ok "unwritable --stats-json: exit 1 in $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b-a}') s, named, no kdamond"
else
  bad "unwritable --stats-json: rc=$rc kdamonds=$(kdamonds) $(cat /tmp/e3)"
fi
kill $S; wait $S 2>/dev/null

echo "attach VM test: $fails failed"
exit $fails
