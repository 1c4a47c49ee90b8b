// sim_trace_gen OUT.hpt [--pages N] [--rate N] [--duration-ms N] [--hot N]
//   [--shift-ms N] [--seed N] [--scan-until-ms N] [--hot-percent P]
//   [--zipf-percent P]: writes the simulator's synthetic "mixed"
// workload (tools/trace_gen/mixed.h) as an .hpt trace. The checked-in
// testdata/mixed.hpt is `sim_trace_gen testdata/mixed.hpt` (defaults).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/trace_gen/mixed.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: sim_trace_gen OUT.hpt [--pages N] [--rate N] [--duration-ms N] "
        "[--hot N] [--shift-ms N] [--seed N] [--scan-until-ms N] "
        "[--hot-percent P] "
        "[--zipf-percent P]\n");
    return 2;
  }
  hotpage::trace_gen::MixedOptions w;
  for (int i = 2; i + 1 < argc; i += 2) {
    const uint64_t v = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--pages"))
      w.pages = v;
    else if (!std::strcmp(argv[i], "--rate"))
      w.samples_per_sec = v;
    else if (!std::strcmp(argv[i], "--duration-ms"))
      w.duration_ms = v;
    else if (!std::strcmp(argv[i], "--hot"))
      w.hot_pages = v;
    else if (!std::strcmp(argv[i], "--shift-ms"))
      w.shift_ms = v;
    else if (!std::strcmp(argv[i], "--seed"))
      w.seed = v;
    else if (!std::strcmp(argv[i], "--scan-until-ms"))
      w.scan_until_ms = v;
    else if (!std::strcmp(argv[i], "--hot-percent"))
      w.hot_fraction = v / 100.0;
    else if (!std::strcmp(argv[i], "--zipf-percent"))
      w.zipf_fraction = v / 100.0;
    else {
      std::fprintf(stderr, "sim_trace_gen: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  const auto samples = hotpage::trace_gen::GenerateMixed(w);
  if (absl::Status s = hotpage::trace_gen::WriteMixedTrace(argv[1], samples);
      !s.ok()) {
    std::fprintf(stderr, "sim_trace_gen: %s\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "sim_trace_gen: %zu samples to %s\n", samples.size(),
               argv[1]);
  return 0;
}
