#!/bin/bash
# `hotpage simulate` from the command line: --help, clear errors with the
# right exit status (2: bad command line, 1: bad input), the table.
set -uo pipefail
hotpage=$1
trace=$2
perf_data=$3
tmp=${TEST_TMPDIR:-/tmp}
fail=0
expect() {  # expect STATUS PATTERN -- ARGS...
  local want=$1 pattern=$2
  shift 3
  "$hotpage" simulate "$@" > "$tmp/out" 2> "$tmp/err"
  local got=$?
  if [[ $got != "$want" ]] || ! grep -qE -- "$pattern" "$tmp/out" "$tmp/err"; then
    echo "FAIL: hotpage simulate $* -> exit $got (want $want), output lacks /$pattern/:"
    cat "$tmp/out" "$tmp/err"
    fail=1
  else
    echo "ok: simulate $* -> $got"
  fi
}
expect 0 "--ratio 1:N" -- --help
expect 0 "2pkg\+cxl, 3tier" -- --help
expect 2 "give exactly one trace" --
expect 2 "expected 1:N" -- "$trace" --ratio 2:3
expect 2 "not both" -- "$trace" --ratio 1:2 --fast-capacity 1M
expect 2 "expected a size" -- "$trace" --fast-capacity lots
expect 2 "neither a preset" -- "$trace" --topology 7tier
expect 2 "unknown policy 'lru'" -- "$trace" --policy lru
expect 1 "no such file" -- "$tmp/missing.hpt"
printf 'not a trace' > "$tmp/junk.bin"
expect 1 "neither an .hpt trace" -- "$tmp/junk.bin"
head -c 3000 "$trace" > "$tmp/cut.hpt"
expect 1 "cut.hpt" -- "$tmp/cut.hpt"
expect 1 "no samples of pid 1" -- "$trace" --pid 1
expect 0 "^hotpage +[0-9.]+%" -- "$trace" --policy hotpage --quiet
expect 0 "^memtis " -- "$trace" --topology 3tier --fast-capacity 2M --quiet
# --source: what the hotpage policy sees (sim_fault_source.h); the report
# names it, and only when it is not every sample (the goldens' shape).
expect 0 "^ +--source SRC +what the hotpage policy sees" -- --help
expect 2 "--source 'pebs': one of trace" -- "$trace" --source pebs
expect 0 "^hotpage +[0-9.]+%" -- "$trace" --policy hotpage --source hintfault --quiet --report "$tmp/hf.json"
if ! grep -q '"source": "hintfault"' "$tmp/hf.json" || ! grep -q '"source_faults": ' "$tmp/hf.json"; then
  echo "FAIL: --source hintfault report:"; grep -E '"source' "$tmp/hf.json"; fail=1
else
  echo "ok: --source hintfault in the report"
fi
# --kernel-demotion: the hotpage policy's memory reclaims by demotion and,
# with hint faults, the engine leaves the room to it; the report says so.
expect 0 "^ +--kernel-demotion +the kernel demotes on reclaim" -- --help
expect 0 "^hotpage +[0-9.]+%" -- "$trace" --policy hotpage --source hintfault --kernel-demotion --quiet --report "$tmp/kd.json"
if ! grep -q '"kernel_demotion": true' "$tmp/kd.json" || ! grep -q '"reclaim_promotions": ' "$tmp/kd.json"; then
  echo "FAIL: --kernel-demotion report:"; grep -E 'kernel_demotion|reclaim' "$tmp/kd.json"; fail=1
else
  echo "ok: --kernel-demotion in the report"
