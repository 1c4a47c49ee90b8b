#!/bin/bash
# Boots Debian's 6.12 kernel in QEMU (TCG) with a chosen NUMA topology, runs a
# shell script inside a busybox initramfs and exits with that script's status.
#
#   run_vm.sh --topology NAME --script GUEST_SCRIPT
#             [--bin PATH]... [--file SRC:DEST]... [--timeout SEC]
#             [--kernel PATH] [--mem MB] [--append KERNEL_ARGS]
#             [--qemu-arg ARG]... [--verbose] [--keep]
#
#   --topology NAME    tests/vm/topologies/NAME.qemu (or a path to such a file):
#                      QEMU -machine/-smp/-m/-object/-numa arguments.
#   --script FILE      run as `sh /test.sh` in the guest (cwd /tmp, stdin
#                      /dev/null, root, PATH=/bin:/sbin:/usr/bin:/usr/sbin).
#   --bin PATH         copied to /bin/<basename> in the guest together with its
#                      shared-library closure from `ldd` (loader included).
#   --file SRC:DEST    copies a file or directory to the absolute guest path DEST.
#   --timeout SEC      whole-run limit (default 120).
#   --kernel PATH      default $HOTPAGE_VM_KERNEL, else /var/cache/hotpage-vm/vmlinuz
#                      (tests/vm/fetch_kernel.sh puts it there).
#   --mem MB           guest RAM for topologies that do not fix it (flat).
#   --append ARGS      extra kernel command line.
#   --qemu-arg ARG     extra QEMU argument (repeatable).
#   --verbose          full kernel console (no `quiet`), initramfs listing.
#   --keep             keep the work directory (printed on stderr).
#
# Output: everything the guest writes on its console (the script's stdout and
# stderr, and the few kernel messages `quiet loglevel=3` lets through) goes to
# this script's stdout with '\r' stripped, so callers can parse what the guest
# program prints (put your own marker lines around it). The harness's own
# messages, QEMU's stderr and the timing line go to stderr.
#
# Exit status: the guest script's status, or
#   2   usage error
#   3   environment error (no kernel, no QEMU, no static busybox, bad --bin)
#   124 timeout (no result marker before --timeout)
#   125 kernel panic / oops, or QEMU ended without the result marker
#
# Guest /init: mounts proc, sysfs, devtmpfs, tmpfs (/tmp, /run), debugfs, cgroup2;
# sets /proc/sys/kernel/numa_balancing to 0 (Debian's kernel enables NUMA
# balancing, which moves pages by itself); runs the script; prints
# "@@HOTPAGE-VM-RESULT token=<random> status=<N> uptime=<s>@@"; powers off.
set -uo pipefail

readonly PROG="run_vm.sh"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE

die() {
  local code="$1"
  shift
  echo "${PROG}: error: $*" >&2
  exit "${code}"
}
note() { echo "${PROG}: $*" >&2; }
usage() {
  sed -n '2,/^set -uo pipefail/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
  exit 2
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

topology=""
script=""
bins=()
files=()
timeout_sec=120
kernel="${HOTPAGE_VM_KERNEL:-/var/cache/hotpage-vm/vmlinuz}"
mem_mb=""
extra_append=""
extra_qemu=()
verbose=0
keep=0

while (($# > 0)); do
  opt="$1"
  val=""
  case "${opt}" in
    --*=*)
      val="${opt#*=}"
      opt="${opt%%=*}"
      ;;
    --topology | --script | --bin | --file | --timeout | --kernel | --mem | --append | --qemu-arg)
      (($# >= 2)) || die 2 "${opt} needs a value"
      val="$2"
      shift
      ;;
  esac
  shift
  case "${opt}" in
    --topology) topology="${val}" ;;
    --script) script="${val}" ;;
    --bin) bins+=("${val}") ;;
    --file) files+=("${val}") ;;
    --timeout) timeout_sec="${val}" ;;
    --kernel) kernel="${val}" ;;
    --mem) mem_mb="${val}" ;;
    --append) extra_append="${val}" ;;
    --qemu-arg) extra_qemu+=("${val}") ;;
    --verbose) verbose=1 ;;
    --keep) keep=1 ;;
    -h | --help) usage ;;
    *) die 2 "unknown argument '${opt}' (see --help)" ;;
  esac
