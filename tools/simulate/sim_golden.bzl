"""Golden tests of `hotpage simulate`: a trace through every policy at
several capacity ratios, the report and table compared exactly with files
checked in under tools/simulate/testdata/golden/.

    sim_golden_test(name = "mixed_golden_test", trace = "testdata/mixed.hpt")

makes two targets:
  NAME          sh_test: runs `hotpage simulate TRACE --policy all --ratio R
                --report` for each ratio, twice (byte-identical reports),
                and diffs with testdata/golden/<trace>.<topology>.<R>.json
                and .txt;
  NAME_update   `bazel run` it to regenerate those goldens on purpose (say
                why in the commit). tools/simulate/update_goldens.sh runs
                every one.
Use it from tools/simulate/BUILD.bazel (the goldens live in this package);
a trace from another package must be exported there.
"""

def sim_golden_test(
        name,
        trace,
        topology = "dram+cxl",
        ratios = ["1:2", "1:4", "1:8"],
        interval_ms = 1000,
        size = "medium"):
    base = trace.split(":")[-1].split("/")[-1]
    if base.endswith(".hpt"):
        base = base[:-4]
    prefix = "testdata/golden/%s.%s" % (base, topology)
    args = [
        "$(location //tools:hotpage)",
        "$(location %s)" % trace,
        topology,
        str(interval_ms),
        native.package_name() + "/" + prefix,
    ] + ratios
    goldens = native.glob([prefix + ".*"])
    native.sh_test(
        name = name,
        srcs = ["sim_golden.sh"],
        args = ["test"] + args,
        data = ["//tools:hotpage", trace] + goldens,
        env = {"GOLDEN_UPDATE_TARGET": "//%s:%s_update" % (native.package_name(), name)},
        size = size,
    )
    native.sh_binary(
        name = name + "_update",
        srcs = ["sim_golden.sh"],
        args = ["update"] + args,
        data = ["//tools:hotpage", trace],
        tags = ["sim_golden_update"],
    )
