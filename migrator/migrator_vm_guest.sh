# Guest side of //migrator:migrator_vm_test (topology dram+cxl): the live
# Migrator moves its own program's pages between node 1 (CPU-less) and
# node 0 on Debian's 6.12 kernel. See migrator_vm_probe.cc.
set -e
nb="$(cat /proc/sys/kernel/numa_balancing)"
echo "guest: numa_balancing=${nb} thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled)"
if [ "${nb}" != 0 ]; then
  echo "guest: FAIL: numa_balancing is ${nb}, the harness must set it to 0"
  exit 1
fi
migrator_vm_probe --mib=64 --rate_mbps=32 --sweep_pages=4096 --huge_pages=8 \
  --warm_mib=256 --reps=3