done

[[ -n "${topology}" ]] || die 2 "--topology is required (see --help)"
[[ -n "${script}" ]] || die 2 "--script is required (see --help)"
[[ -f "${script}" ]] || die 2 "guest script '${script}' not found"
[[ "${timeout_sec}" =~ ^[0-9]+$ && "${timeout_sec}" -gt 0 ]] \
  || die 2 "--timeout must be a positive number of seconds"
[[ -z "${mem_mb}" || "${mem_mb}" =~ ^[0-9]+$ ]] || die 2 "--mem must be a number of MiB"

# --- Environment -------------------------------------------------------------

if [[ ! -s "${kernel}" ]]; then
  die 3 "guest kernel '${kernel}' not found. Run tests/vm/fetch_kernel.sh" \
        "(or set HOTPAGE_VM_KERNEL / pass --kernel)."
fi
QEMU="$(command -v qemu-system-x86_64)" \
  || die 3 "qemu-system-x86_64 not found; install the packages in tests/vm/packages.txt"
BUSYBOX=""
for candidate in /bin/busybox /usr/bin/busybox "$(command -v busybox 2>/dev/null)"; do
  [[ -n "${candidate}" && -x "${candidate}" ]] || continue
  # A static busybox makes ldd print "not a dynamic executable" and fail.
  if ! ldd "${candidate}" >/dev/null 2>&1; then
    BUSYBOX="${candidate}"
    break
  fi
done
[[ -n "${BUSYBOX}" ]] \
  || die 3 "no static busybox found; install busybox-static (tests/vm/packages.txt)"
command -v cpio >/dev/null || die 3 "cpio not found; install it (tests/vm/packages.txt)"

# Topology files: next to this script, or (when a vm_test in another package
# runs this script under Bazel) in the runfiles tree.
topo_dir="${HERE}/topologies"
if [[ ! -d "${topo_dir}" && -n "${TEST_SRCDIR:-}" ]]; then
  topo_dir="${TEST_SRCDIR}/${TEST_WORKSPACE:-hotpage}/tests/vm/topologies"
fi
case "${topology}" in
  */* | *.qemu) topo_file="${topology}" ;;
  *) topo_file="${topo_dir}/${topology}.qemu" ;;
esac
if [[ ! -f "${topo_file}" ]]; then
  # shellcheck disable=SC2012
  known="$(cd "${topo_dir}" 2>/dev/null && ls -- *.qemu 2>/dev/null | sed 's/\.qemu$//' | tr "\n" " " | sed "s/ $//")"
  die 2 "unknown topology '${topology}' (known: ${known:-none})"
fi
# Whitespace-split, '#' comments.
read -r -d '' -a topo_args < <(sed 's/#.*//' "${topo_file}"; printf '\0')
has_mem=0
for a in "${topo_args[@]}"; do [[ "${a}" == "-m" ]] && has_mem=1; done
if ((has_mem)); then
  [[ -z "${mem_mb}" ]] \
    || die 2 "topology '${topology}' fixes the guest memory (-m in ${topo_file}); drop --mem"
else
  topo_args+=(-m "${mem_mb:-512}M")
fi

# --- Initramfs ---------------------------------------------------------------

t_start="$(now)"
base_tmp="${TEST_TMPDIR:-${TMPDIR:-/tmp}}"
work="$(mktemp -d "${base_tmp}/hotpage-vm.XXXXXX")" || die 3 "mktemp in ${base_tmp} failed"
if ((keep)); then
  note "keeping work directory ${work}"
else
  trap 'rm -rf "${work}"' EXIT
