#!/bin/bash
# Installs hotpage from this tree: the binary, its man pages, the bash
# completion, the systemd unit (not enabled), /etc/default/hotpage and the
# configuration example. For Debian, build the package instead
# (dpkg-buildpackage -b -us -uc; see debian/rules).
#
#   tools/install.sh [--prefix DIR] [--destdir DIR] [--sysconfdir DIR]
#                    [--bin FILE --man-dir DIR]
#
#   --prefix DIR      where it goes (default /usr/local; $PREFIX too)
#   --destdir DIR     stage below DIR, for packaging ($DESTDIR too)
#   --sysconfdir DIR  /etc/default/hotpage and /etc/hotpage/ (default /etc:
#                     the unit reads them there)
#   --bin FILE, --man-dir DIR
#                     install this binary and these pages instead of building
#                     them (a release build: bazel build --config=release
#                     //tools:hotpage //dist:man_pages)
#
# Files:  PREFIX/bin/hotpage, PREFIX/share/man/man1/hotpage*.1,
#         PREFIX/share/bash-completion/completions/hotpage,
#         PREFIX/lib/systemd/system/hotpage.service (ExecStart made
#         PREFIX/bin/hotpage), PREFIX/share/doc/hotpage/{README.md,
#         examples/privileged.conf}, SYSCONFDIR/default/hotpage and
#         SYSCONFDIR/hotpage/hotpage.toml (existing ones are kept; the new
#         one is written beside them as *.new).
# Nothing is enabled or started: `hotpage daemon` is not written yet.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
sysconfdir=/etc
bin="" man_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix|--destdir|--sysconfdir|--bin|--man-dir)
      [ $# -ge 2 ] || { echo "install.sh: $1 needs a value (try --help)" >&2; exit 2; }
      case "$1" in
        --prefix) prefix=$2 ;;
        --destdir) destdir=$2 ;;
        --sysconfdir) sysconfdir=$2 ;;
        --bin) bin=$2 ;;
        --man-dir) man_dir=$2 ;;
      esac
      shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
for d in "$prefix" "$sysconfdir"; do
  case "$d" in
    /*) ;;
    *) echo "install.sh: '$d' is not an absolute path" >&2; exit 2 ;;
  esac
done
if { [ -n "$bin" ] && [ -z "$man_dir" ]; } || { [ -z "$bin" ] && [ -n "$man_dir" ]; }; then
  echo "install.sh: --bin and --man-dir go together" >&2; exit 2
fi

if [ -z "$bin" ]; then
  echo "install.sh: building (bazel build --config=release)" >&2
  bazel build --config=release //tools:hotpage //dist:man_pages >&2
  out=$(bazel info --config=release bazel-bin 2>/dev/null)
  bin=$out/tools/hotpage man_dir=$out/dist/man
fi
[ -x "$bin" ] || { echo "install.sh: no executable hotpage at '$bin'" >&2; exit 1; }
ls "$man_dir"/hotpage*.1 >/dev/null 2>&1 ||
  { echo "install.sh: no man pages in '$man_dir'" >&2; exit 1; }

root=$destdir$prefix
etc=$destdir$sysconfdir
installed=()
put() {  # put MODE SRC DEST_DIR [NAME]
  local dest="$3/${4:-$(basename "$2")}"
  install -D -m "$1" "$2" "$dest"
  installed+=("$dest")
}
# Configuration: never overwrite what the administrator has.
put_config() {  # put_config SRC DEST_DIR NAME
  if [ -e "$2/$3" ]; then
    echo "install.sh: keeping $2/$3; the new one is $2/$3.new" >&2
    put 0644 "$1" "$2" "$3.new"
  else
    put 0644 "$1" "$2" "$3"
  fi
}

put 0755 "$bin" "$root/bin" hotpage
for page in "$man_dir"/hotpage*.1; do put 0644 "$page" "$root/share/man/man1"; done
put 0644 dist/bash-completion/hotpage "$root/share/bash-completion/completions"
unit=$(mktemp)
trap 'rm -f "$unit"' EXIT
sed "s|^ExecStart=/usr/bin/hotpage |ExecStart=$prefix/bin/hotpage |" \
  dist/hotpage.service >"$unit"
grep -q "^ExecStart=$prefix/bin/hotpage daemon " "$unit" ||
  { echo "install.sh: dist/hotpage.service has no ExecStart=/usr/bin/hotpage" >&2; exit 1; }
put 0644 "$unit" "$root/lib/systemd/system" hotpage.service
put 0644 README.md "$root/share/doc/hotpage"
put 0644 dist/hotpage.service.d/privileged.conf "$root/share/doc/hotpage/examples"
put_config dist/default/hotpage "$etc/default" hotpage
put_config dist/hotpage.toml "$etc/hotpage" hotpage.toml

printf '%s\n' "${installed[@]}"
echo "install.sh: installed $("$root/bin/hotpage" --version 2>/dev/null || echo hotpage) in $root" >&2
