#!/bin/bash
# Checks that C++ files match the repository's .clang-format (Google style)
# with `clang-format --dry-run --Werror`: prints each differing file's first
# differences and exits 1 if any file differs, 0 if all match.
#
#   tools/check_format.sh             every tracked .h/.cc file in the tree
#   tools/check_format.sh FILE...     only these files (e.g. the ones a
#                                     change touches:
#                                     git diff --name-only main -- '*.h' '*.cc')
#
# tests/run_tests.sh runs it over the whole tree as one counted check.
# Needs clang-format (Debian's clang-format, version 14; tools/setup.sh
# installs it). Formatting differs between clang-format versions, so the
# version is printed.
set -uo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
esac

if ! command -v clang-format >/dev/null; then
  echo "check_format.sh: clang-format not found; run tools/setup.sh" >&2
  exit 1
fi

files=()
if [ $# -gt 0 ]; then
  for f in "$@"; do
    case "$f" in
      *.h|*.cc|*.cpp|*.hpp) ;;
      *) continue ;;  # not C++: nothing to check
    esac
    [ -f "$f" ] || { echo "check_format.sh: no such file: $f" >&2; exit 1; }
    files+=("$f")
  done
else
  while IFS= read -r f; do files+=("$f"); done < <(git ls-files '*.h' '*.cc' '*.cpp' '*.hpp')
fi

echo "check_format.sh: $(clang-format --version | head -n 1), ${#files[@]} files" >&2
[ ${#files[@]} -eq 0 ] && exit 0

bad=()
for f in "${files[@]}"; do
  if ! out=$(clang-format --dry-run --Werror --style=file "$f" 2>&1); then
    bad+=("$f")
    # The first few differences of each file are enough to see the problem.
    printf '%s\n' "$out" | head -n 6 >&2
  fi
done

if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format.sh: ${#bad[@]} of ${#files[@]} files differ from .clang-format:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "check_format.sh: fix with: clang-format -i FILE..." >&2
  exit 1
fi
echo "check_format.sh: all ${#files[@]} files match .clang-format" >&2
