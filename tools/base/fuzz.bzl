"""hotpage_fuzz: a parser's fuzz target, built both ways from one X_fuzz.cc.

    load("//tools/base:fuzz.bzl", "hotpage_fuzz")

    hotpage_fuzz(
        name = "X",                 # X_fuzz.cc defines LLVMFuzzerTestOneInput
        args = ["$(locations :X_seeds)"],
        data = [":X_seeds"],
        deps = [":x", "//third_party:absl"],
    )

declares two targets in the calling package:
  X_fuzz_test  cc_test: srcs = [src], deps = deps plus
               //tools/base:fuzz_driver (its main() runs the target over
               every file named in args, then over generated inputs). The
               driver goes where buildifier would sort it among deps
               (":fuzz_driver" inside tools/base). A `driver_src` (a .cc
               with its own main()) replaces the driver: it is added to
               srcs after src and fuzz_driver is not added. data, args,
               env, size, timeout and tags apply to this test only. Run it
               under gcc like any test: `bazel test //pkg:X_fuzz_test`.
  X_fuzzer     cc_binary: testonly, srcs = [src], deps = deps (no driver:
               libFuzzer brings main()), linkopts = ["-fsanitize=fuzzer"]
               followed by `linkopts`, tags = ["manual"] (gcc cannot link
               it, so `//...` skips it). Build it with clang:
               `bazel build --config=fuzz //pkg:X_fuzzer`, then run
               bazel-bin/pkg/X_fuzzer on a corpus directory (README.md,
               "Tests": the fuzz targets).
copts, linkopts and visibility go to both. Attributes left at their
defaults are not set at all, so both rules are exactly what the two
hand-written rules were (`bazel query --output=build` differs only in the
generator_* attributes Bazel adds to a macro's rules).
"""

FUZZ_DRIVER = "//tools/base:fuzz_driver"

def _buildifier_key(label):
    # buildifier sorts a deps list by phase (plain strings, ":local",
    # "//absolute", "@external"), then by the parts split at '.' and ':'.
    if label.startswith(":"):
        phase = 1
    elif label.startswith("//"):
        phase = 2
    elif label.startswith("@"):
        phase = 3
    else:
        phase = 0
    return [phase, label.replace(":", ".").split(".")]

def _with_driver(deps):
    driver = FUZZ_DRIVER
    if native.package_name() == "tools/base":
        driver = ":fuzz_driver"
    key = _buildifier_key(driver)
    for i, dep in enumerate(deps):
        if key < _buildifier_key(dep):
            return deps[:i] + [driver] + deps[i:]
    return deps + [driver]

def hotpage_fuzz(
        name,
        src = None,
        deps = [],
        driver_src = None,
        data = [],
        args = [],
        env = {},
        size = None,
        timeout = None,
        tags = [],
        copts = [],
        linkopts = [],
        visibility = None):
    """Declares name + "_fuzz_test" (cc_test) and name + "_fuzzer" (cc_binary).

    Args:
      name: X: the targets are X_fuzz_test and X_fuzzer.
      src: the fuzz target's source; default X_fuzz.cc.
      deps: what src needs, without //tools/base:fuzz_driver (added to the
        test only).
      driver_src: a source with its own main() to use in the test instead
        of //tools/base:fuzz_driver.
      data: the test's data (seed files).
      args: the test's arguments (seed files: $(locations ...)).
      env: the test's environment.
      size: the test's size.
      timeout: the test's timeout.
      tags: the test's tags (the fuzzer is always tagged "manual" only).
      copts: compiler options for both.
      linkopts: link options for both (the fuzzer's after -fsanitize=fuzzer).
      visibility: both targets' visibility; default the package's.
    """
    if src == None:
        src = name + "_fuzz.cc"

    # Only what is set is passed on: an attribute given as [] or None would
    # count as set (`bazel query --output=build` would print it).
    common = {}
    if copts:
        common["copts"] = copts
    if visibility != None:
        common["visibility"] = visibility

    test = dict(common)
    if linkopts:
        test["linkopts"] = linkopts
    for attr, value in [
        ("args", args),
        ("data", data),
        ("env", env),
        ("size", size),
        ("tags", tags),
        ("timeout", timeout),
    ]:
        if value:
            test[attr] = value
    if driver_src:
        test_srcs = [src, driver_src]
        test_deps = deps
    else:
        test_srcs = [src]
        test_deps = _with_driver(deps)
    if test_deps:
        test["deps"] = test_deps
    native.cc_test(
        name = name + "_fuzz_test",
        srcs = test_srcs,
        **test
    )

    fuzzer = dict(common)
    if deps:
        fuzzer["deps"] = deps
    native.cc_binary(
        name = name + "_fuzzer",
        testonly = True,
        srcs = [src],
        linkopts = ["-fsanitize=fuzzer"] + linkopts,
        tags = ["manual"],
        **fuzzer
    )
