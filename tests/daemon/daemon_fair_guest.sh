# Guest side of //tests/daemon:daemon_fair_vm_test (topology small-dram+cxl:
# node 0 = CPUs + 512 MiB, node 1 = CPU-less 1536 MiB). Fair shares with
# no floors: `hotpage daemon` manages two cgroups whose hot sets together
# do not fit in what is left of node 0, and the hotter workload wins,
# though the colder came first. Every check prints "ok"/"FAIL"; the script
# exits with the number of failures.
. /daemon_guest_lib.sh  # ok, bad, wait_file, free0, hot0, W_ARGS, MiB; cgroups a and b

# No floors: between floor and cap benefit decides, so the hotter workload
# wins. c starts first, alone, as hot as h will be, and gets its hot set
# onto node 0; then it cools down (SIGUSR2: a 10 s pause after every pass,
# so each of its hot pages is written once per 10 s, a fraction of h's
# rate) and h starts (the same hot set size, a 0.2 s pause after every
# pass: each page written every ~0.4 s, 25x c's rate, and a guest CPU left
# for the daemon, whose write-fault rounds slow down when h spins). Together 160 MiB of
# hot set over ~120 MiB of room: h must end with its hot set on node 0,
# taken from c, though c came first and holds it. It took 24-81 s here
# while the benefit-vs-cost gate priced write faults as accesses (it held
# h's first promotions back for up to a minute under a loaded host) and a
# round's swaps passed over victims without bound (rounds of seconds under
# emulation, policy/placement.h rule e); 5.5-12.5 s with both fixed (71 s
# with the first alone, its last 10% waiting for room on node 0: the
# round lines' promote_skipped said target_backed_off). Ranked by samples
# since start instead of a recent rate (before DaemonLoop's rate), h
# overtook c only once its total passed c's, after 136 s:
# DaemonLoopTest.ShortOfFastMemoryACooledWorkloadLoses...
# is the test that fails without the rate. Under load it then failed 2 runs
# in 3 (h stuck at 82-84% for 200 s, promote_skipped=target_backed_off):
# h's start-up writes had left 16-20 MiB of its cold pages on node 0, which
# its engine no longer tracks, and the daemon, taking h's 80 MiB hot set to
# fit in what h held, set no shares, so c kept its room and node 0 stayed
# under its high watermark. Now a workload's demand is what it holds plus
# its hot set still on the slow node, and a node under its low watermark
# takes its room from the colder workload's share
# (DaemonLoopTest.ShortOfRoomTheColderGivesWhatTheHottersHotSetNeeds,
# BelowTheLowWatermarkTheColderMakesTheRoom): 7-10 s to 90%.
# h then swung around the 90% line (first look 66-70 MiB in 2 runs of 25):
# each member's fast figure was its last round's numa_maps reading while
# the free memory was read now, so a move done in between was in neither,
# the tier was shared out as that much smaller and h's target fell below
# what it held (its engine cut its hot set in 19 runs of 22, median 4762
# pages; 2 of 32 since). Moves since the reading now count (DaemonLoopTest.
# MovesDoneSinceAMembersLastReadingCountInWhatItHolds). The kernel refused
# move_pages onto node 0 (ENOMEM) at ~18.75 MiB free, ~1.3 MiB under the
# engines' 4% high watermark, so promotions still queued when the next
# round read the free memory could back node 0 off for 10 s
# (target_backed_off) in 7 runs of 8. /proc/zoneinfo here: DMA32 min 3807
# pages (of a 66 MiB min_free_kbytes) plus the DMA zone's min 128 and
# lowmem reserve 443 pages, 17.1 MiB (about 18.2 on the boots where node 0
# manages 502 MiB, not 465); with the low watermarks, 21.0 (23.0) MiB. The
# watermarks now start there (tools/kernel_floor.h): low 21.0-23.0 MiB,
# high 30.3-33.1 MiB; no back-off in 16 runs since.
#
# h then stalled at 70-79% in 3 CI runs of 9 (node 0 free between its
# watermarks, nothing promoted into room or demoted for it). Two causes:
# - The daemon's own memory on node 0: 47-53 MiB with c alone and 78-96
#   MiB once both ran (RSS 93-107 MiB; the engines 17 and 23-27 MiB, their
#   `engine memory` lines), where this budget had said ~60. With 200 MiB
#   left free, that left h 56-66 MiB, and it reached 90% only on runs
#   where the kernel's kswapd demoted enough of the daemon's cold pages.
# - h's swaps then picked the same 4 victims every round, pages mapped by
#   c too (the binary's), whose demotions failed with EACCES while their
#   partners' promotions went through: 1935 failures in 50 s. The
#   migrator now holds a page the kernel refuses as shared (IsHeld), so it
#   is planned once: 36 in a run with node 0 as short.
# node0_report prints where node 0's memory is at each step.
#
# Leave ~240 MiB of node 0 free: after the high watermark (~33 MiB) and the
# daemon's own memory (~100 MiB) room for one hot set (80 MiB) and some,
# not for two (160 MiB).
# Where node 0's memory went: the kernel's per-node counters and the
# pages each process holds there (numa_maps N0=).
n0pages() { [ -n "$1" ] || { echo 0; return; }; awk '{for (i = 1; i <= NF; i++) if ($i ~ /^N0=/) { sub(/N0=/, "", $i); n += $i } } END { print n + 0 }' /proc/$1/numa_maps 2>/dev/null; }
node0_report() {
  echo "   node 0: $(grep -E 'MemUsed|FilePages|Shmem:|AnonPages|PageTables|Slab:|KernelStack' /sys/devices/system/node/node0/meminfo | awk '{printf "%s %d MiB, ", $3, $4 / 1024}')"
  echo "   node 0 pages: daemon $(($(n0pages $DN) / MiB)) MiB, c $(($(n0pages $WC) / MiB)) MiB, h $(($(n0pages $WH) / MiB)) MiB, fill $(($(n0pages $F) / MiB)) MiB; daemon $(grep -E 'VmRSS|VmHWM' /proc/$DN/status | tr -s ' \t\n' ' ')"
}
attach_vm_check fill 0 240 >/tmp/fill.out &
F=$!
wait_file /tmp/fill.out; cat /tmp/fill.out
echo "node 0 free: $(free0) kB"; node0_report
cat >/tmp/n.toml <<'TOML'
[daemon]
interval_ms = 500
rate_limit_mbps = 256
kernel_tiering = "coexist"
socket = "/tmp/hn/hotpage.sock"
state_dir = "/tmp/hn"
prom_file = "/tmp/hotpage-n.prom"

