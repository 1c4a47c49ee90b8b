#!/bin/bash
# //tests/compare:run_compare_test: the host script's tabulate path on a
# canned guest console (no VM, no bazel inside), and its usage errors. The
# guest runs themselves are a benchmark (run_compare.sh), not a CI test.
set -uo pipefail
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

script=tests/compare/run_compare.sh
table=tests/compare/compare_table
dir="${TEST_TMPDIR:-$(mktemp -d)}/cmp"
mkdir -p "${dir}/logs"
cp tests/compare/testdata/canned_console.txt "${dir}/logs/x.log"

out="$(bash "${script}" --tabulate "${dir}" --table-bin "${table}" 2>&1)"
rc=$?
[ $rc -eq 0 ] && ok "tabulate exits 0" || bad "tabulate exit status $rc: ${out}"
grep -q '^| tiering | interleaved | 2 |' <<<"${out}" && ok "table row for tiering/interleaved" \
  || bad "no tiering/interleaved row in: ${out}"
grep -q '^### Goal check' <<<"${out}" && ok "goal check printed" || bad "no goal check"
[ -s "${dir}/report.md" ] && ok "report.md written" || bad "no report.md"
grep -q '"runs": \[' "${dir}/results.json" && ok "results.json written" || bad "no results.json"

mkdir -p "${dir}/empty/logs"
bash "${script}" --tabulate "${dir}/empty" --table-bin "${table}" >/dev/null 2>&1
rc=$?
[ $rc -ne 0 ] && ok "no results: exit $rc" || bad "no results: exit 0"

for args in "--repeat 0" "--shapes bogus" "--half-ms x" "--start-delay-ms -5" "--bogus"; do
  # shellcheck disable=SC2086
  msg="$(bash "${script}" ${args} 2>&1 >/dev/null)"
  rc=$?
  [ $rc -eq 2 ] && [ -n "${msg}" ] && ok "usage error for '${args}': ${msg}" || bad "'${args}': exit $rc"
done
bash "${script}" --help | grep -q -- '--quick' && ok "--help lists --quick" || bad "--help"
bash "${script}" --help | grep -q -- '--start-delay-ms' && ok "--help lists --start-delay-ms" || bad "--help: --start-delay-ms"
"${table}" >/dev/null 2>&1
[ $? -eq 2 ] && ok "compare_table without files: exit 2" || bad "compare_table without files"

# Source detection (compare_sources.sh) on a fake hotpage whose help names
# hintfault first and --write-faults after 256 KiB: `| grep -q hintfault`
# under pipefail failed here (grep exits at the first line, the writer takes
# SIGPIPE), and the writer's later lines are what the second search needs.
. tests/compare/compare_sources.sh
fake="${dir}/fake_hotpage"
cat >"${fake}" <<'FAKE'
#!/bin/bash
echo "--source hintfault (with --allow-sysctl-changes) ..."
head -c 262144 /dev/zero | tr '\0' 'x'; echo
echo "--write-faults makes the next write to every page fault once"
FAKE
chmod +x "${fake}"
help_text="$(attach_help "${fake}")"
help_mentions "${help_text}" hintfault && ok "hintfault found" || bad "hintfault not found"
help_mentions "${help_text}" --write-faults && ok "--write-faults found after 256 KiB" \
  || bad "--write-faults not found"
help_mentions "${help_text}" --no-such-flag && bad "found a flag the help does not name" \
  || ok "a flag the help does not name is not found"
for i in 1 2 3 4 5; do
  help_mentions "$(attach_help "${fake}")" hintfault || { bad "hintfault missed on try ${i}"; break; }
done

echo "run_compare_test: ${fails} failed"
exit "${fails}"
