# Guest side of //tests/damon:damon_vm_test (topology dram+cxl, 6.12).
# Runs as `sh /test.sh` in /tmp; every check prints "guest: FAIL: ..." and
# makes the script exit 1.
A=/sys/kernel/mm/damon/admin
rc=0
fail() { echo "guest: FAIL: $*"; rc=1; }
kdamond_threads() { grep -l '^kdamond' /proc/[0-9]*/comm 2>/dev/null | wc -l; }
no_kdamond_left() {  # WHEN
  n=0
  while [ "$(kdamond_threads)" != 0 ] && [ "$n" -lt 20 ]; do sleep 0.1; n=$((n + 1)); done
  [ "$(cat $A/kdamonds/nr_kdamonds)" = 0 ] || fail "$1: nr_kdamonds is $(cat $A/kdamonds/nr_kdamonds)"
  [ "$(kdamond_threads)" = 0 ] || fail "$1: kdamond thread left"
}

[ -d "$A" ] || { echo "guest: FAIL: no $A (kernel without CONFIG_DAMON_SYSFS)"; exit 1; }
echo "guest: THP $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
echo "guest: nr_kdamonds $(cat $A/kdamonds/nr_kdamonds)"

# 1. Detection, switch, Stop(), target exit.
damon_vm_check --mode=track --verbose ${DAMON_CHECK_ARGS:-} || fail "damon_vm_check --mode=track"
no_kdamond_left "after track"

# 2. SIGTERM: a holder tears down through TeardownAll on its signalfd thread.
hot_set_workload --mib=32 --clusters=2 --cluster_mib=2 --layout=/tmp/l2 &
wl=$!
n=0
while [ ! -f /tmp/l2 ] && [ "$n" -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
damon_vm_check --mode=hold --pid=$wl >/tmp/hold.out 2>&1 &
h=$!
n=0
while ! grep -q HOLDING /tmp/hold.out && [ "$n" -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
[ "$(cat $A/kdamonds/nr_kdamonds)" = 1 ] || fail "holder: nr_kdamonds is not 1 while holding"
# Reading `state` fails EBUSY while the holder's update command is in flight.
state=""
n=0
while [ -z "$state" ] && [ "$n" -lt 50 ]; do
  state="$(cat $A/kdamonds/0/state 2>/dev/null)"
  n=$((n + 1))
done
[ "$state" = on ] || fail "holder: kdamond 0 is not on ($state)"
[ "$(kdamond_threads)" = 1 ] || fail "holder: expected one kdamond thread"
sleep 0.5
kill -TERM $h
wait $h
hs=$?
cat /tmp/hold.out
[ "$hs" = 0 ] || fail "holder exited with $hs after SIGTERM"
no_kdamond_left "after SIGTERM"

# 3. Someone else's kdamond (a stopped leftover): refuse, touch nothing.
echo 1 >$A/kdamonds/nr_kdamonds
damon_vm_check --mode=refuse --pid=$wl || fail "refusal"
[ "$(cat $A/kdamonds/nr_kdamonds)" = 1 ] || fail "refusal changed nr_kdamonds"
echo 0 >$A/kdamonds/nr_kdamonds

kill -TERM $wl
wait $wl
ws=$?
[ "$ws" = 0 ] || fail "small workload exited with $ws"

# 4. The target exits by itself while polls run back to back (an update
# command is usually in flight when it dies).
hot_set_workload --mib=32 --clusters=2 --cluster_mib=2 --duration_ms=2000 &
wl=$!
damon_vm_check --mode=hold --pid=$wl
hs=$?
wait $wl
[ "$hs" = 3 ] || fail "holder exited with $hs when its target exited (want 3)"
no_kdamond_left "after the target exited under polling"
[ "$rc" = 0 ] && echo "guest: all DAMON checks passed"
exit $rc
