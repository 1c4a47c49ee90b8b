# Guest side of //tests/daemon:daemon_vm_test (topology small-dram+cxl:
# node 0 = CPUs + 512 MiB, node 1 = CPU-less 1536 MiB). `hotpage daemon`
# manages two cgroups whose hot sets together do not fit in what is left
# of node 0: each keeps its floor; a workload started after the daemon is
# picked up; SIGHUP with a new cap takes effect without restarting the
# workload's member (its hotness kept); a broken file is rejected and the
# running config stays, as it does for a node the machine lacks, which
# also refuses a start; `--check` on two tiers; `hotpage status --json`;
# the daemon's own memory (and a dry-run attach's) on the slow node;
# workload a's rounds recorded (rounds_dir), b's not, an old file past
# rounds_dir_max_bytes removed; SIGTERM leaves
# nothing.
. /daemon_guest_lib.sh  # ok, bad, wait_file, free0, hot0, W_ARGS, MiB; cgroups a and b
# Leave ~140 MiB of node 0 free: after the high watermark (~33 MiB: the
# kernel's floor on node 0, 21-23 MiB, plus 2%; tools/kernel_floor.h) and
# what of the daemon stays on node 0 (its perf rings, 4 MiB, which the
# kernel puts on the CPUs' node, and the little it allocated before its
# memory policy), room for one hot set (80 MiB) and some, not two. The
# daemon's own memory (its members' tables and buffers: RSS 93-103 MiB in
# 7 runs) was on node 0 until it preferred the slow tier
# (tools/self_memory.h); this left 240 MiB then, for the same room.
attach_vm_check fill 0 140 >/tmp/fill.out &
F=$!
wait_file /tmp/fill.out; cat /tmp/fill.out
echo "node 0 free: $(free0) kB"

cat >/tmp/h.toml <<'TOML'
[daemon]
interval_ms = 500
rate_limit_mbps = 256
kernel_tiering = "coexist"
socket = "/tmp/hp/hotpage.sock"
state_dir = "/tmp/hp"
prom_file = "/tmp/hotpage.prom"
rounds_dir = "/tmp/hp/rounds"
rounds_dir_max_bytes = "256MiB"

[[workload]]
name = "a"
cgroup = "a"
source = "pagefault"
write_faults = true
fast_floor = "20MiB"
rounds = true

[[workload]]
name = "b"
cgroup = "b"
source = "pagefault"
write_faults = true
fast_floor = "70MiB"
TOML
sh -c "echo \$\$ > /sys/fs/cgroup/a/cgroup.procs && exec hot_set_workload $W_ARGS --layout=/tmp/la" &
WA=$!
wait_file /tmp/la || bad "workload a started"
grep -q "^$WA\$" /sys/fs/cgroup/a/cgroup.procs && ok "a runs in cgroup a" || bad "a not in its cgroup: $(cat /sys/fs/cgroup/a/cgroup.procs)"
# Files an earlier run left in rounds_dir: an ended process's 300 MiB
# (sparse) from 2020, one of 1 KiB from now, and a file that is no
# rounds file. Past rounds_dir_max_bytes, the oldest goes and nothing else.
mkdir -p -m 0700 /tmp/hp/rounds
truncate -s 300M /tmp/hp/rounds/old-1-1.jsonl
touch -d "2020-01-01 00:00:00" /tmp/hp/rounds/old-1-1.jsonl
head -c 1024 /dev/zero >/tmp/hp/rounds/recent-2-2.jsonl
truncate -s 300M /tmp/hp/rounds/notes.txt
hotpage daemon --config /tmp/h.toml 2>/tmp/d.log &
D=$!
diag() { hotpage status --socket /tmp/hp/hotpage.sock --json | head -c 2500; echo; tail -n 20 /tmp/d.log; }
if r=$(attach_vm_check wait90 $WA /tmp/la 0 90); then ok "a alone: its hot set on node 0: $r"; else bad "a alone: $r"; diag; fi

