#!/bin/bash
# End-to-end checks of `hotpage dump` with the built binary: golden output
# for sampler/trace/testdata/small.hpt (12 samples in 3 blocks, per-CPU counters;
# written by //sampler/trace:make_test_traces), --stats, --header, stdin, and
# damaged files: the intact prefix on stdout, the error naming the file and
# the offset on stderr, exit status 1.
set -u
HOTPAGE="$(dirname "$0")/hotpage"
[ -x "$HOTPAGE" ] || HOTPAGE="$TEST_SRCDIR/$TEST_WORKSPACE/tools/hotpage"
DATA="$(dirname "$0")/../sampler/trace/testdata"
[ -d "$DATA" ] || DATA="$TEST_SRCDIR/$TEST_WORKSPACE/sampler/trace/testdata"
fails=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
contains() { grep -qF -- "$2" <<<"$1"; }
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/dump.XXXXXX")
trap 'rm -rf "$T"' EXIT

out=$("$HOTPAGE" --help); rc=$?
check "hotpage --help lists dump" contains "$out" "dump"

out=$("$HOTPAGE" dump --help); rc=$?
check "dump --help exits 0" test $rc -eq 0
check "dump --help documents --stats" contains "$out" "--stats"
check "dump --help documents the columns" contains "$out" "pid tid cpu time_ns vaddr paddr weight data_src"

out=$("$HOTPAGE" dump 2>&1); rc=$?
check "no file is a usage error" test $rc -eq 2
check "no file is explained" contains "$out" "missing the trace file"
out=$("$HOTPAGE" dump a.hpt b.hpt 2>&1); rc=$?
check "two files is a usage error" test $rc -eq 2
check "second file is named" contains "$out" "unexpected argument 'b.hpt'"
out=$("$HOTPAGE" dump --bogus "$DATA/small.hpt" 2>&1); rc=$?
check "unknown flag exits 2" test $rc -eq 2

# Golden outputs: exact bytes.
"$HOTPAGE" dump "$DATA/small.hpt" >"$T/out" 2>"$T/err"; rc=$?
check "small.hpt exits 0" test $rc -eq 0
check "small.hpt matches small.dump.golden" cmp -s "$T/out" "$DATA/small.dump.golden"
[ -s "$T/err" ] && { echo "unexpected stderr:"; cat "$T/err"; fails=$((fails + 1)); }
diff "$T/out" "$DATA/small.dump.golden" | head -20

"$HOTPAGE" dump --stats "$DATA/small.hpt" >"$T/out"; rc=$?
check "--stats exits 0" test $rc -eq 0
check "--stats matches small.stats.golden" cmp -s "$T/out" "$DATA/small.stats.golden"
diff "$T/out" "$DATA/small.stats.golden" | head -20

"$HOTPAGE" dump - <"$DATA/small.hpt" >"$T/out"; rc=$?
check "stdin (-) exits 0" test $rc -eq 0
check "stdin output matches the golden" cmp -s "$T/out" "$DATA/small.dump.golden"

out=$("$HOTPAGE" dump --header --stats "$DATA/small.hpt"); rc=$?
check "--header exits 0" test $rc -eq 0
check "--header shows the version" contains "$out" "# version=1.0"
check "--header shows the source" contains "$out" "# source=pebs-load"
check "--header shows the event" contains "$out" "# event_config=cpu/mem-loads,ldlat=30/P"
check "--header shows the topology" contains "$out" '#       {"id": 0, "cpus": [0, 1, 2, 3]},'
check "--header keeps the summary" contains "$out" "# samples=12 lost=5 throttled=1 unthrottled=1 skipped=3"

# Every line is a sample with 8 columns or starts with '#'.
bad=$("$HOTPAGE" dump "$DATA/small.hpt" | awk '!/^#/ && NF != 8' | wc -l)
check "sample lines have 8 columns" test "$bad" -eq 0

# Cut inside the fourth block (at offset 559; samples blocks of 5 and 2,
# then a stats block come before it): 7 samples and the counters survive.
head -c 600 "$DATA/small.hpt" >"$T/cut.hpt"
"$HOTPAGE" dump "$T/cut.hpt" >"$T/out" 2>"$T/err"; rc=$?
check "truncated file exits 1" test $rc -eq 1
check "truncated: the 7 intact samples are printed" \
  cmp -s <(grep -v '^#' "$T/out") <(head -7 "$DATA/small.dump.golden")
check "truncated: summary of the prefix with its counters" \
  contains "$(cat "$T/out")" "# samples=7 lost=3 throttled=0 unthrottled=0 skipped=0"
check "truncated: error names file, block, offset" \
  contains "$(cat "$T/err")" "hotpage dump: $T/cut.hpt: truncated samples block 3 at offset 559 (its payload is "
check "truncated: error says what is missing and what is intact" \
  contains "$(cat "$T/err")" " bytes, only 17 remain); the 7 samples before it are intact"
check "truncated: stdout has no error text" test "$(grep -c truncated "$T/out")" -eq 0

# One flipped byte in the second samples block (offset 421).
cp "$DATA/small.hpt" "$T/flip.hpt"
printf '\xff' | dd of="$T/flip.hpt" bs=1 seek=460 conv=notrunc status=none
"$HOTPAGE" dump "$T/flip.hpt" >"$T/out" 2>"$T/err"; rc=$?
check "corrupt file exits 1" test $rc -eq 1
check "corrupt: the 5 intact samples are printed" \
  cmp -s <(grep -v '^#' "$T/out") <(head -5 "$DATA/small.dump.golden")
check "corrupt: checksum error names block and offset" \
  contains "$(cat "$T/err")" "$T/flip.hpt: bad checksum in samples block 1 at offset 421 (stored crc32c"

"$HOTPAGE" dump --stats "$T/flip.hpt" >"$T/out" 2>"$T/err"; rc=$?
check "corrupt --stats exits 1" test $rc -eq 1
check "corrupt --stats counts the prefix" contains "$(cat "$T/out")" "# samples=5 "

out=$("$HOTPAGE" dump "$T/missing.hpt" 2>&1); rc=$?
check "missing file exits 1" test $rc -eq 1
check "missing file is named" contains "$out" "open $T/missing.hpt: ENOENT"

echo "not a trace at all" >"$T/text.hpt"
out=$("$HOTPAGE" dump "$T/text.hpt" 2>&1); rc=$?
check "text file exits 1" test $rc -eq 1
check "text file is explained" contains "$out" "$T/text.hpt: not an hpt trace"

# A changed version byte without a resealed header checksum is damage (the
# "newer version" message itself is checked in sampler/trace/trace_test.cc).
cp "$DATA/small.hpt" "$T/hdr.hpt"
printf '\x02' | dd of="$T/hdr.hpt" bs=1 seek=8 conv=notrunc status=none
out=$("$HOTPAGE" dump "$T/hdr.hpt" 2>&1); rc=$?
check "damaged header exits 1" test $rc -eq 1
check "damaged header is explained" contains "$out" "bad header checksum"

echo "$fails failed"
[ $fails -eq 0 ]