fi
# --rounds: one JSON line per round of the hotpage policy (tools/round_log.h),
# as many as the report counts, each with its decision and moves.
expect 0 "^ +--rounds FILE +write each round of the hotpage policy" -- --help
expect 2 "--rounds records the hotpage policy; --policy memtis" -- "$trace" --policy memtis --rounds "$tmp/r.jsonl"
expect 0 "^hotpage +[0-9.]+%" -- "$trace" --policy hotpage --quiet --rounds "$tmp/rounds.jsonl" --report "$tmp/rounds.json"
lines=$(wc -l < "$tmp/rounds.jsonl")
want=$(grep -oE '"rounds": [0-9]+' "$tmp/rounds.json" | grep -oE '[0-9]+$')
bad=$(grep -cvE '^\{"t_s":[-0-9.e]+,"round":[0-9]+,.*"promote_skipped":\{.*\},"moves":\[.*\]\}$' "$tmp/rounds.jsonl")
moves=$(grep -oE '"(promote|demote)","(room|swap|watermark|bandwidth|locality|reclaim)"' "$tmp/rounds.jsonl" | wc -l)
if [[ -z $want || $lines != "$want" || $bad != 0 || $moves == 0 ]]; then
  echo "FAIL: --rounds: $lines lines for $want rounds, $bad malformed, $moves moves"; head -c 400 "$tmp/rounds.jsonl"; fail=1
else
  echo "ok: --rounds: $lines rounds, $moves moves"
fi
expect 1 "nonexistent" -- "$trace" --policy hotpage --quiet --rounds "$tmp/nonexistent/r.jsonl"
# An output that cannot be written fails before the replay, not after it:
# the error, and no table.
for output in --svg --report --rounds; do
  expect 1 "cannot write $tmp/nonexistent/out: .*ENOENT" -- "$trace" --quiet $output "$tmp/nonexistent/out"
  if [[ -s $tmp/out ]]; then
    echo "FAIL: $output into a missing directory ran the replay first:"; cat "$tmp/out"; fail=1
  fi
done
expect 1 "EISDIR" -- "$trace" --quiet --svg "$tmp"
[[ -s $tmp/out ]] && { echo "FAIL: --svg DIR ran the replay first"; fail=1; }
# The engine flags, as attach takes them (tools/engine_flags.h).
for flag in --promote-to --weights --package-aware --keep-interleave --huge-strict --locality; do
  expect 0 "^ +$flag" -- --help
done
expect 2 "--weights: " -- "$trace" --weights 0:x
expect 2 "--weights: node 5 is not an online memory node" -- "$trace" --weights 5:1
expect 2 "--promote-to: node 7 is not an online NUMA node" -- "$trace" --promote-to 7
expect 2 "--keep-interleave: a trace records no memory policies" -- "$trace" --keep-interleave 0.05
expect 2 "--huge-strict: .*give --promote-to" -- "$trace" --huge-strict
expect 0 "^hotpage +[0-9.]+%" -- "$trace" --policy hotpage --huge-strict --promote-to 0 --quiet
# --promote-to 1 on two DRAM nodes: every promotion goes to node 1, and the
# report says so (and which flags ran).
expect 0 "^hotpage " -- "$trace" --topology 2pkg+cxl --policy hotpage --promote-to 1 --quiet --report "$tmp/p1.json"
if ! grep -q '"planned_promotions_to_node_1": [1-9]' "$tmp/p1.json" ||
   grep -q '"planned_promotions_to_node_0"' "$tmp/p1.json" ||
   ! grep -q '"engine_flags": "--promote-to 1"' "$tmp/p1.json"; then
  echo "FAIL: --promote-to 1 report:"; grep -E 'planned_promotions|engine_flags' "$tmp/p1.json"; fail=1
else
  echo "ok: --promote-to 1 promotes to node 1 only"
fi
# Without engine flags the report has neither (the goldens' shape).
expect 0 "^hotpage " -- "$trace" --topology 2pkg+cxl --policy hotpage --quiet --report "$tmp/p0.json"
if grep -qE 'planned_promotions_to_node|engine_flags|"source|kernel_demotion' "$tmp/p0.json"; then
  echo "FAIL: a default run's report has engine-flag fields"; fail=1
fi
# perf.data (pipe mode) is read as well as .hpt.
expect 0 "^tpp " -- "$perf_data" --quiet
expect 0 "\(perf.data\)" -- "$perf_data" --quiet
exit $fail
