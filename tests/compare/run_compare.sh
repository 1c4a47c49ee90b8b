#!/bin/bash
# hotpage vs the kernel's own tiering, same guest, same workload.
#
#   bash tests/compare/run_compare.sh [--quick] [--out DIR] [--repeat N]
#        [--mechs "M ..."] [--shapes "S ..."] [--no-weights] [--half-ms N]
#        [--hotpage BIN] [--with-pagefault] [--start-delay-ms N]
#   bash tests/compare/run_compare.sh --tabulate DIR [--table-bin BIN]
#
# Builds //tools:hotpage, //tests/workloads:hot_set_workload and the
# checkers, then boots one fresh QEMU guest (tests/vm/run_vm.sh) per
# (mechanism, shape, repeat), so runs cannot disturb each other. In each
# guest the workload (192 MiB on the slow node, a 24 MiB hot set that
# switches to a disjoint set halfway, a 4 MiB MPOL_BIND range) runs under one
# mechanism while compare_check watches where its hot set is
# (tests/compare/compare_guest.sh). Then it prints the markdown table and
# writes DIR/report.md, DIR/results.json, DIR/results.txt (the result lines)
# and DIR/logs/ (each guest's console).
#
# Mechanisms (dram+cxl guest: node 0 CPUs + DRAM, node 1 CPU-less slow tier):
#   none          numa_balancing=0
#   nb1           numa_balancing=1 (NUMA balancing)
#   tiering       numa_balancing=2 + demotion_enabled=1 (memory tiering mode,
#                 default promotion rate limit)
#   damon-paddr   DAMOS migrate_hot -> node 0 / migrate_cold -> node 1 over
#                 paddr, one kdamond per node range
#   hotpage-SRC   hotpage attach --source SRC for each source that works in
#                 the guest: damon always; hintfault when `hotpage attach
#                 --help` mentions it (with --allow-sysctl-changes);
#                 writefault (--source pagefault --write-faults) when it
#                 mentions --write-faults;
#                 pagefault only with --with-pagefault (it sees first
#                 touches only)
# Shapes: clusters (12 hot clusters of 2 MiB), interleaved (1 hot page in 8).
# Weights (2pkg+cxl guest: two fast nodes with CPUs, node 2 slow): tiering
# vs hotpage-SRC --weights 0:3,1:1, both shapes; --no-weights skips it.
#
#   --quick        phases of 5 s, mechanisms tiering and hotpage-*, weights
#                  on clusters only: a smoke run (~3 min)
#   --repeat N     run everything N times (interleaved); the table shows
#                  ranges (default 1)
#   --half-ms N    length of each phase (default 12000: ~24 s per guest)
#   --hotpage BIN  use this hotpage binary instead of building //tools:hotpage
#   --out DIR      default /tmp/hotpage-compare-YYYYmmdd-HHMMSS
#   --trace-period N  the workload also writes its own access stream
#                  (every Nth access, hot_set_workload --trace_out; pick N
#                  prime) and each guest sends it back as DIR/traces/RUN.hpt
#                  (for `hotpage simulate`; tests/compare/calibrate.sh)
#   --start-delay-ms N  start every mechanism (the sysctls, DAMOS, hotpage
#                  attach) N ms after the workload's first phase began, as
#                  on a service that has run a while (the kernel scans a
#                  task at once when it has run longer than its scan delay,
#                  1 s, and after that delay otherwise). Times after the
#                  start still count from the phase's start: subtract N.
#   --tabulate DIR only re-tabulate DIR/results.txt (or DIR/logs/*.log)
#   --table-bin B  compare_table binary to use (tests; default: built)
#
# Exit status: 0 when every run produced a result, 1 otherwise, 2 usage.
# Timings are TCG emulation figures: compare placement, counts and times
# between mechanisms of one run, not throughput (tests/compare/README.md).
set -uo pipefail

