# Sourced by the daemon guest scripts (copied into the guest as
# /daemon_guest_lib.sh): the check helpers and the two-cgroup setup they
# share. Every check prints "ok"/"FAIL"; $fails counts the failures (the
# helpers are tests/vm/guest_checks.sh's).
. /guest_checks.sh  # fails, ok, bad, wait_file, json_num, free0 (tests/vm)
# Hot-set pages (4 KiB) of PID on node 0.
hot0() { attach_vm_check counthot $1 $2 | sed -n 's/.*node0=\([0-9]*\).*/\1/p'; }
# The workloads: 320 MiB each, an 80 MiB hot set of four 20 MiB clusters,
# first touched on the slow node. Each runs in a cgroup (the shell joins
# it, then execs the workload, so $! is the workload's pid).
W_ARGS="--mib=320 --clusters=4 --cluster_mib=20 --thp=never --prefer_node=1"
MiB=256  # 4 KiB pages per MiB
mkdir -p /sys/fs/cgroup/a /sys/fs/cgroup/b || bad "cgroups"
