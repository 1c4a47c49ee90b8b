# Guest side of //tests/hintfault:hintfault_bigdram_vm_test (topology
# big-dram+cxl: node 0 = CPUs + 2 GiB DRAM, node 1 = CPU-less 1 GiB). With
# more than max(1 GiB, 1/16 of the node) free on the fast node, Linux's
# tiering mode promotes every hint-faulted page although the promotion rate
# limit is 0 (pgdat_free_space_enough, kernel/sched/fair.c). hotpage runs as
# a dry run here, so every page that moves was moved by the kernel: the
# watchdog must report it. Exits with the number of failures.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
vmstat() { sed -n "s/^$1 //p" /proc/vmstat; }
sysctls() { echo "$(cat /proc/sys/kernel/numa_balancing)/$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps)"; }
mkdir -p /run
echo "MEASURE node0 $(grep -E 'MemTotal|MemFree' /sys/devices/system/node/node0/meminfo | tr -s ' ' | tr '\n' ' ')"
hot_set_workload --mib=192 --shape=interleaved --thp=never --prefer_node=1 --then_default --layout=/tmp/l1 &
W=$!
wait_file /tmp/l1 || bad "workload started"
mig0=$(vmstat numa_pages_migrated)
hotpage attach --pid $W --source hintfault --allow-sysctl-changes --dry-run --interval-ms 500 --duration 12 \
  --stats-json /tmp/s1.json --quiet 2>/tmp/a1.log
rc=$?
[ $rc -eq 0 ] && ok "dry run exits 0" || bad "exit status $rc"
kmig=$(( $(vmstat numa_pages_migrated) - mig0 ))
c=$(attach_vm_check count $W /tmp/l1)
r=$(attach_vm_check wait90 $W /tmp/l1 0 1)
echo "MEASURE kernel_migrated=$kmig $c hot set: $r"
[ "$kmig" -gt 0 ] && ok "the kernel promoted $kmig pages itself despite the 0 limit" || bad "the kernel migrated nothing"
km=$(json_num /tmp/s1.json kernel_migrated_pages)
[ "${km:-0}" -gt 0 ] && ok "stats: kernel_migrated_pages=$km" || bad "stats: kernel_migrated_pages=${km:-none}"
grep -q "itself migrated" /tmp/a1.log && ok "attach warned about it" || bad "no warning: $(cat /tmp/a1.log)"
[ "$(json_num /tmp/s1.json promoted_pages)" = 0 ] && ok "hotpage itself moved nothing (dry run)" || bad "dry run moved pages"
[ "$(sysctls)" = "0/65536" ] && ok "sysctls restored ($(sysctls))" || bad "sysctls $(sysctls)"
echo "--- attach log"; grep -v "^hotpage attach: t=" /tmp/a1.log
kill -TERM $W; wait $W
echo "hintfault big-DRAM VM test: $fails failed"
exit $fails
