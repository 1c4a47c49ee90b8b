// svg_demo: writes the SVG of a synthetic replay, to look at the picture
// and to test it in a browser (svg_render_test.sh). Not the simulator: the
// workload and the four policies below are toys sized to give every panel
// something to show.
//
//   svg_demo [--layout] OUT.svg
//
// --layout prints the document size and panel rectangles (SVG pixels), one
// per line: "document W H", "heatmap X Y W H", "tiers ...", "chart ...".
//
// Workload (60 s, 0.1 s intervals, 4000 samples per interval): a 640 MiB
// heap, a 256 MiB mapping far above it and a 1 MiB stack; the fast tier
// holds 256 MiB. A 32 MiB hot set (70% of samples) moves at 20 s and 40 s;
// a 64 MiB warm set takes 15%; the stack 5%; the other 10% are uniform.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tools/simulate/svg/svg_report.h"
#include "tools/simulate/svg/svg_report_builder.h"

namespace hotpage::simulate {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMiB = 1 << 20;

struct Mapping {
  uint64_t start;
  uint64_t pages;
};
const Mapping kHeap = {0x55d4a8c00000, 640 * kMiB / kPage};
const Mapping kMmap = {0x7f3c40000000, 256 * kMiB / kPage};
const Mapping kStack = {0x7ffd8a000000, 1 * kMiB / kPage};
constexpr uint64_t kPages =
    640 * kMiB / kPage + 256 * kMiB / kPage + kMiB / kPage;
constexpr uint64_t kFastPages = 256 * kMiB / kPage;
constexpr int kIntervals = 600;
constexpr double kIntervalS = 0.1;
constexpr int kSamplesPerInterval = 4000;

// Page index (0..kPages) <-> address.
uint64_t Address(uint64_t page) {
  if (page < kHeap.pages) return kHeap.start + page * kPage;
  page -= kHeap.pages;
  if (page < kMmap.pages) return kMmap.start + page * kPage;
  return kStack.start + (page - kMmap.pages) * kPage;
}

struct Phase {
  uint64_t hot_first, warm_first;  // page indexes of the 32 MiB / 64 MiB sets
};
// 0-20 s: hot at the heap's start; 20-40 s: in the middle of the heap;
// 40-60 s: in the far mapping.
const Phase kPhases[] = {
    {0, 30000}, {90000, 30000}, {kHeap.pages + 20000, 120000}};
constexpr uint64_t kHotPages = 32 * kMiB / kPage;
constexpr uint64_t kWarmPages = 64 * kMiB / kPage;

uint64_t Sample(const Phase& ph, std::mt19937_64& rng) {
  uint64_t r = rng() % 1000;
  uint64_t x = rng();
  if (r < 700) {  // hot set, skewed towards its start
    double u = (x >> 11) * 0x1.0p-53;
    return ph.hot_first + static_cast<uint64_t>(u * u * kHotPages);
  }
  if (r < 850) return ph.warm_first + x % kWarmPages;
  if (r < 900) return kHeap.pages + kMmap.pages + x % kStack.pages;
  return x % kPages;
}

// A toy promote-the-hottest policy: decayed sample counts per page; at the
// end of each interval, up to `rate` sampled slow pages with a count of at
// least `min_count` are promoted, hottest first, each displacing a fast page
// whose count is below half the candidate's (found by a clock hand).
struct ToyPolicy {
  const char* name;
  int rate;      // promotions per interval
  double decay;  // count multiplier per interval
  double min_count;
  std::vector<float> count = std::vector<float>(kPages, 0);
  std::vector<uint8_t> fast = std::vector<uint8_t>(kPages, 0);
  std::vector<uint64_t> touched = {};
  uint64_t hand = 0;

