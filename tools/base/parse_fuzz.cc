// Fuzz target for tools/base/parse.h: every parser, on the same bytes.
// Checks round-trip properties, not only absence of crashes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "tools/base/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = hotpage::ParseKernelList(text);
  if (list.ok()) {
    // Formatting a parsed list and parsing it again gives the same list.
    auto again = hotpage::ParseKernelList(hotpage::FormatKernelList(*list));
    if (!again.ok() || *again != *list) std::abort();
    for (int v : *list) {
      if (v < 0 || v > hotpage::kMaxListId) std::abort();
    }
  }
  (void)hotpage::ParseInt(text);
  (void)hotpage::ParseIntRow(text);
  (void)hotpage::ParseBracketChoice(text);
  (void)hotpage::ParseNodeMeminfo(text, "MemTotal");
  return 0;
}
