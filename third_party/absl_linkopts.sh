#!/bin/sh
# Prints the linkopts list for //third_party:absl (paste into BUILD.bazel).
MODS="absl_status absl_statusor absl_strings absl_str_format absl_synchronization absl_time absl_hash absl_raw_hash_set absl_flat_hash_map"
pkg-config --libs $MODS | tr ' ' '\n' | grep -v '^$' | awk '!seen[$0]++' | sed 's/.*/        "&",/'
