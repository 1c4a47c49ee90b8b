# Guest side of //tests/attach:attach_3node_vm_test (topology 2pkg+cxl:
# node 0 = cpu0 + DRAM, node 1 = cpu1 + DRAM, node 2 = CPU-less slow node,
# 24 from both). The workload's pages start on node 2. Without a mask the
# nearest fast node is a tie that goes to node 0; --promote-to 1 and a
# `prefer (many)` range over {1,2} must send them to node 1 instead.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
node0_of() { attach_vm_check count $1 $2 | sed -E 's/.*node0=([0-9]+).*/\1/'; }

run() {  # run NAME TARGET_NODE WORKLOAD_ARGS -- ATTACH_ARGS
  name=$1; target=$2; shift 2
  wargs=""; while [ "$1" != "--" ]; do wargs="$wargs $1"; shift; done; shift
  rm -f /tmp/l
  hot_set_workload --mib=96 --clusters=4 --cluster_mib=2 --thp=never --prefer_node=2 $wargs --layout=/tmp/l &
  W=$!
  wait_file /tmp/l || bad "$name: workload started"
  grep -q "prefer (many)" /proc/$W/numa_maps && echo "   ($name: numa_maps has a prefer (many) range)"
  hotpage attach --pid $W --source damon --interval-ms 500 --quiet "$@" 2>/tmp/a.log &
  A=$!
  if r=$(attach_vm_check wait90 $W /tmp/l $target 60); then ok "$name: hot set on node $target: $r"; else bad "$name: $r"; tail -n 3 /tmp/a.log; fi
  c=$(attach_vm_check count $W /tmp/l)
  echo "   $name: $c"
  kill -TERM $A; wait $A
  kill -TERM $W; wait $W || bad "$name: workload data check"
}

run "--promote-to 1" 1 -- --promote-to 1
[ "$(echo "$c" | sed -E 's/.*node0=([0-9]+).*/\1/')" = 0 ] && ok "--promote-to 1: nothing on node 0" || bad "--promote-to 1 put pages on node 0 ($c)"

run "prefer (many) {1,2}" 1 --then_prefer_many=1,2 --
[ "$(echo "$c" | sed -E 's/.*node0=([0-9]+).*/\1/')" = 0 ] && ok "prefer (many): nothing on node 0" || bad "prefer (many) put pages on node 0 ($c)"

# Control: without a mask the tie goes to node 0, so the two checks above
# test the masks, not an accident of distances.
run "no mask" 0 --
# Weighted placement (rule W): --weights 0:3,1:1 spreads the promoted
# pages over the two fast nodes 3:1.
rm -f /tmp/l
hot_set_workload --mib=192 --clusters=8 --cluster_mib=2 --thp=never --prefer_node=2 --layout=/tmp/l &
W=$!
wait_file /tmp/l
hotpage attach --pid $W --source damon --interval-ms 500 --weights 0:3,1:1 --duration 8 --quiet 2>/tmp/a.log
c=$(attach_vm_check count $W /tmp/l)
n0=$(echo "$c" | sed -E 's/.*node0=([0-9]+).*/\1/'); n1=$(echo "$c" | sed -E 's/.*node1=([0-9]+).*/\1/')
echo "   weights 3:1: $c"
if [ $((n0 + n1)) -gt 0 ]; then
  share=$((1000 * n0 / (n0 + n1)))
  [ $share -ge 700 ] && [ $share -le 800 ] && ok "weights 3:1: node 0 got ${share}/1000 of the promoted pages" \
    || bad "weights 3:1: node 0 got ${share}/1000 (want 750 +- 50)"
else
  bad "weights 3:1: nothing promoted"
fi
kill -TERM $W; wait $W

echo "attach 3-node VM test: $fails failed"
exit $fails
