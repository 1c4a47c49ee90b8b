#!/bin/sh
# Prints the guest's NUMA / memory-tier / HMAT view of sysfs as PATH=VALUE
# lines (one per file, newlines folded to spaces; a directory prints
# "PATH/=" and its sorted entries; a missing path prints "PATH=<absent>").
# Runs under busybox sh. The topology VM tests compare these lines against
# tests/vm/topologies/NAME.sysfs.
show() {
  for p in "$@"; do
    if [ -d "$p" ]; then
      # shellcheck disable=SC2012  # sysfs names are plain
      echo "$p/=$(ls "$p" | sort | tr '\n' ' ' | sed 's/ $//')"
    elif [ -f "$p" ]; then
      echo "$p=$(tr '\n' ' ' <"$p" | sed 's/ *$//')"
    else
      echo "$p=<absent>"
    fi
  done
}
# Numeric suffixes of the entries PREFIX<N> in DIR, ascending.
# shellcheck disable=SC2012
ids() { ls "$1" 2>/dev/null | sed -n "s/^$2\([0-9][0-9]*\)\$/\1/p" | sort -n; }

N=/sys/devices/system/node
echo "uname-r=$(uname -r)"
show /proc/sys/kernel/numa_balancing /sys/kernel/mm/numa/demotion_enabled
show $N/possible $N/online $N/has_cpu $N/has_memory $N/has_normal_memory
for i in $(ids $N node); do
  n="$N/node$i"
  show "$n/cpulist" "$n/distance"
  echo "$n/meminfo:MemTotal=$(awk '/MemTotal/ {print $4, $5}' "$n/meminfo")"
  for a in access0 access1; do
    ini="$n/$a/initiators"
    show "$ini" "$n/$a/targets"
    if [ -d "$ini" ]; then
      show "$ini/read_latency" "$ini/write_latency" \
           "$ini/read_bandwidth" "$ini/write_bandwidth"
    fi
  done
  show "$n/memory_side_cache"
done
T=/sys/devices/virtual/memory_tiering
show $T
for i in $(ids $T memory_tier); do show "$T/memory_tier$i/nodelist"; done
C=/sys/devices/system/cpu
for i in $(ids $C cpu); do
  t="$C/cpu$i/topology"
  show "$t/physical_package_id" "$t/die_id" "$t/core_id"
done
W=/sys/kernel/mm/mempolicy/weighted_interleave
show $W
for i in $(ids $W node); do show "$W/node$i"; done