  void Init() {
    // First touch in allocation order: the heap's first 256 MiB is fast.
    for (uint64_t p = 0; p < kFastPages; ++p) fast[p] = 1;
  }
  void Access(uint64_t p) {
    if (count[p] < 0.5f) touched.push_back(p);
    count[p] += 1;
  }
  // Calls move(page, to_fast) for each move.
  template <typename MoveFn>
  void EndInterval(MoveFn move) {
    std::vector<uint64_t> cand;
    for (uint64_t p : touched) {
      if (!fast[p] && count[p] >= min_count) cand.push_back(p);
    }
    std::sort(cand.begin(), cand.end(), [&](uint64_t a, uint64_t b) {
      return count[a] != count[b] ? count[a] > count[b] : a < b;
    });
    int moved = 0;
    for (uint64_t p : cand) {
      if (moved >= rate) break;
      // Find a victim within a bounded scan.
      bool found = false;
      for (int step = 0; step < 200000; ++step) {
        uint64_t v = hand;
        hand = (hand + 1) % kPages;
        if (fast[v] && count[v] < count[p] / 2) {
          fast[v] = 0;
          move(v, false);
          found = true;
          break;
        }
      }
      if (!found) break;
      fast[p] = 1;
      move(p, true);
      ++moved;
    }
    std::vector<uint64_t> still;
    for (uint64_t p : touched) {
      count[p] *= decay;
      if (count[p] >= 0.05f) {
        still.push_back(p);
      } else {
        count[p] = 0;
      }
    }
    touched.swap(still);
  }
};

SvgReport MakeDemoReport() {
  SvgReportBuilderOptions opt;
  opt.interval_s = kIntervalS;
  SvgReportBuilder b(opt);
  std::vector<ToyPolicy> policies = {{"hotpage", 2500, 0.8, 2.0},
                                     {"tpp", 400, 0.5, 2.0},
                                     {"memtis", 1200, 0.95, 4.0}};
  int ids[3];
  for (int i = 0; i < 3; ++i) {
    policies[i].Init();
    ids[i] = b.AddPolicy(policies[i].name);
  }
  int first_touch = b.AddPolicy("first-touch");
  int oracle = b.AddPolicy("oracle", /*is_oracle=*/true);
  // hotpage is the subject: its placement goes into the tiers panel.
  for (uint64_t p = 0; p < kPages; ++p) {
    b.AddPage(0, Address(p), p < kFastPages ? Tier::kFast : Tier::kSlow);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < kIntervals; ++i) {
    const Phase& ph = kPhases[std::min(2, i / 200)];
    double t0 = i * kIntervalS;
    for (int s = 0; s < kSamplesPerInterval; ++s) {
      uint64_t p = Sample(ph, rng);
      double t = t0 + (s + 0.5) * kIntervalS / kSamplesPerInterval;
      b.AddAccess(t, Address(p));
      for (int k = 0; k < 3; ++k) {
        b.AddPolicyAccess(ids[k], t, policies[k].fast[p] != 0);
        policies[k].Access(p);
      }
      b.AddPolicyAccess(first_touch, t, p < kFastPages);
    }
    // Oracle: the phase's most likely pages are fast. The hot and warm sets
    // and the stack fit; the rest of the fast tier catches uniform accesses.
    // (Weights in parts per million of the interval's accesses.)
    uint64_t other_fast = kFastPages - kHotPages - kWarmPages - kStack.pages;
    uint64_t hits_ppm = 900000 + 100000 * other_fast / kPages;
    b.AddPolicyAccess(oracle, t0, true, hits_ppm);
    b.AddPolicyAccess(oracle, t0, false, 1000000 - hits_ppm);
    double t_end = t0 + kIntervalS * 0.999;
    for (int k = 0; k < 3; ++k) {
      policies[k].EndInterval([&](uint64_t page, bool to_fast) {
        if (k == 0)
          b.MovePage(t_end, Address(page), to_fast ? Tier::kFast : Tier::kSlow);
      });
    }
  }
  return b.Finish(
      "demo <synthetic> & toy policies: \"hot set moves at 20 s and 40 s\"",
      "svg_demo: 897 MiB touched in 3 mappings, fast tier 256 MiB (29%), "
      "0.1 s intervals, 4000 samples each; toy policies, not the simulator",
      "hotpage", kIntervals * kIntervalS);
}

}  // namespace
}  // namespace hotpage::simulate

int main(int argc, char** argv) {
  using namespace hotpage::simulate;
  bool layout = false;
  const char* out = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--layout") == 0) {
      layout = true;
    } else if (std::strcmp(argv[i], "--help") == 0 ||
               std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: svg_demo [--layout] OUT.svg\n");
      return 0;
    } else if (argv[i][0] == '-' || out != nullptr) {
      std::fprintf(stderr,
                   "svg_demo: unexpected argument '%s' (usage: svg_demo "
                   "[--layout] OUT.svg)\n",
                   argv[i]);
      return 2;
    } else {
      out = argv[i];
    }
  }
  if (out == nullptr) {
    std::fprintf(
        stderr,
        "svg_demo: missing OUT.svg (usage: svg_demo [--layout] OUT.svg)\n");
    return 2;
  }
  SvgReport report = MakeDemoReport();
  absl::Status st = WriteSvgFile(report, out);
  if (!st.ok()) {
    std::fprintf(stderr, "svg_demo: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  if (layout) {
    SvgLayout l = ComputeSvgLayout(report);
    std::printf("document %.0f %.0f\n", l.width, l.height);
    for (auto [name, r] :
         {std::pair{"heatmap", l.heatmap}, std::pair{"tiers", l.tiers},
          std::pair{"chart", l.chart}}) {
      std::printf("%s %.0f %.0f %.0f %.0f\n", name, r.x, r.y, r.width,
                  r.height);
    }
  }
  return 0;
}
