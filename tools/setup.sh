#!/bin/bash
# Installs what hotpage needs to build and test on Debian bookworm, from
# Debian's archive only (no other network access is needed or used).
#
#   tools/setup.sh          build dependencies (Bazel, abseil, TBB, ...)
#   tools/setup.sh --vm     also the QEMU guest kernel and tools for tests/vm
#
# Runs apt-get only for packages that are missing. Needs root (or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

want_vm=0
for a in "$@"; do
  case "$a" in
    --vm) want_vm=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done

SUDO=
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "setup.sh: needs root to install packages (no sudo found)" >&2; exit 1
  fi
fi

pkgs=(bazel-bootstrap g++ libabsl-dev libtbb-dev libpfm4-dev libgtest-dev
      libbenchmark-dev libnuma-dev libzstd-dev linux-libc-dev pkg-config libcds-dev
      nlohmann-json3-dev libtoml11-dev)
if [ $want_vm -eq 1 ]; then
  while read -r p; do [ -n "$p" ] && pkgs+=("$p"); done < <(grep -v '^#' tests/vm/packages.txt)
fi
# CI's clang build makes the thread-safety annotations checks
# (-Wthread-safety), and its format check runs clang-format (both 14).
pkgs+=(clang clang-format)
# The perf.data reader's tests record real files with Debian's perf.
pkgs+=(linux-perf)
# tools/hotpage_cli_test.sh reads `--json` output with python3's json module
# too (a strict parser that is not hotpage's own).
pkgs+=(python3)
# The simulator's SVG picture is checked as XML with expat, and rendered to
# PNG by headless Chromium in a test (tools/simulate/svg/svg_render_test.sh),
# which decodes it with libpng.
pkgs+=(chromium libexpat1-dev libpng-dev)

# tests/dist checks dist/hotpage.service with systemd-analyze verify
# (package systemd; nothing is started). //dist:man_pages writes the man
# pages from --help with help2man; tests/dist renders them with man-db.
pkgs+=(systemd help2man man-db)
# tests/dist/deb_test builds the Debian package (dpkg-buildpackage, dh).
pkgs+=(dpkg-dev debhelper)
# tests/dist/k8s_manifest_test parses the DaemonSet manifest with PyYAML.
pkgs+=(python3-yaml)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ $want_vm -eq 1 ]; then
  $SUDO bash tests/vm/fetch_kernel.sh
fi
echo "setup.sh: ready" >&2
