#!/bin/bash
# Runs hotpage's tests with Bazel and prints one line "N passed, N failed"
# counted from Bazel's test results (the test cases in each target's
# test.xml) and from the checks below. Exits non-zero if anything failed or
# did not build.
#
#   tests/run_tests.sh           everything CI runs: the steps below in order
#   tests/run_tests.sh --checks  the same without the VM tests
#   tests/run_tests.sh --unit    only the unit tests (default build, no VM)
#   tests/run_tests.sh --vm      only the real-kernel VM tests (tests/vm)
#   tests/run_tests.sh --step S  one step of the CI run, by name
#
# The CI steps (each counted in the summary line, each timed):
#   format               tools/check_format.sh over every C++ file (1 check)
#   unit                 builds everything with gcc -Werror (--config=werror)
#                        and runs the unit tests (tags not vm, benchmark)
#   clang-thread-safety  compiles everything with clang -Wthread-safety -Werror
#                        (--config=clang-werror); compile only, no link (1 check)
#   asan-ubsan           the unit tests under ASan+UBSan (--config=asan-ubsan)
#   tsan                 the tests tagged "tsan" under TSan (--config=tsan)
#   vm                   the VM tests (tag vm), with the unit step's build
#
# A test target passes only if its test cases do and its log holds no error
# bash prints when it cannot run a line (bash_errors below): a shell test
# skips such a line, its check included, and still exits 0.
#
# Extra arguments after "--" go to every `bazel` command (e.g. -- --config=asan
# with --unit).
set -uo pipefail
cd "$(dirname "$0")/.."

mode=all
steps_all=(format unit clang-thread-safety asan-ubsan tsan vm)
steps=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --unit) mode=unit ;;
    --vm) mode=vm ;;
    --all) mode=all ;;
    --checks) mode=checks ;;
    --step)
      [ $# -ge 2 ] || { echo "run_tests.sh: --step needs a name: ${steps_all[*]}" >&2; exit 2; }
      case " ${steps_all[*]} " in
        *" $2 "*) mode=step; steps+=("$2") ;;
        *) echo "run_tests.sh: unknown step '$2' (one of: ${steps_all[*]})" >&2; exit 2 ;;
      esac
      shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "run_tests.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
case $mode in
  all) steps=("${steps_all[@]}") ;;
  checks) steps=(format unit clang-thread-safety asan-ubsan tsan) ;;
  unit) steps=(plain-unit) ;;
  vm) steps=(plain-vm) ;;
esac

# In CI, leave no Bazel server behind.
startup=()
[ "${CI:-}" = "true" ] && startup=(--batch)

start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0 failed=0 skipped=0
failed_steps=()

# Errors bash prints when it cannot run a line ("SCRIPT: line N: ..."):
# script bugs on any machine, unlike a missing command's.
bash_errors=': line [0-9]+: .*(unexpected EOF while looking for matching|syntax error|bad substitution|unbound variable|ambiguous redirect)'