die() { echo "run_compare.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -uo pipefail/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; exit 0; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${BUILD_WORKSPACE_DIRECTORY:-$(cd "${HERE}/../.." && pwd)}"

orig_args="$*"
quick=0
out=""
repeat=1
mechs=""
shapes="clusters interleaved"
weights=1
half_ms=""
hotpage_bin=""
with_pagefault=0
tabulate=""
table_bin=""
trace_period=""
start_delay_ms=0
while (($# > 0)); do
  case "$1" in
    --quick) quick=1 ;;
    --out) out="${2:?--out needs a directory}"; shift ;;
    --repeat) repeat="${2:?}"; shift ;;
    --mechs) mechs="${2:?}"; shift ;;
    --shapes) shapes="${2:?}"; shift ;;
    --no-weights) weights=0 ;;
    --half-ms) half_ms="${2:?}"; shift ;;
    --hotpage) hotpage_bin="${2:?}"; shift ;;
    --with-pagefault) with_pagefault=1 ;;
    --tabulate) tabulate="${2:?}"; shift ;;
    --table-bin) table_bin="${2:?}"; shift ;;
    --trace-period) trace_period="${2:?}"; shift ;;
    --start-delay-ms) start_delay_ms="${2:?}"; shift ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done
[[ "${repeat}" =~ ^[1-9][0-9]*$ ]] || die "--repeat wants a positive number"
[[ -z "${half_ms}" || "${half_ms}" =~ ^[1-9][0-9]*$ ]] || die "--half-ms wants a positive number"
[[ -z "${trace_period}" || "${trace_period}" =~ ^[1-9][0-9]*$ ]] || die "--trace-period wants a positive number"
[[ "${start_delay_ms}" =~ ^[0-9]+$ ]] || die "--start-delay-ms wants a number of milliseconds"
for s in ${shapes}; do
  [[ "${s}" == clusters || "${s}" == interleaved ]] || die "unknown shape '${s}' (clusters, interleaved)"
done

