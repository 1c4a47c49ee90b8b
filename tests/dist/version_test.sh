#!/bin/bash
# `hotpage --version` and `hotpage COMMAND --version` for every command the
# binary lists: one line "hotpage VERSION (git COMMIT)" on stdout, exit 0,
# with VERSION the repository's VERSION file (its one home) and COMMIT a
# short commit id (release builds) or "unknown". debian/changelog carries the
# same number. tools/workspace_status.sh, which stamps release builds, is
# run in a scratch git repository: clean, dirty and outside git.
set -u
R="$TEST_SRCDIR/$TEST_WORKSPACE"
HOTPAGE="$R/tools/hotpage"
fails=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}

version=$(cat "$R/VERSION")
check "VERSION is MAJOR.MINOR.PATCH" grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$version"
line_re="hotpage ${version//./\\.} \(git ([0-9a-f]{7,40}(-dirty)?|unknown)\)"

out=$("$HOTPAGE" --version); rc=$?
check "hotpage --version exits 0" test $rc -eq 0
check "hotpage --version prints '$out'" grep -qxE "$line_re" <<<"$out"
top=$out

# Every command the top-level help lists (the lines under "Commands:").
mapfile -t cmds < <("$HOTPAGE" --help | awk '/^Commands:/ { on = 1; next }
                                            on && /^  [a-z]/ { print $1 }
                                            on && /^$/ { on = 0 }')
check "the help lists the commands (${cmds[*]})" test ${#cmds[@]} -ge 6
for c in "${cmds[@]}"; do
  out=$("$HOTPAGE" "$c" --version 2>&1); rc=$?
  check "$c --version exits 0" test $rc -eq 0
  check "$c --version prints the same line" test "$out" = "$top"
  # After other flags too, before the command's own checks (a required
  # --pid or -o is not asked for).
  out=$("$HOTPAGE" "$c" --quiet --version 2>&1); rc=$?
  check "$c --quiet --version prints the version" test "$out" = "$top"
done
check "help mentions --version" grep -q -- "--version" <<<"$("$HOTPAGE" --help)"

# After "--" it belongs to the command hotpage would run.
out=$("$HOTPAGE" record -- /bin/true --version 2>&1); rc=$?
check "record -- CMD --version is not ours (exit $rc)" test $rc -eq 2
check "record -- CMD --version prints no version" test "$out" != "$top"

# debian/changelog's version is VERSION (a native package: no revision).
deb=$(sed -n '1s/^hotpage (\([^)]*\)).*/\1/p' "$R/debian/changelog")
check "debian/changelog is at $version (has '$deb')" test "$deb" = "$version"

# tools/workspace_status.sh in a scratch repository.
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ws.XXXXXX")
mkdir -p "$T/repo/tools" "$T/plain/tools"
cp "$R/tools/workspace_status.sh" "$T/repo/tools/"
cp "$R/tools/workspace_status.sh" "$T/plain/tools/"
g() { git -C "$T/repo" -c user.name=t -c user.email=t@example.com "$@"; }
g init -q && g add -A && g commit -qm init
head=$(g rev-parse --short=12 HEAD)
out=$(sh "$T/repo/tools/workspace_status.sh")
check "status: clean checkout gives the commit" test "$out" = "STABLE_HOTPAGE_GIT_COMMIT $head"
echo "# edit" >>"$T/repo/tools/workspace_status.sh"
out=$(sh "$T/repo/tools/workspace_status.sh")
check "status: a modified file gives -dirty" test "$out" = "STABLE_HOTPAGE_GIT_COMMIT $head-dirty"
out=$(GIT_CEILING_DIRECTORIES="$T" sh "$T/plain/tools/workspace_status.sh"); rc=$?
check "status: outside git prints nothing, exits 0" test -z "$out" -a $rc -eq 0

echo "$fails failed"
[ $fails -eq 0 ]
