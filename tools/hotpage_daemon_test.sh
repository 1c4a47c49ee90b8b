#!/bin/bash
# End-to-end checks of `hotpage daemon` and `hotpage status` that need no
# second memory tier: --help, config errors with their line, --check (what
# each workload selects now), usage errors, and status without a daemon.
# The daemon's real work (promotions, floors, caps, reload, SIGTERM) is the
# guest test tests/daemon:daemon_vm_test.
set -u
HOTPAGE="$(dirname "$0")/hotpage"
[ -x "$HOTPAGE" ] || HOTPAGE="$TEST_SRCDIR/$TEST_WORKSPACE/tools/hotpage"
tmp="${TEST_TMPDIR:-/tmp}/daemon_cli.$$"
mkdir -p "$tmp"
fails=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
contains() { grep -qF -- "$2" <<<"$1"; }
not_contains() { ! grep -qF -- "$2" <<<"$1"; }

out=$("$HOTPAGE" --help); check "daemon in the command list" contains "$out" "daemon"
check "status in the command list" contains "$out" "status"
out=$("$HOTPAGE" daemon --help); rc=$?
check "daemon --help exits 0" test $rc -eq 0
check "daemon --help says SIGHUP reloads" contains "$out" "SIGHUP reloads"
check "daemon --help has an example config" contains "$out" "[[workload]]"
out=$("$HOTPAGE" status --help); rc=$?
check "status --help exits 0" test $rc -eq 0

printf '[[workload]]\nname = "a"\npid = 1\nfast_cap = "3 GB"\n' >"$tmp/bad.toml"
out=$("$HOTPAGE" daemon --config "$tmp/bad.toml" 2>&1); rc=$?
check "bad config: exit 1" test $rc -eq 1
check "bad config: file, line, key, reason" contains "$out" "$tmp/bad.toml:4: fast_cap: '3 GB': unknown unit 'GB'"
printf '[daemon]\ninterval = 5\n[[workload]]\nname = "a"\npid = 1\n' >"$tmp/typo.toml"
out=$("$HOTPAGE" daemon --config "$tmp/typo.toml" --check 2>&1); rc=$?
check "a typo is an error, not a default: exit 1" test $rc -eq 1
check "a typo names the key" contains "$out" "typo.toml:2: interval: unknown key in [daemon]"
out=$("$HOTPAGE" daemon --config "$tmp/none.toml" 2>&1); rc=$?
check "missing config: exit 1" test $rc -eq 1
check "missing config: says so" contains "$out" "none.toml: no such file"

# This test's own shell, found by --check through its pid.
cat >"$tmp/ok.toml" <<TOML
[daemon]
kernel_tiering = "coexist"
rounds_dir = "$tmp/rounds"
[[workload]]
name = "me"
pid = $$
fast_floor = "10%"
rounds = true
[[workload]]
name = "nobody"
comm = "no-such-comm"
TOML
out=$("$HOTPAGE" daemon --config "$tmp/ok.toml" --check 2>&1); rc=$?
check "--check: the config is OK" contains "$out" "ok.toml: OK, 2 workload(s)"
check "--check: pid selects this shell" contains "$out" "me: pid $$, source auto, rounds recorded in $tmp/rounds (at most 67108864 bytes a process, 1073741824 in all); selects 1 process(es) now ${$}("
check "--check: nothing for an unknown comm" contains "$out" "nobody: comm no-such-comm, source auto; selects 0 process(es) now"
check "--check: names the machine" contains "$out" "machine: "
# coexist starts whatever the kernel's movers do; the machine decides the
# rest, as the daemon itself would (CI's machine has one node). The branch
# is taken from `hotpage topology`, not from the output under test: a
# --check that skipped the machine check would otherwise pick the branch
# its own output implies and pass.
tiers=$("$HOTPAGE" topology --json | grep -o '"rank":' | wc -l)
check "--check: topology names the tiers" test "$tiers" -ge 1
if ((tiers < 2)); then
  check "--check: one tier: says so" contains "$out" "in one memory tier"
  check "--check: one tier: exit 1" test $rc -eq 1
  check "--check: one tier: says it would refuse" contains "$out" "the daemon would refuse to start"
else
  check "--check: tiers: exit 0" test $rc -eq 0
  check "--check: tiers: says it would start" contains "$out" "the daemon would start"
fi
check "--check: hotpage's own memory" contains "$out" "hotpage's own memory: "

