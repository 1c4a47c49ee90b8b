// Fuzz target for the text parsers of event configuration
// (event_config.h): a PMU format field of sysfs ("config:0-7,32-35"),
// /proc/cpuinfo and --source. The files are the kernel's, but a root
// process that opens perf events from them must not crash or build an
// attr from a malformed one. Checks, beyond the absence of crashes: a
// parsed format field names a config word 0-3 and ordered bit ranges
// within 0-63 that add up to at most 64 bits; a parsed CPU has a vendor,
// a family and a model; a parsed --source prints back to itself.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "sampler/perf/event_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto f = hotpage::ParseFormatField(text); f.ok()) {
    if (f->word < 0 || f->word > 3 || f->ranges.empty()) std::abort();
    int bits = 0;
    for (const auto& [lo, hi] : f->ranges) {
      if (lo < 0 || hi > 63 || lo > hi) std::abort();
      bits += hi - lo + 1;
    }
    if (bits > 64) std::abort();
  }
  if (std::optional<hotpage::CpuModel> cpu = hotpage::ParseCpuinfo(text)) {
    if (cpu->vendor.empty() || cpu->family < 0 || cpu->model < 0) std::abort();
    (void)hotpage::DescribeCpuModel(*cpu);
  }
  if (auto s = hotpage::ParseSourceRequest(text); s.ok()) {
    static constexpr const char* kNames[] = {"auto", "pebs", "ibs",
                                             "pagefault"};
    if (text != kNames[static_cast<int>(*s)]) std::abort();
  }
  return 0;
}