tabulate_dir() {  # DIR
  local dir="$1" files=()
  if [[ -s "${dir}/results.txt" ]]; then
    files=("${dir}/results.txt")
  else
    files=("${dir}"/logs/*.log)
  fi
  [[ -e "${files[0]}" ]] || { echo "run_compare.sh: no results in ${dir}" >&2; return 1; }
  {
    [[ -s "${dir}/header.md" ]] && cat "${dir}/header.md"
    "${table_bin}" --json "${dir}/results.json" "${files[@]}"
  } >"${dir}/report.md"
  local rc=$?
  cat "${dir}/report.md"
  return "${rc}"
}

if [[ -n "${tabulate}" ]]; then
  if [[ -z "${table_bin}" ]]; then
    (cd "${ROOT}" && bazel build //tests/compare:compare_table) || exit 1
    table_bin="${ROOT}/bazel-bin/tests/compare/compare_table"
  fi
  tabulate_dir "${tabulate}"
  exit $?
fi

cd "${ROOT}" || exit 1
start_s=$(date +%s)
targets=(//tests/workloads:hot_set_workload //tests/compare:compare_check //tests/compare:compare_table
         //tests/vm:static_key_pin)
[[ -z "${hotpage_bin}" ]] && targets+=(//tools:hotpage)
echo "run_compare.sh: building ${targets[*]}" >&2
bazel build "${targets[@]}" >&2 || { echo "run_compare.sh: build failed" >&2; exit 1; }
bin="${ROOT}/bazel-bin"
if [[ -z "${hotpage_bin}" ]]; then
  hotpage_bin="${bin}/tools/hotpage"
  hotpage_from="hotpage built from this tree at $(git -C "${ROOT}" rev-parse --short HEAD 2>/dev/null || echo '?')"
else
  hotpage_from="hotpage binary given with --hotpage ${hotpage_bin}"
fi
[[ -x "${hotpage_bin}" ]] || die "--hotpage '${hotpage_bin}' is not an executable"
[[ -z "${table_bin}" ]] && table_bin="${bin}/tests/compare/compare_table"

[[ -n "${out}" ]] || out="/tmp/hotpage-compare-$(date +%Y%m%d-%H%M%S)"
mkdir -p "${out}/logs" "${out}/guest" "${out}/bin" "${out}/traces" || exit 1
# Snapshots of the binaries (the guest finds them as /bin/<name>; a rebuild
# during the run must not change them under it).
cp "${hotpage_bin}" "${out}/bin/hotpage" || exit 1
cp "${bin}/tests/workloads/hot_set_workload" "${bin}/tests/compare/compare_check" \
  "${bin}/tests/vm/static_key_pin" "${out}/bin/" || exit 1
chmod u+w "${out}/bin/"*
hotpage_bin="${out}/bin/hotpage"

# hotpage's sources that work in a guest without a PMU.
# shellcheck source=tests/compare/compare_sources.sh
. "${ROOT}/tests/compare/compare_sources.sh"
sources=(damon)
notes=()
help_text="$(attach_help "${hotpage_bin}")"
if help_mentions "${help_text}" hintfault; then
  sources+=(hintfault)
else
  notes+=("hotpage-hintfault skipped: this hotpage's \`attach --help\` does not mention the hintfault source")
fi
if help_mentions "${help_text}" --write-faults; then
  sources+=(writefault)
else
  notes+=("hotpage-writefault skipped: this hotpage's \`attach --help\` does not mention --write-faults")
fi
if ((with_pagefault)); then
  sources+=(pagefault)
else
  notes+=("hotpage-pagefault not run: the page-fault source sees first touches only, and the workload touched every page before attach (--with-pagefault runs it)")
fi
hp_mechs=()
for s in "${sources[@]}"; do hp_mechs+=("hotpage-${s}"); done
if [[ -z "${mechs}" ]]; then
  if ((quick)); then
    mechs="tiering ${hp_mechs[*]}"
  else
    mechs="none nb1 tiering damon-paddr ${hp_mechs[*]}"
  fi
fi
weight_shapes="${shapes}"
((quick)) && weight_shapes="clusters"
[[ -n "${half_ms}" ]] || { ((quick)) && half_ms=5000 || half_ms=12000; }

: >"${out}/results.txt"
for n in "${notes[@]}"; do echo "COMPARE-NOTE ${n}" >>"${out}/results.txt"; done

# The run list: repeats outermost, so repeats of one configuration are
# minutes apart (the host's load changes; ranges show it).
runs=()
for ((rep = 1; rep <= repeat; rep++)); do
  for shape in ${shapes}; do
    for mech in ${mechs}; do runs+=("dram+cxl ${mech} ${shape} ${rep}"); done
  done
  if ((weights)); then
    for shape in ${weight_shapes}; do
      for mech in tiering ${hp_mechs[*]}; do
        [[ " ${mechs} " == *" ${mech} "* ]] || continue
        runs+=("2pkg+cxl ${mech} ${shape} ${rep}")
      done
    done
  fi
done

failed=0
i=0
for r in "${runs[@]}"; do
  read -r topo mech shape rep <<<"${r}"
  i=$((i + 1))
  name="${topo}_${mech}_${shape}_${rep}"
  case "${topo}" in
    dram+cxl) slow=1 fast=0 hp_args="" ;;
    2pkg+cxl) slow=2 fast=0-1 hp_args="--weights 0:3,1:1" ;;
  esac
  cat >"${out}/guest/${name}.sh" <<EOF
TOPO='${topo}' MECH='${mech}' SHAPE='${shape}' REP='${rep}' HALF_MS='${half_ms}'
START_DELAY_MS='${start_delay_ms}'
SLOW='${slow}' FAST='${fast}' HP_ARGS='${hp_args}' TRACE_PERIOD='${trace_period}'
. /compare_guest.sh
EOF
  t0=$(date +%s)
  # Under TCG on a loaded host the guest kernel sometimes calibrates its TSC
  # wrongly at boot and its clock then runs ~3x fast (seen: 61 s of guest
  # uptime in 20 s): every time in that guest is off, so such a run is
  # discarded and booted again (at most twice).
  trace_qemu=()
  trace_extra_s=0
  [[ -n "${trace_period}" ]] && trace_extra_s=120  # the trace's transfer
  # The guest's second UART (/dev/ttyS1) writes straight into the trace file.
  [[ -n "${trace_period}" ]] && trace_qemu=(--qemu-arg -serial --qemu-arg "file:${out}/traces/${name}.hpt")
  for attempt in 1 2 3; do
    tests/vm/run_vm.sh "${trace_qemu[@]}" --topology "${topo}" --script "${out}/guest/${name}.sh" \
      --file "${HERE}/compare_guest.sh:/compare_guest.sh" \
      --bin "${out}/bin/hotpage" --bin "${out}/bin/hot_set_workload" --bin "${out}/bin/compare_check" \
      --bin "${out}/bin/static_key_pin" --timeout $((2 * half_ms / 1000 + 120 + trace_extra_s)) >"${out}/logs/${name}.log" 2>"${out}/logs/${name}.err"
    rc=$?
    skew="$(sed -nE 's/.*boot-to-result ([0-9.]+) s \(guest uptime ([0-9.]+) s.*/\1 \2/p' "${out}/logs/${name}.err" \
      | awk '$1 > 0 && $2 / $1 > 1.3 { printf "%.1f", $2 / $1 }')"
    if [[ -z "${skew}" ]]; then
      # A guest that panicked at boot or hung (loaded host: "IO-APIC + timer
      # doesn't work" was seen) measured nothing: boot again.
      if ((rc == 124 || rc == 125)) && ! grep -a -q '^COMPARE-RESULT ' "${out}/logs/${name}.log" && ((attempt < 3)); then
        echo "run_compare.sh: ${name}: guest failed (status ${rc}), booting again (attempt $((attempt + 1)))" >&2
        mv "${out}/logs/${name}.log" "${out}/logs/${name}.failed${attempt}"
        continue
      fi
      break
    fi
    echo "run_compare.sh: ${name}: the guest clock ran ${skew}x faster than the host's; run discarded (attempt ${attempt})" >&2
    echo "COMPARE-NOTE topo=${topo} mech=${mech} shape=${shape} rep=${rep}: attempt ${attempt} discarded, guest clock ran ${skew}x fast" >>"${out}/results.txt"
    mv "${out}/logs/${name}.log" "${out}/logs/${name}.skewed${attempt}"
    rc=1
  done
  line="$(grep -a '^COMPARE-RESULT ' "${out}/logs/${name}.log" | tail -n 1)"
  if [[ -n "${trace_period}" ]]; then
    want="$(sed -n 's/^COMPARE-TRACE bytes=\([0-9]*\).*/\1/p' "${out}/logs/${name}.log" | tail -n 1)"
    got="$(wc -c <"${out}/traces/${name}.hpt" 2>/dev/null || echo 0)"
    if [[ -z "${want}" || "${want}" != "${got}" ]]; then
      echo "COMPARE-NOTE topo=${topo} mech=${mech} shape=${shape} rep=${rep}: trace incomplete (${got} of ${want:-?} bytes)" >>"${out}/results.txt"
    fi
  fi
  grep -a '^COMPARE-NOTE ' "${out}/logs/${name}.log" >>"${out}/results.txt"
  if [[ -n "${line}" ]]; then
    echo "${line}" >>"${out}/results.txt"
    t90s="$(grep -o ' t90_[01]=[-0-9.]*' <<<"${line}" | cut -d= -f2 | sed 's/^-1.00$/never/' | paste -sd/ -)"
    echo "run_compare.sh: [${i}/${#runs[@]}] ${topo} ${mech} ${shape} #${rep}: 90% after start/switch ${t90s} s ($(($(date +%s) - t0)) s)" >&2
  else
    failed=$((failed + 1))
    echo "COMPARE-NOTE topo=${topo} mech=${mech} shape=${shape} rep=${rep}: no result (run_vm.sh status ${rc}; logs/${name}.log)" >>"${out}/results.txt"
    echo "run_compare.sh: [${i}/${#runs[@]}] ${topo} ${mech} ${shape} #${rep}: NO RESULT (status ${rc}, see ${out}/logs/${name}.log)" >&2
  fi
done

total=$(($(date +%s) - start_s))
{
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') with \`bash tests/compare/run_compare.sh${orig_args:+ ${orig_args}}\`:"
  echo "${#runs[@]} guests, phases of $((half_ms / 1000)) s, $((total / 60)) min $((total % 60)) s in all; ${hotpage_from}."
  if ((start_delay_ms > 0)); then
    echo "Every mechanism started ${start_delay_ms} ms after the workload's first phase began: times after the start include those ${start_delay_ms} ms."
  fi
  echo
} >"${out}/header.md"
tabulate_dir "${out}"
echo "run_compare.sh: ${#runs[@]} runs, ${failed} without a result, ${total} s; report in ${out}/report.md" >&2
((failed == 0))
