# Guest side of tests/compare/run_compare.sh: ONE run of the comparison in a
# fresh guest (tests/vm), sourced by a small per-run script that sets:
#
#   TOPO    guest topology name (for the label only)
#   MECH    none | nb1 | tiering | damon-paddr | hotpage-<source>
#   SHAPE   clusters | interleaved
#   REP     repeat number (label only)
#   HALF_MS length of each of the two phases (the hot set switches after it)
#   SLOW    the slow node the workload starts on (1 in dram+cxl, 2 in 2pkg+cxl)
#   FAST    the fast nodes, a kernel list (0, or 0-1)
#   HP_ARGS extra `hotpage attach` arguments (e.g. --weights 0:3,1:1)
#   HP_INTERVAL_MS  hotpage's round interval (default 500)
#   START_DELAY_MS  the mechanism starts this long after the workload's
#                   first phase began (default 0: at once)
#   TRACE_PERIOD    if set: the workload writes its own access stream, every
#                   TRACE_PERIOD-th access, as an .hpt trace
#                   (hot_set_workload --trace_out), which is sent raw over
#                   the guest's second serial port (/dev/ttyS1: run_compare.sh
#                   connects it to a host file) after the result line, and
#                   announced as "COMPARE-TRACE bytes=N"
#
# The workload: hot_set_workload, 192 MiB starting on SLOW (placed there by
# MPOL_PREFERRED, then the policy is reset to default: the kernel's NUMA
# balancing skips VMAs with an mbind policy), a hot set of 24 MiB (6144
# pages: 12 clusters of 2 MiB, or one page in 8 interleaved), switched to a
# disjoint set after HALF_MS, plus a separate 4 MiB range bound (MPOL_BIND)
# to SLOW and touched on every pass, which no mechanism may move. THP off
# (4 KiB pages everywhere, so page counts compare). compare_check watches it
# and prints the run's COMPARE-RESULT line at the end.
: "${TOPO:?}" "${MECH:?}" "${SHAPE:?}"
REP=${REP:-1}
HALF_MS=${HALF_MS:-12000}
SLOW=${SLOW:-1}
FAST=${FAST:-0}
HP_ARGS=${HP_ARGS:-}
HP_INTERVAL_MS=${HP_INTERVAL_MS:-500}
START_DELAY_MS=${START_DELAY_MS:-0}
label="topo=$TOPO mech=$MECH shape=$SHAPE rep=$REP"
note() { echo "COMPARE-NOTE $label: $*"; }
wait_file() { for i in $(seq 1 300); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
D=/sys/kernel/mm/damon/admin
# A real system has /run (hotpage's hintfault source keeps its state there);
# the harness's initramfs does not.
mkdir -p /run

case "$SHAPE" in
  clusters) shape_args="--shape=clusters --clusters=12 --cluster_mib=2" ;;
  interleaved) shape_args="--shape=interleaved --stride=8" ;;
  *) note "unknown shape $SHAPE"; exit 2 ;;
esac

