#!/bin/bash
# The five checks for a machine WITH a PMU (PEBS or IBS), which the machines
# hotpage is built on lack. Each check reproduces one defect of the PEBS/IBS
# audit (issue 12) against the built hotpage and states what the FIXED
# behaviour is; the script finds out which checks apply to this machine and
# prints one line per check:
#
#   PASS N NAME: what was seen
#   FAIL N NAME: what was expected, what was seen
#   SKIP N NAME: why it does not apply here (or what is missing to run it)
#
# The checks:
#   1 hybrid (D1)   Intel hybrid (cpu_core + cpu_atom PMUs: ADL, RPL, MTL, ARL,
#                   LNL): `record --source pebs` succeeds and samples loads on
#                   both a P-core (cpu_core CPUs) and an E-core (cpu_atom CPUs).
#                   Before the fix: ENOENT at the first E-core
#                   (x86_pmu_event_init() in arch/x86/events/core.c refuses an
#                   event of one hybrid PMU on a CPU of the other).
#   2 aux (D7)      Sapphire Rapids and later (events/mem-loads-aux): a
#                   store-forward-heavy loop recorded with PEBS gives load
#                   samples only: no sample carries the aux leader's
#                   PERF_MEM_NA data source (get_data_src() in
#                   arch/x86/events/intel/ds.c gives NA to the aux event, which
#                   is LD_BLOCKS.STORE_FORWARD).
#   3 ibs-raw (D2)  AMD IBS on Linux before 6.1: `record --source ibs` gives
#                   samples with data addresses (the kernel fills ADDR only
#                   from 6.1: perf_ibs_get_offset_max(); before, hotpage must
#                   take IbsDcLinAd from PERF_SAMPLE_RAW). Before the fix: 0
#                   samples and a large `skipped` count.
#   4 exit (D5)     `record --pid A --pid B`, then A exits: hotpage stays
#                   nearly idle (under 25% of a core; it spun at 100% on the
#                   ring's EPOLLHUP, perf_poll() in kernel/events/core.c), the
#                   period stays within 64x its start (it climbed to 2^26), and
#                   B is still sampled afterwards.
#   5 nofile (D3)   128 or more CPUs with PEBS or per-task IBS, `ulimit -Sn
#                   1024`, an 8-thread target:
#                   `record --pid` succeeds (hotpage raises the soft
#                   RLIMIT_NOFILE to what its events need, or samples
#                   system-wide with its pid filter); when even the hard limit
#                   is too low, it fails with a message naming the descriptors
#                   it needs. Before the fix: EMFILE.
#
#   bash tests/pmu/check_pmu.sh [--hotpage PATH] [--seconds N] [--keep DIR]
#
# Run from the repository after `bazel build //tools:hotpage`, as root (or
# with CAP_PERFMON, or perf_event_paranoid <= 0 for IBS before 6.2, which is
# system-wide only). The workloads are two small C programs compiled here
# with ${CC:-cc}. Exit 0 when nothing FAILed (every SKIP included), 1 when a
# check failed, 2 on a bad command line.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
hotpage="${HOTPAGE:-${here}/../../bazel-bin/tools/hotpage}"
seconds=3
keep=""
while (($# > 0)); do
  case "$1" in
    --hotpage) hotpage="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "check_pmu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "${seconds}" =~ ^[1-9][0-9]?$ ]] || { echo "check_pmu.sh: --seconds wants 1-99" >&2; exit 2; }

PMU=/sys/bus/event_source/devices
work="${keep:-$(mktemp -d "${TMPDIR:-/tmp}/check_pmu.XXXXXX")}"
mkdir -p "${work}"
[[ -n "${keep}" ]] || trap 'rm -rf "${work}"' EXIT
failed=0
result() {  # result PASS|FAIL|SKIP N NAME TEXT
  echo "$1 $2 $3: $4"
  [[ "$1" == FAIL ]] && failed=1
  return 0
}

# --- what this machine has ---------------------------------------------------
release="$(uname -r)"
kmajor="${release%%.*}"
kminor="${release#*.}"; kminor="${kminor%%[!0-9]*}"
kernel_before() { ((kmajor < $1 || (kmajor == $1 && kminor < $2))); }
ncpus="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)"
has_pebs_on() { [[ -e "${PMU}/$1/events/mem-loads" ]]; }
hybrid=false
has_pebs_on cpu_core && has_pebs_on cpu_atom && hybrid=true
aux_pmu=""
for p in cpu cpu_core; do
  [[ -e "${PMU}/${p}/events/mem-loads-aux" ]] && { aux_pmu="${p}"; break; }
