# Guest side of the topology VM tests (tests/vm/topology_vm_test.sh): prints
# the sysfs view (sysfs_dump.sh) and, when /bin/hotpage is present, the
# output of `hotpage topology --json`, `hotpage topology` and `hotpage
# doctor` (text and --json), each between marker lines, for the host to check. Always exits 0 unless the dump fails:
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
  # `hotpage doctor`, with this shell as the --pid target.
  echo "@@HOTPAGE-DOCTOR-BEGIN@@"
  hotpage doctor --pid $$ 2>&1
  doctor_rc=$?
  echo "@@HOTPAGE-DOCTOR-END@@"
  hotpage doctor --json >/tmp/doctor.json 2>/tmp/doctor.err
  doctor_json_rc=$?
  echo "@@HOTPAGE-DOCTOR-JSON-BEGIN@@"
  cat /tmp/doctor.json
  echo "@@HOTPAGE-DOCTOR-JSON-END@@"
  if [ -s /tmp/doctor.err ]; then
    echo "hotpage doctor --json wrote on stderr:"
    cat /tmp/doctor.err
  fi
  echo "@@HOTPAGE-DOCTOR-STATUS text=${doctor_rc} json=${doctor_json_rc}@@"
fi