# A node this machine lacks, in a workload's rules and for hotpage's own
# memory: every one named with its file and line, and it would not start.
cat >"$tmp/nodes.toml" <<TOML
[daemon]
kernel_tiering = "coexist"
self_memory = "1000"
[[workload]]
name = "me"
pid = $$
promote_to = "1001"
[[workload]]
name = "weighted"
pid = $$
weights = "1001:1"
TOML
out=$("$HOTPAGE" daemon --config "$tmp/nodes.toml" --check 2>&1); rc=$?
check "--check: missing nodes: exit 1" test $rc -eq 1
check "--check: self_memory's node" contains "$out" "config: $tmp/nodes.toml: self_memory: node 1000 is not an online node with memory"
check "--check: promote_to's node, with its line" contains "$out" "config: $tmp/nodes.toml:4: workload me: promote_to: node 1001 is not on this machine (nodes: "
check "--check: weights' node, by its key" contains "$out" "config: $tmp/nodes.toml:8: workload weighted: weights: node 1001 is not an online memory node"
check "--check: no flag spelling for a config's key" not_contains "$out" "--weights"
check "--check: missing nodes: would refuse" contains "$out" "the daemon would refuse to start"
out=$("$HOTPAGE" daemon --config "$tmp/nodes.toml" --check --self-memory local 2>&1)
check "--check: --self-memory replaces the file's" not_contains "$out" "self_memory: node 1000"
# Where its memory would go, in the start-up line's words
# (DescribeSelfMemoryPolicy): a node named is preferred there.
node=0
if [ -r /sys/devices/system/node/has_memory ]; then
  node=$(cut -d, -f1 /sys/devices/system/node/has_memory | cut -d- -f1)
fi
out=$("$HOTPAGE" daemon --config "$tmp/nodes.toml" --check --self-memory "$node" 2>&1)
check "--check: --self-memory $node: as the start-up line says it" contains "$out" "hotpage's own memory: preferred on node $node (as asked"

# The example config the package installs parses.
example="$TEST_SRCDIR/$TEST_WORKSPACE/dist/hotpage.toml"
out=$("$HOTPAGE" daemon --config "$example" --check 2>&1)
check "dist/hotpage.toml parses" contains "$out" "hotpage.toml: OK,"

out=$("$HOTPAGE" daemon --log-level loud 2>&1); rc=$?
check "bad --log-level: usage error" test $rc -eq 2
check "bad --log-level: names the levels" contains "$out" "one of error, warning, info, debug"
out=$("$HOTPAGE" daemon --metrics-listen 192.168.1.1:9465 2>&1); rc=$?
check "daemon --metrics-listen non-loopback: usage error" test $rc -eq 2
check "daemon --metrics-listen non-loopback: refused" contains "$out" "refused: only loopback addresses"
out=$("$HOTPAGE" daemon --help)
check "daemon --help has --metrics-listen" contains "$out" "--metrics-listen ADDR"
check "daemon --help has --self-memory" contains "$out" "--self-memory WHERE"
check "daemon --help explains self_memory" contains "$out" "self_memory = \"slow\""
out=$("$HOTPAGE" daemon --self-memory fast 2>&1); rc=$?
check "daemon --self-memory fast: usage error" test $rc -eq 2
check "daemon --self-memory fast: names the values" contains "$out" "--self-memory: 'fast' is not slow, local or a node number"
printf '[daemon]\nself_memory = "fast"\n[[workload]]\nname = "a"\npid = 1\n' >"$tmp/sm.toml"
out=$("$HOTPAGE" daemon --config "$tmp/sm.toml" --check 2>&1); rc=$?
check "self_memory = \"fast\": refused" test $rc -eq 1
check "self_memory = \"fast\": with its line" contains "$out" "sm.toml:2: self_memory: 'fast' is not slow"
out=$("$HOTPAGE" daemon extra 2>&1); rc=$?
check "stray argument: usage error" test $rc -eq 2

sock=$(mktemp -u /tmp/hpd.XXXXXX.sock)  # short: a socket path has <= 107 bytes
out=$("$HOTPAGE" status --socket "$sock" 2>&1); rc=$?
check "status without a daemon: exit 1" test $rc -eq 1
check "status without a daemon: says so" contains "$out" "no hotpage daemon answers on $sock"
out=$("$HOTPAGE" status --json --metrics 2>&1); rc=$?
check "status --json --metrics: usage error" test $rc -eq 2

echo "hotpage_daemon_test: $fails failed"
exit $fails