fi
root="${work}/root"
mkdir -p "${root}"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc,root,lib,lib64}
cp "${BUSYBOX}" "${root}/bin/busybox"

declare -A lib_dirs=()
# Copies PATH (dereferenced) to the same absolute path in the guest.
copy_abs() {
  local src="$1"
  mkdir -p "${root}$(dirname "${src}")"
  [[ -e "${root}${src}" ]] || cp -L "${src}" "${root}${src}" \
    || die 3 "cannot copy ${src} into the initramfs"
}
# Copies the shared-library closure of BIN (as `ldd` resolves it on the host).
copy_closure() {
  local bin="$1" out line path
  if ! out="$(ldd "${bin}" 2>&1)"; then
    return 0  # static binary or script: nothing to copy
  fi
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    case "${line}" in
      *"=> not found"*) die 3 "--bin ${bin}: library not found on the host: ${line}" ;;
      *" => /"*) path="${line#* => }"; path="${path%% (*}" ;;
      /*) path="${line%% (*}" ;;
      *) continue ;;  # linux-vdso.so.1 and the like
    esac
    copy_abs "${path}"
    lib_dirs["$(dirname "${path}")"]=1
  done <<<"${out}"
}

for bin in "${bins[@]}"; do
  [[ -f "${bin}" ]] || die 3 "--bin '${bin}' not found"
  dest="${root}/bin/$(basename "${bin}")"
  [[ "$(basename "${bin}")" != "busybox" ]] || die 2 "--bin may not be named busybox"
  if ! cp -L "${bin}" "${dest}" || ! chmod 0755 "${dest}"; then
    die 3 "cannot copy ${bin}"
  fi
  copy_closure "${bin}"
done
for spec in "${files[@]}"; do
  src="${spec%%:*}"
  dest="${spec#*:}"
  [[ "${spec}" == *:* && -n "${src}" && "${dest}" == /* ]] \
    || die 2 "--file wants SRC:/ABSOLUTE/DEST, got '${spec}'"
  [[ -e "${src}" ]] || die 3 "--file source '${src}' not found"
  mkdir -p "${root}$(dirname "${dest}")"
  cp -rL "${src}" "${root}${dest}" || die 3 "cannot copy ${src} to ${dest}"
done
cp "${script}" "${root}/test.sh"

ld_path="$(printf '%s\n' "${!lib_dirs[@]}" | sort | paste -sd: -)"
token="$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
marker="@@HOTPAGE-VM-RESULT token=${token}"
init_marker="@@HOTPAGE-VM-INIT token=${token}@@"
cat >"${root}/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root TMPDIR=/tmp
export LD_LIBRARY_PATH='${ld_path}'
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
[ -w /proc/sys/kernel/numa_balancing ] && echo 0 >/proc/sys/kernel/numa_balancing
echo "${init_marker}"
# Pins the perf static keys (tests/vm/static_key_pin.cc says why).
[ -x /bin/static_key_pin ] && /bin/static_key_pin
cd /tmp
/bin/sh /test.sh </dev/null
rc=\$?
read up idle </proc/uptime
echo "${marker} status=\${rc} uptime=\${up}@@"
poweroff -f
EOF
chmod 0755 "${root}/init" "${root}/test.sh"
((verbose)) && (cd "${root}" && find . | sort) >&2
(cd "${root}" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) \
  | gzip -1 >"${work}/initrd.gz" || die 3 "building the initramfs failed"
t_initrd="$(now)"

# --- Boot --------------------------------------------------------------------

if ((verbose)); then
  console_args="loglevel=7"
else
  console_args="quiet loglevel=3"
fi
append="console=ttyS0,115200 panic=-1 oops=panic rdinit=/init ${console_args}"
append+=" mitigations=off tsc=reliable ${extra_append}"
# shellcheck disable=SC2054  # the commas are QEMU's
qemu_cmd=(
  "${QEMU}" "${topo_args[@]}"
  -accel tcg,thread=multi -cpu max,erms=off,fsrm=off
  -nodefaults -no-user-config -display none -no-reboot
  -serial stdio
  -kernel "${kernel}" -initrd "${work}/initrd.gz" -append "${append}"
  "${extra_qemu[@]}"
)
((verbose)) && note "running: ${qemu_cmd[*]}"
log="${work}/console.log"
# Under multi-threaded TCG, a 6.12 guest occasionally oopses on an int3 left
# by the kernel's own code patching (text_poke_bp: static keys flipped at
# boot or by a sysctl) while the other vCPU runs a stale translation. It was
# seen about once in 30 boots, mostly before /init, in kernel threads
# (migration/0, sched_exec), and in CI in __schedule as `hotpage attach`
# opened its perf events. /init now starts static_key_pin (when the guest
# has it; every vm_test's does), which keeps the perf keys from being
# patched at all (static_key_pin.cc), but boot-time patching and
# kernel.numa_balancing's key remain. An "Oops: int3" is the signature of
# that emulator race, not of anything the test did (a kernel bug a test
# provokes oopses on a page fault, a GPF or a BUG), and a guest run has no
# state outside the guest, so a boot whose first oops is an int3, before
# the result marker, is retried, at most three times and loudly. The first
# oops decides: the other vCPU's oops or a BUG it causes on the way to the
# panic does not hide the race. Every other first oops, and an int3 oops
# after the result, is reported.
max_attempts=4
for ((attempt = 1; ; attempt++)); do
  t_boot="$(now)"
  timeout -k 5 "${timeout_sec}" "${qemu_cmd[@]}" </dev/null | tr -d '\r' | tee "${log}"
  qemu_rc="${PIPESTATUS[0]}"
  t_end="$(now)"
  first_oops="$(grep -a -m 1 -E 'BUG: |Oops: |general protection' "${log}")"
  if ! grep -a -q -F "${marker} status=" "${log}" && [[ "${first_oops}" == *'Oops: int3'* ]] \
     && ((attempt < max_attempts)); then
    if grep -a -q -F "${init_marker}" "${log}"; then
      where="after /init started"
    else
      where="before /init"
    fi
    note "warning: guest kernel int3 oops ${where} (TCG code-patching race); retrying, attempt $((attempt + 1)) of ${max_attempts}"
    grep -a -E 'Kernel panic|Oops: |RIP: ' "${log}" | head -n 3 | sed "s/^/${PROG}:   /" >&2
    continue
  fi
  break
done

# --- Result ------------------------------------------------------------------

result="$(grep -a -o "${marker} status=[0-9]* uptime=[0-9.]*@@" "${log}" | tail -n 1)"
if [[ -n "${result}" ]]; then
  status="${result#* status=}"
  status="${status%% *}"
  uptime="${result#* uptime=}"
  uptime="${uptime%@@}"
  note "topology ${topology}: guest status ${status}; boot-to-result $(elapsed "${t_boot}" "${t_end}") s" \
       "(guest uptime ${uptime} s, initramfs $(du -k "${work}/initrd.gz" | cut -f1) KiB" \
       "built in $(elapsed "${t_start}" "${t_initrd}") s)"
  ((qemu_rc == 124)) && note "warning: the guest did not power off before the timeout"
  exit "${status}"
fi
if grep -a -q -E 'Kernel panic|BUG: |Oops: ' "${log}"; then
  note "error: KERNEL PANIC/OOPS in the guest (topology ${topology}); console above"
  grep -a -E 'Kernel panic|BUG: |Oops: ' "${log}" | head -n 5 | sed "s/^/${PROG}:   /" >&2
  exit 125
fi
if ((qemu_rc == 124 || qemu_rc == 137)); then
  note "error: TIMEOUT after ${timeout_sec} s without a result (topology ${topology})"
  exit 124
fi
note "error: QEMU exited (status ${qemu_rc}) without the result marker (topology ${topology})" \
     "after $(elapsed "${t_boot}" "${t_end}") s; console above"
exit 125
