#!/bin/bash
# The man pages //dist:man_pages generates: hotpage(1) and one
# hotpage-COMMAND(1) for every command `hotpage --help` lists; each renders
# with `man -l` without a warning, names its command and summary as --help
# does (lexgrog, which builds the whatis database, reads the NAME line), and
# carries every option of the command's --help. The unit's Documentation=
# pages exist.
set -u
R="$TEST_SRCDIR/$TEST_WORKSPACE"
HOTPAGE="$R/tools/hotpage"
MAN="$R/dist/man"
fails=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); return 1; fi
}

mapfile -t cmds < <("$HOTPAGE" --help | awk '/^Commands:/ { on = 1; next }
                                            on && /^  [a-z]/ { print $1 }
                                            on && /^$/ { on = 0 }')
check "the help lists the commands (${cmds[*]})" test ${#cmds[@]} -ge 6

render() {  # render PAGE: the page as text on stdout, man's warnings in $T/err
  MANWIDTH=100 LC_ALL=C.UTF-8 man --warnings -l "$1" 2>"$T/err"
}
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/man.XXXXXX")

for page in hotpage "${cmds[@]/#/hotpage-}"; do
  f="$MAN/$page.1"
  check "$page.1 exists" test -s "$f" || continue
  text=$(render "$f"); rc=$?
  check "$page.1 renders (man exit $rc)" test $rc -eq 0
  check "$page.1 renders without warnings: $(head -c 300 "$T/err")" test ! -s "$T/err"
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS "SEE ALSO"; do
    check "$page.1 has $section" grep -qx "$section" <<<"$text"
  done
  check "$page.1 title is ${page^^}(1)" grep -q "^${page^^}(1) " <<<"$text"
  whatis=$(lexgrog "$f"); rc=$?
  check "lexgrog reads $page.1's NAME ($whatis)" grep -qF "\"$page - " <<<"$whatis"
done

for c in "${cmds[@]}"; do
  f="$MAN/hotpage-$c.1"
  [ -s "$f" ] || continue
  text=$(render "$f")
  summary=$("$HOTPAGE" --help | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
  whatis=$(lexgrog "$f")
  check "hotpage-$c.1 NAME is the help's summary" grep -qF "\"hotpage-$c - $summary\"" <<<"$whatis"
  check "hotpage-$c.1 synopsis is 'hotpage $c'" grep -qE "^ *hotpage +$c( |$)" <<<"$text"
  # Every option in the command's --help is in its page.
  mapfile -t opts < <("$HOTPAGE" "$c" --help | sed -n '/^Options:/,$p' |
                      grep -oE '^ +(-[a-z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+$')
  check "hotpage $c --help has options (${#opts[@]})" test ${#opts[@]} -ge 1
  missing=()
  for o in "${opts[@]}"; do grep -qF -- "$o" <<<"$text" || missing+=("$o"); done
  check "hotpage-$c.1 documents every option (missing: ${missing[*]})" test ${#missing[@]} -eq 0
done

# A page for a command the binary does not have would be stale.
for f in "$MAN"/hotpage-*.1; do
  c=$(basename "$f" .1); c=${c#hotpage-}
  check "$c is a command of the binary" grep -qx "$c" < <(printf '%s\n' "${cmds[@]}")
done

# The systemd unit's Documentation= pages exist.
for m in $(sed -n 's/^Documentation=//p' "$R/dist/hotpage.service"); do
  p=$(sed -E 's/^man:([^()]+)\(1\)$/\1/' <<<"$m")
  check "unit Documentation $m is a page" test -s "$MAN/$p.1"
done

echo "$fails failed"
[ $fails -eq 0 ]
