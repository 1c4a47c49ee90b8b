#!/bin/bash
# Topology VM test: boots the guest once with NUMA topology NAME and checks
#  1. the kernel's sysfs view (sysfs_dump.sh) against topologies/NAME.sysfs
#     (every PATH=VALUE line listed there must appear verbatim), and
#  2. with --hotpage: `hotpage topology --json` against
#     topologies/NAME.expect.json (json_expect: the output must contain that
#     pattern), and that `hotpage topology` (the table) exits 0 and prints
#     something;
#  3. with --hotpage: `hotpage doctor` exits 0 (text and --json) and its
#     facts agree with the guest (no PMU, root, HMAT and NUMA balancing as
#     the sysfs dump shows them).
#
#   topology_vm_test.sh --topology NAME --checker PATH/json_expect
#                       [--hotpage PATH/hotpage] [--timeout SEC]
#
# Under Bazel see //tests/vm:topology_*_vm_test. Exit 0 when every check
# passes, 1 otherwise (the guest console and all mismatches are printed).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
topology=""
checker=""
hotpage=""
timeout_sec=150
while (($# > 0)); do
  case "$1" in
    --topology) topology="$2"; shift 2 ;;
    --checker) checker="$2"; shift 2 ;;
    --hotpage) hotpage="$2"; shift 2 ;;
    --timeout) timeout_sec="$2"; shift 2 ;;
    *) echo "topology_vm_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "${topology}" && -n "${checker}" ]] || {
  echo "usage: topology_vm_test.sh --topology NAME --checker JSON_EXPECT [--hotpage BIN] [--timeout SEC]" >&2
  exit 2
}
expect_sysfs="${HERE}/topologies/${topology}.sysfs"
expect_json="${HERE}/topologies/${topology}.expect.json"
for f in "${expect_sysfs}" "${checker}"; do
  [[ -f "${f}" ]] || { echo "topology_vm_test.sh: missing ${f}" >&2; exit 2; }
done
if [[ -n "${hotpage}" && ! -f "${expect_json}" ]]; then
  echo "topology_vm_test.sh: missing ${expect_json}" >&2
  exit 2
fi

work="$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/topology-vm.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
console="${work}/console.txt"

vm_args=(--topology "${topology}" --script "${HERE}/topology_guest.sh"
         --file "${HERE}/sysfs_dump.sh:/sysfs_dump.sh" --timeout "${timeout_sec}")
[[ -n "${hotpage}" ]] && vm_args+=(--bin "${hotpage}")
"${HERE}/run_vm.sh" "${vm_args[@]}" >"${console}"
vm_rc=$?

failures=0
fail() {
  echo "FAIL [${topology}] $*"
  failures=$((failures + 1))
}
# Lines strictly between @@NAME-BEGIN@@ and @@NAME-END@@.
section() {
  awk -v b="@@$1-BEGIN@@" -v e="@@$1-END@@" '$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "${console}"
}

if ((vm_rc != 0)); then
  fail "the guest run failed (run_vm.sh status ${vm_rc})"
fi

# 1. sysfs.
section SYSFS >"${work}/sysfs.txt"
if [[ ! -s "${work}/sysfs.txt" ]]; then
  fail "no sysfs dump in the guest output"
