// The input of the hotness table: one decoded memory-access sample, and the
// key the table derives from it.
//
// AccessSample is the table's own input type: it carries only what the
// table needs (who, where, from which node, when, how much, at what period).
// The sampler's decoded sample (sampler/sample.h, Sample) is converted into
// it one batch at a time by PolicyEngine::Ingest (policy/engine.h), which
// adds what the table's view needs (the accessor's node from the CPU, the
// 4K/2M kind, the weight). Nothing in //hotness depends on how a sample was
// obtained, so hotness does not depend on the sampler.

#ifndef HOTPAGE_HOTNESS_ACCESS_SAMPLE_H_
#define HOTPAGE_HOTNESS_ACCESS_SAMPLE_H_

#include <cstdint>
#include <optional>

namespace hotpage {

// What one table entry covers: a base page, or a 2 MiB region that the
// kernel maps as one transparent huge page (tracked as a single entry).
enum class PageKind : uint8_t {
  k4K = 0,
  k2M = 1,
};

constexpr int PageShift(PageKind kind) {
  return kind == PageKind::k2M ? 21 : 12;
}
constexpr uint64_t PageBytes(PageKind kind) {
  return uint64_t{1} << PageShift(kind);
}
// How many 4 KiB pages an entry stands for (what it costs in fast-tier
// capacity).
constexpr uint64_t BasePages(PageKind kind) {
  return kind == PageKind::k2M ? 512 : 1;
}

// One sample. 32 bytes, so a ring drain of 256 samples is 8 KiB.
struct AccessSample {
  uint64_t vaddr = 0;          // sampled data virtual address
  uint64_t time_ns = 0;        // CLOCK_MONOTONIC time of the sample
  uint32_t address_space = 0;  // pid, or the sampler's address-space id; < 2^22
  uint32_t sample_period = 1;  // PMU events per sample when it was taken
  uint16_t cpu = 0;            // CPU that took the sample
  int8_t node = -1;            // NUMA node of `cpu`; -1 if unknown (the table
                               // tracks nodes 0-62)
  PageKind kind = PageKind::k4K;
  uint16_t weight = 1;  // samples this record stands for (1 unless pre-merged)
  uint16_t reserved = 0;
};
static_assert(sizeof(AccessSample) == 32, "keep samples at half a cache line");

// (address space, page number, kind), packed into the table's 64-bit key:
//
//   bit 63     valid (so that 0 can mean "empty slot")
//   bit 62     reserved for the table (set while an entry is being replaced)
//   bit 61     kind (1 = 2 MiB)
//   bits 39-60 address space (22 bits: covers pid_max = 2^22)
//   bits 0-38  page number (vaddr >> 12 or >> 21): addresses below 2^51,
//              i.e. all of x86-64's 47-bit user space and most of 5-level
//              paging's 56-bit one (mappings above 2^51 are rejected)
struct PageKey {
  static constexpr int kPageBits = 39;
  static constexpr int kAddressSpaceBits = 22;
  static constexpr uint64_t kValidBit = uint64_t{1} << 63;
  static constexpr uint64_t kReservedBit = uint64_t{1} << 62;
  static constexpr uint64_t kKindBit = uint64_t{1} << 61;

  uint32_t address_space = 0;
  uint64_t page = 0;  // vaddr >> PageShift(kind)
  PageKind kind = PageKind::k4K;

  // The key of the page `sample` touched, or nullopt if the address space
  // id or the address does not fit the packing (counted as rejected).
  static std::optional<PageKey> FromSample(const AccessSample& sample) {
    uint64_t packed = PackSample(sample);
    if (packed == 0) return std::nullopt;
    return Unpack(packed);
  }

  // Packed key of `sample`, 0 if it does not fit. The ingest hot path uses
  // this directly.
  static constexpr uint64_t PackSample(const AccessSample& s) {
    const uint64_t page = s.vaddr >> PageShift(s.kind);
    if (s.address_space >> kAddressSpaceBits || page >> kPageBits) return 0;
    return kValidBit | (s.kind == PageKind::k2M ? kKindBit : 0) |
           (uint64_t{s.address_space} << kPageBits) | page;
  }

  constexpr uint64_t Pack() const {
    if (address_space >> kAddressSpaceBits || page >> kPageBits) return 0;
    return kValidBit | (kind == PageKind::k2M ? kKindBit : 0) |
           (uint64_t{address_space} << kPageBits) | page;
  }

  static constexpr PageKey Unpack(uint64_t packed) {
    packed &= ~kReservedBit;
    PageKey k;
    k.kind = (packed & kKindBit) ? PageKind::k2M : PageKind::k4K;
    k.address_space = static_cast<uint32_t>(
        (packed >> kPageBits) & ((uint64_t{1} << kAddressSpaceBits) - 1));
    k.page = packed & ((uint64_t{1} << kPageBits) - 1);
    return k;
  }

  constexpr uint64_t vaddr() const { return page << PageShift(kind); }

  friend constexpr bool operator==(const PageKey& a, const PageKey& b) {
    return a.address_space == b.address_space && a.page == b.page &&
           a.kind == b.kind;
  }
};

}  // namespace hotpage

#endif  // HOTPAGE_HOTNESS_ACCESS_SAMPLE_H_
