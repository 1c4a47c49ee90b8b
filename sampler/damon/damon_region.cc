#include "sampler/damon/damon_region.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace hotpage {
namespace {

// Quotes at most 40 bytes of what a file held, non-printables as '?'.
std::string Shown(absl::string_view text) {
  std::string s(absl::StripAsciiWhitespace(text).substr(0, 40));
  for (char& c : s) {
    if (c < 0x20 || c >= 0x7f) c = '?';
  }
  return s;
}

absl::Status FieldError(absl::string_view field, absl::string_view text,
                        uint64_t max) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": expected an unsigned decimal up to ", max,
                   ", found \"", Shown(text), "\""));
}

}  // namespace

std::optional<uint64_t> ParseUnsigned(absl::string_view text, uint64_t max) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (max - d) / 10) return std::nullopt;  // v * 10 + d > max
    v = v * 10 + d;
  }
  return v;
}

absl::StatusOr<DamonRegion> ParseDamonRegion(const DamonRegionText& text) {
  constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max();
  constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
  DamonRegion r;
  std::optional<uint64_t> v = ParseUnsigned(text.start, kU64);
  if (!v) return FieldError("start", text.start, kU64);
  r.start = *v;
  v = ParseUnsigned(text.end, kU64);
  if (!v) return FieldError("end", text.end, kU64);
  r.end = *v;
  if (r.end <= r.start) {
    return absl::InvalidArgumentError(
        absl::StrCat("end: ", r.end, " is not above start ", r.start));
  }
  v = ParseUnsigned(text.nr_accesses, kU32);
  if (!v) return FieldError("nr_accesses", text.nr_accesses, kU32);
  r.nr_accesses = static_cast<uint32_t>(*v);
  v = ParseUnsigned(text.age, kU32);
  if (!v) return FieldError("age", text.age, kU32);
  r.age = static_cast<uint32_t>(*v);
  return r;
}

std::optional<uint32_t> ParseTriedRegionIndex(absl::string_view name) {
  if (name.empty() || name.size() > 9) return std::nullopt;
  if (name.size() > 1 && name[0] == '0') return std::nullopt;
  uint32_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  return v;
}

absl::StatusOr<std::vector<uint32_t>> SortTriedRegionIndices(
    const std::vector<std::string>& names, size_t max_count) {
  std::vector<uint32_t> out;
  for (const std::string& name : names) {
    std::optional<uint32_t> i = ParseTriedRegionIndex(name);
    if (!i) continue;
    if (out.size() >= max_count) {
      return absl::ResourceExhaustedError(
          absl::StrCat("more than ", max_count,
                       " tried regions; refusing to read them all"));
    }
    out.push_back(*i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

size_t NormalizeRegions(std::vector<DamonRegion>& regions) {
  size_t fixed = 0;
  std::sort(regions.begin(), regions.end(),
            [](const DamonRegion& a, const DamonRegion& b) {
              return a.start != b.start ? a.start < b.start : a.end < b.end;
            });
  size_t w = 0;
  uint64_t prev_end = 0;
  bool have_prev = false;
  for (size_t i = 0; i < regions.size(); ++i) {
    DamonRegion r = regions[i];
    if (r.end <= r.start) {
      ++fixed;
      continue;
    }
    if (have_prev && r.start < prev_end) {
      ++fixed;
      if (r.end <= prev_end) continue;
      r.start = prev_end;
    }
    regions[w++] = r;
    prev_end = r.end;
    have_prev = true;
  }
  regions.resize(w);
  return fixed;
}

bool ForEachChunk(
    absl::Span<const DamonRegion> regions, uint64_t chunk_bytes,
    uint32_t max_nr_accesses,
    const std::function<bool(uint64_t vaddr, uint32_t count)>& fn) {
  const uint64_t mask = ~(chunk_bytes - 1);
  bool have_chunk = false;
  uint64_t chunk = 0;       // start of the chunk being accumulated
  uint64_t first = 0;       // its first covered byte
  uint64_t acc_weight = 0;  // sum of nr_accesses x bytes: <= 2^32 x 2^30
  uint64_t acc_bytes = 0;   // covered bytes, <= chunk_bytes
  auto flush = [&]() -> bool {
    if (!have_chunk || acc_bytes == 0) return true;
    const uint64_t count = (acc_weight + acc_bytes / 2) / acc_bytes;
    have_chunk = false;
    if (count == 0) return true;
    return fn(first, static_cast<uint32_t>(count));
  };
  for (const DamonRegion& r : regions) {
    if (r.end <= r.start) continue;  // precondition; stay safe anyway
    const uint64_t nr = std::min(r.nr_accesses, max_nr_accesses);
    uint64_t a = r.start;
    while (a < r.end) {
      const uint64_t c = a & mask;
      // c <= a < r.end, so c + chunk_bytes cannot overflow when it is below
      // r.end.
      const uint64_t seg_end =
          (r.end - c > chunk_bytes) ? c + chunk_bytes : r.end;
      if (!have_chunk || c != chunk) {
        if (!flush()) return false;
        have_chunk = true;
        chunk = c;
        first = a;
        acc_weight = 0;
        acc_bytes = 0;
      }
      acc_weight += nr * (seg_end - a);
      acc_bytes += seg_end - a;
      a = seg_end;
      if (nr == 0 && a < r.end) {
        // The chunks strictly inside an idle region all count 0: skip to
        // the region's last chunk, which may share with the next region.
        const uint64_t last = (r.end - 1) & mask;
        if (last > a) {
          if (!flush()) return false;
          a = last;
        }
      }
    }
  }
  return flush();
}

}  // namespace hotpage
