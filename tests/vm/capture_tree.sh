#!/bin/bash
# Boots a VM topology and saves the guest's sysfs/procfs view (what
# `hotpage topology` reads) as a tree usable with --sysfs-root:
#   tests/vm/capture_tree.sh 2pkg+cxl tests/testdata/sysfs/2pkg-cxl
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 TOPOLOGY OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
out=$(bash "$here/run_vm.sh" --topology "$1" --script "$here/capture_tree_guest.sh")
rm -rf "$2"; mkdir -p "$2"
sed -n '/@@TREE-BEGIN@@/,/@@TREE-END@@/p' <<<"$out" | sed '1d;$d' | base64 -d | tar -C "$2" -xzf -
echo "captured $(find "$2" -type f | wc -l) files into $2" >&2
