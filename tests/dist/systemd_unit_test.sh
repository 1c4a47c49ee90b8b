#!/bin/bash
# dist/hotpage.service as shipped: `systemd-analyze verify` in a scratch root
# that holds the unit, /usr/bin/hotpage (the built binary), /usr/bin/kill
# (ExecReload) and the host's system units (sysinit.target, ...), with and
# without the CAP_SYS_ADMIN drop-in; any message fails (unknown keys are
# only warnings, exit 0). A unit with a misspelt key must give a message
# (the check can fail). Also: the privileges and the runtime directory the
# comments promise, and the example configuration files parse.
set -u
R="$TEST_SRCDIR/$TEST_WORKSPACE"
fails=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
has() { grep -qxF -- "$2" "$1"; }

UNIT="$R/dist/hotpage.service"
T=$(mktemp -d "${TEST_TMPDIR:-/tmp}/root.XXXXXX")
mkdir -p "$T/usr/bin" "$T/usr/lib/systemd" "$T/etc/systemd/system"
cp "$R/tools/hotpage" /usr/bin/kill "$T/usr/bin/"
ln -s usr/bin "$T/bin"
cp -a /usr/lib/systemd/system "$T/usr/lib/systemd/"
cp "$UNIT" "$T/etc/systemd/system/"

verify() {  # verify: systemd-analyze's messages on stdout, exit status last
  local out rc
  out=$(systemd-analyze verify --man=no --root="$T" hotpage.service 2>&1)
  rc=$?
  printf '%s\nrc=%d\n' "$out" "$rc"
}
out=$(verify)
check "verify: the unit passes, no messages (got: $out)" test "$out" = $'\nrc=0'

mkdir -p "$T/etc/systemd/system/hotpage.service.d"
cp "$R/dist/hotpage.service.d/privileged.conf" "$T/etc/systemd/system/hotpage.service.d/"
out=$(verify)
check "verify: with privileged.conf, no messages (got: $out)" test "$out" = $'\nrc=0'
rm -r "$T/etc/systemd/system/hotpage.service.d"

sed 's/^ProtectClock=/ProtectClok=/' "$UNIT" >"$T/etc/systemd/system/hotpage.service"
out=$(verify)
check "verify: a misspelt key is reported" grep -q "Unknown key 'ProtectClok'" <<<"$out"
sed 's|^ExecStart=/usr/bin/hotpage|ExecStart=/usr/bin/hotpagex|' "$UNIT" >"$T/etc/systemd/system/hotpage.service"
out=$(verify)
check "verify: a missing binary is reported" grep -q "not executable" <<<"$out"
cp "$UNIT" "$T/etc/systemd/system/"

# What the unit's comments promise.
check "starts the daemon with the issue's config path" \
  has "$UNIT" 'ExecStart=/usr/bin/hotpage daemon --config /etc/hotpage/hotpage.toml $HOTPAGE_OPTS'
check "Type=notify: the daemon sends READY=1 and WATCHDOG=1" has "$UNIT" "Type=notify"
check "the watchdog is on" has "$UNIT" "WatchdogSec=30s"
check "only the main process may notify" has "$UNIT" "NotifyAccess=main"
check "runtime directory hotpage" has "$UNIT" "RuntimeDirectory=hotpage"
check "runtime directory survives a stop" has "$UNIT" "RuntimeDirectoryPreserve=yes"
check "runtime directory 0700 (StateDir refuses group/other access)" has "$UNIT" "RuntimeDirectoryMode=0700"
caps="CAP_SYS_NICE CAP_SYS_PTRACE CAP_PERFMON CAP_DAC_READ_SEARCH"
check "bounding set is the base set" has "$UNIT" "CapabilityBoundingSet=$caps"
check "no CAP_SYS_ADMIN in the base unit" bash -c "! grep -q '^[A-Za-z]*=.*CAP_SYS_ADMIN' '$UNIT'"
check "the drop-in adds CAP_SYS_ADMIN" grep -q '^CapabilityBoundingSet=.*CAP_SYS_ADMIN' \
  "$R/dist/hotpage.service.d/privileged.conf"
check "NoNewPrivileges" has "$UNIT" "NoNewPrivileges=yes"
check "ProtectSystem=strict" has "$UNIT" "ProtectSystem=strict"
check "/proc/sys and /sys stay writable (no ProtectKernelTunables)" \
  bash -c "! grep -q '^ProtectKernelTunables=yes' '$UNIT'"
check "the defaults file sets HOTPAGE_OPTS" grep -q '^HOTPAGE_OPTS=' "$R/dist/default/hotpage"

# The configuration example is TOML (Debian's python3 has tomllib).
out=$(/usr/bin/python3 - "$R/dist/hotpage.toml" 2>&1 <<'PY'
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
assert d["daemon"]["kernel_tiering"] in ("refuse", "coexist", "take-over"), d
assert d["daemon"]["state_dir"] == "/run/hotpage", d
assert len(d["workload"]) >= 1
for w in d["workload"]:
    sel = [k for k in ("cgroup", "comm", "cmdline", "pid", "all") if k in w]
    assert len(sel) == 1, (w["name"], sel)
print("ok")
PY
)
check "hotpage.toml parses (got: $out)" test "$out" = ok

echo "$fails failed"
[ $fails -eq 0 ]
