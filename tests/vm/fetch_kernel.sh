#!/bin/bash
# Fetches the Debian 6.12 guest kernel for the VM test harness (run_vm.sh).
#
#   tests/vm/fetch_kernel.sh [DIR]      (default DIR: /var/cache/hotpage-vm)
#
# Resolves the exact image package from the meta package
# linux-image-6.12-amd64 (e.g. linux-image-6.12.117+deb12-amd64), downloads
# its -unsigned variant with `apt-get download` (the kernel is only unpacked,
# never installed on the host) and installs boot/vmlinuz-* as DIR/vmlinuz.
# DIR/vmlinuz.version records the package, so a second run with the same
# package does nothing (idempotent). Needs `apt-get update` to have run once.
#
# Exit status: 0 when DIR/vmlinuz is in place, 1 otherwise.
set -euo pipefail

readonly META_PACKAGE="linux-image-6.12-amd64"
readonly DIR="${1:-/var/cache/hotpage-vm}"

die() { echo "fetch_kernel.sh: error: $*" >&2; exit 1; }
note() { echo "fetch_kernel.sh: $*" >&2; }

have_kernel() { [[ -s "${DIR}/vmlinuz" ]]; }

# 1. linux-image-6.12-amd64 -> linux-image-6.12.N+debX-amd64.
image=""
if deps="$(apt-cache depends "${META_PACKAGE}" 2>/dev/null)"; then
  image="$(sed -n 's/^ *Depends: *<\{0,1\}\(linux-image-6\.12\.[^ >]*-amd64\)>\{0,1\} *$/\1/p' \
    <<<"${deps}" | sort -V | tail -n 1)"
fi
if [[ -z "${image}" ]]; then
  if have_kernel; then
    note "warning: apt does not know ${META_PACKAGE} (run 'apt-get update'?);" \
         "keeping the existing ${DIR}/vmlinuz ($(cat "${DIR}/vmlinuz.version" 2>/dev/null || echo 'unknown version'))"
    echo "${DIR}/vmlinuz"
    exit 0
  fi
  die "apt cannot resolve ${META_PACKAGE} to a linux-image-6.12.*-amd64 package." \
      "Run 'apt-get update' first (Debian 12 bookworm with bookworm-updates/backports" \
      "or security, which carry the 6.12 kernel)."
fi
package="${image}-unsigned"
if ! apt-cache show "${package}" >/dev/null 2>&1; then
  die "apt knows ${META_PACKAGE} -> ${image} but not ${package}; run 'apt-get update'."
fi

# 2. Already there?
if have_kernel && [[ "$(cat "${DIR}/vmlinuz.version" 2>/dev/null)" == "${package}" ]]; then
  note "${package} already installed"
  echo "${DIR}/vmlinuz"
  exit 0
fi

# 3. Download and unpack only boot/vmlinuz-*.
mkdir -p "${DIR}" || die "cannot create ${DIR}"
work="$(mktemp -d "${TMPDIR:-/tmp}/hotpage-kernel.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
# apt-get download runs its fetch as the _apt user: give it a directory it
# may write to, otherwise apt warns ("Download is performed unsandboxed").
chmod 0755 "${work}"
mkdir "${work}/deb"
chown _apt "${work}/deb" 2>/dev/null || chmod 0777 "${work}/deb"
note "downloading ${package} (about 107 MB)"
(cd "${work}/deb" && apt-get download -q "${package}") >&2 \
  || die "apt-get download ${package} failed"
# shellcheck disable=SC2012
deb="$(ls "${work}"/deb/*.deb 2>/dev/null | head -n 1)"
[[ -n "${deb}" ]] || die "apt-get download left no .deb in ${work}/deb"
mkdir "${work}/root"
dpkg-deb --fsys-tarfile "${deb}" \
  | tar -x -C "${work}/root" --wildcards './boot/vmlinuz-*' \
  || die "cannot unpack boot/vmlinuz-* from ${deb}"
# shellcheck disable=SC2012
vmlinuz="$(ls "${work}"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)"
[[ -s "${vmlinuz}" ]] || die "${deb} holds no boot/vmlinuz-*"

# Replace atomically so a concurrent run_vm.sh never sees half a file.
install -m 0644 "${vmlinuz}" "${DIR}/vmlinuz.tmp.$$"
mv -f "${DIR}/vmlinuz.tmp.$$" "${DIR}/vmlinuz"
echo "${package}" > "${DIR}/vmlinuz.version"
note "installed $(basename "${vmlinuz}") from ${package}"
echo "${DIR}/vmlinuz"
