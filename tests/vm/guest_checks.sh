# Sourced by the guest scripts of vm_test (tests/vm/vm_test.bzl copies it
# into every guest as /guest_checks.sh): the check helpers they share.
# Every check prints "ok" or "FAIL"; $fails counts the failures, and a
# script ends with `exit $fails` or its own summary.
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
# Waits up to 30 s for FILE to exist and be non-empty.
wait_file() { for i in $(seq 1 300); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
# The first number after "KEY": in the JSON file FILE (json_num FILE KEY).
json_num() { sed -n "s/.*\"$2\": \\([0-9.]*\\).*/\\1/p" "$1" | head -n 1; }
# Node 0's free memory in kB.
free0() { sed -n 's/.*MemFree: *\([0-9]*\) kB/\1/p' /sys/devices/system/node/node0/meminfo; }
