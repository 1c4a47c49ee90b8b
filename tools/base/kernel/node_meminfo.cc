#include "tools/base/kernel/node_meminfo.h"

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/base/parse.h"

namespace hotpage {

std::optional<uint64_t> ReadNodeFreeBytes(const KernelFs& fs, int node) {
  absl::StatusOr<std::string> m = fs.ReadFile(
      absl::StrCat("/sys/devices/system/node/node", node, "/meminfo"));
  if (!m.ok()) return std::nullopt;
  return ParseNodeMeminfo(*m, "MemFree");
}

}  // namespace hotpage
