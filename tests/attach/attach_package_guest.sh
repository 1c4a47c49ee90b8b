# Guest side of //tests/attach:attach_package_vm_test (topology 2pkg+cxl:
# node 0 = cpu0 + DRAM (package 0), node 1 = cpu1 + DRAM (package 1), node 2
# = CPU-less slow node). Two workload threads pinned to cpu0 and cpu1, each
# with its own hot clusters, all starting on node 2. The hintfault source
# gives every sample the faulting CPU, so the hotness table knows each
# page's accessor node. With --weights 0:1,1:1 alone promotions alternate
# between the two fast nodes whoever accesses the page; with
# --package-aware each thread's hot pages go to its own package's node.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
field() { echo "$1" | sed -E "s/.*$2=([0-9]+).*/\1/"; }

run() {  # run NAME ATTACH_ARGS...: sets t0n0 t0n1 t1n0 t1n1
  name=$1; shift
  rm -f /tmp/l /tmp/l.t0 /tmp/l.t1
  hot_set_workload --mib=96 --clusters=8 --cluster_mib=2 --thp=never --prefer_node=2 --then_default --threads=2 --pin --layout=/tmp/l &
  W=$!
  wait_file /tmp/l.t1 || bad "$name: workload started"
  hotpage attach --pid $W --source hintfault --allow-sysctl-changes --interval-ms 500 --quiet "$@" 2>/tmp/a.$name.log &
  A=$!
  # Both threads' sets on fast memory (node 0 or 1), whichever node.
  if r=$(attach_vm_check wait90 $W /tmp/l 0,1 60); then echo "   $name: $r"; else bad "$name: $r"; tail -n 3 /tmp/a.$name.log; fi
  sleep 1
  kill -TERM $A; wait $A
  c0=$(attach_vm_check counthot $W /tmp/l.t0); c1=$(attach_vm_check counthot $W /tmp/l.t1)
  echo "   $name: thread 0 (cpu0) hot set: $c0; thread 1 (cpu1): $c1"
  t0n0=$(field "$c0" node0); t0n1=$(field "$c0" node1); t1n0=$(field "$c1" node0); t1n1=$(field "$c1" node1)
  kill -TERM $W; wait $W || bad "$name: workload data check"
}

hot_t=$(( 4 * 512 ))  # each thread: 4 clusters of 2 MiB
run weights --weights 0:1,1:1
w_local=$(( t0n0 + t1n1 )); w_remote=$(( t0n1 + t1n0 ))
[ $((w_local + w_remote)) -ge $((2 * hot_t * 9 / 10)) ] && ok "weights 1:1: hot sets promoted ($((w_local + w_remote)) pages)" || bad "weights 1:1: only $((w_local + w_remote)) of $((2 * hot_t)) hot pages on fast nodes"
[ $w_remote -ge $(( (w_local + w_remote) / 4 )) ] && ok "weights 1:1 ignore the accessor: $w_remote of $((w_local + w_remote)) pages on the other package's node" \
  || bad "weights 1:1 alone kept $w_local of $((w_local + w_remote)) local: the control shows nothing"

run package --weights 0:1,1:1 --package-aware
p_local=$(( t0n0 + t1n1 )); p_remote=$(( t0n1 + t1n0 ))
[ $((p_local + p_remote)) -ge $((2 * hot_t * 9 / 10)) ] && ok "package-aware: hot sets promoted ($((p_local + p_remote)) pages)" || bad "package-aware: only $((p_local + p_remote)) of $((2 * hot_t)) hot pages on fast nodes"
[ $((p_local * 100)) -ge $(( (p_local + p_remote) * 95 )) ] && ok "package-aware: $p_local of $((p_local + p_remote)) pages in their accessor's package" \
  || bad "package-aware: only $p_local of $((p_local + p_remote)) pages in their accessor's package (want >= 95%)"
for n in weights package; do grep -E "promoted [0-9]+ pages" /tmp/a.$n.log | tail -n 1; done
echo "numa_balancing after: $(cat /proc/sys/kernel/numa_balancing)"

echo "attach package VM test: $fails failed"
exit $fails
