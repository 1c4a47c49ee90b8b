#!/bin/bash
# Runs hotpage's tests with Bazel and prints one line "N passed, N failed"
# counted from Bazel's test results (the test cases in each target's
# test.xml). Exits non-zero if anything failed or did not build.
#
#   tests/run_tests.sh          everything: unit tests, then the VM tests
#   tests/run_tests.sh --unit   only the tests that need no VM
#   tests/run_tests.sh --vm     only the real-kernel VM tests (tests/vm)
#
# Extra arguments after "--" go to `bazel test` (e.g. -- --config=asan).
set -uo pipefail
cd "$(dirname "$0")/.."

mode=all
start=$(date +%s)
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --unit) mode=unit ;;
    --vm) mode=vm ;;
    --all) mode=all ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "run_tests.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

# In CI, leave no Bazel server behind.
startup=()
[ "${CI:-}" = "true" ] && startup=(--batch)

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
run() {  # run TAG_FILTER
  bazel "${startup[@]}" test //... --test_tag_filters="$1" "${extra[@]}" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  # 4: no test targets matched (e.g. no VM tests selected); not a failure.
  [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || status=1
}
case $mode in
  unit) run "-vm,-benchmark" ;;
  vm) run "vm" ;;
  all) run "-vm,-benchmark"; run "vm" ;;
esac

# Count test cases from test.xml of every target Bazel reported on.
# Targets that did not build or left no test.xml count as one failure.
passed=0 failed=0 skipped=0
testlogs=$(bazel "${startup[@]}" info bazel-testlogs "${extra[@]}" 2>/dev/null)
while read -r target result; do
  xml="$testlogs/${target#//}"
  xml="${xml/://}/test.xml"
  if [ -f "$xml" ] && [ "$result" != "NO" ] && [ "$result" != "FAILED TO BUILD" ]; then
    read -r p f s < <(awk '
      /<testcase/ { incase = 1; bad = 0; skip = 0
                    if ($0 ~ /result="skipped"/) skip = 1
                    if ($0 ~ /<testcase[^>]*\/>/) { if (skip) s++; else p++; incase = 0 }
                    next_check = 1 }
      incase && /<failure|<error/ { bad = 1 }
      incase && /<skipped/ { skip = 1 }
      incase && /<\/testcase>/ { if (bad) f++; else if (skip) s++; else p++; incase = 0 }
      END { print p + 0, f + 0, s + 0 }' "$xml")
    if [ "$result" != "PASSED" ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  else
    failed=$((failed + 1))
  fi
done < <(sed -nE 's#^(//[^ ]+)[[:space:]]+(\(cached\)[[:space:]]+)?(PASSED|FAILED|TIMEOUT|FLAKY|NO STATUS|FAILED TO BUILD|INCOMPLETE).*#\1 \3#p' "$log")

if [ $status -ne 0 ] && [ $failed -eq 0 ]; then
  echo "run_tests.sh: bazel failed before any test ran (see above)" >&2
  failed=1
fi
echo "run_tests.sh: $mode tests took $(( $(date +%s) - start )) s" >&2
line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ $status -eq 0 ] && [ $failed -eq 0 ]
