#!/bin/bash
# The hotpage binary's shared libraries: abseil is linked in statically
# (third_party/BUILD.bazel), so the dynamic loader maps 7 objects at exec,
# not 41. Measured under TCG (tests/vm guest, 10 execs of `hotpage
# --version`, two rounds): 295-306 ms an exec with the 34 libabsl_*.so,
# 130-170 ms without (tests/compare/README.md, "A fifth run": the
# guest comparison's ratio to the kernel did not move beyond its noise).
set -u
HOTPAGE="$(dirname "$0")/hotpage"
[ -x "$HOTPAGE" ] || HOTPAGE="$TEST_SRCDIR/$TEST_WORKSPACE/tools/hotpage"
fails=0
needed=$(readelf -d "$HOTPAGE" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(tr '\n' ' ' <<<"$needed")"
if grep -q '^libabsl' <<<"$needed"; then
  echo "FAIL hotpage needs abseil's shared libraries: $(grep -c '^libabsl' <<<"$needed")"
  fails=$((fails + 1))
else
  echo "ok   no libabsl_*.so"
fi
# It still runs (the static archives resolved every symbol).
if out=$("$HOTPAGE" --version) && grep -q '^hotpage ' <<<"$out"; then
  echo "ok   --version: $out"
else
  echo "FAIL --version: $out"
  fails=$((fails + 1))
fi
exit $fails