done
pebs=false
{ has_pebs_on cpu || has_pebs_on cpu_core; } && pebs=true
ibs=false
[[ -e "${PMU}/ibs_op/type" ]] && ibs=true
paranoid="$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo absent)"
root=false
[[ "$(id -u)" == 0 ]] && root=true
# The per-task hardware source of checks 4 and 5.
hw_source=""
if ${pebs}; then
  hw_source=pebs
elif ${ibs} && ! kernel_before 6 2; then
  hw_source=ibs
fi
no_hw_source="no per-task PEBS or IBS (IBS is per task from Linux 6.2; this is ${release})"

# What stops every check before its own conditions.
common=""
if [[ ! -x "${hotpage}" ]]; then
  common="no hotpage binary at ${hotpage} (bazel build //tools:hotpage, or --hotpage PATH)"
elif [[ "${paranoid}" == absent ]]; then
  common="no /proc/sys/kernel/perf_event_paranoid: this kernel has no perf events"
elif ! ${root} && ((paranoid > 2)); then
  common="perf_event_paranoid is ${paranoid}: run as root"
fi

# The workloads, built on first use: `loads SECONDS THREADS MODE MIB [CPU...]`
# walks a random cycle through MIB MiB per thread (loads that miss the
# caches: latencies far above the ldlat 30 threshold); MODE stfwd adds a
# byte store followed by an overlapping 8-byte load on every step (a blocked
# store forward). Threads are pinned to the given CPUs in turn.
# Not in a subshell: it sets `workload`, or `workload_error` on failure.
workload=""
workload_error=""
build_workload() {
  [[ -n "${workload}" ]] && return 0
  [[ -n "${workload_error}" ]] && return 1
  local cc="${CC:-cc}"
  command -v "${cc}" >/dev/null || { workload_error="no C compiler (${cc}) to build the workload"; return 1; }
  cat >"${work}/loads.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double seconds;
static size_t n;
static int stfwd;
static int ncpus_given;
static int cpus[64];
static volatile uint64_t sink;
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static void* run(void* arg) {
  long id = (long)arg;
  if (ncpus_given > 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[id % ncpus_given], &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
  size_t* next = malloc(n * sizeof(size_t));
  if (!next) abort();
  for (size_t i = 0; i < n; i++) next[i] = i;
  unsigned seed = 12345 + id;
  for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle */
    size_t j = rand_r(&seed) % i, t = next[i];
    next[i] = next[j];
    next[j] = t;
  }
  union { uint64_t q; uint8_t b[8]; } volatile u = {0};
  size_t p = 0;
  uint64_t acc = 0;
  double end = now() + seconds;
  while (now() < end) {
    for (int k = 0; k < 4096; k++) {
      p = next[p];
      if (stfwd) {
        u.b[k & 7] = (uint8_t)p;
        acc += u.q;
      }
    }
  }
  sink = acc + p;
  return NULL;
}
int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: loads SECONDS THREADS chase|stfwd MIB [CPU...]\n");
    return 2;
  }
  seconds = atof(argv[1]);
  int threads = atoi(argv[2]);
  stfwd = argv[3][0] == 's';
  n = (size_t)atol(argv[4]) * 1024 * 1024 / sizeof(size_t);
  for (int i = 5; i < argc && ncpus_given < 64; i++) cpus[ncpus_given++] = atoi(argv[i]);
  if (threads < 1 || threads > 256 || n < 2) return 2;
  pthread_t t[256];
  for (long i = 1; i < threads; i++) pthread_create(&t[i], NULL, run, (void*)i);
  run((void*)0);
  for (long i = 1; i < threads; i++) pthread_join(t[i], NULL);
  return 0;
}
EOF
  "${cc}" -O2 -pthread -o "${work}/loads" "${work}/loads.c" 2>"${work}/cc.err" \
    || { workload_error="the workload did not compile: $(head -c 200 "${work}/cc.err")"; return 1; }
  workload="${work}/loads"
}

