#include "tools/daemon/fair_share.h"

#include <algorithm>
#include <numeric>

namespace hotpage {

std::vector<uint64_t> FairShares(uint64_t capacity_bytes,
                                 const std::vector<ShareInput>& in) {
  const size_t n = in.size();
  std::vector<uint64_t> target(n, 0);
  // 1. Floors, limited by what the workload wants or already holds, and
  // by its cap: a workload that neither wants nor holds its floor leaves
  // the rest to the others, and what it holds up to its floor is never
  // taken (its demand may not be measured yet: a new process, a sparse
  // sampler).
  long double floors = 0;
  for (size_t i = 0; i < n; ++i) {
    target[i] = std::min({in[i].floor_bytes,
                          std::max(in[i].demand_bytes, in[i].fast_bytes),
                          in[i].cap_bytes});
    floors += target[i];
  }
  if (floors > capacity_bytes) {
    const long double scale = capacity_bytes / floors;
    for (uint64_t& t : target) {
      t = static_cast<uint64_t>(static_cast<long double>(t) * scale);
    }
  }
  uint64_t used = std::accumulate(target.begin(), target.end(), uint64_t{0});
  if (used >= capacity_bytes) return target;
  uint64_t left = capacity_bytes - used;

  // 2. The rest by benefit: highest value per byte first, each up to
  // min(demand, cap). Equal benefits share what is left in proportion to
  // what they still want, so the order of the config does not decide.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return in[a].benefit_per_byte > in[b].benefit_per_byte;
  });
  for (size_t k = 0; k < n && left > 0;) {
    size_t e = k;
    while (e < n &&
           in[order[e]].benefit_per_byte == in[order[k]].benefit_per_byte) {
      ++e;
    }
    long double want = 0;
    for (size_t j = k; j < e; ++j) {
      const ShareInput& w = in[order[j]];
      const uint64_t limit = std::min(w.demand_bytes, w.cap_bytes);
      if (limit > target[order[j]]) want += limit - target[order[j]];
    }
    if (want > 0) {
      const long double give = std::min<long double>(want, left);
      uint64_t given = 0;
      for (size_t j = k; j < e; ++j) {
        const ShareInput& w = in[order[j]];
        const uint64_t limit = std::min(w.demand_bytes, w.cap_bytes);
        if (limit <= target[order[j]]) continue;
        const uint64_t more =
            static_cast<uint64_t>(give * (limit - target[order[j]]) / want);
        target[order[j]] += more;
        given += more;
      }
      left -= std::min(left, given);
    }
    k = e;
  }

  // 3. What is still left stays with the workloads that hold it: each
  // keeps what it holds, up to its cap, highest benefit first. A workload
  // holding more than its demand (cold pages on the fast tier) then gives
  // up only the room the others' demand takes, not all of it: pages are
  // not moved out for nobody.
  for (size_t j = 0; j < n && left > 0; ++j) {
    const ShareInput& w = in[order[j]];
    const uint64_t limit = std::min(w.fast_bytes, w.cap_bytes);
    if (limit <= target[order[j]]) continue;
    const uint64_t more = std::min(left, limit - target[order[j]]);
    target[order[j]] += more;
    left -= more;
  }
  return target;
}

std::vector<size_t> DemotionVictims(const std::vector<ShareInput>& in,
                                    const std::vector<uint64_t>& targets,
                                    size_t promoter) {
  std::vector<size_t> out;
  if (promoter >= in.size() || in[promoter].fast_bytes >= targets[promoter]) {
    return out;
  }
  std::vector<size_t> over_cap, over_target;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i == promoter) continue;
    const ShareInput& w = in[i];
    if (w.fast_bytes <= w.floor_bytes || w.fast_bytes <= targets[i]) continue;
    (w.fast_bytes > w.cap_bytes ? over_cap : over_target).push_back(i);
  }
  std::stable_sort(over_cap.begin(), over_cap.end(), [&](size_t a, size_t b) {
    return in[a].fast_bytes - in[a].cap_bytes >
           in[b].fast_bytes - in[b].cap_bytes;
  });
  std::stable_sort(over_target.begin(), over_target.end(),
                   [&](size_t a, size_t b) {
                     return in[a].benefit_per_byte < in[b].benefit_per_byte;
                   });
  out = over_cap;
  out.insert(out.end(), over_target.begin(), over_target.end());
  return out;
}

}  // namespace hotpage
