// /proc/zoneinfo (mm/vmstat.c zoneinfo_show_print): each node's zones with
// their free pages, watermarks and lowmem reserves, and from them the free
// memory below which the kernel itself refuses, or starts reclaiming for, a
// movable allocation on the node (KernelReserves).
//
// Read once at start-up (attach, the daemon): the watermarks change only
// when vm.min_free_kbytes or vm.watermark_scale_factor is written or memory
// is hot-plugged.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_ZONEINFO_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_ZONEINFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// One zone, in pages, as zoneinfo_show_print prints it.
struct ZoneInfoZone {
  int node = -1;
  std::string name;  // "DMA", "DMA32", "Normal", "Movable", "Device"
  // Its position among its node's zones: the kernel's zone index (the
  // kernel prints every zone of every online node, empty ones included).
  int index = 0;
  uint64_t free_pages = 0;   // "pages free"
  uint64_t boost_pages = 0;  // "boost" (0 before 5.0, which lacks it)
  // "min", "low", "high": the kernel prints them with the boost added
  // (mm/internal.h min_wmark_pages: _watermark[WMARK_MIN] + watermark_boost).
  uint64_t min_pages = 0;
  uint64_t low_pages = 0;
  uint64_t high_pages = 0;
  uint64_t managed_pages = 0;  // "managed": 0 for an empty zone
  // "protection: (a, b, ...)": zone->lowmem_reserve[], by the index of the
  // highest zone an allocation may use; one entry per zone of the node.
  std::vector<uint64_t> protection;
};

struct ZoneInfo {
  std::vector<ZoneInfoZone> zones;  // in file order
};

// Parses /proc/zoneinfo text. Keyed, not positional: lines it does not
// need (per-node and zone counters, pagesets, "promo", "spanned", ...) are
// skipped. InvalidArgument, naming the line, if a zone lacks "pages free",
// "min", "low", "high", "managed" or "protection", repeats one, has
// min > low or low > high, or has a protection list whose length is not
// its node's zone count; if there is no zone at all, or text before the
// first "Node N, zone NAME" line.
absl::StatusOr<ZoneInfo> ParseZoneInfo(absl::string_view text);

// /proc/zoneinfo through `fs`, parsed.
absl::StatusOr<ZoneInfo> ReadZoneInfo(const KernelFs& fs);

// The kernel's own reserve on one node, in bytes of the node's free memory
// as node meminfo's MemFree counts it (the sum of its zones' free pages).
//
// A page the migrator moves onto node N (move_pages, mm/migrate.c
// do_move_pages_to_node) is allocated by alloc_migration_target with
// GFP_HIGHUSER_MOVABLE | __GFP_THISNODE: highest zone ZONE_MOVABLE, only
// node N's zones (ZONELIST_NOFALLBACK), and no OOM kill for __GFP_THISNODE
// (mm/page_alloc.c __alloc_pages_may_oom), so failure is -ENOMEM. A zone
// may serve it only while __zone_watermark_ok holds (mm/page_alloc.c,
// 6.12): free_pages > mark + z->lowmem_reserve[ZONE_MOVABLE]. The fast path
// (get_page_from_freelist with ALLOC_WMARK_LOW) uses mark = low, and below
// it the slow path wakes kswapd and retries with ALLOC_WMARK_MIN
// (gfp_to_alloc_flags), then direct reclaim; a THP (order 9) drops
// __GFP_KSWAPD_RECLAIM but checks the same min watermark. A zone fails
// while free <= mark + reserve, and holds at most its managed pages; the
// node's allocation fails only when every zone fails. So the largest node
// free memory at which the kernel can still refuse is
//   sum over zones of min(managed, mark - boost + lowmem_reserve[MOVABLE])
// (the boost is transient, kswapd clears it: measured without it; an
// empty zone counts 0; a reserved high-atomic pageblock, which zoneinfo
// does not print, would add up to 2 MiB per zone).
struct NodeKernelReserve {
  int node = -1;
  // With mark = min: at or below it, move_pages onto the node can fail
  // (-ENOMEM) once reclaim finds nothing (no swap, no demotion).
  uint64_t refuse_bytes = 0;
  // With mark = low: below it the kernel wakes kswapd for the node and
  // takes the slow path. Above refuse_bytes by the kernel's own margin,
  // max(min / 4, managed * watermark_scale_factor / 10000) per zone
  // (__setup_per_zone_wmarks).
  uint64_t reclaim_bytes = 0;
};

// Per node of `info`, ascending node id. The zone whose reserve counts is
// the one named "Movable" (ZONE_MOVABLE); a node without one uses its last
// zone's. `page_bytes`: the kernel's page size (zoneinfo counts pages).
// Sums saturate at UINT64_MAX.
std::vector<NodeKernelReserve> KernelReserves(const ZoneInfo& info,
                                              uint64_t page_bytes);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_ZONEINFO_H_
