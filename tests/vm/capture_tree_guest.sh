# Guest script: copies the sysfs/procfs files `hotpage topology` reads into
# a tree (values only; sysfs files cannot be archived directly since they
# report a size of 4096), and prints it as base64 tar.gz between markers.
# Used by tests/vm/capture_tree.sh to make tests/testdata/sysfs/<name>.
T=/tmp/tree
cp_file() { [ -r "$1" ] || return 0; mkdir -p "$T$(dirname "$1")"; cat "$1" > "$T$1" 2>/dev/null || rm -f "$T$1"; }
N=/sys/devices/system/node
for f in online possible has_cpu has_memory; do cp_file $N/$f; done
for d in $N/node[0-9]*; do
  for f in cpulist meminfo distance; do cp_file $d/$f; done
  for a in access0 access1; do
    [ -d $d/$a/initiators ] || continue
    for f in read_latency write_latency read_bandwidth write_bandwidth; do cp_file $d/$a/initiators/$f; done
    for l in $d/$a/initiators/node*; do
      # An empty file, not the kernel's symlink: the link would loop
      # (node1/access0/initiators/node1 -> node1) and Bazel globs reject
      # loops. hotpage only reads the names.
      [ -e "$l" ] && : > "$T$d/$a/initiators/$(basename $l)"
    done
  done
done
for c in /sys/devices/system/cpu/cpu[0-9]*; do cp_file $c/topology/physical_package_id; done
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do cp_file $t/nodelist; done
for w in /sys/kernel/mm/mempolicy/weighted_interleave/*; do cp_file $w; done
cp_file /sys/kernel/mm/numa/demotion_enabled
cp_file /sys/kernel/mm/transparent_hugepage/enabled
for f in osrelease numa_balancing perf_event_paranoid; do cp_file /proc/sys/kernel/$f; done
echo "@@TREE-BEGIN@@"
tar -C $T -czf - . | base64
echo "@@TREE-END@@"
