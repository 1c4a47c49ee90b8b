// The libcds peer of hotness_table_benchmark, in its own translation unit:
// libcds declares the TSan annotation functions with other signatures than
// abseil does, so the two cannot share a file in --config=tsan builds.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "cds/container/michael_kvlist_hp.h"
#include "cds/container/michael_map.h"
#include "cds/gc/hp.h"
#include "cds/init.h"
#include "hotness/ingest_impls.h"

namespace hotpage::bench::internal {
namespace {

// ---------------------------------------------------------------------------
// libcds MichaelHashMap (hazard pointers).

// libcds needs Initialize() once and one HP garbage collector alive while
// any map exists; both live until exit.
void EnsureCds() {
  static const bool ready = [] {
    cds::Initialize();
    new cds::gc::HP();  // intentionally leaked: maps may outlive statics
    return true;
  }();
  (void)ready;
}

class CdsImpl : public IngestImpl {
 public:
  explicit CdsImpl(uint64_t pages) : pages_(pages) {
    EnsureCds();
    AttachThread();
    Reset();
  }
  ~CdsImpl() override {
    AttachThread();
    map_.reset();
  }
  void AttachThread() override {
    // The constructing (main) thread stays attached; attachThread() on an
    // attached thread would leak its hazard-pointer record.
    if (!cds::threading::Manager::isThreadAttached())
      cds::threading::Manager::attachThread();
  }
  void DetachThread() override {
    if (cds::threading::Manager::isThreadAttached())
      cds::threading::Manager::detachThread();
  }
  void Reset() override {
    AttachThread();
    map_.reset();
    map_ = std::make_unique<Map>(pages_, 1);
  }
  void Ingest(absl::Span<const AccessSample> batch) override {
    for (const AccessSample& s : batch) {
      const uint64_t key = PageKey::PackSample(s);
      const uint64_t w = s.weight;
      auto add = [w](Map::value_type& item) {
        item.second.n.fetch_add(w, std::memory_order_relaxed);
      };
      // find, then insert_with, then find again (update() would allocate a
      // node per call). insert_with's functor runs after the node is
      // linked, so it adds rather than stores: a concurrent find may have
      // counted into the fresh node already.
      if (map_->find(key, add)) continue;
      if (map_->insert_with(key, add)) continue;
      map_->find(key, add);
    }
  }
  Summary Summarize() override {
    Summary s;
    for (auto it = map_->begin(); it != map_->end(); ++it) {
      ++s.entries;
      s.counted_weight += it->second.n.load(std::memory_order_relaxed);
    }
    s.memory_bytes = static_cast<double>(LiveBytes());
    return s;
  }

 private:
  // std::atomic is not copyable; libcds needs a copyable mapped type.
  struct Counter {
    std::atomic<uint64_t> n{0};
    Counter() = default;
    Counter(const Counter& o) : n(o.n.load(std::memory_order_relaxed)) {}
  };
  using Alloc = CountingAllocator<int, std::allocator>;
  struct ListTraits : public cds::container::michael_list::traits {
    using less = std::less<uint64_t>;
    using allocator = Alloc;
  };
  using List =
      cds::container::MichaelKVList<cds::gc::HP, uint64_t, Counter, ListTraits>;
  struct MapTraits : public cds::container::michael_map::traits {
    using hash = MixHash;
    using allocator = Alloc;
  };
  using Map = cds::container::MichaelHashMap<cds::gc::HP, List, MapTraits>;
  uint64_t pages_;
  std::unique_ptr<Map> map_;
};

}  // namespace

std::unique_ptr<IngestImpl> MakeCdsImpl(uint64_t pages) {
  return std::make_unique<CdsImpl>(pages);
}

}  // namespace hotpage::bench::internal