# samples=N from a trace's summary line.
samples_of() { "${hotpage}" dump --stats "$1" 2>/dev/null | sed -nE '1s/.*samples=([0-9]+).*/\1/p'; }
# First CPU of a PMU's cpus file ("0-7,16" -> 0).
first_cpu() { sed -E 's/^([0-9]+).*/\1/' "${PMU}/$1/cpus"; }
cpu_in_list() {  # cpu_in_list CPU LIST
  local cpu=$1 part lo hi
  IFS=, read -ra parts <<<"$2"
  for part in "${parts[@]}"; do
    lo="${part%-*}"; hi="${part#*-}"
    ((cpu >= lo && cpu <= hi)) && return 0
  done
  return 1
}

# --- 1: hybrid ---------------------------------------------------------------
check_hybrid() {
  local name="hybrid (D1)"
  [[ -n "${common}" ]] && { result SKIP 1 "${name}" "${common}"; return; }
  ${hybrid} || { result SKIP 1 "${name}" "not a hybrid Intel CPU (needs cpu_core and cpu_atom PMUs with events/mem-loads in ${PMU})"; return; }
  build_workload || { result SKIP 1 "${name}" "${workload_error}"; return; }
  local pcpu ecpu core_list atom_list
  pcpu="$(first_cpu cpu_core)"; ecpu="$(first_cpu cpu_atom)"
  core_list="$(cat "${PMU}/cpu_core/cpus")"; atom_list="$(cat "${PMU}/cpu_atom/cpus")"
  "${hotpage}" record --source pebs --quiet -o "${work}/hybrid.hpt" \
    -- "${workload}" "${seconds}" 2 chase 256 "${pcpu}" "${ecpu}" >"${work}/hybrid.log" 2>&1
  local rc=$?
  if ((rc != 0)); then
    result FAIL 1 "${name}" "expected record --source pebs to succeed on P- and E-cores; it exited ${rc}: $(tail -n 2 "${work}/hybrid.log" | tr '\n' ' ')"
    return
  fi
  local on_core=0 on_atom=0 cpu
  while read -r cpu; do
    if cpu_in_list "${cpu}" "${core_list}"; then on_core=$((on_core + 1)); fi
    if cpu_in_list "${cpu}" "${atom_list}"; then on_atom=$((on_atom + 1)); fi
  done < <("${hotpage}" dump "${work}/hybrid.hpt" | awk '!/^#/ { print $3 }')
  if ((on_core > 0 && on_atom > 0)); then
    result PASS 1 "${name}" "${on_core} samples on cpu_core CPUs (${core_list}), ${on_atom} on cpu_atom CPUs (${atom_list})"
  else
    result FAIL 1 "${name}" "expected samples on both cpu_core (${core_list}) and cpu_atom (${atom_list}) CPUs; got ${on_core} and ${on_atom}"
  fi
}

# --- 2: the aux leader ---------------------------------------------------------
check_aux() {
  local name="aux leader (D7)"
  [[ -n "${common}" ]] && { result SKIP 2 "${name}" "${common}"; return; }
  [[ -n "${aux_pmu}" ]] || { result SKIP 2 "${name}" "no events/mem-loads-aux on cpu or cpu_core (Sapphire Rapids and later cores have it)"; return; }
  build_workload || { result SKIP 2 "${name}" "${workload_error}"; return; }
  "${hotpage}" record --source pebs --quiet -o "${work}/aux.hpt" \
    -- "${workload}" "${seconds}" 2 stfwd 64 >"${work}/aux.log" 2>&1
  local rc=$?
  if ((rc != 0)); then
    result FAIL 2 "${name}" "record --source pebs exited ${rc}: $(tail -n 2 "${work}/aux.log" | tr '\n' ' ')"
    return
  fi
  # PERF_MEM_NA (include/uapi/linux/perf_event.h): OP_NA | LVL_NA |
  # SNOOP_NA | LOCK_NA | TLB_NA = 0x1 | 0x20 | 0x80000 | 0x1000000 |
  # 0x4000000.
  local total na
  total="$(samples_of "${work}/aux.hpt")"
  na="$("${hotpage}" dump "${work}/aux.hpt" | awk '!/^#/ && $8 == "0x5080021"' | wc -l)"
  if [[ -z "${total}" || "${total}" == 0 ]]; then
    result FAIL 2 "${name}" "expected load samples from the store-forward loop; got none"
  elif ((na > 0)); then
    result FAIL 2 "${name}" "expected only load samples; ${na} of ${total} carry PERF_MEM_NA (the ${aux_pmu}/mem-loads-aux/ leader's records decoded as loads)"
  else
    result PASS 2 "${name}" "${total} load samples, none with the aux leader's PERF_MEM_NA data source"
  fi
}

