#!/bin/bash
# dist/bash-completion/hotpage, sourced in bash with the built binary on
# PATH: `complete -p hotpage` names its function; `hotpage at<TAB>` gives
# attach, `hotpage attach --so<TAB>` gives --source, every command
# completes, and every option of every command's --help completes after
# `hotpage COMMAND --`; values for --source, --policy, --self-memory and
# file options.
set -u
R="$TEST_SRCDIR/$TEST_WORKSPACE"
COMPLETION="$R/dist/bash-completion/hotpage"
BIN_DIR=$(mktemp -d "${TEST_TMPDIR:-/tmp}/bin.XXXXXX")
ln -s "$R/tools/hotpage" "$BIN_DIR/hotpage"
export PATH="$BIN_DIR:$PATH"
fails=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); return 1; fi
}

check "bash -n parses it" bash -n "$COMPLETION"

# complete WORD...: the candidates for the last word, one per line, from a
# fresh bash that sourced the script (as bash-completion does).
complete_words() {
  bash -c '
    source "$1" || exit 9
    shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    fn=$(complete -p hotpage | sed -n "s/.*-F \([^ ]*\) hotpage$/\1/p")
    "$fn" hotpage "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$@"
}

spec=$(bash -c 'source "$1" && complete -p hotpage' _ "$COMPLETION")
check "complete -p hotpage: $spec" grep -qE '^complete -F [_a-zA-Z]+ hotpage$' <<<"$spec"

out=$(complete_words hotpage at)
check "hotpage at -> attach (got: $out)" test "$out" = attach
out=$(complete_words hotpage attach --so)
check "hotpage attach --so -> --source (got: $out)" test "$out" = --source

mapfile -t cmds < <(hotpage --help | awk '/^Commands:/ { on = 1; next }
                                         on && /^  [a-z]/ { print $1 }
                                         on && /^$/ { on = 0 }')
check "the help lists the commands (${cmds[*]})" test ${#cmds[@]} -ge 6
all=$(complete_words hotpage "")
for c in "${cmds[@]}"; do
  check "hotpage <TAB> offers $c" grep -qx "$c" <<<"$all"
  # Every option in the command's --help, and --version.
  offered=$(complete_words hotpage "$c" --)
  mapfile -t opts < <(hotpage "$c" --help | sed -n '/^Options:/,$p' |
                      grep -oE '^ +(-[a-z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+$')
  missing=()
  for o in "${opts[@]}" --version; do grep -qxF -- "$o" <<<"$offered" || missing+=("$o"); done
  check "hotpage $c -- offers its ${#opts[@]} options (missing: ${missing[*]})" \
    test ${#opts[@]} -ge 1 -a ${#missing[@]} -eq 0
done
out=$(complete_words hotpage --ver)
check "hotpage --ver -> --version (got: $out)" test "$out" = --version

out=$(complete_words hotpage attach --source p | sort | tr '\n' ' ')
check "attach --source p -> pagefault pebs (got: $out)" test "$out" = "pagefault pebs "
out=$(complete_words hotpage record --source h)
check "record has no hintfault source (got: $out)" test -z "$out"
out=$(complete_words hotpage simulate --policy tpp | sort | tr '\n' ' ')
check "simulate --policy tpp (got: $out)" test "$out" = "tpp tpp-ideal "
out=$(complete_words hotpage daemon --self-memory "" | sort | tr '\n' ' ')
check "daemon --self-memory -> local slow (got: $out)" test "$out" = "local slow "
mkdir -p "$BIN_DIR/trace_dir" && touch "$BIN_DIR/trace_dir/a.hpt"
out=$(cd "$BIN_DIR" && complete_words hotpage dump trace_dir/)
check "dump FILE completes files (got: $out)" test "$out" = trace_dir/a.hpt
out=$(cd "$BIN_DIR" && complete_words hotpage record -o trace_dir/a)
check "record -o FILE completes files (got: $out)" test "$out" = trace_dir/a.hpt
out=$(complete_words hotpage attach --pid $$)
check "attach --pid completes pids (got: $out)" grep -qx "$$" <<<"$out"
out=$(complete_words hotpage help sim)
check "hotpage help sim -> simulate (got: $out)" test "$out" = simulate

echo "$fails failed"
[ $fails -eq 0 ]
