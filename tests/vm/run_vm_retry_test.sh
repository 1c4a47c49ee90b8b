#!/bin/bash
# run_vm.sh's retry of the TCG code-patching race, against a fake QEMU that
# prints canned consoles (no guest boots):
#   1. first oops an int3, then a BUG the panic causes: retried, passes;
#   2. first oops a page fault: reported at once (exit 125), no retry;
#   3. an int3 oops every boot: four attempts, then exit 125;
#   4. an int3 oops after the result marker: the result stands.
set -uo pipefail
RUN_VM="$(cd "$(dirname "$0")" && pwd)/run_vm.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

mkdir -p "${tmp}/bin"
echo "not a kernel" >"${tmp}/vmlinuz"
echo 'echo hello' >"${tmp}/guest.sh"
# The fake takes the run's marker from the initramfs's /init, counts its
# boots in $FAKE_COUNT and prints what $FAKE_PLAN says for that boot
# (space-separated, one word per boot): ok, int3, pf, int3-after.
cat >"${tmp}/bin/qemu-system-x86_64" <<'FAKE'
#!/bin/bash
initrd=""
while (($#)); do [[ "$1" == -initrd ]] && initrd="$2"; shift; done
marker="$(zcat "${initrd}" | cpio -i --quiet --to-stdout init \
  | sed -n 's/^echo "\(@@HOTPAGE-VM-RESULT token=[0-9a-f]*\) .*/\1/p')"
n=$(($(cat "${FAKE_COUNT}" 2>/dev/null || echo 0) + 1))
echo "${n}" >"${FAKE_COUNT}"
read -r -a plan <<<"${FAKE_PLAN}"
what="${plan[n - 1]:-${plan[-1]}}"
int3='[    3.1] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI'
case "${what}" in
  ok) echo "${marker} status=0 uptime=1.00@@" ;;
  int3) printf '%s\n%s\n%s\n' "${int3}" '[    3.2] BUG: scheduling while atomic' \
          '[    3.3] Kernel panic - not syncing: Fatal exception in interrupt' ;;
  pf) printf '%s\n%s\n%s\n' '[    3.1] BUG: unable to handle page fault for address: 0' \
        '[    3.1] Oops: 0000 [#1] PREEMPT SMP NOPTI' "${int3}" ;;
  int3-after) printf '%s\n%s\n' "${marker} status=0 uptime=1.00@@" "${int3}" ;;
esac
exit 0
FAKE
chmod +x "${tmp}/bin/qemu-system-x86_64"

run() {  # PLAN -> sets rc, boots, err
  rm -f "${tmp}/count"
  FAKE_PLAN="$1" FAKE_COUNT="${tmp}/count" PATH="${tmp}/bin:${PATH}" \
    bash "${RUN_VM}" --topology flat --script "${tmp}/guest.sh" --kernel "${tmp}/vmlinuz" \
    --timeout 30 >"${tmp}/out" 2>"${tmp}/err"
  rc=$?
  boots="$(cat "${tmp}/count" 2>/dev/null || echo 0)"
  err="$(cat "${tmp}/err")"
}

run "int3 ok"
[[ ${rc} -eq 0 && ${boots} -eq 2 && "${err}" == *"retrying, attempt 2 of 4"* ]] \
  && ok "int3 first, BUG after it: retried and passed (boots ${boots})" \
  || bad "int3 then BUG: rc ${rc}, boots ${boots}: ${err}"
run "pf ok"
[[ ${rc} -eq 125 && ${boots} -eq 1 && "${err}" == *"KERNEL PANIC/OOPS"* ]] \
  && ok "page-fault oops first: reported, not retried" \
  || bad "page fault: rc ${rc}, boots ${boots}: ${err}"
run "int3"
[[ ${rc} -eq 125 && ${boots} -eq 4 ]] \
  && ok "int3 every boot: four attempts, then exit 125" \
  || bad "int3 every boot: rc ${rc}, boots ${boots}: ${err}"
run "int3-after"
[[ ${rc} -eq 0 && ${boots} -eq 1 ]] \
  && ok "int3 after the result: the result stands" \
  || bad "int3 after the result: rc ${rc}, boots ${boots}: ${err}"

echo "run_vm_retry_test: ${fails} failed"
exit $((fails > 0))
