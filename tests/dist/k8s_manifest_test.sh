#!/bin/bash
# dist/k8s/hotpage-daemonset.yaml parses as YAML (Debian's python3-yaml)
# and says what the README promises: a DaemonSet in the host's pid
# namespace, privileged, with the host's /sys and /run/hotpage, running
# `hotpage daemon --config` on the ConfigMap's hotpage.toml (which parses
# as TOML and selects pods by cgroup), the selector matching the pods.
# dist/container/Containerfile: no Debian tool lints Dockerfiles and the
# image cannot be built here (no registry), so only its structure is
# checked: known instructions, a bookworm base, the .deb installed.
set -u
R="$TEST_SRCDIR/$TEST_WORKSPACE"
fails=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); return 1; fi
}

out=$(/usr/bin/python3 - "$R/dist/k8s/hotpage-daemonset.yaml" 2>&1 <<'PY'
import sys, tomllib, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
kinds = {d["kind"]: d for d in docs}
assert set(kinds) == {"Namespace", "ConfigMap", "DaemonSet"}, kinds.keys()
ns = kinds["Namespace"]["metadata"]["name"]
cm, ds = kinds["ConfigMap"], kinds["DaemonSet"]
assert cm["metadata"]["namespace"] == ns and ds["metadata"]["namespace"] == ns
assert ds["apiVersion"] == "apps/v1"
spec = ds["spec"]
labels = spec["template"]["metadata"]["labels"]
for k, v in spec["selector"]["matchLabels"].items():
    assert labels.get(k) == v, ("selector does not match the pods", k)
pod = spec["template"]["spec"]
assert pod["hostPID"] is True, "hostPID"
(c,) = pod["containers"]
assert c["securityContext"]["privileged"] is True, "privileged"
assert c["command"] + c["args"] == [
    "/usr/bin/hotpage", "daemon", "--config", "/etc/hotpage/hotpage.toml"], c
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
def host(path):
    return vols[mounts[path]]["hostPath"]["path"]
assert host("/sys") == "/sys"
assert host("/run/hotpage") == "/run/hotpage"
cfg = vols[mounts["/etc/hotpage"]]["configMap"]["name"]
assert cfg == cm["metadata"]["name"], cfg
conf = tomllib.loads(cm["data"]["hotpage.toml"])
assert conf["daemon"]["state_dir"] == "/run/hotpage"
assert conf["workload"] and all(w["cgroup"].startswith("kubepods")
                                for w in conf["workload"]), conf
assert pod["terminationGracePeriodSeconds"] >= 2
print("ok")
PY
)
check "daemonset manifest (got: $out)" test "$out" = ok

# A broken manifest is caught (the check can fail).
sed 's/hostPID: true/hostPID: false/' "$R/dist/k8s/hotpage-daemonset.yaml" >"$TEST_TMPDIR/bad.yaml"
out=$(/usr/bin/python3 - "$TEST_TMPDIR/bad.yaml" 2>&1 <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] == "DaemonSet":
        assert d["spec"]["template"]["spec"]["hostPID"] is True, "hostPID"
print("ok")
PY
)
check "hostPID: false is caught" grep -q "AssertionError: hostPID" <<<"$out"
printf 'a: [1, 2\n' >"$TEST_TMPDIR/syntax.yaml"
out=$(/usr/bin/python3 -c 'import sys, yaml; list(yaml.safe_load_all(open(sys.argv[1])))' \
  "$TEST_TMPDIR/syntax.yaml" 2>&1)
check "a YAML syntax error is caught" grep -q "yaml.parser.ParserError" <<<"$out"

CF="$R/dist/container/Containerfile"
bad=$(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$CF" |
      awk 'prev_cont { prev_cont = /\\$/; next }
           { prev_cont = /\\$/ }
           $1 !~ /^(FROM|RUN|COPY|ADD|ENTRYPOINT|CMD|ENV|ARG|LABEL|WORKDIR|USER|EXPOSE|VOLUME|STOPSIGNAL|HEALTHCHECK|SHELL|ONBUILD)$/ { print }')
check "Containerfile: every line is an instruction (bad: $bad)" test -z "$bad"
check "Containerfile: Debian bookworm base" grep -qE '^FROM debian:bookworm(-slim)?$' "$CF"
check "Containerfile: installs the hotpage .deb" grep -q 'apt-get install .*/tmp/hotpage_\*\.deb' "$CF"
check "Containerfile: runs the daemon with the config" \
  grep -qF 'CMD ["daemon", "--config", "/etc/hotpage/hotpage.toml"]' "$CF"

echo "$fails failed"
[ $fails -eq 0 ]