# --- 3: IBS before 6.1 -------------------------------------------------------
check_ibs_raw() {
  local name="IBS before 6.1 (D2)"
  [[ -n "${common}" ]] && { result SKIP 3 "${name}" "${common}"; return; }
  ${ibs} || { result SKIP 3 "${name}" "no AMD IBS (${PMU}/ibs_op)"; return; }
  kernel_before 6 1 || { result SKIP 3 "${name}" "Linux ${release}: 6.1 and later fill the data address without PERF_SAMPLE_RAW; the check needs an older kernel (e.g. 5.15)"; return; }
  if ! ${root} && ((paranoid > 0)); then
    result SKIP 3 "${name}" "IBS before 6.2 is system-wide only: run as root (perf_event_paranoid is ${paranoid})"
    return
  fi
  build_workload || { result SKIP 3 "${name}" "${workload_error}"; return; }
  "${hotpage}" record --source ibs --quiet -o "${work}/ibs.hpt" \
    -- "${workload}" "${seconds}" 2 chase 256 >"${work}/ibs.log" 2>&1
  local rc=$?
  if ((rc != 0)); then
    result FAIL 3 "${name}" "record --source ibs exited ${rc}: $(tail -n 2 "${work}/ibs.log" | tr '\n' ' ')"
    return
  fi
  local total
  total="$(samples_of "${work}/ibs.hpt")"
  if [[ -n "${total}" ]] && ((total > 0)); then
    result PASS 3 "${name}" "${total} samples with data addresses"
  else
    result FAIL 3 "${name}" "expected samples with data addresses; got ${total:-none} ($(grep -o 'skipped [0-9]*' "${work}/ibs.log" | head -n 1))"
  fi
}

