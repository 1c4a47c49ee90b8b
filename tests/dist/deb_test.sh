#!/bin/bash
# The Debian package from this tree: dpkg-buildpackage -b -us -uc on a copy
# of debian/ and what it installs, with HOTPAGE_PREBUILT pointing at the
# binary and man pages Bazel built for this test (debian/rules otherwise
# builds them with Bazel, which cannot run inside a Bazel test). Then the
# .deb: its fields, files and maintainer scripts, extracted by dpkg into a
# clean root, where /usr/bin/hotpage --version and `hotpage doctor`
# (`hotpage topology` while the binary has no doctor command) run, its man
# pages render, and its unit passes systemd-analyze verify.
set -u
R="$TEST_SRCDIR/$TEST_WORKSPACE"
HOTPAGE="$R/tools/hotpage"
fails=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); return 1; fi
}
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/deb.XXXXXX")
export HOME=$T
version=$(cat "$R/VERSION")

# The source tree debian/rules needs (symlinks resolved: debian/hotpage.service
# points into dist/).
S=$T/src/hotpage
mkdir -p "$S" "$T/prebuilt/man"
for f in debian dist/bash-completion dist/default dist/hotpage.service \
         dist/hotpage.service.d dist/hotpage.toml README.md VERSION; do
  mkdir -p "$S/$(dirname "$f")"
  cp -rL "$R/$f" "$S/$f"
done
cp "$HOTPAGE" "$T/prebuilt/hotpage"
cp "$R"/dist/man/*.1 "$T/prebuilt/man/"

# Speed only, for CI's budget: no -dbgsym package and gzip -1 instead of
# xz. Under ASan the binary carries 80 MB of debug information, whose
# dbgsym package alone took dh_builddeb 2 minutes to compress.
export DEB_BUILD_OPTIONS=noautodbgsym
export DPKG_DEB_COMPRESSOR_TYPE=gzip DPKG_DEB_COMPRESSOR_LEVEL=1
start=$(date +%s)
(cd "$S" && HOTPAGE_PREBUILT=$T/prebuilt dpkg-buildpackage -b -us -uc) >"$T/build.log" 2>&1
rc=$?
check "dpkg-buildpackage -b -us -uc exits 0 ($(( $(date +%s) - start )) s)" test $rc -eq 0 ||
  tail -40 "$T/build.log"
deb=$(ls "$T"/src/hotpage_"$version"_*.deb 2>/dev/null | head -1)
check "built hotpage_${version}_ARCH.deb" test -s "$deb" || { echo "$fails failed"; exit 1; }

check "Package: hotpage" test "$(dpkg-deb -f "$deb" Package)" = hotpage
check "Version: $version" test "$(dpkg-deb -f "$deb" Version)" = "$version"
depends=$(dpkg-deb -f "$deb" Depends)
check "Depends from shlibs ($depends)" grep -q 'libc6' <<<"$depends"
# Every dependency is a package this machine has (the binary runs here).
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in $(sed 's/([^)]*)//g; s/|[^,]*//g; s/,/ /g' <<<"$depends"); do
  check "dependency $p is installed here" installed "$p"
done

contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
unitdir=$(grep -oE '^/(usr/)?lib/systemd/system/hotpage.service$' <<<"$contents")
mapfile -t cmds < <("$HOTPAGE" --help | awk '/^Commands:/ { on = 1; next }
                                            on && /^  [a-z]/ { print $1 }
                                            on && /^$/ { on = 0 }')
for f in /usr/bin/hotpage /usr/share/bash-completion/completions/hotpage \
         /etc/default/hotpage /etc/hotpage/hotpage.toml \
         /usr/share/doc/hotpage/examples/privileged.conf \
         /usr/share/man/man1/hotpage.1.gz "${cmds[@]/#//usr/share/man/man1/hotpage-}"; do
  case $f in /usr/share/man/man1/hotpage-*) f=$f.1.gz ;; esac
  check "package has $f" grep -qx -- "$f" <<<"$contents"
done
check "package has the unit (dh_installsystemd: $unitdir)" test -n "$unitdir"

# Maintainer scripts: the unit is neither enabled nor started (no daemon yet).
mkdir -p "$T/control"
dpkg-deb -e "$deb" "$T/control"
check "conffiles: /etc/default/hotpage" grep -qx /etc/default/hotpage "$T/control/conffiles"
check "conffiles: /etc/hotpage/hotpage.toml" grep -qx /etc/hotpage/hotpage.toml "$T/control/conffiles"
# dh_installsystemd --no-enable wraps its enable step in "debian-installed"
# (only re-enables a unit the admin had enabled); the default enables on
# first install without that guard. --no-start leaves out deb-systemd-invoke.
check "postinst enables only a unit enabled before (debian-installed guard)" \
  grep -q "deb-systemd-helper debian-installed 'hotpage.service'" "$T/control/postinst"
check "postinst does not start the unit" bash -c "! grep -qs 'deb-systemd-invoke' '$T/control/postinst'"

# A clean root: the package's files extracted by dpkg into an empty
# directory. (Unpacking with `dpkg --root` would run the maintainer scripts
# chrooted into a root that has no shell; they are checked above.)
ROOT=$T/root
mkdir -p "$ROOT"
dpkg -x "$deb" "$ROOT" >"$T/dpkg.log" 2>&1
check "dpkg -x into a clean root exits 0" test $? -eq 0 || cat "$T/dpkg.log"
check "every file of the package is in the root" \
  diff <(grep -v '/$' <<<"$contents" | sort) <(cd "$ROOT" && find . ! -type d | sed 's|^\.||' | sort)

out=$("$ROOT/usr/bin/hotpage" --version); rc=$?
check "ROOT/usr/bin/hotpage --version: $out" test $rc -eq 0 -a "$out" = "$("$HOTPAGE" --version)"
check "the version is VERSION" grep -q "^hotpage $version " <<<"$out"
if printf '%s\n' "${cmds[@]}" | grep -qx doctor; then
  out=$("$ROOT/usr/bin/hotpage" doctor 2>&1); rc=$?
  check "ROOT/usr/bin/hotpage doctor runs (exit $rc)" test $rc -eq 0 -o $rc -eq 1
  check "doctor says something" test -n "$out"
else
  echo "note: this binary has no 'doctor' command; running 'topology' instead"
  out=$("$ROOT/usr/bin/hotpage" topology 2>&1); rc=$?
  check "ROOT/usr/bin/hotpage topology exits 0" test $rc -eq 0 || echo "$out"
  check "topology shows node 0" grep -q "node" <<<"$out"
fi

out=$(MANWIDTH=80 man --warnings -l "$ROOT/usr/share/man/man1/hotpage-attach.1.gz" 2>&1 >/dev/null)
check "packaged hotpage-attach.1.gz renders without warnings ($out)" test -z "$out"

# The packaged unit, verified in the root (with the host's system units).
for d in lib/systemd/system usr/lib/systemd/system; do
  mkdir -p "$ROOT/$d" && cp -an /usr/lib/systemd/system/. "$ROOT/$d/"
done
mkdir -p "$ROOT/bin" && cp /usr/bin/kill "$ROOT/bin/" && cp /usr/bin/kill "$ROOT/usr/bin/"
out=$(systemd-analyze verify --man=no --root="$ROOT" hotpage.service 2>&1); rc=$?
check "packaged unit verifies (rc $rc: $out)" test $rc -eq 0 -a -z "$out"

echo "$fails failed"
[ $fails -eq 0 ]