# b starts after the daemon, in its cgroup: picked up within a round.
sh -c "echo \$\$ > /sys/fs/cgroup/b/cgroup.procs && exec hot_set_workload $W_ARGS --layout=/tmp/lb" &
WB=$!
wait_file /tmp/lb || bad "workload b started"
for i in $(seq 1 40); do grep -q "b: managing pid $WB" /tmp/d.log && break; sleep 0.1; done
grep -q "b: managing pid $WB" /tmp/d.log && ok "b picked up after $((i * 100)) ms" || bad "b not picked up: $(cat /tmp/d.log)"

# Together 160 MiB of hot set over ~120 MiB of room. a came first and holds
# its whole hot set (80 MiB); b's floor (70 MiB) is more than the room a
# left, so a must give some back (down to its target: its 20 MiB floor plus
# what benefit gives it of the rest) for b to reach its floor. Without the
# shares a would keep 80 and b get the ~40 left. A floor is fast memory
# held (the prom file's hotpage_workload_fast_bytes), whichever pages.
fast() { sed -n "s/^hotpage_workload_fast_bytes{workload=\"$1\"} //p" /tmp/hotpage.prom; }
ok_floor=0
for i in $(seq 1 90); do
  fa=$(fast a); fb=$(fast b)
  if [ "${fa:-0}" -ge $((18 << 20)) ] && [ "${fb:-0}" -ge $((63 << 20)) ]; then ok_floor=1; break; fi
  sleep 1
done
a0=$(hot0 $WA /tmp/la); b0=$(hot0 $WB /tmp/lb)
echo "after ${i} s: fast memory a $((${fa:-0} >> 20)) MiB, b $((${fb:-0} >> 20)) MiB; of their hot sets on node 0: a $((a0 / MiB)) MiB, b $((b0 / MiB)) MiB; node 0 free $(free0) kB"
[ $ok_floor = 1 ] && ok "floors held: a $((fa >> 20)) MiB >= 90% of 20, b $((fb >> 20)) MiB >= 90% of 70" \
  || { bad "floors: a $((${fa:-0} >> 20)) MiB (floor 20), b $((${fb:-0} >> 20)) MiB (floor 70)"; diag; }
hotpage status --socket /tmp/hp/hotpage.sock --json >/tmp/s.json; rc=$?
[ $rc = 0 ] && ok "status --json exits 0" || bad "status --json: $rc"
echo '{}' >/tmp/any.json
json_expect /tmp/any.json /tmp/s.json >/dev/null && ok "status --json parses" || bad "status --json does not parse: $(head -c 300 /tmp/s.json)"
grep -q "\"pid\": $WA" /tmp/s.json && grep -q "\"pid\": $WB" /tmp/s.json && ok "status lists both processes" || bad "status: $(cat /tmp/s.json)"
# Whether the moves paid off: samples on a's promoted pages while fast
# (its hot set, written every pass) per promotion, and the regret beside it.
y=$(tr -d '\n' </tmp/s.json | grep -o '"name": "a",.*' | grep -o '"yield": [0-9.e+-]*' | head -n 1 | sed 's/.*: //')
r=$(tr -d '\n' </tmp/s.json | grep -o '"name": "a",.*' | grep -o '"regret": [0-9.e+-]*' | head -n 1 | sed 's/.*: //')
awk -v y="${y:-0}" 'BEGIN { exit !(y > 0) }' && [ -n "$r" ] && ok "status: a's yield $y samples per promotion, regret $r per demotion" || bad "status yield/regret for a: '$y' '$r'"
grep -q 'hotpage_workload_fast_bytes{workload="b"}' /tmp/hotpage.prom && ok "labelled metrics in the prom file" || bad "prom file: $(head -20 /tmp/hotpage.prom)"
grep -q '"machine": {' /tmp/s.json && grep -q '"sampler ' /tmp/s.json && ok "status --json has the machine's counters and threads" || bad "status: no machine object: $(head -c 600 /tmp/s.json)"
grep -q '^hotpage_daemon_cpu_seconds_total{daemon="/tmp/hp/hotpage.sock"} ' /tmp/hotpage.prom && ok "the daemon's CPU series, labelled by the daemon" || bad "prom file: no daemon CPU series"
hotpage status --socket /tmp/hp/hotpage.sock | tee /tmp/st.txt