else
  checked=0
  while IFS= read -r want || [[ -n "${want}" ]]; do
    [[ -z "${want}" || "${want}" == \#* ]] && continue
    checked=$((checked + 1))
    if ! grep -Fxq -- "${want}" "${work}/sysfs.txt"; then
      key="${want%%=*}="
      got="$(awk -v k="${key}" 'index($0, k) == 1' "${work}/sysfs.txt")"
      fail "sysfs: want '${want}', got '${got:-<no such line>}'"
    fi
  done <"${expect_sysfs}"
  echo "[${topology}] checked ${checked} sysfs values against ${topology}.sysfs"
fi

# 2. hotpage topology.
if [[ -n "${hotpage}" ]]; then
  section HOTPAGE-TOPOLOGY-JSON >"${work}/topology.json"
  section HOTPAGE-TOPOLOGY-TABLE >"${work}/table.txt"
  status_line="$(grep -a -o '@@HOTPAGE-STATUS json=[0-9]* table=[0-9]*@@' "${console}" | tail -n 1)"
  json_rc="$(sed -n 's/.*json=\([0-9]*\).*/\1/p' <<<"${status_line}")"
  table_rc="$(sed -n 's/.*table=\([0-9]*\).*/\1/p' <<<"${status_line}")"
  if [[ -z "${status_line}" ]]; then
    fail "hotpage did not run in the guest (no status line)"
  else
    [[ "${json_rc}" == 0 ]] || fail "'hotpage topology --json' exited ${json_rc}"
    [[ "${table_rc}" == 0 ]] || fail "'hotpage topology' exited ${table_rc}"
    [[ -n "$(tr -d '[:space:]' <"${work}/table.txt")" ]] \
      || fail "'hotpage topology' printed nothing"
    if ! "${checker}" "${expect_json}" "${work}/topology.json"; then
      fail "'hotpage topology --json' does not match ${topology}.expect.json"
    else
      echo "[${topology}] hotpage topology --json matches ${topology}.expect.json"
    fi
  fi

  # 3. hotpage doctor: runs (a guest has no PMU, but as root the page-fault
  # source with soft-dirty write faults can run, so it exits 0), and its
  # facts agree with the guest's sysfs.
  section HOTPAGE-DOCTOR >"${work}/doctor.txt"
  section HOTPAGE-DOCTOR-JSON >"${work}/doctor.json"
  doctor_line="$(grep -a -o '@@HOTPAGE-DOCTOR-STATUS text=[0-9]* json=[0-9]*@@' "${console}" | tail -n 1)"
  if [[ -z "${doctor_line}" ]]; then
    fail "hotpage doctor did not run in the guest (no status line)"
  else
    [[ "${doctor_line}" == "@@HOTPAGE-DOCTOR-STATUS text=0 json=0@@" ]] \
      || fail "'hotpage doctor' exit statuses: ${doctor_line} (want 0 and 0)"
    want_facts=("ok  source: " "no  pmu: no hardware core PMU" "ok  cap_sys_admin: "
                "ok  pid: pid " "ok  move_pages: allowed" "ok  mpol_preferred_many: yes"
                "ok  weighted_interleave: yes" "ok  memory_tiers: " "ok  damon: "
                "ok  rlimit_nofile: ")
    # HMAT and NUMA balancing as the guest's sysfs shows them.
    if grep -Eq '/access0/initiators/read_latency=[0-9]+$' "${work}/sysfs.txt"; then
      want_facts+=("ok  hmat: access0 latency/bandwidth on nodes ")
    else
      want_facts+=("no  hmat: ")
    fi
    nb="$(sed -n 's|^/proc/sys/kernel/numa_balancing=||p' "${work}/sysfs.txt")"
    if [[ "${nb}" == 0 ]]; then
      want_facts+=("ok  numa_balancing: kernel.numa_balancing=0: off")
    else
      want_facts+=("no  numa_balancing: kernel.numa_balancing=${nb}")
    fi
    for want in "${want_facts[@]}"; do
      grep -aqF -- "${want}" "${work}/doctor.txt" \
        || fail "hotpage doctor: no line with '${want}'"
    done
    printf '{"source_ok": true}' >"${work}/doctor.expect.json"
    "${checker}" "${work}/doctor.expect.json" "${work}/doctor.json" \
      || fail "'hotpage doctor --json' is not JSON with source_ok true"
    echo "[${topology}] hotpage doctor: $(grep -c '^ok  ' "${work}/doctor.txt") facts ok, $(grep -c '^no  ' "${work}/doctor.txt") not"
  fi
else
  echo "[${topology}] no --hotpage given: hotpage checks skipped"
fi

if ((failures > 0)); then
  echo "----- guest console (${topology}) -----"
  cat "${console}"
  echo "----- ${failures} check(s) failed for topology ${topology}"
  exit 1
fi
echo "[${topology}] all checks passed"
exit 0
