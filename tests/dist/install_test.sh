#!/bin/bash
# tools/install.sh with the built binary and man pages (--bin, --man-dir:
# Bazel cannot run inside this test): PREFIX and DESTDIR from the
# environment and from options, exactly the promised files with their
# modes, the unit's ExecStart following PREFIX (and passing
# systemd-analyze verify in the staged root), the installed binary runs,
# existing configuration is kept, bad arguments are refused. Nothing may
# land outside DESTDIR (the sandbox's / is read-only: it would fail).
set -u
R="$TEST_SRCDIR/$TEST_WORKSPACE"
INSTALL="$R/tools/install.sh"
HOTPAGE="$R/tools/hotpage"
MAN="$R/dist/man"
fails=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); return 1; fi
}
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/install.XXXXXX")

mapfile -t cmds < <("$HOTPAGE" --help | awk '/^Commands:/ { on = 1; next }
                                            on && /^  [a-z]/ { print $1 }
                                            on && /^$/ { on = 0 }')
expected() {  # expected PREFIX: the files install.sh promises, sorted
  local p=$1 c
  {
    echo "$p/bin/hotpage"
    echo "$p/share/man/man1/hotpage.1"
    for c in "${cmds[@]}"; do echo "$p/share/man/man1/hotpage-$c.1"; done
    echo "$p/share/bash-completion/completions/hotpage"
    echo "$p/lib/systemd/system/hotpage.service"
    echo "$p/share/doc/hotpage/README.md"
    echo "$p/share/doc/hotpage/examples/privileged.conf"
    echo "/etc/default/hotpage"
    echo "/etc/hotpage/hotpage.toml"
  } | sort
}
listed() { (cd "$1" && find . -type f | sed 's|^\.||' | sort); }

# 1. PREFIX and DESTDIR from the environment.
D=$T/env
out=$(PREFIX=/usr DESTDIR=$D bash "$INSTALL" --bin "$HOTPAGE" --man-dir "$MAN" 2>"$T/err"); rc=$?
check "install (PREFIX=/usr DESTDIR) exits 0: $(cat "$T/err")" test $rc -eq 0
check "exactly the promised files" diff <(expected /usr) <(listed "$D")
check "it prints what it installed" diff <(expected /usr | sed "s|^|$D|") <(sort <<<"$out")
check "binary is 0755" test "$(stat -c %a "$D/usr/bin/hotpage")" = 755
check "pages are 0644" test "$(stat -c %a "$D/usr/share/man/man1/hotpage.1")" = 644
check "unit is 0644" test "$(stat -c %a "$D/usr/lib/systemd/system/hotpage.service")" = 644
v=$("$D/usr/bin/hotpage" --version)
check "installed binary: $v" test "$v" = "$("$HOTPAGE" --version)"
check "unit starts /usr/bin/hotpage daemon" grep -qx \
  'ExecStart=/usr/bin/hotpage daemon --config /etc/hotpage/hotpage.toml $HOTPAGE_OPTS' \
  "$D/usr/lib/systemd/system/hotpage.service"
check "completion is dist's" cmp -s "$R/dist/bash-completion/hotpage" \
  "$D/usr/share/bash-completion/completions/hotpage"
check "config example is dist's" cmp -s "$R/dist/hotpage.toml" "$D/etc/hotpage/hotpage.toml"

# The staged unit, with the staged binary, passes systemd-analyze verify.
mkdir -p "$D/usr/lib/systemd"
cp -a /usr/lib/systemd/system/. "$D/usr/lib/systemd/system/"
cp /usr/bin/kill "$D/usr/bin/"
ln -s usr/bin "$D/bin"
out=$(systemd-analyze verify --man=no --root="$D" hotpage.service 2>&1); rc=$?
check "staged unit verifies (rc $rc: $out)" test $rc -eq 0 -a -z "$out"

# 2. Options; a prefix of its own; the config is kept on a second run.
D=$T/opt
bash "$INSTALL" --prefix /opt/hotpage --destdir "$D" --bin "$HOTPAGE" --man-dir "$MAN" >/dev/null 2>"$T/err"
check "install --prefix /opt/hotpage exits 0: $(cat "$T/err")" test $? -eq 0
check "files under /opt/hotpage" diff <(expected /opt/hotpage) <(listed "$D")
check "unit follows the prefix" grep -q '^ExecStart=/opt/hotpage/bin/hotpage daemon ' \
  "$D/opt/hotpage/lib/systemd/system/hotpage.service"
echo 'kernel_tiering = "coexist"' >"$D/etc/hotpage/hotpage.toml"
bash "$INSTALL" --prefix /opt/hotpage --destdir "$D" --bin "$HOTPAGE" --man-dir "$MAN" >/dev/null 2>"$T/err"
check "second install exits 0" test $? -eq 0
check "existing config kept" grep -qx 'kernel_tiering = "coexist"' "$D/etc/hotpage/hotpage.toml"
check "new config beside it as .new" cmp -s "$R/dist/hotpage.toml" "$D/etc/hotpage/hotpage.toml.new"
check "the kept file is named" grep -q "keeping $D/etc/hotpage/hotpage.toml" "$T/err"

# 3. Refusals (exit 2, nothing written).
D=$T/bad
bash "$INSTALL" --prefix usr --destdir "$D" --bin "$HOTPAGE" --man-dir "$MAN" 2>"$T/err"
check "relative prefix refused (exit 2)" test $? -eq 2
bash "$INSTALL" --destdir "$D" --bin "$HOTPAGE" 2>"$T/err"
check "--bin without --man-dir refused (exit 2)" test $? -eq 2
bash "$INSTALL" --frobnicate 2>"$T/err"
check "unknown option refused (exit 2)" test $? -eq 2
check "nothing written by refusals" test ! -e "$D"
bash "$INSTALL" --destdir "$D" --bin "$T/nonexistent" --man-dir "$MAN" 2>"$T/err"
check "missing binary fails (exit 1)" test $? -eq 1
check "missing binary is named" grep -q "$T/nonexistent" "$T/err"

echo "$fails failed"
[ $fails -eq 0 ]
