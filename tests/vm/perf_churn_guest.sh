# Guest side of //tests/vm:perf_churn_vm_test: 4000 opens and closes of a
# per-task page-fault perf event while both vCPUs are busy. Without
# static_key_pin each one patches the kernel's perf static keys and, under
# multi-threaded TCG, the guest oopses on a stale int3 within the first
# few hundred (6 of 6 boots here); with it, nothing is patched.
set -e
pidof static_key_pin >/dev/null || { echo "guest: FAIL: static_key_pin is not running"; exit 1; }
( while :; do :; done ) &
b1=$!
( while :; do sleep 0; done ) &
b2=$!
perf_churn 4000
kill $b1 $b2
echo "guest: ok"
