# Guest side of //tests/attach:attach_thp_vm_test (topology 2pkg+cxl:
# node 0 = cpu0 + DRAM, node 1 = cpu1 + DRAM, node 2 = CPU-less slow node).
# A THP-backed workload (MADV_HUGEPAGE) starts on node 2, then its range's
# policy becomes `prefer (many)` {1}. `hotpage attach --huge-strict` must
# promote the hot 2 MiB clusters whole to node 1 (not to node 0, the
# nearest-by-id tie): the kernel counts THP migrations, none split, and the
# area stays THP-backed.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
anon_huge_kb() { awk '/^AnonHugePages:/ { s += $2 } END { print s + 0 }' /proc/$1/smaps; }

echo "   THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
rm -f /tmp/l
hot_set_workload --mib=64 --clusters=4 --cluster_mib=2 --thp=always --prefer_node=2 --then_prefer_many=1 --layout=/tmp/l &
W=$!
wait_file /tmp/l || bad "workload started"
huge_before=$(anon_huge_kb $W)
echo "   AnonHugePages before: ${huge_before} kB; $(grep 'prefer (many)' /proc/$W/numa_maps | head -n 1 | cut -c1-120)"
[ "$huge_before" -ge 8192 ] && ok "the area is THP-backed (${huge_before} kB)" || bad "no THP backing (${huge_before} kB)"
succ0=$(vmstat thp_migration_success); split0=$(vmstat thp_migration_split); fail0=$(vmstat thp_migration_fail)
hotpage attach --pid $W --source damon --interval-ms 500 --huge-strict --quiet 2>/tmp/a.log &
A=$!
if r=$(attach_vm_check wait90 $W /tmp/l 1 60); then ok "hot huge pages on node 1: $r"; else bad "$r"; tail -n 3 /tmp/a.log; fi
sleep 1
kill -TERM $A; wait $A
c=$(attach_vm_check count $W /tmp/l)
echo "   $c"
[ "$(echo "$c" | sed -E 's/.*node0=([0-9]+).*/\1/')" = 0 ] && ok "nothing on node 0 (the CPU-local tie)" || bad "pages on node 0 ($c)"
succ=$(( $(vmstat thp_migration_success) - succ0 )); split=$(( $(vmstat thp_migration_split) - split0 ))
failed=$(( $(vmstat thp_migration_fail) - fail0 ))
echo "   thp_migration_success +$succ, thp_migration_split +$split, thp_migration_fail +$failed"
[ "$succ" -ge 4 ] && ok "the kernel migrated $succ huge pages whole (>= the 4 hot clusters)" || bad "thp_migration_success +$succ (want >= 4)"
[ "$split" = 0 ] && ok "no huge page was split to migrate" || bad "thp_migration_split +$split"
huge_after=$(anon_huge_kb $W)
[ "$huge_after" -ge "$huge_before" ] && ok "still THP-backed after the moves (${huge_after} kB)" || bad "AnonHugePages fell from ${huge_before} to ${huge_after} kB"
grep -E "promoted" /tmp/a.log | tail -n 1
kill -TERM $W; wait $W || bad "workload data check"

echo "attach THP VM test: $fails failed"
exit $fails
