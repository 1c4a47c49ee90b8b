#!/bin/bash
# Writes hotpage's man pages from its --help with help2man: hotpage.1 for
# the command list and hotpage-COMMAND.1 for each command, in OUT_DIR.
#
#   gen_man.sh HOTPAGE VERSION_FILE CHANGELOG OUT_DIR COMMAND...
#
# Run by //dist:man_pages. The pages are reproducible: the version comes
# from VERSION (not the stamped commit) and the date from the newest
# debian/changelog entry (SOURCE_DATE_EPOCH, which help2man honours).
# Each page's one-line NAME is the command's summary in `hotpage --help`;
# a command missing there fails the build.
set -euo pipefail
hotpage=$(realpath "$1") version=$(cat "$2") changelog=$3 out=$4
shift 4
date=$(sed -n 's/^ -- .*>  //p' "$changelog" | head -1)
SOURCE_DATE_EPOCH=$(date -u -d "$date" +%s)
export SOURCE_DATE_EPOCH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

top_help=$("$hotpage" --help)
see_also="hotpage(1)"
for c in "$@"; do see_also="$see_also, hotpage-$c(1)"; done

# The SEE ALSO section every page shares.
printf '[SEE ALSO]\n%s\n.PP\nREADME.md in /usr/share/doc/hotpage: the design, the tests and how to run\nhotpage as a service.\n' \
  "$(sed 's/, /,\n/g' <<<"$see_also" | sed 's/^\(hotpage[^(]*\)(1)/.BR \1 (1)/')" \
  >"$tmp/see_also.h2m"

help2man --no-info --no-discard-stderr --section=1 \
  --name="keep hot pages in fast memory on tiered-memory Linux machines" \
  --version-string="$version" --include="$tmp/see_also.h2m" \
  --output="$out/hotpage.1" "$hotpage"

for c in "$@"; do
  summary=$(awk -v c="$c" '$1 == c && /^  [a-z]/ { $1 = ""; sub(/^ +/, ""); print; exit }' <<<"$top_help")
  if [ -z "$summary" ]; then
    echo "gen_man.sh: 'hotpage --help' does not list '$c'" >&2
    exit 1
  fi
  # help2man names the page after the program: a wrapper per command.
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$hotpage" "$c" >"$tmp/hotpage-$c"
  chmod +x "$tmp/hotpage-$c"
  help2man --no-info --no-discard-stderr --section=1 --name="$summary" \
    --version-string="$version" --include="$tmp/see_also.h2m" \
    --output="$out/hotpage-$c.1" "$tmp/hotpage-$c"
  # The wrapper's path is in the page only as its name; make sure.
  sed -i "s|$tmp/||g" "$out/hotpage-$c.1"
done