# Physical range [start, end) of a node's memory blocks (memory[0-9]*: not
# memory_side_cache), for DAMON's paddr operations.
node_range() {
  local bs lo hi m i s e
  bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
  lo=""; hi=""
  for m in /sys/devices/system/node/node$1/memory[0-9]*; do
    i=${m##*memory}
    s=$((i * bs)); e=$((s + bs))
    if [ -z "$lo" ] || [ "$s" -lt "$lo" ]; then lo=$s; fi
    if [ -z "$hi" ] || [ "$e" -gt "$hi" ]; then hi=$e; fi
  done
  echo "$lo $hi"
}

# One kdamond K, one paddr context over [START, END), one scheme.
#   damon_ctx K START END ACTION TARGET_NID NR_ACCESSES_MIN NR_ACCESSES_MAX AGE_MIN
damon_ctx() {
  local C S P
  C=$D/kdamonds/$1/contexts/0
  echo 1 >$D/kdamonds/$1/contexts/nr_contexts
  echo paddr >$C/operations
  echo 5000 >$C/monitoring_attrs/intervals/sample_us
  echo 100000 >$C/monitoring_attrs/intervals/aggr_us
  echo 1000000 >$C/monitoring_attrs/intervals/update_us
  echo 10 >$C/monitoring_attrs/nr_regions/min
  echo 1000 >$C/monitoring_attrs/nr_regions/max
  echo 1 >$C/targets/nr_targets
  echo 1 >$C/targets/0/regions/nr_regions
  echo "$2" >$C/targets/0/regions/0/start
  echo "$3" >$C/targets/0/regions/0/end
  echo 1 >$C/schemes/nr_schemes
  S=$C/schemes/0
  echo "$4" >$S/action || return 1
  echo "$5" >$S/target_nid || return 1
  [ -e $S/apply_interval_us ] && echo 1000000 >$S/apply_interval_us
  P=$S/access_pattern
  echo 4096 >$P/sz/min
  echo 18446744073709551615 >$P/sz/max
  echo "$6" >$P/nr_accesses/min
  echo "$7" >$P/nr_accesses/max
  echo "$8" >$P/age/min
  echo 4294967295 >$P/age/max
}

# DAMOS as in DAMON's own tiering example: migrate_hot from the slow node's
# range to node 0 for regions accessed in >= 5% of samples (1 of 20),
# migrate_cold from node 0's range to the slow node for regions with no
# access, each applied once a second. One kdamond per range (6.12: one
# context per kdamond). paddr ignores memory policy.
damon_paddr_on() {
  [ -d $D ] || { note "no DAMON sysfs"; return 1; }
  [ "$(cat $D/kdamonds/nr_kdamonds)" = 0 ] || { note "kdamonds already present"; return 1; }
  echo 2 >$D/kdamonds/nr_kdamonds
  set -- $(node_range "$SLOW")
  damon_ctx 0 "$1" "$2" migrate_hot 0 1 4294967295 0 || return 1
  set -- $(node_range 0)
  damon_ctx 1 "$1" "$2" migrate_cold "$SLOW" 0 0 0 || return 1
  echo on >$D/kdamonds/0/state && echo on >$D/kdamonds/1/state
}

# "damos_hot_pages=N damos_cold_pages=N": what each scheme applied to.
damon_paddr_stats() {
  local out k sz name
  out=""
  for k in 0 1; do
    echo update_schemes_stats >$D/kdamonds/$k/state 2>/dev/null
    sz=$(cat $D/kdamonds/$k/contexts/0/schemes/0/stats/sz_applied 2>/dev/null || echo 0)
    [ $k = 0 ] && name=damos_hot_pages || name=damos_cold_pages
    out="$out $name=$((sz / 4096))"
  done
  echo "$out"
}

trace_args=""
# 8M samples (128 MB of buffer on the fast node) hold 24 s at period 23 with
# room to spare; the trace itself is ~1-3 bytes a sample (zstd).
[ -n "${TRACE_PERIOD:-}" ] && trace_args="--trace_out=/tmp/w.hpt --trace_period=$TRACE_PERIOD --trace_max_samples=8000000"
# shellcheck disable=SC2086  # word lists
hot_set_workload --mib=192 $shape_args --thp=never --prefer_node="$SLOW" --then_default \
  --bind_range_mib=4 --bind_range_node="$SLOW" --switch_after_ms="$HALF_MS" --layout=/tmp/l \
  $trace_args >/tmp/w.log 2>&1 &
W=$!
if ! wait_file /tmp/l; then
  note "the workload did not start: $(cat /tmp/w.log)"
  exit 1
fi
echo "guest: $label: workload pid $W; $(grep -c . /tmp/l) layout lines"
cat /proc/vmstat >/tmp/vmstat0
# Stop just before the workload would switch back to the first set.
until_s=$(awk -v h="$HALF_MS" 'BEGIN { printf "%.1f", 2 * h / 1000 - 0.3 }')
compare_check watch --pid $W --layout /tmp/l --until-s "$until_s" --fast-nodes "$FAST" \
  --vmstat-before /tmp/vmstat0 --out /tmp/watch.kv >/tmp/watch.log 2>&1 &
CHECK=$!

# With a trace: the kernel's scanner and promotion counters every 250 ms
# (CLOCK_MONOTONIC seconds, the trace's clock), for tests/compare/calibrate.sh.
V=""
if [ -n "${TRACE_PERIOD:-}" ]; then
  (while :; do
    read -r up _ </proc/uptime
    echo "COMPARE-VMSTAT up=$up $(grep -E '^(numa_pte_updates|numa_hint_faults|pgpromote_candidate|pgpromote_success|pgdemote_kswapd|pgmigrate_success) ' /proc/vmstat | tr ' \n' '= ')"
    sleep 0.25
  done) &
  V=$!
fi
A=""
extra_kv=""
# A service that has run a while: the mechanism starts later (the watch and
# the phase clock started with the workload).
if [ "$START_DELAY_MS" -gt 0 ]; then
  sleep "$(awk -v ms="$START_DELAY_MS" 'BEGIN { printf "%.3f", ms / 1000 }')"
  extra_kv=" start_delay_ms=$START_DELAY_MS"
fi
case "$MECH" in
  none) echo 0 >/proc/sys/kernel/numa_balancing ;;
  nb1) echo 1 >/proc/sys/kernel/numa_balancing ;;
  tiering)
    echo 1 >/sys/kernel/mm/numa/demotion_enabled
    echo 2 >/proc/sys/kernel/numa_balancing
    ;;
  damon-paddr) damon_paddr_on || note "DAMOS setup failed" ;;
  hotpage-*)
    src=${MECH#hotpage-}
    consent=""
    [ "$src" = hintfault ] && consent=--allow-sysctl-changes
    # writefault: page faults plus write faults re-armed on every tier.
    [ "$src" = writefault ] && { src=pagefault; consent=--write-faults; }
    # shellcheck disable=SC2086  # HP_ARGS is a word list
    hotpage attach --pid $W --source "$src" $consent --interval-ms "$HP_INTERVAL_MS" \
      --stats-json /tmp/s.json --quiet $HP_ARGS 2>/tmp/a.log &
    A=$!
    ;;
  *) note "unknown mechanism $MECH"; kill -TERM $W $CHECK; exit 2 ;;