# The daemon's own memory (tools/self_memory.h): with the default (slow)
# every thread prefers node 1, and so do most of its anonymous pages (the
# rest: what it touched before setting the policy). Read while both
# members hold their tables. Two runs: the daemon 18,763 of 18,802 and
# 17,591 of 17,631 pages on node 1, 8 of 8 threads; attach 4,408 of 4,445
# and 4,219 of 4,257, 2 of 2 threads. With self_memory = "local" (first
# touch, as before; a throwaway edit, the fill at 240 MiB): 20,438 of
# 20,438 and 4,550 of 4,550 on node 0, every check here failed.
field() { echo "$2" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
selfmem_check() {  # selfmem_check WHO PID
  local r anon on threads pref
  r=$(attach_vm_check selfmem $2 1)
  echo "$1's own memory: $r"
  anon=$(field anon_pages "$r"); on=$(field on_node "$r")
  threads=$(field threads "$r"); pref=$(field threads_preferring "$r")
  [ "${anon:-0}" -ge 256 ] && [ $((${on:-0} * 100)) -ge $((anon * 80)) ] \
    && ok "$1's anonymous pages on the slow node: ${on} of ${anon} ($(field by_node "$r"), node:pages)" \
    || bad "$1's anonymous pages: ${on:-?} of ${anon:-?} on node 1, wanted >= 80% ($r)"
  [ "${threads:-0}" -ge 2 ] && [ "$pref" = "$threads" ] \
    && ok "every $1 thread prefers node 1: $pref of $threads ($(echo "$r" | sed 's/.*policies=//'))" \
    || bad "$1 threads preferring node 1: ${pref:-?} of ${threads:-?} ($r)"
}
selfmem_check daemon $D
grep -q "hotpage daemon: hotpage's own memory: preferred on node 1 (the slowest tier)" /tmp/d.log \
  && ok "the start-up log says where the daemon's memory goes" || bad "no self-memory line: $(grep "own memory" /tmp/d.log)"
echo '{"machine": {"self_memory": {"requested": "slow", "mode": "preferred", "nodes": [1]}}}' >/tmp/self.json
json_expect /tmp/self.json /tmp/s.json && ok "status --json: machine.self_memory" || bad "status --json: self_memory"
grep -q 'hotpage_daemon_self_memory_info{daemon="[^"]*",requested="slow",mode="preferred",nodes="1"} 1' /tmp/hotpage.prom \
  && ok "prom_file: hotpage_daemon_self_memory_info" || bad "prom_file: no self-memory series: $(grep self_memory /tmp/hotpage.prom)"
grep -q "^daemon memory: preferred on node(s) 1 (self_memory slow)" /tmp/st.txt && ok "status says where its memory goes" || bad "status: no daemon memory line"

# rounds = true (a, not b): each round's decision as a JSON line
# (tools/round_log.h) in rounds_dir, one file per process named by the
# workload, the pid and its start time; the directory 0700, the file 0600.
RF=$(ls /tmp/hp/rounds/a-$WA-*.jsonl 2>/dev/null | head -n 1)
if [ -n "$RF" ]; then
  ok "a's rounds file: $RF, $(wc -l <"$RF") lines, $(grep -o '"promote"' "$RF" | wc -l) planned promotions"
  [ "$(stat -c %a /tmp/hp/rounds)" = 700 ] && [ "$(stat -c %a "$RF")" = 600 ] \
    && ok "rounds_dir 0700, its file 0600" || bad "modes: dir $(stat -c %a /tmp/hp/rounds), file $(stat -c %a "$RF")"
  head -n 1 "$RF" >/tmp/r1.json
  json_expect /tmp/any.json /tmp/r1.json >/dev/null && grep -q '^{"t_s":[0-9.e-]*,"round":[0-9]*,' /tmp/r1.json \
    && ok "its first line is a round, as JSON: $(head -c 80 /tmp/r1.json)" || bad "first rounds line: $(head -c 300 /tmp/r1.json)"
  # The placement the prom file shows was planned in those lines: a's hot
  # set went from node 1 to node 0.
  n=$(grep -o '\["0x[0-9a-f]*",4096,1,0,"promote"' "$RF" | wc -l)
  [ "$n" -ge $((20 * MiB)) ] && ok "a's rounds plan $n promotions from node 1 to node 0 (its floor: $((20 * MiB)) pages)" \
    || bad "a's rounds: $n promotions 1 -> 0: $(head -c 400 "$RF")"
else
  bad "no rounds file for a: $(ls -la /tmp/hp/rounds 2>&1)"
fi
[ ! -e /tmp/hp/rounds/old-1-1.jsonl ] && [ -e /tmp/hp/rounds/recent-2-2.jsonl ] && [ -e /tmp/hp/rounds/notes.txt ] \
  && grep -q "rounds: removed 1 file(s) of ended processes from /tmp/hp/rounds (300.0 MiB" /tmp/d.log \
  && ok "rounds_dir_max_bytes: the old 300 MiB file went, the recent one and notes.txt stayed, said in the log" \
  || bad "rounds pruning: $(ls -la /tmp/hp/rounds); $(grep -m2 'rounds:' /tmp/d.log)"
ls /tmp/hp/rounds/b-* >/dev/null 2>&1 && bad "b has a rounds file without rounds = true" || ok "b (rounds unset): no file"
grep -q "a: pid $WA: rounds to /tmp/hp/rounds/a-$WA-" /tmp/d.log && ok "the log names a's rounds file" || bad "no 'rounds to' line: $(grep -m3 rounds /tmp/d.log)"
hotpage status --socket /tmp/hp/hotpage.sock --json >/tmp/s1.json
grep -q "\"rounds_file\": \"$RF\"" /tmp/s1.json && grep -q '"rounds_file": null' /tmp/s1.json \
  && ok "status --json names a's rounds file (b's null)" || bad "status rounds_file: $(grep rounds_file /tmp/s1.json)"

# SIGHUP: b loses its floor and gets a 20 MiB cap; its member stays.
sed -i 's/fast_floor = "70MiB"/fast_cap = "20MiB"/' /tmp/h.toml
kill -HUP $D
for i in $(seq 1 60); do
  fb=$(fast b)
  [ "${fb:-0}" -le $((30 << 20)) ] && break
  sleep 1
done
[ "${fb:-0}" -le $((30 << 20)) ] && ok "reloaded cap holds after ${i} s: b $((fb >> 20)) MiB on the fast tier (cap 20 + 10 hysteresis)" \
  || bad "cap after reload: b $((${fb:-0} >> 20)) MiB on the fast tier"
grep -q "reloaded /tmp/h.toml" /tmp/d.log && ok "reload logged" || bad "no reload line"
[ "$(grep -c "b: managing pid $WB" /tmp/d.log)" = 1 ] && ok "b's member kept (hotness state kept)" || bad "b restarted on reload"

# A broken file is rejected; the running config stays.
echo 'fast_cap = "20 MB"' >>/tmp/h.toml
kill -HUP $D
for i in $(seq 1 30); do grep -q "reload rejected" /tmp/d.log && break; sleep 0.1; done
grep -q "reload rejected, the running config stays: /tmp/h.toml:" /tmp/d.log && ok "broken config rejected with its line" || bad "broken config: $(tail -3 /tmp/d.log)"
sleep 2
fb=$(fast b)
[ "${fb:-0}" -le $((30 << 20)) ] && ok "old config still in force: b $((fb >> 20)) MiB" || bad "after a rejected reload: b $((${fb:-0} >> 20)) MiB"
kill -0 $D && ok "daemon still running" || bad "daemon died on a bad reload"
# A node the machine lacks (tools/daemon/machine_check.h): rejected with its
# file and line; the running config stays.
sed -i '$d' /tmp/h.toml
echo 'promote_to = "7"' >>/tmp/h.toml
kill -HUP $D
for i in $(seq 1 30); do grep -q "workload b: promote_to" /tmp/d.log && break; sleep 0.1; done
grep -q "reload rejected, the running config stays: /tmp/h.toml:[0-9]*: workload b: promote_to: node 7 is not on this machine (nodes: 0-1)" /tmp/d.log \
  && ok "a node the machine lacks: reload rejected with its line" || bad "promote_to 7 on reload: $(tail -3 /tmp/d.log)"
kill -0 $D && ok "daemon still running after it" || bad "daemon died on a reload naming node 7"
# rounds_dir changes only with a restart: the reload is rejected, the
# members keep their files.
sed -i '$d' /tmp/h.toml
sed -i 's#^rounds_dir = "/tmp/hp/rounds"#rounds_dir = "/tmp/hp/rounds2"#' /tmp/h.toml
kill -HUP $D
for i in $(seq 1 30); do grep -q "rounds_dir_max_bytes, kernel_tiering" /tmp/d.log && break; sleep 0.1; done
grep -q "reload rejected: socket, state_dir, rounds_dir, rounds_max_bytes, rounds_dir_max_bytes, kernel_tiering and self_memory change only with a restart" /tmp/d.log \
  && [ ! -e /tmp/hp/rounds2 ] && ok "a new rounds_dir: reload rejected, nothing created" || bad "rounds_dir on reload: $(tail -3 /tmp/d.log)"
kill -0 $D && ok "daemon still running after it" || bad "daemon died on a reload moving rounds_dir"

# What the daemon costs with two workloads: CPU, memory, descriptors.
cpu_ticks=$(awk '{print $14 + $15}' /proc/$D/stat)
echo "daemon cost: cpu $((cpu_ticks))/100 s over $(awk '{print int($22/100)}' /proc/$D/stat) s since boot start; $(grep VmRSS /proc/$D/status); threads $(ls /proc/$D/task | wc -l); fds $(ls /proc/$D/fd | wc -l)"
hotpage status --socket /tmp/hp/hotpage.sock --json >/tmp/s2.json
echo "daemon cost as it reports it: $(grep -m1 '^  "cpu_seconds"' /tmp/s2.json) (members + machine threads); machine threads: $(tr -d '\n' </tmp/s2.json | grep -o '"threads": *\[[^]]*\]' | tr -s ' ')"

# SIGTERM: stops within about a second and leaves nothing behind.
# (busybox date has no %N: /proc/uptime's centiseconds)
t0=$(cut -d' ' -f1 /proc/uptime)
kill -TERM $D; wait $D; rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
stop_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
[ $rc = 0 ] && ok "SIGTERM: exit 0 in $stop_ms ms" || bad "SIGTERM: exit $rc"
[ $stop_ms -le 3000 ] && ok "stopped promptly ($stop_ms ms)" || bad "took $stop_ms ms to stop"
[ ! -e /tmp/hp/hotpage.sock ] && ok "socket removed" || bad "socket left behind"
on=$(cat /sys/kernel/mm/damon/admin/kdamonds/*/state 2>/dev/null | grep -c '^on$')
[ "${on:-0}" = 0 ] && ok "no kdamond left running" || bad "$on kdamond(s) still on"
echo "--- daemon log"; cat /tmp/d.log

# attach's own memory the same way: a dry run on workload a (write faults:
# a table of its written pages), read after 5 s.
hotpage attach --pid $WA --source pagefault --write-faults --dry-run --duration 8 --interval-ms 500 --quiet 2>/tmp/a.log &
A=$!
sleep 5
selfmem_check attach $A
wait $A; rc=$?
[ $rc = 0 ] && ok "attach dry run exits 0" || { bad "attach dry run: exit $rc"; cat /tmp/a.log; }
grep -q "hotpage attach: hotpage's own memory: preferred on node 1 (the slowest tier)" /tmp/a.log \
  && ok "attach's start-up line says where its memory goes" || bad "attach: no self-memory line: $(cat /tmp/a.log)"
kill -TERM $WA $WB; wait $WA && ok "workload a data intact" || bad "workload a data"
wait $WB && ok "workload b data intact" || bad "workload b data"
kill $F
# kernel_tiering: refuse names the mover and exits 1; take-over turns it
# off while running and restores it at exit.
echo 2 >/proc/sys/kernel/numa_balancing
cat >/tmp/r.toml <<'TOML'
[daemon]
socket = "/tmp/hr/hotpage.sock"
state_dir = "/tmp/hr"
[[workload]]
name = "x"
comm = "no-such-comm"
TOML
hotpage daemon --config /tmp/r.toml 2>/tmp/r.log; rc=$?
[ $rc = 1 ] && grep -q "kernel.numa_balancing = 2" /tmp/r.log && ok "refuse: exit 1 naming numa_balancing" || bad "refuse: rc $rc $(cat /tmp/r.log)"
{ echo '[daemon]'; echo 'kernel_tiering = "take-over"'; grep -v '^\[daemon\]' /tmp/r.toml; } >/tmp/t.toml
hotpage daemon --config /tmp/t.toml 2>/tmp/t.log &
T=$!
for i in $(seq 1 50); do [ -S /tmp/hr/hotpage.sock ] && break; sleep 0.1; done
nb=$(cat /proc/sys/kernel/numa_balancing)
[ "$nb" = 0 ] && ok "take-over: numa_balancing 0 while running" || bad "take-over: numa_balancing $nb; $(cat /tmp/t.log)"
kill -TERM $T; wait $T
nb=$(cat /proc/sys/kernel/numa_balancing)
[ "$nb" = 2 ] && ok "take-over: restored to 2 at exit" || bad "take-over: $nb after exit"
echo 0 >/proc/sys/kernel/numa_balancing

# --check on two tiers; a start refused, before anything runs, for a node
# the machine lacks.
cat >/tmp/c.toml <<'TOML'
[daemon]
kernel_tiering = "coexist"
socket = "/tmp/hc/hotpage.sock"
state_dir = "/tmp/hc"
[[workload]]
name = "x"
comm = "no-such-comm"
TOML
out=$(hotpage daemon --config /tmp/c.toml --check 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "^machine: 2 node(s) with memory in 2 tier(s): fast 0, then 1" \
  && echo "$out" | grep -q "^hotpage's own memory: preferred on node 1 (the slowest tier)$" \
  && ok "--check: two tiers, the daemon's memory on node 1, would start" || bad "--check: rc $rc: $out"
echo 'promote_to = "7"' >>/tmp/c.toml
hotpage daemon --config /tmp/c.toml 2>/tmp/c.log; rc=$?
[ $rc = 1 ] && grep -q "/tmp/c.toml:5: workload x: promote_to: node 7 is not on this machine (nodes: 0-1)" /tmp/c.log \
  && [ ! -e /tmp/hc/hotpage.sock ] \
  && ok "a node the machine lacks: refused at start with its line" || bad "promote_to 7 at start: rc $rc: $(cat /tmp/c.log)"

echo "daemon VM test: $fails failed"
exit $fails
