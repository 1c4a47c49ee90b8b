# Guest side of //tests/vm:numa_probe_vm_test (topology dram+cxl): the harness
# must have switched NUMA balancing off, and a dynamically linked program
# (numa_probe, with libnuma and libstdc++ from its ldd closure) must move its
# own pages from node 0 to the CPU-less node 1 with move_pages(2).
set -e
nb="$(cat /proc/sys/kernel/numa_balancing)"
echo "guest: numa_balancing=${nb}"
if [ "${nb}" != 0 ]; then
  echo "guest: FAIL: numa_balancing is ${nb}, the harness must set it to 0"
  exit 1
fi
numa_probe --expect_nodes=2 --from=0 --to=1 --pages=256
