# Guest side of //tests/daemon:daemon_damon_vm_test (topology dram+cxl:
# node 0 = CPUs + fast DRAM, node 1 = CPU-less slow memory, Linux 6.12).
# `hotpage daemon` with TWO workloads whose source is DAMON: one kdamond
# with one target per process (a target-filtered scheme each), each hot set
# promoted for its own workload; a workload that exits is removed by a
# commit while the other's monitoring goes on (same kdamond thread, its
# next hot set still found); SIGTERM leaves no kdamond. Every check prints
# "ok"/"FAIL"; the script exits with the number of failures.
. /daemon_guest_lib.sh  # ok, bad, wait_file; cgroups a and b (W_ARGS set below)
A=/sys/kernel/mm/damon/admin
C=$A/kdamonds/0/contexts/0
# DAMON's show() handlers answer EBUSY while an update command is in flight.
rd() { for i in $(seq 1 100); do v=$(cat "$1" 2>/dev/null) && { echo "$v"; return 0; }; sleep 0.02; done; echo "?"; }
promoted() { sed -n "s/^hotpage_workload_promoted_pages_total{workload=\"$1\"} //p" /tmp/hotpage.prom; }

echo 0 >/proc/sys/kernel/numa_balancing  # only hotpage moves pages here
W_ARGS="--mib=96 --clusters=4 --cluster_mib=4 --thp=never --prefer_node=1"
sh -c "echo \$\$ > /sys/fs/cgroup/a/cgroup.procs && exec hot_set_workload $W_ARGS --layout=/tmp/la" &
WA=$!
sh -c "echo \$\$ > /sys/fs/cgroup/b/cgroup.procs && exec hot_set_workload $W_ARGS --layout=/tmp/lb" &
WB=$!
wait_file /tmp/la && wait_file /tmp/lb || bad "workloads started"

cat >/tmp/h.toml <<'TOML'
[daemon]
interval_ms = 500
rate_limit_mbps = 256
kernel_tiering = "coexist"
socket = "/tmp/hp/hotpage.sock"
state_dir = "/tmp/hp"
prom_file = "/tmp/hotpage.prom"

[[workload]]
name = "a"
cgroup = "a"
source = "damon"

[[workload]]
name = "b"
cgroup = "b"
source = "damon"
TOML
hotpage daemon --config /tmp/h.toml --log-level debug 2>/tmp/d.log &
D=$!
for i in $(seq 1 100); do
  grep -q "a: managing pid $WA" /tmp/d.log && grep -q "b: managing pid $WB" /tmp/d.log && break
  sleep 0.1
done
grep -q "a: managing pid $WA" /tmp/d.log && grep -q "b: managing pid $WB" /tmp/d.log \
  && ok "both DAMON workloads managed (the second is not refused)" || { bad "not both managed"; cat /tmp/d.log; }
nk=$(rd $A/kdamonds/nr_kdamonds); nt=$(rd $C/targets/nr_targets)
t0=$(rd $C/targets/0/pid_target); t1=$(rd $C/targets/1/pid_target)
echo "kdamonds $nk, targets $nt: $t0 $t1; filters: $(rd $C/schemes/0/filters/0/type) $(rd $C/schemes/0/filters/0/damon_target_idx), $(rd $C/schemes/1/filters/0/type) $(rd $C/schemes/1/filters/0/damon_target_idx)"
[ "$nk" = 1 ] && ok "one kdamond" || bad "nr_kdamonds $nk"
[ "$nt" = 2 ] && [ "$(echo "$t0 $t1" | tr ' ' '\n' | sort | tr '\n' ' ')" = "$(echo "$WA $WB" | tr ' ' '\n' | sort | tr '\n' ' ')" ] \
  && ok "one context, a target per workload process" || bad "targets: $nt ($t0 $t1), want $WA $WB"
kpid=$(rd $A/kdamonds/0/pid)

if r=$(attach_vm_check wait90 $WA /tmp/la 0 120); then ok "a's hot set on node 0: $r"; else bad "a's hot set: $r"; fi
if r=$(attach_vm_check wait90 $WB /tmp/lb 0 120); then ok "b's hot set on node 0: $r"; else bad "b's hot set: $r"; fi
sleep 2
pa=$(promoted a); pb=$(promoted b)
echo "DAMON-MULTI-RESULT promoted_pages a=${pa:-?} b=${pb:-?} (hot set 4096 pages each)"
[ "${pa:-0}" -gt 0 ] && [ "${pb:-0}" -gt 0 ] && ok "promotions per workload: a $pa, b $pb pages" || bad "promotions a=${pa:-?} b=${pb:-?}"
hotpage status --socket /tmp/hp/hotpage.sock | tee /tmp/st.txt
grep -E '^hotpage_workload_(samples|promoted_pages|fast_bytes)' /tmp/hotpage.prom

# b exits: its target goes by commit; a's stays (same kdamond thread).
kill -TERM $WB; wait $WB
for i in $(seq 1 100); do grep -q "b: pid $WB ended" /tmp/d.log && break; sleep 0.1; done
sleep 1
nt=$(rd $C/targets/nr_targets); t0=$(rd $C/targets/0/pid_target)
st=$(rd $A/kdamonds/0/state); kpid2=$(rd $A/kdamonds/0/pid)
echo "after b left: targets $nt ($t0 ...), state $st, kdamond thread $kpid -> $kpid2"
[ "$st" = on ] && [ "$kpid2" = "$kpid" ] && ok "same kdamond still running (not restarted)" || bad "kdamond: state $st, thread $kpid -> $kpid2"
if [ "$t0" = "$WA" ]; then
  [ "$nt" = 1 ] && ok "b's target removed, a's kept" || bad "targets $nt after b left"
else
  [ "$nt" = 2 ] && [ "$(rd $C/targets/1/pid_target)" = "$WA" ] && ok "b's slot freed, a's kept at its index" || bad "targets $nt ($t0) after b left"
fi
grep -q "damon: " /tmp/d.log && { echo "--- damon lines"; grep "damon: " /tmp/d.log; }
# a's monitoring goes on: its next hot set is found.
kill -USR1 $WA
for i in $(seq 1 50); do grep -q "^phase 1" /tmp/la && break; sleep 0.1; done
if r=$(attach_vm_check wait90 $WA /tmp/la 0 120); then ok "a's next hot set on node 0 after b left: $r"; else bad "a's next hot set: $r"; fi

kill -TERM $D; wait $D; rc=$?
[ $rc = 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc"
[ "$(rd $A/kdamonds/nr_kdamonds)" = 0 ] && ok "no kdamond left" || bad "nr_kdamonds $(rd $A/kdamonds/nr_kdamonds) after SIGTERM"
echo "--- daemon log"; cat /tmp/d.log
kill -TERM $WA; wait $WA && ok "workload a data intact" || bad "workload a data"
echo "daemon DAMON VM test: $fails failed"
exit $fails
