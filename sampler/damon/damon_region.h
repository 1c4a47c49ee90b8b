// DAMON regions: parsing what the kernel reports in a scheme's
// tried_regions directory, and turning regions into fixed-size chunks of
// evidence for the hotness table. Pure functions over untrusted text; no
// I/O. damon_source.h does the sysfs side; damon_region_fuzz.cc drives
// everything here under libFuzzer.
//
// What the kernel reports (mm/damon/sysfs-schemes.c, 6.12), per region of
// one aggregation interval, in .../schemes/0/tried_regions/<N>/:
//   start, end     "%lu\n": the virtual address range [start, end)
//   nr_accesses    "%u\n":  in how many of the aggregation's sample
//                           intervals DAMON found the region's one sampled
//                           page accessed (0 .. aggr_us / sample_us)
//   age            "%u\n":  aggregation intervals the access frequency has
//                           stayed about the same
// Directory names are "0", "1", ..., "N-1" next to a `total_bytes` file; a
// shell glob or a byte-wise sort lists them 0, 1, 10, 11, 2: order them with
// SortTriedRegionIndices().

#ifndef HOTPAGE_SAMPLER_DAMON_DAMON_REGION_H_
#define HOTPAGE_SAMPLER_DAMON_DAMON_REGION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace hotpage {

struct DamonRegion {
  uint64_t start = 0;  // first byte
  uint64_t end = 0;    // one past the last byte; start < end
  uint32_t nr_accesses = 0;
  uint32_t age = 0;

  uint64_t bytes() const { return end - start; }
  friend bool operator==(const DamonRegion& a, const DamonRegion& b) {
    return a.start == b.start && a.end == b.end &&
           a.nr_accesses == b.nr_accesses && a.age == b.age;
  }
};

// The contents of the four files of one tried region, as read.
struct DamonRegionText {
  absl::string_view start;
  absl::string_view end;
  absl::string_view nr_accesses;
  absl::string_view age;
};

// An unsigned decimal that fits `max`, with optional surrounding whitespace
// (sysfs values end in '\n'); no sign, no other characters.
std::optional<uint64_t> ParseUnsigned(absl::string_view text, uint64_t max);

// Parses one region. Errors are InvalidArgument and start with the name of
// the offending file so that a caller can prefix the directory:
//   "end: expected an unsigned decimal, found \"12x\""
//   "end: 4096 is not above start 8192"
absl::StatusOr<DamonRegion> ParseDamonRegion(const DamonRegionText& text);

// The index of a tried-region directory entry: canonical decimal ("0",
// "17"; not "017", "+1", "1 ") up to 9 digits. std::nullopt for anything
// else (`total_bytes`, stray files), which callers skip.
std::optional<uint32_t> ParseTriedRegionIndex(absl::string_view name);

// The numeric indices among `names` in ascending numeric order. More than
// `max_count` of them is a ResourceExhausted error (the caller names the
// directory): a broken or hostile tree cannot make hotpage read without
// bound.
absl::StatusOr<std::vector<uint32_t>> SortTriedRegionIndices(
    const std::vector<std::string>& names, size_t max_count);

// Makes `regions` a valid input for ForEachChunk(): sorted by start, empty
// ones dropped, overlaps clipped (a region starting inside its predecessor
// starts at the predecessor's end; one entirely inside it is dropped).
// Returns how many regions were clipped or dropped (the kernel never
// produces either; a nonzero count means a broken tree).
size_t NormalizeRegions(std::vector<DamonRegion>& regions);

// Region-level evidence per fixed-size, naturally aligned chunk of address
// space.
//
// For every chunk [c, c + chunk_bytes) that the regions cover at least in
// part, the chunk's count is the overlap-weighted mean of the nr_accesses of
// the regions covering it (each clamped to max_nr_accesses), rounded to
// nearest: the number of positive checks DAMON would have reported had the
// chunk been one region. Uncovered bytes (holes between mappings) do not
// dilute the mean. `fn(vaddr, count)` is called for each chunk whose count is
// at least 1, in ascending address order, with vaddr = the first covered
// byte of the chunk (so it is always inside a monitored region; it is the
// chunk start when the chunk is fully covered).
//
// Zero-count chunks are skipped without being visited, so a huge idle region
// costs O(1). `fn` returns false to stop early (a caller's output budget);
// ForEachChunk then returns false.
//
// Preconditions: regions sorted by start and non-overlapping
// (NormalizeRegions), chunk_bytes a power of two in [4 KiB, 1 GiB].
bool ForEachChunk(
    absl::Span<const DamonRegion> regions, uint64_t chunk_bytes,
    uint32_t max_nr_accesses,
    const std::function<bool(uint64_t vaddr, uint32_t count)>& fn);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_DAMON_DAMON_REGION_H_
