#!/bin/bash
# The simulator's tpp model against the real kernel's tiering mode, on the
# same workload: a benchmark (boots guests), not a CI test.
#
#   bash tests/compare/calibrate.sh [--repeat N] [--shapes "S ..."]
#        [--trace-period N] [--half-ms N] [--out DIR] [--self [--hotpage BIN]]
#   bash tests/compare/calibrate.sh [--self] --reuse DIR   (re-tabulate DIR)
#
# 1. Runs tests/compare/run_compare.sh --mechs tiering --trace-period N: in
#    each guest (dram+cxl: 1 GiB DRAM node 0 with the CPUs, 1 GiB CPU-less
#    node 1) hot_set_workload starts on node 1 under numa_balancing=2 and
#    writes its own access stream, every Nth access, as an .hpt trace, which
#    comes back as DIR/real/traces/*.hpt; the guest's checker measures the
#    time to 90% of each phase's hot set on node 0 and pgmigrate_success.
# 2. Replays each trace in `hotpage simulate`'s models of the same kernel
#    (tools/simulate/sim_hotset: --policy tpp and tpp-ideal, the dram+cxl
#    preset with --fast-capacity 1G, every page first on node 1 as in the
#    guest) and measures the same three numbers.
# 3. Prints one markdown row per run and whether tpp agrees with the real
#    kernel: times within 1 s or 30%, pages migrated within 20% ("never" =
#    not within the phase; it agrees only with "never").
#
# --self: hotpage against itself instead. The guests run `hotpage attach`
# with the PMU-less sources (--mechs "hotpage-hintfault
# hotpage-writefault"; --hotpage BIN passes a binary on), and each trace is
# replayed in the simulator's hotpage policy (--interval-ms 500, as the
# guest's attach) twice: seeing the same source's faults (--source
# hintfault or writefault: tools/simulate/sim_fault_source.h), which is
# what must agree, and every sample (--source trace, a PMU's view) for
# contrast. Same tolerances.
#
# Defaults: --repeat 1, both shapes, --trace-period 23 (a prime: the
# 6144-page hot set and the period share no factor, so every pass samples
# other pages), --half-ms 12000. About 1.5 min per guest here (24 s of
# workload, the trace's transfer over a 110 KB/s emulated UART).
set -uo pipefail

die() { echo "calibrate.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -uo pipefail/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; exit 0; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${HERE}/../.." && pwd)"
repeat=1
shapes="clusters interleaved"
period=23
half_ms=12000
out=""
reuse=""
self=0
hotpage_bin=""
while (($# > 0)); do
  case "$1" in
    --repeat) repeat="${2:?}"; shift ;;
    --shapes) shapes="${2:?}"; shift ;;
    --trace-period) period="${2:?}"; shift ;;
    --half-ms) half_ms="${2:?}"; shift ;;
    --out) out="${2:?}"; shift ;;
    --reuse) reuse="${2:?}"; shift ;;
    --self) self=1 ;;
    --hotpage) hotpage_bin="${2:?}"; shift ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift
done

cd "${ROOT}" || exit 1
if [[ -n "${reuse}" ]]; then
  out="${reuse}"
  [[ -s "${out}/real/results.txt" ]] || die "no ${out}/real/results.txt"
else
  [[ -n "${out}" ]] || out="/tmp/hotpage-calibrate-$(date +%Y%m%d-%H%M%S)"
  mkdir -p "${out}" || exit 1
  mechs=tiering
  ((self)) && mechs="hotpage-hintfault hotpage-writefault"
  extra=()
  [[ -n "${hotpage_bin}" ]] && extra=(--hotpage "${hotpage_bin}")
  bash tests/compare/run_compare.sh --mechs "${mechs}" --no-weights --shapes "${shapes}" \
    --repeat "${repeat}" --half-ms "${half_ms}" --trace-period "${period}" "${extra[@]}" --out "${out}/real" >&2
fi
half_ms=$(sed -n 's/.*phases of \([0-9]*\) s.*/\1/p' "${out}/real/header.md" 2>/dev/null | head -n 1)
half_ms=$(( ${half_ms:-12} * 1000 ))
# The simulator, optimised and snapshotted (run_compare.sh builds the
# default configuration into the same bazel-bin).
if [[ ! -x "${out}/bin/sim_hotset" ]]; then
  bazel build -c opt //tools/simulate:sim_hotset >&2 || die "build failed"
  mkdir -p "${out}/bin" && cp "$(bazel info -c opt bazel-bin 2>/dev/null)/tools/simulate/sim_hotset" "${out}/bin/" || exit 1
fi
until_s=$(awk -v h="${half_ms}" 'BEGIN { printf "%.1f", 2 * h / 1000 - 0.3 }')

kv() { grep -o " $1=[^ ]*" <<<"$2" | head -n 1 | cut -d= -f2; }
t() { awk -v x="$1" 'BEGIN { if (x == "" || x < 0) print "never"; else printf "%.1f", x }'; }
# agree REAL SIM TOLERANCE_FRACTION ABS: both never, or |d| <= max(ABS, frac * real)
agree() {
  awk -v r="$1" -v s="$2" -v f="$3" -v a="$4" 'BEGIN {
    if (r < 0 || s < 0) { print (r < 0 && s < 0) ? "yes" : "no"; exit }
    d = r - s; if (d < 0) d = -d; lim = f * r; if (lim < a) lim = a
    print (d <= lim) ? "yes" : "no" }'
}

