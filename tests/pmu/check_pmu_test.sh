#!/bin/bash
# check_pmu.sh runs on a machine without a PMU: five result lines, checks 1-5
# in order, each SKIP with its reason, exit 0. Twice: with the built hotpage
# (the machine's own reasons: no hybrid PMU, no aux event, ...) and with a
# missing binary (every check skipped for that reason, on any machine).
set -u
RUNFILES="${TEST_SRCDIR:-$PWD}/${TEST_WORKSPACE:-hotpage}"
SCRIPT="$RUNFILES/tests/pmu/check_pmu.sh"
HOTPAGE="$RUNFILES/tools/hotpage"
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
contains() { grep -qF -- "$2" <<<"$1"; }

results() { grep -E '^(PASS|FAIL|SKIP) [1-5] ' <<<"$1"; }

out=$(bash "$SCRIPT" --hotpage "$HOTPAGE" --seconds 1); rc=$?
echo "$out"
lines=$(results "$out")
check "five result lines" test "$(wc -l <<<"$lines")" -eq 5
check "checks 1-5 in order" test "$(awk '{ printf "%s", $2 }' <<<"$lines")" = 12345
check "every result line names its defect" test "$(grep -cE '\(D[0-9]+\): ' <<<"$lines")" -eq 5
if [ "$(grep -c '^SKIP ' <<<"$lines")" -eq 5 ]; then
  check "all skipped: exit 0" test $rc -eq 0
  check "every SKIP says why" test -z "$(grep -E '^SKIP [1-5] [^:]*: *$' <<<"$lines")"
else
  # A machine with a PMU: the checks ran; the exit status says whether any
  # failed.
  if grep -q '^FAIL ' <<<"$lines"; then want=1; else want=0; fi
  check "exit status follows the results" test $rc -eq $want
fi

out=$(bash "$SCRIPT" --hotpage /nonexistent/hotpage); rc=$?
lines=$(results "$out")
check "missing binary: five SKIP lines" test "$(grep -c '^SKIP [1-5] .*no hotpage binary at /nonexistent/hotpage' <<<"$lines")" -eq 5
check "missing binary: exit 0" test $rc -eq 0

out=$(bash "$SCRIPT" --bogus 2>&1); rc=$?
check "bad argument exits 2" test $rc -eq 2
check "bad argument is named" contains "$out" "unknown argument '--bogus'"
out=$(bash "$SCRIPT" --help); rc=$?
check "--help exits 0" test $rc -eq 0
check "--help states the fixed behaviour of check 1" contains "$out" "samples loads on"

echo "$fails failed"
[ $fails -eq 0 ]
