// IndexList: an intrusive doubly linked list over page records held in a
// vector, for the simulator's LRU lists and FIFOs.

#ifndef HOTPAGE_TOOLS_SIMULATE_INDEX_LIST_H_
#define HOTPAGE_TOOLS_SIMULATE_INDEX_LIST_H_

#include <cstdint>

namespace hotpage {

// A doubly linked list threaded through page records by index (Page has
// `uint32_t prev, next`), as the kernel's LRU lists and HeMem's FIFOs
// thread through their pages: pages join at the tail, so the head is the
// one that joined (or was last moved) longest ago; O(1) to unlink any page,
// no allocation. Which list a page is on is the caller's to record; these
// take its word for it.
struct IndexList {
  static constexpr uint32_t kNil = UINT32_MAX;
  uint32_t head = kNil, tail = kNil;
  uint64_t size = 0;

  // Takes page `i`, which is on this list, off it.
  template <typename Pages>
  void Unlink(Pages& pages, uint32_t i) {
    auto& p = pages[i];
    if (p.prev != kNil)
      pages[p.prev].next = p.next;
    else
      head = p.next;
    if (p.next != kNil)
      pages[p.next].prev = p.prev;
    else
      tail = p.prev;
    --size;
    p.prev = p.next = kNil;
  }
  // Puts page `i`, which is on no list, at the tail.
  template <typename Pages>
  void PushBack(Pages& pages, uint32_t i) {
    auto& p = pages[i];
    p.next = kNil;
    p.prev = tail;
    if (tail != kNil)
      pages[tail].next = i;
    else
      head = i;
    tail = i;
    ++size;
  }
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_INDEX_LIST_H_
