# Sourced by run_compare.sh: which of hotpage's sources a binary offers,
# from its `attach --help`.
#
# The help is read whole, once, and then searched: `hotpage attach --help |
# grep -q WORD` under `set -o pipefail` failed whenever grep found WORD and
# exited before hotpage had written the rest of its help (SIGPIPE), so a
# source its help names was skipped at random (a run of 6 guests printed
# "hotpage-writefault skipped" for a binary that has --write-faults).

# attach_help BIN: BIN's `attach --help` (stdout and stderr).
attach_help() {
  "$1" attach --help 2>&1
}

# help_mentions TEXT WORD: whether TEXT contains WORD (a fixed string).
help_mentions() {
  [[ "$1" == *"$2"* ]]
}
