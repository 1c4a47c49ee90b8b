# Guest side of //tests/attach:attach_locality_vm_test (topology 2pkg+cxl:
# node 0 = cpu0 + DRAM (package 0), node 1 = cpu1 + DRAM (package 1), node 2
# = CPU-less slow node). locality_workload's thread 0 (cpu0) writes set A,
# placed on node 1 (the wrong package); thread 1 (cpu1) writes set B, placed
# on node 0; both write set S, interleaved over nodes 0 and 1. Every page is
# already on the fast tier, so there is nothing to promote: only the locality
# rule moves anything. The kernel's NUMA balancing is off (the guest's
# /init), so nobody else moves pages either.
#
# Evidence of who writes what comes from --write-faults: the page-fault
# sampler sees the write-protect fault that follows every soft-dirty clear,
# with the writer's CPU, on any node. (NUMA hint faults cannot give it: the
# kernel's tiering mode never scans top-tier pages, and the modes that do
# also migrate them themselves.)
#
# Shown: without --locality nothing moves (control); with it, A goes to
# node 0 and B to node 1 (their writers' nodes), and S, written from both
# packages, stays where it was.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
field() { echo "$1" | sed -E "s/.*$2=([0-9]+).*/\1/"; }
json() { sed -E -n "s/.*\"$2\": *([0-9.]+).*/\1/p" "$1" | head -n 1; }

set_pages=1024  # --set_mib=4
start_workload() {  # start_workload NAME: sets W
  rm -f /tmp/l.A /tmp/l.B /tmp/l.S
  locality_workload --set_mib=4 --a_node=1 --b_node=0 --s_nodes=0,1 --layout=/tmp/l >/tmp/w.$1.log &
  W=$!
  wait_file /tmp/l.S || bad "$1: workload started"
  sed -n 1p /tmp/w.$1.log | sed 's/^/   /'
}
stop_workload() {  # stop_workload NAME
  kill -TERM $W; wait $W || { bad "$1: workload data check"; tail -n 2 /tmp/w.$1.log; }
}
counts() {  # counts NAME: sets a0 a1 b0 b1 s0 s1
  ca=$(attach_vm_check counthot $W /tmp/l.A); cb=$(attach_vm_check counthot $W /tmp/l.B); cs=$(attach_vm_check counthot $W /tmp/l.S)
  echo "   $1: A (cpu0 writes) $ca; B (cpu1) $cb; S (both) $cs"
  a0=$(field "$ca" node0); a1=$(field "$ca" node1); b0=$(field "$cb" node0); b1=$(field "$cb" node1)
  s0=$(field "$cs" node0); s1=$(field "$cs" node1)
}

# 1. Control: write faults sampled, no --locality. Nothing may move.
start_workload control
hotpage attach --pid $W --source pagefault --write-faults --quiet --stats-json /tmp/s.control.json 2>/tmp/a.control.log &
A=$!
sleep 8
counts control
kill -TERM $A; wait $A
stop_workload control
grep -E "promoted [0-9]+ pages|write faults re-armed" /tmp/a.control.log | sed 's/^/   /'
rearms=$(json /tmp/s.control.json rearms)
[ "${rearms:-0}" -ge 3 ] && ok "control: write faults re-armed $rearms times" || bad "control: write faults re-armed ${rearms:-0} times"
[ $a1 -ge $((set_pages * 95 / 100)) ] && [ $b0 -ge $((set_pages * 95 / 100)) ] \
  && ok "control: without --locality A stays on node 1 ($a1) and B on node 0 ($b0)" \
  || bad "control: pages moved without --locality (A on node 1: $a1, B on node 0: $b0)"

# 1b. --locality without evidence from fast-tier pages is called out.
start_workload nowf
hotpage attach --pid $W --source pagefault --locality --duration 1 --quiet 2>/tmp/a.nowf.log
stop_workload nowf
grep -q "locality will move nothing with --source pagefault.*add --write-faults" /tmp/a.nowf.log \
  && ok "--locality without --write-faults: warned" || { bad "--locality without --write-faults: no warning"; head -n 3 /tmp/a.nowf.log; }

# 2. --locality: private pages go to their writer's node, shared ones stay.
start_workload locality
hotpage attach --pid $W --source pagefault --write-faults --locality --quiet --stats-json /tmp/s.locality.json 2>/tmp/a.locality.log &
A=$!
if r=$(attach_vm_check wait90 $W /tmp/l.A 0 60); then echo "   A (cpu0) to node 0: $r"; else bad "A to node 0: $r"; tail -n 3 /tmp/a.locality.log; fi
if r=$(attach_vm_check wait90 $W /tmp/l.B 1 60); then echo "   B (cpu1) to node 1: $r"; else bad "B to node 1: $r"; tail -n 3 /tmp/a.locality.log; fi
# Give shared pages time to be (wrongly) moved, then look.
sleep 8
counts locality
kill -TERM $A; wait $A
stop_workload locality
grep -E "promoted [0-9]+ pages|write faults re-armed" /tmp/a.locality.log | sed 's/^/   /'
promoted=$(json /tmp/s.locality.json promoted_pages)
loc=$(json /tmp/s.locality.json planned_locality)
[ $a0 -ge $((set_pages * 95 / 100)) ] && ok "locality: A, written from cpu0 only, on node 0 ($a0 of $set_pages)" \
  || bad "locality: only $a0 of $set_pages A pages on node 0"
[ $b1 -ge $((set_pages * 95 / 100)) ] && ok "locality: B, written from cpu1 only, on node 1 ($b1 of $set_pages)" \
  || bad "locality: only $b1 of $set_pages B pages on node 1"
# S started 512/512. Pages of S that moved: every move is counted in
# promoted_pages, and the moves of A and B account for a0 + b1 of them.
s_moved=$(( ${promoted:-0} - a0 - b1 ))
[ $s_moved -lt 0 ] && s_moved=0
echo "   locality: moved $promoted pages ($loc planned by the locality rule): A $a0, B $b1, so S at most $s_moved"
[ $s_moved -le $((set_pages * 5 / 100)) ] && ok "locality: S, written from both packages, stayed (at most $s_moved of $set_pages moved; node 0 $s0, node 1 $s1)" \
  || bad "locality: $s_moved of $set_pages shared pages moved (node 0 $s0, node 1 $s1)"

# 3. The same evidence in a trace: `hotpage record --write-faults` records
# repeated writes of pages already touched; without it the page-fault
# source sees first touches only (the sets were touched before recording).
start_workload record
hotpage record --pid $W --source pagefault --duration 2 --quiet -o /tmp/ft.hpt 2>/tmp/r0.log
hotpage record --pid $W --source pagefault --write-faults --duration 2 --quiet -o /tmp/wf.hpt 2>/tmp/r1.log
stop_workload record
n0=$(hotpage dump /tmp/ft.hpt | grep -vc '^#')
n1=$(hotpage dump /tmp/wf.hpt | grep -vc '^#')
grep -h "write faults re-armed" /tmp/r1.log | sed 's/^/   /'
[ "$n1" -ge $((6 * set_pages)) ] && [ "$n0" -lt $((set_pages / 4)) ] \
  && ok "record --write-faults: $n1 samples of the 3072 written pages in 2 s (first touches only: $n0)" \
  || bad "record --write-faults: $n1 samples (first touches only: $n0)"

echo "attach locality VM test: $fails failed"
exit $fails
