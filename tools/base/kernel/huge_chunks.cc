#include "tools/base/kernel/huge_chunks.h"

#include <cstring>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {

bool NoAnonHugePages(const KernelFs& fs) {
  absl::StatusOr<std::string> text = fs.ReadFile("/proc/vmstat");
  if (!text.ok()) return false;
  constexpr absl::string_view kKey = "nr_anon_transparent_hugepages ";
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::StartsWith(line, kKey)) continue;
    uint64_t n;
    return absl::SimpleAtoi(line.substr(kKey.size()), &n) && n == 0;
  }
  return false;
}

absl::StatusOr<std::vector<uint64_t>> FindHugeChunks(const KernelFs& fs,
                                                     pid_t pid,
                                                     size_t max_chunks) {
  constexpr uint64_t kChunk = uint64_t{1} << 21;
  constexpr uint64_t kPfnMask = (uint64_t{1} << 55) - 1;
  constexpr uint64_t kPresent = uint64_t{1} << 63;
  constexpr uint64_t kKpfThp = uint64_t{1} << 22;
  if (NoAnonHugePages(fs)) return std::vector<uint64_t>{};
  absl::StatusOr<std::string> text =
      fs.ReadFile(absl::StrCat("/proc/", pid, "/smaps"));
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<SmapsVma>> vmas = ParseSmaps(*text);
  if (!vmas.ok()) return vmas.status();
  auto read_u64 = [&](const std::string& path,
                      uint64_t offset) -> std::optional<uint64_t> {
    absl::StatusOr<std::string> b = fs.ReadAt(path, offset, 8);
    if (!b.ok() || b->size() != 8) return std::nullopt;
    uint64_t v;
    std::memcpy(&v, b->data(), 8);
    return v;
  };
  const std::string pagemap = absl::StrCat("/proc/", pid, "/pagemap");
  std::vector<uint64_t> out;
  for (const SmapsVma& v : *vmas) {
    if (v.anon_huge_bytes == 0) continue;
    const bool all = v.anon_huge_bytes >= v.anonymous_bytes;
    for (uint64_t c = (v.start + kChunk - 1) & ~(kChunk - 1);
         c + kChunk <= v.end; c += kChunk) {
      if (out.size() >= max_chunks) return out;
      if (all) {
        out.push_back(c);
        continue;
      }
      std::optional<uint64_t> pm = read_u64(pagemap, (c / 4096) * 8);
      if (!pm || !(*pm & kPresent) || (*pm & kPfnMask) == 0) continue;
      std::optional<uint64_t> flags =
          read_u64("/proc/kpageflags", (*pm & kPfnMask) * 8);
      if (flags && (*flags & kKpfThp)) out.push_back(c);
    }
  }
  return out;
}

}  // namespace hotpage