# Counts the test cases of every target the last `bazel test` (its output in
# $log) reported on, from its test.xml under the testlogs of CONFIG_ARGS.
# Targets that did not build or left no test.xml count as one failure.
count_tests() {  # count_tests STEP BAZEL_RC CONFIG_ARGS...
  local step=$1 rc=$2
  shift 2
  local p0=$passed f0=$failed s0=$skipped testlogs target result xml tlog p f s
  testlogs=$(bazel "${startup[@]}" info bazel-testlogs "$@" "${extra[@]}" 2>/dev/null)
  while read -r target result; do
    xml="$testlogs/${target#//}"
    xml="${xml/://}/test.xml"
    if [ -f "$xml" ] && [ "$result" != "NO" ] && [ "$result" != "FAILED TO BUILD" ]; then
      read -r p f s < <(awk '
        /<testcase/ { incase = 1; bad = 0; skip = 0
                      if ($0 ~ /result="skipped"/) skip = 1
                      if ($0 ~ /<testcase[^>]*\/>/) { if (skip) s++; else p++; incase = 0 } }
        incase && /<failure|<error/ { bad = 1 }
        incase && /<skipped/ { skip = 1 }
        incase && /<\/testcase>/ { if (bad) f++; else if (skip) s++; else p++; incase = 0 }
        END { print p + 0, f + 0, s + 0 }' "$xml")
      if [ "$result" != "PASSED" ] && [ "$f" -eq 0 ]; then f=1; fi
      # A shell test's check that bash could not run is skipped without a
      # FAIL line, and the target passes (hotpage_daemon_test until 2d22c2a:
      # "$$(" in a double-quoted string). Bash's own errors in a target's
      # log (a guest script's too) fail it.
      tlog="${xml%/test.xml}/test.log"
      if [ -f "$tlog" ] && grep -qE "$bash_errors" "$tlog"; then
        echo "run_tests.sh: $target: bash reported errors, so a check may not have run:" >&2
        grep -E "$bash_errors" "$tlog" | head -3 >&2
        if [ "$f" -eq 0 ]; then
          f=1
          [ "$p" -gt 0 ] && p=$((p - 1))  # its one passing case is this failure
        fi
      fi
      passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    else
      failed=$((failed + 1))
    fi
  done < <(sed -nE 's#^(//[^ ]+)[[:space:]]+(\(cached\)[[:space:]]+)?(PASSED|FAILED|TIMEOUT|FLAKY|NO STATUS|FAILED TO BUILD|INCOMPLETE).*#\1 \3#p' "$log")
  # 0: all passed; 3: some tests failed (counted above); 4: no test targets
  # matched (e.g. no VM tests selected), not a failure. Anything else (1: a
  # build error) fails the step even if every test that ran passed.
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && [ "$rc" -ne 4 ]; then
    echo "run_tests.sh: $step: bazel exited $rc: the build failed (errors above)" >&2
    failed=$((failed + 1))
  elif [ "$rc" -eq 3 ] && [ $failed -eq "$f0" ]; then
    failed=$((failed + 1))
  fi
  echo "run_tests.sh: $step: $((passed - p0)) passed, $((failed - f0)) failed, $((skipped - s0)) skipped" >&2
  [ $failed -eq "$f0" ] || failed_steps+=("$step")
}

# bazel test FILTER CONFIG_ARGS...: runs the tests, then counts them.
run_bazel_tests() {  # run_bazel_tests STEP TAG_FILTER CONFIG_ARGS...
  local step=$1 filter=$2 rc
  shift 2
  : >"$log"
  bazel "${startup[@]}" test //... --keep_going --test_tag_filters="$filter" "$@" "${extra[@]}" 2>&1 |
    tee -a "$log"
  rc=${PIPESTATUS[0]}
  count_tests "$step" "$rc" "$@"
}

# A check that is one pass or one failure: check STEP COMMAND...
check() {
  local step=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "run_tests.sh: $step: passed" >&2
  else
    failed=$((failed + 1))
    failed_steps+=("$step")
    echo "run_tests.sh: $step: FAILED ($*)" >&2
  fi
}

bazel_build() { bazel "${startup[@]}" build //... --keep_going "$@" "${extra[@]}"; }

for step in "${steps[@]}"; do
  t0=$(date +%s)
  echo "run_tests.sh: === $step ===" >&2
  case $step in
    format) check format bash tools/check_format.sh ;;
    # `bazel test //...` builds every target, not only the tests: this is
    # the -Werror build of the whole tree.
    unit) run_bazel_tests unit "-vm,-benchmark" --config=werror ;;
    # Every target's objects (its compilation_outputs), not linked: the
    # warnings are the check; the gcc step links everything.
    clang-thread-safety) check clang-thread-safety bazel_build --config=clang-werror --output_groups=compilation_outputs ;;
    # Sanitized builds of the selected tests only (--build_tests_only).
    asan-ubsan) run_bazel_tests asan-ubsan "-vm,-benchmark" --config=asan-ubsan --build_tests_only ;;
    tsan) run_bazel_tests tsan "tsan,-vm,-benchmark" --config=tsan --build_tests_only ;;
    vm) run_bazel_tests vm "vm" --config=werror ;;
    plain-unit) run_bazel_tests unit "-vm,-benchmark" ;;
    plain-vm) run_bazel_tests vm "vm" ;;
  esac
  echo "run_tests.sh: $step took $(( $(date +%s) - t0 )) s" >&2
done

echo "run_tests.sh: $mode took $(( $(date +%s) - start )) s" >&2
if [ ${#failed_steps[@]} -gt 0 ]; then
  echo "run_tests.sh: failed steps: ${failed_steps[*]}" >&2
fi
line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ $failed -eq 0 ]