[[workload]]
name = "c"
cgroup = "a"
source = "pagefault"
write_faults = true

[[workload]]
name = "h"
cgroup = "b"
source = "pagefault"
write_faults = true
TOML
sh -c "echo \$\$ > /sys/fs/cgroup/a/cgroup.procs && exec hot_set_workload $W_ARGS --pass_sleep_ms=10000 --sleep_on_usr2 --layout=/tmp/lc" &
WC=$!
wait_file /tmp/lc || bad "workload c started"
hotpage daemon --config /tmp/n.toml --log-level debug 2>/tmp/dn.log &
DN=$!
if r=$(attach_vm_check wait90 $WC /tmp/lc 0 120); then ok "c alone: its hot set on node 0: $r"; else bad "c alone: $r"; fi
c_alone=$(hot0 $WC /tmp/lc)
node0_report
kill -USR2 $WC  # c cools down
sh -c "echo \$\$ > /sys/fs/cgroup/b/cgroup.procs && exec hot_set_workload $W_ARGS --pass_sleep_ms=200 --layout=/tmp/lh" &
WH=$!
wait_file /tmp/lh || bad "workload h started"
if r=$(attach_vm_check wait90 $WH /tmp/lh 0 240); then ok "h (the hotter, started second) gets its hot set on node 0: $r"; else bad "h: $r"; fi
# h keeps what it won. It reaches 90% at the edge: its last pages come
# as c's engine gives room back, and c's cooled hot set still gets a
# burst of write faults every 10 s, which may promote a few of its pages
# into room h has not refilled yet, moving h across the line and back.
# A CI machine's run failed after 39.7 s, its log cut off; a single look
# 3 s after the wait is the likeliest cause. So up to five looks a second
# apart, each printed; the first that shows it passes.
for i in 1 2 3 4 5; do
  sleep 1
  h0=$(hot0 $WH /tmp/lh); c0=$(hot0 $WC /tmp/lc)
  echo "   look $i: h $((${h0:-0} / MiB)) MiB, c $((${c0:-0} / MiB)) MiB on node 0"
  [ "${h0:-0}" -ge $((72 * MiB)) ] && [ "${h0:-0}" -gt "${c0:-0}" ] && break
done
fastn() { sed -n "s/^hotpage_workload_fast_bytes{workload=\"$1\"} //p" /tmp/hotpage-n.prom; }
node0_report
echo "FAIRNESS-NO-FLOORS hot sets on node 0: h (hotter) $((h0 / MiB)) MiB, c (colder) $((c0 / MiB)) MiB of 80 each (c alone: $((${c_alone:-0} / MiB)) MiB); fast memory h $(($(fastn h) >> 20)) MiB, c $(($(fastn c) >> 20)) MiB; node 0 free $(free0) kB"
[ "${h0:-0}" -ge $((72 * MiB)) ] && [ "${h0:-0}" -gt "${c0:-0}" ] \
  && ok "without floors the hotter wins: h $((h0 / MiB)) MiB > c $((c0 / MiB)) MiB of their hot sets on node 0" \
  || { bad "without floors: h $((${h0:-0} / MiB)) MiB, c $((${c0:-0} / MiB)) MiB on node 0"; hotpage status --socket /tmp/hn/hotpage.sock | head -40; tail -n 30 /tmp/dn.log; }
kill -TERM $DN; wait $DN || bad "daemon: exit $?"
kill -TERM $WC $WH; wait $WC && ok "workload c data intact" || bad "workload c data"
wait $WH && ok "workload h data intact" || bad "workload h data"
kill $F
echo "--- daemon log"; cat /tmp/dn.log
echo "daemon fair-share VM test: $fails failed"
exit $fails
