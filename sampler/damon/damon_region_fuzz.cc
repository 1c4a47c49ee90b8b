// Fuzz target for sampler/damon/damon_region.h: the tried-region parsers on the
// raw bytes, and NormalizeRegions + ForEachChunk on regions built from them.
// Checks properties, not only absence of crashes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "sampler/damon/damon_region.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

uint64_t Take(const uint8_t*& p, const uint8_t* end, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes && p < end; ++i) v |= uint64_t{*p++} << (8 * i);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hotpage;
  absl::string_view text(reinterpret_cast<const char*>(data), size);

  // Four files' contents separated by '|'.
  std::vector<absl::string_view> f =
      absl::StrSplit(text, absl::MaxSplits('|', 3));
  f.resize(4);
  auto r = ParseDamonRegion({f[0], f[1], f[2], f[3]});
  if (r.ok()) Check(r->start < r->end);

  auto idx = ParseTriedRegionIndex(text);
  if (idx) Check(absl::StrCat(*idx) == text);  // canonical form round-trips
  std::vector<std::string> names = absl::StrSplit(text, ' ');
  auto sorted = SortTriedRegionIndices(names, 16);
  if (sorted.ok()) {
    Check(sorted->size() <= 16);
    for (size_t i = 1; i < sorted->size(); ++i)
      Check((*sorted)[i - 1] <= (*sorted)[i]);
  }

  // Regions from the bytes: a chunk size, a cap, then (gap, nr, length)
  // triples, maybe near the top of the address space. Lengths are a few
  // chunks at most (the work per input stays small) unless the region is
  // idle, which ForEachChunk must skip in O(1) however large it is.
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  const uint64_t chunk = uint64_t{4096}
                         << (Take(p, end, 1) % 19);  // 4 KiB .. 1 GiB
  const uint32_t max_nr = static_cast<uint32_t>(Take(p, end, 1));
  uint64_t addr = (Take(p, end, 1) & 1) ? UINT64_MAX - (uint64_t{1} << 32) : 0;
  std::vector<DamonRegion> regions;
  while (p < end && regions.size() < 64) {
    const uint64_t gap = Take(p, end, 2) * 4096;
    const uint32_t nr = static_cast<uint32_t>(Take(p, end, 1));
    const uint64_t unit = chunk >> 6 < 4096 ? 4096 : chunk >> 6;
    uint64_t len = (Take(p, end, 1) + 1) * unit;
    if (nr == 0) len <<= 24;
    // Arbitrary order and overlaps: sometimes step back.
    uint64_t start;
    if (gap & 0x1000) {
      start = addr - (gap < addr ? gap : addr);
    } else {
      if (gap > UINT64_MAX - addr) break;
      start = addr + gap;
    }
    if (len > UINT64_MAX - start) break;
    const uint64_t stop = start + len;
    regions.push_back({start, stop, nr, 0});
    addr = stop;
  }
  NormalizeRegions(regions);
  for (size_t i = 1; i < regions.size(); ++i) {
    Check(regions[i - 1].end <= regions[i].start);
    Check(regions[i].start < regions[i].end);
  }
  uint64_t prev_chunk = 0;
  bool have_prev = false;
  size_t ri = 0;
  ForEachChunk(regions, chunk, max_nr, [&](uint64_t vaddr, uint32_t count) {
    Check(count >= 1 && count <= max_nr);
    const uint64_t c = vaddr & ~(chunk - 1);
    Check(!have_prev || c > prev_chunk);  // ascending, one call per chunk
    prev_chunk = c;
    have_prev = true;
    // vaddr lies inside a region.
    while (ri < regions.size() && regions[ri].end <= vaddr) ++ri;
    Check(ri < regions.size() && regions[ri].start <= vaddr);
    return true;
  });
  return 0;
}