# --- 4: a target exits -------------------------------------------------------
check_exit() {
  local name="target exits (D5)"
  [[ -n "${common}" ]] && { result SKIP 4 "${name}" "${common}"; return; }
  [[ -n "${hw_source}" ]] || { result SKIP 4 "${name}" "${no_hw_source}"; return; }
  local source="${hw_source}"
  build_workload || { result SKIP 4 "${name}" "${workload_error}"; return; }
  local run=$((seconds * 4))
  "${workload}" $((run + 10)) 1 chase 64 & local a=$!
  "${workload}" $((run + 10)) 1 chase 64 & local b=$!
  "${hotpage}" record --source "${source}" --quiet --pid "${a}" --pid "${b}" \
    --duration "${run}" -o "${work}/exit.hpt" >"${work}/exit.log" 2>&1 & local rec=$!
  sleep "${seconds}"
  kill "${a}"; wait "${a}" 2>/dev/null
  # hotpage's own CPU (utime + stime, fields 14 and 15 of /proc/PID/stat;
  # its comm has no spaces) over SECONDS, one second after A's exit.
  sleep 1
  local t1 t2 hz busy
  hz="$(getconf CLK_TCK)"
  t1="$(awk '{ print $14 + $15 }' "/proc/${rec}/stat" 2>/dev/null)"
  sleep "${seconds}"
  t2="$(awk '{ print $14 + $15 }' "/proc/${rec}/stat" 2>/dev/null)"
  busy=""
  [[ -n "${t1}" && -n "${t2}" ]] && busy=$(((t2 - t1) * 100 / (hz * seconds)))
  wait "${rec}"; local rc=$?
  kill "${b}" 2>/dev/null; wait "${b}" 2>/dev/null
  if ((rc != 0)); then
    result FAIL 4 "${name}" "record exited ${rc}: $(tail -n 2 "${work}/exit.log" | tr '\n' ' ')"
    return
  fi
  # The summary: "...; period N; sampler CPU X% of one core".
  local period first_period
  period="$(sed -nE 's/.*; period ([0-9]+);.*/\1/p' "${work}/exit.log" | tail -n 1)"
  first_period="$("${hotpage}" dump --header "${work}/exit.hpt" | sed -nE 's/^# sample_period=([0-9]+).*/\1/p' | head -n 1)"
  # B's samples in the last quarter of the run (after A's exit): the trace's
  # times are CLOCK_MONOTONIC, compared with the last sample's.
  local b_late
  b_late="$("${hotpage}" dump "${work}/exit.hpt" | awk -v b="${b}" -v run="${run}" '
    !/^#/ { if ($1 == b) { t[++n] = $4 } ; if ($4 > last) last = $4 }
    END { late = 0; for (i = 1; i <= n; i++) if (t[i] > last - run * 1e9 / 4) late++; print late }')"
  local problems=()
  if [[ -z "${busy}" ]]; then
    problems+=("hotpage ended before its CPU could be measured")
  elif ((busy >= 25)); then
    problems+=("hotpage used ${busy}% of a core after A exited (expected under 25%)")
  fi
  if [[ -n "${period}" && -n "${first_period}" ]] && ((period > first_period * 64)); then
    problems+=("period ${first_period} -> ${period} (expected within 64x)")
  fi
  ((b_late > 0)) || problems+=("no samples of B (pid ${b}) after A (pid ${a}) exited")
  if ((${#problems[@]} > 0)); then
    local joined; joined="$(printf '%s; ' "${problems[@]}")"
    result FAIL 4 "${name}" "${joined%; }"
  else
    result PASS 4 "${name}" "after A exited: hotpage used ${busy}% of a core, period ${first_period} -> ${period}, ${b_late} samples of B in the last quarter"
  fi
}

# --- 5: descriptors on a many-CPU machine ------------------------------------
check_nofile() {
  local name="RLIMIT_NOFILE (D3)"
  [[ -n "${common}" ]] && { result SKIP 5 "${name}" "${common}"; return; }
  [[ -n "${hw_source}" ]] || { result SKIP 5 "${name}" "${no_hw_source}"; return; }
  ((ncpus >= 128)) || { result SKIP 5 "${name}" "${ncpus} online CPUs: the check needs 128 or more (8 threads x CPUs x events > 1024 descriptors)"; return; }
  build_workload || { result SKIP 5 "${name}" "${workload_error}"; return; }
  local hard; hard="$(ulimit -Hn)"
  "${workload}" $((seconds + 10)) 8 chase 16 & local w=$!
  sleep 1
  (ulimit -Sn 1024 && exec "${hotpage}" record --source "${hw_source}" --quiet --pid "${w}" \
     --duration "${seconds}" -o "${work}/nofile.hpt") >"${work}/nofile.log" 2>&1
  local rc=$?
  kill "${w}" 2>/dev/null; wait "${w}" 2>/dev/null
  local total; total="$(samples_of "${work}/nofile.hpt" 2>/dev/null)"
  if ((rc == 0)) && [[ -n "${total}" ]] && ((total > 0)); then
    result PASS 5 "${name}" "ulimit -Sn 1024, 8 threads on ${ncpus} CPUs: recorded ${total} samples"
  elif ((rc == 1)) && [[ "${hard}" != unlimited ]] && ((hard < 8 * ncpus)) \
       && grep -qiE 'RLIMIT_NOFILE|ulimit|descriptor' "${work}/nofile.log"; then
    result PASS 5 "${name}" "the hard limit ${hard} is below what 8 x ${ncpus} CPUs need, and hotpage says so: $(tail -n 1 "${work}/nofile.log")"
  else
    result FAIL 5 "${name}" "expected success under ulimit -Sn 1024 (hard ${hard}) with 8 threads on ${ncpus} CPUs; exit ${rc}, ${total:-no} samples: $(tail -n 2 "${work}/nofile.log" | tr '\n' ' ')"
  fi
}

pmus=""
for p in cpu cpu_core cpu_atom ibs_op; do [[ -e "${PMU}/${p}/type" ]] && pmus+="${p} "; done
echo "check_pmu.sh: Linux ${release}, ${ncpus} CPUs; core PMUs: ${pmus:-none} (perf_event_paranoid ${paranoid}); hotpage ${hotpage}"
check_hybrid
check_aux
check_ibs_raw
check_exit
check_nofile
exit "${failed}"
