"""Bazel macro for tests that boot the real-kernel VM (tests/vm/run_vm.sh).

A vm_test runs run_vm.sh as the test itself: the test passes when the guest
script exits 0. Tags: "vm" (CI may run these alone; developers skip them
with --test_tag_filters=-vm), "local" (QEMU and the kernel image live
outside the sandbox), "exclusive" (a TCG guest wants both cores).
"""

VM_TEST_TAGS = ["vm", "local", "exclusive"]

STATIC_KEY_PIN = "//tests/vm:static_key_pin"

GUEST_CHECKS = "//tests/vm:guest_checks.sh"

def vm_test(
        name,
        topology,
        script,
        bins = [],
        files = {},
        timeout_sec = 150,
        data = [],
        tags = [],
        **kwargs):
    """A test that runs `script` in a QEMU guest with NUMA `topology`.

    Args:
      name: test name; end it in _vm_test.
      topology: a name from //tests/vm/topologies (e.g. "dram+cxl").
      script: label of the guest shell script (runs as `sh /test.sh`).
      bins: labels of programs copied to /bin in the guest with their ldd
        closure.
      files: dict of label -> absolute guest path, copied into the guest.
      timeout_sec: run_vm.sh --timeout (the whole boot and run).
      data: more runfiles.
      tags: more tags.
      **kwargs: passed to sh_test (e.g. size, timeout, flaky).
    """
    args = [
        "--topology",
        topology,
        "--script",
        "$(location %s)" % script,
        "--timeout",
        str(timeout_sec),
    ]
    # Every guest holds the perf static keys enabled from boot (see
    # static_key_pin.cc: their code patching races under TCG).
    bins = bins + [STATIC_KEY_PIN]
    # Every guest holds the check helpers the scripts source (fails, ok,
    # bad, wait_file, json_num, free0).
    files = dict(files)
    files[GUEST_CHECKS] = "/guest_checks.sh"
    for b in bins:
        args += ["--bin", "$(location %s)" % b]
    for src, dest in files.items():
        args += ["--file", "$(location %s):%s" % (src, dest)]
    if "size" not in kwargs and "timeout" not in kwargs:
        kwargs["size"] = "medium"
    native.sh_test(
        name = name,
        srcs = ["//tests/vm:run_vm.sh"],
        args = args,
        data = [script, "//tests/vm:topologies"] + bins + list(files.keys()) + data,
        tags = VM_TEST_TAGS + tags,
        **kwargs
    )
