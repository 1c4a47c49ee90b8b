// SyntheticRing: an in-memory stand-in for a perf mmap ring, for tests and
// benchmarks. It lays out a metadata page and a power-of-two data area
// exactly as the kernel does and writes records the way the kernel does
// (at data_head, wrapping at the end, then publishing the new head).

#ifndef HOTPAGE_SAMPLER_PERF_SYNTHETIC_RING_H_
#define HOTPAGE_SAMPLER_PERF_SYNTHETIC_RING_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace hotpage {

class SyntheticRing {
 public:
  static constexpr size_t kPage = 4096;

  explicit SyntheticRing(size_t data_size) : data_size_(data_size) {
    mem_ = static_cast<uint8_t*>(std::aligned_alloc(kPage, kPage + data_size));
    std::memset(mem_, 0, kPage + data_size);
    meta()->data_offset = kPage;
    meta()->data_size = data_size;
  }
  ~SyntheticRing() { std::free(mem_); }
  SyntheticRing(const SyntheticRing&) = delete;
  SyntheticRing& operator=(const SyntheticRing&) = delete;

  void* base() { return mem_; }
  perf_event_mmap_page* meta() {
    return reinterpret_cast<perf_event_mmap_page*>(mem_);
  }
  size_t data_size() const { return data_size_; }

  // Starts the ring at an arbitrary position, as if `pos` bytes had been
  // written and consumed already.
  void SetPosition(uint64_t pos) {
    meta()->data_head = pos;
    meta()->data_tail = pos;
  }

  // Free space as the kernel computes it.
  size_t Free() const {
    auto* m = reinterpret_cast<const perf_event_mmap_page*>(mem_);
    return data_size_ - (m->data_head - m->data_tail);
  }

  // Appends one record (type, body of u64 words); returns false if it does
  // not fit (the kernel would then count it as lost).
  bool Write(uint32_t type, const std::vector<uint64_t>& body,
             uint16_t misc = 0) {
    perf_event_header h{type, misc, static_cast<uint16_t>(8 + 8 * body.size())};
    if (h.size > Free()) return false;
    std::vector<uint8_t> bytes(h.size);
    std::memcpy(bytes.data(), &h, 8);
    std::memcpy(bytes.data() + 8, body.data(), 8 * body.size());
    uint64_t head = meta()->data_head;
    uint8_t* data = mem_ + kPage;
    for (size_t i = 0; i < bytes.size(); ++i)
      data[(head + i) & (data_size_ - 1)] = bytes[i];
    __atomic_store_n(&meta()->data_head, head + h.size, __ATOMIC_RELEASE);
    return true;
  }

 private:
  size_t data_size_;
  uint8_t* mem_;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_SYNTHETIC_RING_H_
