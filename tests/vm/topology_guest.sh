# Guest side of the topology VM tests (tests/vm/topology_vm_test.sh): prints
# the sysfs view (sysfs_dump.sh) and, when /bin/hotpage is present, the
# output of `hotpage topology --json` and `hotpage topology`, each between
# marker lines, for the host to check. Always exits 0 unless the dump fails:
# the host side decides.
echo "@@SYSFS-BEGIN@@"
sh /sysfs_dump.sh || exit 1
echo "@@SYSFS-END@@"
if [ -x /bin/hotpage ]; then
  # stderr is kept apart so that it cannot corrupt the JSON.
  json="$(hotpage topology --json 2>/tmp/json.err)"
  json_rc=$?
  echo "@@HOTPAGE-TOPOLOGY-JSON-BEGIN@@"
  printf '%s\n' "${json}"
  echo "@@HOTPAGE-TOPOLOGY-JSON-END@@"
  echo "@@HOTPAGE-TOPOLOGY-TABLE-BEGIN@@"
  hotpage topology 2>&1
  table_rc=$?
  echo "@@HOTPAGE-TOPOLOGY-TABLE-END@@"
  if [ -s /tmp/json.err ]; then
    echo "hotpage topology --json wrote on stderr:"
    cat /tmp/json.err
  fi
  echo "@@HOTPAGE-STATUS json=${json_rc} table=${table_rc}@@"
fi