if ((self)); then
  echo "| guest mechanism | shape | run | real: start / switch (s) | real: migrated | simulated, same source: start / switch | migrated | agrees (start, switch, migrated) | simulated, every sample: start / switch | agrees |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  n=0; ok_src=0; ok_all=0; total=0
  while read -r line; do
    mech=$(kv mech "${line}"); shape=$(kv shape "${line}"); rep=$(kv rep "${line}")
    trace="${out}/real/traces/dram+cxl_${mech}_${shape}_${rep}.hpt"
    [[ -s "${trace}" ]] || { echo "calibrate.sh: no trace for ${mech} ${shape} #${rep}" >&2; continue; }
    r0=$(kv t90_0 "${line}"); r1=$(kv t90_1 "${line}"); rm=$(kv vm_pgmigrate_success "${line}")
    row="| ${mech} | ${shape} | ${rep} | $(t "${r0}") / $(t "${r1}") | ${rm} "
    for src in "${mech#hotpage-}" trace; do
      s="$("${out}/bin/sim_hotset" "${trace}" --policy hotpage --source "${src}" --interval-ms 500 \
        --topology dram+cxl --fast-capacity 1G --first-touch-node 1 --until-s "${until_s}")" ||
        { echo "calibrate.sh: sim_hotset failed on ${trace}" >&2; continue 2; }
      echo "${s} mech=${mech} shape=${shape} rep=${rep}" >>"${out}/sim.txt"
      s0=$(kv t90_0 " ${s}"); s1=$(kv t90_1 " ${s}"); sm=$(kv moved_pages " ${s}")
      a0=$(agree "${r0}" "${s0}" 0.3 1); a1=$(agree "${r1}" "${s1}" 0.3 1)
      am=$(awk -v r="${rm}" -v s="${sm}" 'BEGIN { d = r - s; if (d < 0) d = -d; print (d <= 0.2 * r) ? "yes" : "no" }')
      good=0
      for a in "${a0}" "${a1}" "${am}"; do [[ "${a}" == yes ]] && good=$((good + 1)); done
      if [[ "${src}" == trace ]]; then
        ok_all=$((ok_all + good)); row+="| $(t "${s0}") / $(t "${s1}") | ${a0}, ${a1}, ${am} "
      else
        ok_src=$((ok_src + good)); row+="| $(t "${s0}") / $(t "${s1}") | ${sm} | ${a0}, ${a1}, ${am} "
      fi
    done
    total=$((total + 3)); n=$((n + 1))
    echo "${row}|"
  done < <(grep -a '^COMPARE-RESULT .*mech=hotpage-' "${out}/real/results.txt")
  echo
  echo "${n} runs; within tolerance: the same source ${ok_src} of ${total} measures, every sample ${ok_all} of ${total} (times: 1 s or 30%; pages migrated: 20%). Raw lines: ${out}/sim.txt, ${out}/real/results.txt."
  exit 0
fi

echo "| shape | run | real: 90% after start / switch (s) | real: pages migrated | tpp-ideal: start / switch | tpp-ideal: migrated | tpp: start / switch | tpp: migrated | agrees with real (start, switch, migrated): tpp-ideal / tpp |"
echo "|---|---|---|---|---|---|---|---|---|"
n=0
declare -A ok=([tpp-ideal]=0 [tpp]=0) verdict=()
total=0
while read -r line; do
  shape=$(kv shape "${line}")
  rep=$(kv rep "${line}")
  trace="${out}/real/traces/dram+cxl_tiering_${shape}_${rep}.hpt"
  [[ -s "${trace}" ]] || { echo "calibrate.sh: no trace for ${shape} #${rep}" >&2; continue; }
  r0=$(kv t90_0 "${line}"); r1=$(kv t90_1 "${line}"); rm=$(kv vm_pgmigrate_success "${line}")
  row="| ${shape} | ${rep} | $(t "${r0}") / $(t "${r1}") | ${rm} "
  for p in tpp-ideal tpp; do
    s="$("${out}/bin/sim_hotset" "${trace}" --policy "${p}" --topology dram+cxl --fast-capacity 1G \
      --first-touch-node 1 --until-s "${until_s}")" || { echo "calibrate.sh: sim_hotset failed on ${trace}" >&2; continue 2; }
    echo "${s} shape=${shape} rep=${rep}" >>"${out}/sim.txt"
    s0=$(kv t90_0 " ${s}"); s1=$(kv t90_1 " ${s}"); sm=$(kv moved_pages " ${s}")
    row+="| $(t "${s0}") / $(t "${s1}") | ${sm} "
    a0=$(agree "${r0}" "${s0}" 0.3 1); a1=$(agree "${r1}" "${s1}" 0.3 1)
    am=$(awk -v r="${rm}" -v s="${sm}" 'BEGIN { d = r - s; if (d < 0) d = -d; print (d <= 0.2 * r) ? "yes" : "no" }')
    for a in "${a0}" "${a1}" "${am}"; do [[ "${a}" == yes ]] && ok[${p}]=$((ok[${p}] + 1)); done
    verdict[${p}]="${a0}, ${a1}, ${am}"
  done
  total=$((total + 3))
  echo "${row}| ${verdict[tpp-ideal]} / ${verdict[tpp]} |"
  n=$((n + 1))
done < <(grep -a '^COMPARE-RESULT .*mech=tiering' "${out}/real/results.txt")
echo
echo "${n} runs; within tolerance: tpp-ideal ${ok[tpp-ideal]} of ${total} measures, tpp ${ok[tpp]} of ${total} (times: 1 s or 30%; pages migrated: 20%). Raw lines: ${out}/sim.txt, ${out}/real/results.txt; guest consoles (with the kernel's counters every 250 ms, COMPARE-VMSTAT): ${out}/real/logs/."
