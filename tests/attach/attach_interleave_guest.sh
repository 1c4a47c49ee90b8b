# Guest side of //tests/attach:attach_interleave_vm_test (topology dram+cxl:
# node 0 fast, node 1 CPU-less slow). The workload's area is a `weighted
# interleave` range over {0,1} with kernel weights 1:3, so a quarter of its
# pages start on node 0. Promoting its hot clusters moves the range away
# from that ratio; with --keep-interleave 0.05 hotpage keeps node 0's share
# within 5 points of 25%. A control run without the flag shows the ratio
# does break, so the check tests the rule.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
# Node 0's share (per mille) of the weighted-interleave range of pid $1.
share0() {
  line=$(grep "weighted interleave" /proc/$1/numa_maps | head -n 1)
  n0=$(echo "$line" | grep -o ' N0=[0-9]*' | cut -d= -f2); n1=$(echo "$line" | grep -o ' N1=[0-9]*' | cut -d= -f2)
  n0=${n0:-0}; n1=${n1:-0}
  [ $((n0 + n1)) -gt 0 ] && echo $((1000 * n0 / (n0 + n1))) || echo -1
}

W_DIR=/sys/kernel/mm/mempolicy/weighted_interleave
[ -d $W_DIR ] || { bad "no $W_DIR"; exit 1; }
echo 1 > $W_DIR/node0 && echo 3 > $W_DIR/node1 || bad "set weights"

run() {  # run NAME ATTACH_ARGS...: prints node 0's share at the end
  name=$1; shift
  rm -f /tmp/l
  hot_set_workload --mib=128 --clusters=8 --cluster_mib=4 --thp=never --weighted_interleave=0,1 --layout=/tmp/l &
  W=$!
  wait_file /tmp/l || bad "$name: workload started"
  s0=$(share0 $W)
  hotpage attach --pid $W --source damon --interval-ms 500 --duration 8 --quiet "$@" 2>/tmp/a.log
  s1=$(share0 $W)
  echo "   $name: node 0 share ${s0}/1000 at start, ${s1}/1000 after 8 s; $(grep -o 'promoted [0-9]* pages' /tmp/a.log | tail -n 1)"
  kill -TERM $W; wait $W || bad "$name: workload data check"
  echo "$s0 $s1" > /tmp/share.$name
}

run control
run keep --keep-interleave 0.05
read c0 c1 < /tmp/share.control
read k0 k1 < /tmp/share.keep
[ "$c0" -ge 230 ] && [ "$c0" -le 270 ] && ok "the kernel interleaved 1:3 (node 0 share ${c0}/1000)" || bad "start share ${c0}/1000, want 250 +- 20"
[ "$c1" -gt 300 ] && ok "control: without the rule promotions broke the ratio (${c1}/1000)" || bad "control share ${c1}/1000: promotions did not break the ratio, the test shows nothing"
[ "$k1" -le 300 ] && ok "--keep-interleave 0.05: node 0 share ${k1}/1000 (within 50 of 250)" || bad "--keep-interleave 0.05: node 0 share ${k1}/1000 > 300"
[ "$k1" -gt "$k0" ] && ok "--keep-interleave still promoted within the tolerance (${k0} -> ${k1})" || echo "   (no promotion within the tolerance: ${k0} -> ${k1})"

echo "attach interleave VM test: $fails failed"
exit $fails
