#include "tools/base/kernel/proc_cgroup.h"

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hotpage {

std::optional<std::string> CgroupV2Path(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "0::")) {
      absl::ConsumePrefix(&line, "/");
      return std::string(line);
    }
  }
  return std::nullopt;
}

}  // namespace hotpage
