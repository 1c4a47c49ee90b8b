#!/bin/bash
# Runs the built hotpage_trace_gen: usage and errors (exit 2 for a bad
# command line, 1 for failed work, messages naming the flag or file), the
# defaults printed by --help are the real defaults (giving them explicitly
# changes no byte), and the lackey converter end to end on stdin and files.
set -u
RUNFILES="${TEST_SRCDIR:-$PWD}/${TEST_WORKSPACE:-hotpage}"
GEN="$RUNFILES/tools/trace_gen/hotpage_trace_gen"
HOTPAGE="$RUNFILES/tools/hotpage"
CORPUS="$RUNFILES/tools/trace_gen/testdata/lackey_corpus"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/gen.XXXXXX")
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
contains() { grep -qF -- "$2" <<<"$1"; }

out=$("$GEN" --help); rc=$?
check "--help: exit 0" test $rc -eq 0
for s in gups zipf scan packages stream_mix stream_grow lackey; do check "--help lists $s" contains "$out" "  $s "; done
"$GEN" >/dev/null 2>&1; check "no shape: exit 2" test $? -eq 2
out=$("$GEN" bogus 2>&1); rc=$?
check "unknown shape: exit 2, named" test $rc -eq 2 -a -n "$(grep -F "unknown shape 'bogus'" <<<"$out")"

for s in gups zipf scan packages; do
  help=$("$GEN" $s --help); rc=$?
  check "$s --help: exit 0" test $rc -eq 0
  check "$s --help: usage names the program" contains "$help" "Usage: hotpage_trace_gen $s -o FILE.hpt"
  # Every "(default X)" as an explicit flag, with a shorter duration in both
  # runs: the same bytes.
  args=()
  while read -r name value; do
    [ "$name" = duration ] && value=2
    args+=("--$name" "$value")
  done < <(sed -n 's/^  --\([a-z-]*\) [A-Z_]* .*(default \([^) ]*\)[^)]*)$/\1 \2/p' <<<"$help")
  check "$s --help: documents defaults (${#args[@]} words)" test ${#args[@]} -ge 20
  "$GEN" $s --duration 2 -o "$T/$s.a.hpt" 2>/dev/null
  "$GEN" $s "${args[@]}" -o "$T/$s.b.hpt" 2>/dev/null
  check "$s: the documented defaults are the defaults" cmp "$T/$s.a.hpt" "$T/$s.b.hpt"
done

out=$("$GEN" gups --duration 1 2>&1); rc=$?
check "missing -o: exit 2" test $rc -eq 2 -a -n "$(grep -F -- "-o FILE.hpt is required" <<<"$out")"
out=$("$GEN" gups --hot-fraction 2 -o "$T/x.hpt" 2>&1); rc=$?
check "bad --hot-fraction: exit 2, named" test $rc -eq 2 -a -n "$(grep -F -- "--hot-fraction wants" <<<"$out")"
out=$("$GEN" gups --pages many -o "$T/x.hpt" 2>&1); rc=$?
check "non-numeric --pages: exit 2, named" test $rc -eq 2 -a -n "$(grep -F -- "--pages wants" <<<"$out")"
out=$("$GEN" packages --threads 3 -o "$T/x.hpt" 2>&1); rc=$?
check "odd --threads: exit 2, explained" test $rc -eq 2 -a -n "$(grep -F "half on each package" <<<"$out")"
out=$("$GEN" scan --keys 5 -o "$T/x.hpt" 2>&1); rc=$?
check "another shape's flag: exit 2" test $rc -eq 2 -a -n "$(grep -F "unknown option '--keys'" <<<"$out")"
out=$("$GEN" gups --duration 1 -o "$T/no/such/dir/x.hpt" 2>&1); rc=$?
check "unwritable output: exit 1, names the file" test $rc -eq 1 -a -n "$(grep -F "$T/no/such/dir/x.hpt" <<<"$out")"
out=$("$GEN" gups --duration 1 --topology-json "$T/none.json" -o "$T/x.hpt" 2>&1); rc=$?
check "missing topology file: exit 1, named" test $rc -eq 1 -a -n "$(grep -F "$T/none.json" <<<"$out")"

# gups writes a trace that hotpage reads, with the header and summary.
out=$("$GEN" gups --duration 3 -o "$T/g.hpt" --truth "$T/g.truth" 2>&1); rc=$?
check "gups: exit 0" test $rc -eq 0
check "gups: summary" contains "$out" "samples (0 stores) over 3.0 s"
hdr=$("$HOTPAGE" dump --header "$T/g.hpt" | grep '^# event_config=')
check "gups: header names the full command" contains "$hdr" "(modelled, not recorded: hotpage_trace_gen gups --seed 1 --duration 3 "
check "gups: truth file" grep -q "^phase 0 1000000000000 1003000000000$" "$T/g.truth"

# lackey: a real Lackey excerpt plus a synthetic 8 MiB sweep (DRAM misses).
{
  cat "$CORPUS/sqlite_start.txt"
  for ((i = 0; i < 4096; i++)); do printf 'I  00401000,4\n L %x,8\n' $((0x50000000 + i * 2048)); done
} >"$T/lackey.txt"
out=$("$GEN" lackey --sample-period 16 -o "$T/l1.hpt" <"$T/lackey.txt" 2>&1); rc=$?
check "lackey from stdin: exit 0" test $rc -eq 0
check "lackey: names the traced command and Valgrind" contains "$out" "'sqlite3 kv.db' (Valgrind 3.19.0)"
"$GEN" lackey --sample-period 16 -o "$T/l2.hpt" "$T/lackey.txt" 2>/dev/null
check "lackey from a file: same trace" cmp "$T/l1.hpt" "$T/l2.hpt"
n=$("$HOTPAGE" dump "$T/l1.hpt" | grep -vc '^#')
check "lackey: 4096 DRAM loads / 16 = 256 samples ($n)" test "$n" -eq 256
pid=$("$HOTPAGE" dump "$T/l1.hpt" | awk '!/^#/ { print $1; exit }')
check "lackey: pid from Valgrind's log ($pid)" test "$pid" = 659
hdr=$("$HOTPAGE" dump --header "$T/l1.hpt" | grep '^# event_config=')
check "lackey: header has the provenance" contains "$hdr" "Lackey trace of 'sqlite3 kv.db': hotpage_trace_gen lackey --sample-period 16"
printf '==1== x\n L 10,8\nprogram output\n' >"$T/bad.txt"
out=$("$GEN" lackey -o "$T/bad.hpt" "$T/bad.txt" 2>&1); rc=$?
check "lackey: bad line is exit 1, names file and line" \
  test $rc -eq 1 -a -n "$(grep -F "$T/bad.txt: line 3 is not Lackey" <<<"$out")"
out=$("$GEN" lackey -o "$T/x.hpt" "$T/missing.txt" 2>&1); rc=$?
check "lackey: missing input is exit 1, named" test $rc -eq 1 -a -n "$(grep -F "open $T/missing.txt" <<<"$out")"
out=$("$GEN" lackey --l1-kib 0 -o "$T/x.hpt" - </dev/null 2>&1); rc=$?
check "lackey: bad cache size is exit 2" test $rc -eq 2

rm -rf "$T"
echo "$fails failed"
[ $fails -eq 0 ]