esac
echo "guest: numa_balancing=$(cat /proc/sys/kernel/numa_balancing)" \
  "demotion_enabled=$(cat /sys/kernel/mm/numa/demotion_enabled)" \
  "promote_rate_limit_MBps=$(cat /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps 2>/dev/null)"

wait $CHECK || note "compare_check watch failed: $(tail -n 3 /tmp/watch.log | tr '\n' ' ')"
[ -n "$V" ] && kill $V
[ "$MECH" = damon-paddr ] && extra_kv="$extra_kv $(damon_paddr_stats)"
echo "guest: bind range: $(grep ' bind:' /proc/$W/numa_maps)"
kill -TERM $W
wait $W
wrc=$?
[ $wrc = 0 ] || note "workload exit status $wrc (1 = data check failed)"
if [ -n "$A" ]; then
  # attach ends by itself when its process exits; SIGTERM after 10 s.
  n=0
  while kill -0 $A 2>/dev/null && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
  kill -0 $A 2>/dev/null && kill -TERM $A
  wait $A
  arc=$?
  extra_kv="$extra_kv hp_exit=$arc"
  if [ $arc != 0 ]; then
    # A failed attach measured nothing: no result line, only the reason.
    note "no result: hotpage attach exit status $arc: $(tail -n 2 /tmp/a.log | tr '\n' ' ')"
    exit 1
  fi
  echo "guest: hotpage log:"; tail -n 4 /tmp/a.log
  sj() { sed -n "s/.*\"$1\": \([0-9.e+-]*\).*/\1/p" /tmp/s.json | head -n 1; }
  echo "guest: migrator waited for its rate limit $(sj rate_limit_wait_s) s, for its CPU budget $(sj cpu_budget_wait_s) s"
fi
if [ "$MECH" = damon-paddr ]; then
  echo off >$D/kdamonds/0/state 2>/dev/null
  echo off >$D/kdamonds/1/state 2>/dev/null
  echo 0 >$D/kdamonds/nr_kdamonds
fi
echo 0 >/proc/sys/kernel/numa_balancing
stats=""
[ -n "$A" ] && stats="--stats-json /tmp/s.json"
# shellcheck disable=SC2086
compare_check finish --watch /tmp/watch.kv --label "$label$extra_kv" --workload-log /tmp/w.log $stats
if [ -n "${TRACE_PERIOD:-}" ]; then
  # Raw bytes over the second UART (about 110 KB/s under TCG here): no
  # output processing, 8 bits, no parity. close() waits for the drain.
  if [ -s /tmp/w.hpt ] && [ -e /dev/ttyS1 ] && stty -F /dev/ttyS1 raw -echo cs8 -parenb; then
    grep 'trace ' /tmp/w.log
    echo "COMPARE-TRACE bytes=$(wc -c </tmp/w.hpt)"
    cat /tmp/w.hpt >/dev/ttyS1
  else
    note "no trace sent: $(grep 'trace' /tmp/w.log)"
  fi
fi
