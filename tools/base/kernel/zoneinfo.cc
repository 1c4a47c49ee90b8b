#include "tools/base/kernel/zoneinfo.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/base/parse.h"

namespace hotpage {
namespace {

// MAX_NR_ZONES is at most 6 (include/linux/mmzone.h); a longer list is not
// zoneinfo.
constexpr size_t kMaxZonesPerNode = 16;

std::string Quote(absl::string_view line) {
  return absl::StrCat("\"", line.substr(0, 80), line.size() > 80 ? "..." : "",
                      "\"");
}

absl::Status Bad(int line_no, absl::string_view line, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("zoneinfo line ", line_no, " ", Quote(line), ": ", why));
}

std::optional<uint64_t> NonNegative(absl::string_view s) {
  std::optional<int64_t> v = ParseInt(s);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

// "(0, 443, 443, 443, 443)" -> values.
std::optional<std::vector<uint64_t>> ParseProtection(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  if (!absl::ConsumePrefix(&s, "(") || !absl::ConsumeSuffix(&s, ")")) {
    return std::nullopt;
  }
  std::vector<uint64_t> out;
  for (absl::string_view tok : absl::StrSplit(s, ',')) {
    std::optional<uint64_t> v = NonNegative(tok);
    if (!v || out.size() >= kMaxZonesPerNode) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// Fields seen in the zone being parsed, for the missing/duplicate checks.
enum Field { kFree, kBoost, kMin, kLow, kHigh, kManaged, kProtection, kCount };
constexpr const char* kFieldNames[kCount] = {
    "pages free", "boost", "min", "low", "high", "managed", "protection"};

struct Pending {
  ZoneInfoZone zone;
  bool seen[kCount] = {};
  int header_line = 0;
  std::string header;
  // Between "pages free" and "protection:": where the watermark lines are.
  // Outside it, a counter that happened to be named "min" is no watermark.
  bool in_watermarks = false;
  bool done = false;  // after "protection:"
};

absl::Status Finish(const Pending& p) {
  for (int f = 0; f < kCount; ++f) {
    if (f == kBoost) continue;  // optional (kernels before 5.0)
    if (!p.seen[f]) {
      return Bad(p.header_line, p.header,
                 absl::StrCat("the zone has no \"", kFieldNames[f], "\""));
    }
  }
  const ZoneInfoZone& z = p.zone;
  if (z.min_pages > z.low_pages || z.low_pages > z.high_pages) {
    return Bad(
        p.header_line, p.header,
        absl::StrCat("watermarks min ", z.min_pages, " low ", z.low_pages,
                     " high ", z.high_pages, " are not ascending"));
  }
  if (z.boost_pages > z.min_pages) {
    return Bad(p.header_line, p.header,
               absl::StrCat("boost ", z.boost_pages, " above min ", z.min_pages,
                            " (min includes the boost)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ZoneInfo> ParseZoneInfo(absl::string_view text) {
  ZoneInfo info;
  std::optional<Pending> p;
  std::map<int, int> zones_of_node;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (f.empty()) continue;
    if (f[0] == "Node") {
      // "Node 0, zone      DMA"
      if (f.size() != 4 || f[1].size() < 2 || f[1].back() != ',' ||
          f[2] != "zone") {
        return Bad(line_no, line, "not \"Node N, zone NAME\"");
      }
      std::optional<int64_t> node = ParseInt(f[1].substr(0, f[1].size() - 1));
      if (!node || *node < 0 || *node > kMaxListId) {
        return Bad(line_no, line, "bad node id");
      }
      if (p) {
        if (absl::Status s = Finish(*p); !s.ok()) return s;
        info.zones.push_back(std::move(p->zone));
      }
      p.emplace();
      p->header_line = line_no;
      p->header = std::string(line.substr(0, 80));
      p->zone.node = static_cast<int>(*node);
      p->zone.name = std::string(f[3]);
      int& count = zones_of_node[p->zone.node];
      if (static_cast<size_t>(count) >= kMaxZonesPerNode) {
        return Bad(line_no, line, "more zones on the node than any kernel has");
      }
      p->zone.index = count++;
      continue;
    }
    if (!p) return Bad(line_no, line, "text before the first \"Node\" line");
    if (p->done) continue;
    auto set = [&](Field field, uint64_t* out,
                   absl::string_view value) -> absl::Status {
      if (p->seen[field]) {
        return Bad(line_no, line,
                   absl::StrCat("a second \"", kFieldNames[field], "\""));
      }
      std::optional<uint64_t> v = NonNegative(value);
      if (!v) return Bad(line_no, line, "not a page count");
      *out = *v;
      p->seen[field] = true;
      return absl::OkStatus();
    };
    ZoneInfoZone& z = p->zone;
    if (f[0] == "pages" && f.size() == 3 && f[1] == "free") {
      if (absl::Status s = set(kFree, &z.free_pages, f[2]); !s.ok()) return s;
      p->in_watermarks = true;
      continue;
    }
    if (f[0] == "protection:") {
      if (p->seen[kProtection]) {
        return Bad(line_no, line, "a second \"protection\"");
      }
      absl::string_view rest = line.substr(line.find("protection:") + 11);
      std::optional<std::vector<uint64_t>> prot = ParseProtection(rest);
      if (!prot) return Bad(line_no, line, "not \"protection: (N, N, ...)\"");
      z.protection = std::move(*prot);
      p->seen[kProtection] = true;
      p->in_watermarks = false;
      p->done = true;
      continue;
    }
    if (!p->in_watermarks || f.size() != 2) continue;
    absl::Status s = absl::OkStatus();
    if (f[0] == "boost") {
      s = set(kBoost, &z.boost_pages, f[1]);
    } else if (f[0] == "min") {
      s = set(kMin, &z.min_pages, f[1]);
    } else if (f[0] == "low") {
      s = set(kLow, &z.low_pages, f[1]);
    } else if (f[0] == "high") {
      s = set(kHigh, &z.high_pages, f[1]);
    } else if (f[0] == "managed") {
      s = set(kManaged, &z.managed_pages, f[1]);
    }
    if (!s.ok()) return s;
  }
  if (!p) return absl::InvalidArgumentError("zoneinfo: no \"Node N, zone\"");
  if (absl::Status s = Finish(*p); !s.ok()) return s;
  info.zones.push_back(std::move(p->zone));
  for (const ZoneInfoZone& z : info.zones) {
    const int count = zones_of_node[z.node];
    if (z.protection.size() != static_cast<size_t>(count)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "zoneinfo: node ", z.node, " zone ", z.name, ": protection has ",
          z.protection.size(), " entries but the node has ", count, " zones"));
    }
  }
  return info;
}

absl::StatusOr<ZoneInfo> ReadZoneInfo(const KernelFs& fs) {
  absl::StatusOr<std::string> text = fs.ReadFile("/proc/zoneinfo");
  if (!text.ok()) return text.status();
  absl::StatusOr<ZoneInfo> info = ParseZoneInfo(*text);
  if (!info.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        fs.Display("/proc/zoneinfo"), ": ", info.status().message()));
  }
  return info;
}

std::vector<NodeKernelReserve> KernelReserves(const ZoneInfo& info,
                                              uint64_t page_bytes) {
  auto add = [](uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
  };
  auto bytes = [page_bytes](uint64_t pages) {
    return page_bytes != 0 && pages > UINT64_MAX / page_bytes
               ? UINT64_MAX
               : pages * page_bytes;
  };
  // The zone index whose lowmem_reserve a movable allocation meets: the
  // zone named "Movable", else the node's last.
  std::map<int, int> last;
  std::map<int, int> movable;
  for (const ZoneInfoZone& z : info.zones) {
    last[z.node] = std::max(last[z.node], z.index);
    if (z.name == "Movable") movable[z.node] = z.index;
  }
  std::map<int, NodeKernelReserve> out;
  for (const ZoneInfoZone& z : info.zones) {
    NodeKernelReserve& r = out[z.node];
    r.node = z.node;
    auto m = movable.find(z.node);
    const size_t idx =
        static_cast<size_t>(m != movable.end() ? m->second : last[z.node]);
    const uint64_t reserve = idx < z.protection.size() ? z.protection[idx] : 0;
    const uint64_t boost = std::min(z.boost_pages, z.min_pages);
    r.refuse_bytes = add(
        r.refuse_bytes,
        bytes(std::min(z.managed_pages, add(z.min_pages - boost, reserve))));
    r.reclaim_bytes = add(
        r.reclaim_bytes,
        bytes(std::min(z.managed_pages, add(z.low_pages - boost, reserve))));
  }
  std::vector<NodeKernelReserve> v;
  v.reserve(out.size());
  for (const auto& [node, r] : out) v.push_back(r);
  return v;
}

}  // namespace hotpage
