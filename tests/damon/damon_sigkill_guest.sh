# Guest side of //tests/damon:damon_sigkill_vm_test (topology dram+cxl,
# 6.12): `hotpage attach --source damon` SIGKILLed leaves its kdamond; the
# next attach removes it, says so, and runs with its own; a live one is
# refused by name; SIGTERM leaves nothing; a kdamond replaced by someone
# else after the kill is refused and left alone. Every check prints
# "ok"/"FAIL"; the script exits with the number of failures.
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
D=/sys/kernel/mm/damon/admin
K=$D/kdamonds/0
C=$K/contexts/0
STATE=/run/hotpage/damon-state
nr() { cat $D/kdamonds/nr_kdamonds; }
target() { cat $C/targets/0/pid_target 2>/dev/null; }
kdamond_threads() { grep -l '^kdamond' /proc/[0-9]*/comm 2>/dev/null | wc -l; }
# `state` reads fail EBUSY while a holder's update command is in flight.
kstate() {
  s=""
  for i in $(seq 1 50); do s="$(cat $K/state 2>/dev/null)" && [ -n "$s" ] && break; done
  echo "$s"
}
# Waits until the state file names pid $1 (written before nr_kdamonds = 1)
# and kdamond 0 runs.
wait_running() {
  for i in $(seq 1 200); do
    grep -q "^pid $1\$" $STATE 2>/dev/null && [ "$(nr)" = 1 ] && [ "$(kstate)" = on ] && return 0
    sleep 0.1
  done
  return 1
}

hot_set_workload --mib=32 --clusters=2 --cluster_mib=2 --thp=never --prefer_node=1 --layout=/tmp/l1 &
W=$!
wait_file /tmp/l1 || bad "workload started"

# 1. SIGKILL: the kdamond and the state file stay.
hotpage attach --pid $W --source damon --interval-ms 500 --quiet 2>/tmp/a1.log &
A1=$!
wait_running $A1 && ok "first attach (pid $A1) runs kdamond 0" || { bad "first attach did not start"; cat /tmp/a1.log; }
sleep 1
kill -KILL $A1; wait $A1
[ "$(nr)" = 1 ] && [ "$(kstate)" = on ] && [ "$(kdamond_threads)" = 1 ] \
  && ok "after SIGKILL: nr_kdamonds 1, kdamond still on" || bad "after SIGKILL: nr=$(nr) state=$(kstate) threads=$(kdamond_threads)"
grep -q "^pid $A1\$" $STATE && grep -q "^target_pid $W\$" $STATE && grep -q "^operations vaddr\$" $STATE \
  && ok "state file names pid $A1, target $W" || { bad "state file:"; cat $STATE; }
[ "$(stat -c %a /run/hotpage)" = 700 ] && ok "/run/hotpage is 0700" || bad "/run/hotpage mode $(stat -c %a /run/hotpage)"

# 2. The next attach removes the stale kdamond, says so, and runs its own.
hotpage attach --pid $W --source damon --interval-ms 500 --quiet --stats-json /tmp/s2.json 2>/tmp/a2.log &
A2=$!
wait_running $A2 && ok "second attach (pid $A2) runs" || { bad "second attach did not start"; cat /tmp/a2.log; }
grep -q "removed a stale hotpage kdamond left by pid $A1 (target pid $W)" /tmp/a2.log \
  && ok "said: $(grep -o 'removed a stale[^(]*([^)]*)' /tmp/a2.log)" || { bad "no removal message"; cat /tmp/a2.log; }
[ "$(nr)" = 1 ] && [ "$(target)" = $W ] && [ "$(kdamond_threads)" = 1 ] \
  && ok "nr_kdamonds 1, target $W, one kdamond thread" || bad "nr=$(nr) target=$(target) threads=$(kdamond_threads)"
for i in $(seq 1 50); do [ -s /tmp/s2.json ] && break; sleep 0.1; done
grep -q "\"recovered\": \"removed a stale hotpage kdamond left by pid $A1" /tmp/s2.json \
  && ok "--stats-json records the removal under damon.recovered" || { bad "no damon.recovered in the stats"; head -c 600 /tmp/s2.json; }

# 3. A third, while the second runs: refused, the holder named, nothing touched.
hotpage attach --pid $W --source damon --duration 2 2>/tmp/a3.log; rc=$?
[ $rc -eq 1 ] && grep -q "another hotpage (pid $A2, monitoring pid $W)" /tmp/a3.log \
  && ok "third attach refused, holder named" || { bad "third attach: rc=$rc"; cat /tmp/a3.log; }
[ "$(nr)" = 1 ] && [ "$(kstate)" = on ] && grep -q "^pid $A2\$" $STATE \
  && ok "the refused run changed nothing" || bad "after refusal: nr=$(nr) state=$(kstate)"

# 4. SIGTERM: a clean stop leaves no kdamond and no state file.
kill -TERM $A2; wait $A2; rc=$?
for i in $(seq 1 20); do [ "$(kdamond_threads)" = 0 ] && break; sleep 0.1; done
[ $rc -eq 0 ] && [ "$(nr)" = 0 ] && [ ! -e $STATE ] && [ "$(kdamond_threads)" = 0 ] \
  && ok "SIGTERM: exit 0, nothing left" || bad "SIGTERM: rc=$rc nr=$(nr) state file $(ls $STATE 2>&1)"

# 5. Killed, then someone replaces its kdamond with one for another pid:
# refused, their kdamond left alone.
hotpage attach --pid $W --source damon --interval-ms 500 --quiet 2>/tmp/a5.log &
A5=$!
wait_running $A5 || bad "fifth attach did not start"
kill -KILL $A5; wait $A5
sleep 1000 &
F=$!
echo off >$K/state
echo 0 >$D/kdamonds/nr_kdamonds
echo 1 >$D/kdamonds/nr_kdamonds
echo 1 >$K/contexts/nr_contexts
echo vaddr >$C/operations
echo 1 >$C/targets/nr_targets
echo $F >$C/targets/0/pid_target
echo on >$K/state
hotpage attach --pid $W --source damon --duration 2 2>/tmp/a6.log; rc=$?
[ $rc -eq 1 ] && grep -q "says hotpage pid $A5 (no longer running).* for pid $W, but kdamond 0 monitors pid $F" /tmp/a6.log \
  && ok "someone else's kdamond after a kill: refused, state file quoted" || { bad "replaced kdamond: rc=$rc"; cat /tmp/a6.log; }
[ "$(nr)" = 1 ] && [ "$(target)" = $F ] && [ "$(kstate)" = on ] \
  && ok "their kdamond untouched" || bad "their kdamond: nr=$(nr) target=$(target) state=$(kstate)"
echo off >$K/state
echo 0 >$D/kdamonds/nr_kdamonds
kill $F

kill -TERM $W; wait $W; rc=$?
[ $rc -eq 0 ] && ok "workload data intact" || bad "workload exit status $rc"
echo "DAMON SIGKILL VM test: $fails failed"
exit $fails
