#include "tools/trace_gen/trace_gen.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/status_macros.h"
#include "tools/trace_gen/zipf.h"

namespace hotpage {
namespace trace_gen {
namespace {

// Stream number of the layout decisions (hot-set slots, key shuffle): far
// from the thread streams 0..T-1.
constexpr uint64_t kLayoutStream = 1 << 20;

// Where the workloads' memory is. Fixed, typical x86-64 user addresses:
// 2 MiB-aligned anonymous mappings below the libraries (0x7f...), a brk
// heap just above a PIE executable (0x55...).
constexpr uint64_t kGupsBase = 0x7f1c00000000ull;
constexpr uint64_t kZipfIndexBase = 0x7f2a40000000ull;
constexpr uint64_t kZipfValuesBase = 0x7f2a80000000ull;
constexpr uint64_t kScanBase = 0x7f4e00000000ull;
constexpr uint64_t kWorkingSetBase = 0x55d0c4a00000ull;
constexpr uint64_t kSharedBase = 0x7f5800000000ull;
constexpr uint64_t kColdBase = 0x7f5a00000000ull;
constexpr uint64_t kArenaBase = 0x7f6000000000ull;
constexpr uint64_t kArenaStride = 64ull << 20;  // glibc's per-thread arenas
constexpr uint64_t kStreamBase = 0x7f3600000000ull;
constexpr uint64_t kStreamHotBase = 0x7f3800000000ull;
constexpr uint64_t kStreamColdBase = 0x7f3a00000000ull;
constexpr uint64_t kStream2Base = 0x7f3400000000ull;

absl::Status Invalid(absl::string_view flag, absl::string_view want,
                     double got) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " wants ", want, ", got ", got));
}

absl::Status CheckGen(const GenOptions& g) {
  if (!(g.duration_s > 0 && g.duration_s <= 1e6)) {
    return Invalid("duration", "seconds in (0, 1e6]", g.duration_s);
  }
  if (g.sample_period < 1) return Invalid("sample-period", "at least 1", 0);
  if (!(g.access_rate > 0 && g.access_rate <= 1e10)) {
    return Invalid("access-rate", "accesses per second in (0, 1e10]",
                   g.access_rate);
  }
  if (!(g.write_share >= 0 && g.write_share <= 1)) {
    return Invalid("write-share", "a fraction in [0, 1]", g.write_share);
  }
  const double gap = static_cast<double>(g.sample_period) * 1e9 / g.access_rate;
  if (!(gap >= 1 && gap <= 1e12)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--sample-period / --access-rate gives ", gap,
        " ns between samples of a thread; it must be from 1 ns to 1000 s"));
  }
  return absl::OkStatus();
}

absl::Status CheckFraction(absl::string_view flag, double v) {
  if (!(v >= 0 && v <= 1)) return Invalid(flag, "a fraction in [0, 1]", v);
  return absl::OkStatus();
}

absl::Status CheckCount(absl::string_view flag, uint64_t v, uint64_t lo,
                        uint64_t hi) {
  if (v < lo || v > hi) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " wants an integer from ", lo, " to ", hi, ", got ", v));
  }
  return absl::OkStatus();
}

uint64_t SecondsToNs(double s) { return static_cast<uint64_t>(s * 1e9 + 0.5); }

uint64_t PageAddr(uint64_t base, uint64_t page) {
  return base + page * kPageBytes;
}

// An 8-byte-aligned address in a page: loads of 64-bit words.
uint64_t WordIn(uint64_t page_addr, Rng& rng) {
  return page_addr + 8 * rng.Below(kPageBytes / 8);
}

Range PagesRange(uint64_t base, uint64_t first_page, uint64_t pages) {
  return {PageAddr(base, first_page), PageAddr(base, first_page + pages)};
}

// --- gups ------------------------------------------------------------------

class Gups : public Workload {
 public:
  Gups(const GupsOptions& o, const GenOptions& g) : o_(o), g_(g) {
    hot_pages_ = static_cast<uint64_t>(
        static_cast<double>(o.pages) * o.hot_fraction + 0.5);
    hot_pages_ = std::clamp<uint64_t>(hot_pages_, 1, o.pages);
    const uint64_t slots = o.pages / hot_pages_;
    const uint64_t dur = internal::DurationNs(g);
    shift_ns_ = o.shift_every_s > 0 ? SecondsToNs(o.shift_every_s) : dur;
    if (shift_ns_ == 0) shift_ns_ = dur;
    const uint64_t phases =
        std::max<uint64_t>(1, (dur + shift_ns_ - 1) / shift_ns_);
    Rng layout(DeriveSeed(g.seed, kLayoutStream));
    for (uint64_t p = 0; p < phases; ++p) {
      uint64_t slot = layout.Below(slots);
      if (p > 0 && slots > 1)
        slot = (slot_.back() + 1 + layout.Below(slots - 1)) % slots;
      slot_.push_back(slot);
    }
  }

  uint32_t threads() const override { return o_.threads; }

  Access Draw(uint32_t thread, uint64_t rel_ns, Rng& rng) const override {
    const uint64_t phase =
        std::min<uint64_t>(rel_ns / shift_ns_, slot_.size() - 1);
    const uint64_t hot_first = slot_[phase] * hot_pages_;
    Access a;
    uint64_t page;
    if (o_.pages == hot_pages_ || rng.Chance(o_.hot_share)) {
      page = hot_first + rng.Below(hot_pages_);
      a.cls = AccessClass::kHot;
    } else {
      page = rng.Below(o_.pages - hot_pages_);  // uniform over the other pages
      if (page >= hot_first) page += hot_pages_;
      a.cls = AccessClass::kCold;
    }
    a.vaddr = WordIn(PageAddr(kGupsBase, page), rng);
    a.store = rng.Chance(g_.write_share);
    return a;
  }

  GroundTruth Truth() const override {
    GroundTruth t;
    t.regions.push_back({"table", PagesRange(kGupsBase, 0, o_.pages)});
    const uint64_t dur = internal::DurationNs(g_);
    for (uint64_t p = 0; p < slot_.size(); ++p) {
      Phase ph;
      ph.start_ns = p * shift_ns_;
      ph.end_ns = std::min(dur, (p + 1) * shift_ns_);
      const double share = o_.pages == hot_pages_ ? 1.0 : o_.hot_share;
      ph.hot.push_back(
          {PagesRange(kGupsBase, slot_[p] * hot_pages_, hot_pages_), share,
           absl::StrCat("hot set (slot ", slot_[p], ")")});
      t.phases.push_back(std::move(ph));
    }
    return t;
  }

 private:
  GupsOptions o_;
  GenOptions g_;
  uint64_t hot_pages_ = 1;
  uint64_t shift_ns_ = 1;
  std::vector<uint64_t> slot_;  // hot-set slot of each phase
};

// --- zipf ------------------------------------------------------------------

class Zipf : public Workload {
 public:
  Zipf(const ZipfOptions& o, const GenOptions& g)
      : o_(o), g_(g), zipf_(o.keys, o.s) {
    buckets_ = 1;
    while (buckets_ < o.keys) buckets_ <<= 1;
    Rng layout(DeriveSeed(g.seed, kLayoutStream));
    salt_ = layout.Next();
    slot_of_key_.resize(o.keys);
    for (uint64_t k = 0; k < o.keys; ++k)
      slot_of_key_[k] = static_cast<uint32_t>(k);
    for (uint64_t k = o.keys; k > 1; --k) {  // Fisher-Yates
      std::swap(slot_of_key_[k - 1], slot_of_key_[layout.Below(k)]);
    }
  }

  uint32_t threads() const override { return o_.threads; }

  Access Draw(uint32_t thread, uint64_t rel_ns, Rng& rng) const override {
    const uint64_t key = zipf_.Sample(rng);  // rank == key
    Access a;
    a.cls = key < o_.keys / 100  ? AccessClass::kHot
            : key < o_.keys / 10 ? AccessClass::kWarm
                                 : AccessClass::kCold;
    a.store = rng.Chance(g_.write_share);
    if (!a.store && rng.Chance(o_.index_share)) {
      a.vaddr = BucketAddr(key);
    } else {
      a.vaddr = ValueAddr(key) + 8 * rng.Below(o_.value_bytes / 8);
    }
    return a;
  }

  GroundTruth Truth() const override {
    GroundTruth t;
    const uint64_t index_bytes = buckets_ * 8;
    const uint64_t value_bytes = o_.keys * o_.value_bytes;
    t.regions.push_back(
        {"index", {kZipfIndexBase, kZipfIndexBase + RoundUp(index_bytes)}});
    t.regions.push_back(
        {"values", {kZipfValuesBase, kZipfValuesBase + RoundUp(value_bytes)}});
    // Expected share of every page; the hottest pages that together get
    // half of the samples are the phase's hot ranges.
    const double ws = g_.write_share;
    const double index_w = (1 - ws) * o_.index_share;
    const double value_w = (1 - ws) * (1 - o_.index_share) + ws;
    std::vector<double> index_share(RoundUp(index_bytes) / kPageBytes);
    std::vector<double> value_share(RoundUp(value_bytes) / kPageBytes);
    for (uint64_t k = 0; k < o_.keys; ++k) {
      const double p = zipf_.Probability(k);
      index_share[(BucketAddr(k) - kZipfIndexBase) / kPageBytes] += p * index_w;
      value_share[(ValueAddr(k) - kZipfValuesBase) / kPageBytes] += p * value_w;
    }
    std::vector<std::pair<double, uint64_t>> pages;  // (share, address)
    for (uint64_t i = 0; i < index_share.size(); ++i) {
      pages.push_back({index_share[i], PageAddr(kZipfIndexBase, i)});
    }
    for (uint64_t i = 0; i < value_share.size(); ++i) {
      pages.push_back({value_share[i], PageAddr(kZipfValuesBase, i)});
    }
    std::sort(pages.begin(), pages.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    Phase ph;
    ph.start_ns = 0;
    ph.end_ns = internal::DurationNs(g_);
    double sum = 0;
    for (const auto& [share, addr] : pages) {
      if (sum >= 0.5) break;
      sum += share;
      ph.hot.push_back({{addr, addr + kPageBytes},
                        share,
                        addr < kZipfValuesBase ? "index page" : "value page"});
    }
    std::sort(ph.hot.begin(), ph.hot.end(),
              [](const HotRange& a, const HotRange& b) {
                return a.range.start < b.range.start;
              });
    t.phases.push_back(std::move(ph));
    return t;
  }

 private:
  static uint64_t RoundUp(uint64_t bytes) {
    return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  }
  uint64_t BucketAddr(uint64_t key) const {
    uint64_t h = key ^ salt_;
    return kZipfIndexBase + (SplitMix64(&h) & (buckets_ - 1)) * 8;
  }
  uint64_t ValueAddr(uint64_t key) const {
    return kZipfValuesBase + uint64_t{slot_of_key_[key]} * o_.value_bytes;
  }

  ZipfOptions o_;
  GenOptions g_;
  ZipfTable zipf_;
  uint64_t buckets_ = 1;
  uint64_t salt_ = 0;
  std::vector<uint32_t> slot_of_key_;
};

// --- scan ------------------------------------------------------------------

class Scan : public Workload {
 public:
  Scan(const ScanOptions& o, const GenOptions& g)
      : o_(o),
        g_(g),
        cold_ns_(SecondsToNs(o.cold_at_s)),
        pass_ns_(SecondsToNs(o.pass_s)) {}

  Access Draw(uint32_t thread, uint64_t rel_ns, Rng& rng) const override {
    Access a;
    if (rng.Chance(o_.focus_share)) {
      if (rel_ns < cold_ns_) {
        // The scan pointer: one pass over every cache line per pass_ns.
        const uint64_t lines = o_.scan_pages * (kPageBytes / 64);
        const uint64_t line = static_cast<uint64_t>(
            static_cast<unsigned __int128>(rel_ns % pass_ns_) * lines /
            pass_ns_);
        a.vaddr = kScanBase + line * 64 + 8 * rng.Below(8);
        a.cls = AccessClass::kSequential;
      } else {
        a.vaddr =
            WordIn(PageAddr(kWorkingSetBase, rng.Below(o_.ws_pages)), rng);
        a.cls = AccessClass::kHot;
      }
    } else {
      const uint64_t i = rng.Below(o_.scan_pages + o_.ws_pages);
      a.vaddr = WordIn(i < o_.scan_pages
                           ? PageAddr(kScanBase, i)
                           : PageAddr(kWorkingSetBase, i - o_.scan_pages),
                       rng);
      a.cls = AccessClass::kCold;
    }
    a.store = rng.Chance(g_.write_share);
    return a;
  }

  GroundTruth Truth() const override {
    GroundTruth t;
    const Range scan = PagesRange(kScanBase, 0, o_.scan_pages);
    const Range ws = PagesRange(kWorkingSetBase, 0, o_.ws_pages);
    t.regions.push_back({"working-set", ws});
    t.regions.push_back({"scan", scan});
    const double total = static_cast<double>(o_.scan_pages + o_.ws_pages);
    const double noise = 1 - o_.focus_share;
    const uint64_t dur = internal::DurationNs(g_);
    if (cold_ns_ > 0) {
      t.phases.push_back(
          {0,
           std::min(cold_ns_, dur),
           {{scan,
             o_.focus_share +
                 noise * static_cast<double>(o_.scan_pages) / total,
             "scan (sequential)"}}});
    }
    if (cold_ns_ < dur) {
      t.phases.push_back(
          {cold_ns_,
           dur,
           {{ws,
             o_.focus_share + noise * static_cast<double>(o_.ws_pages) / total,
             "working set"}}});
    }
    return t;
  }

 private:
  ScanOptions o_;
  GenOptions g_;
  uint64_t cold_ns_;
  uint64_t pass_ns_;
};

// --- stream_mix ------------------------------------------------------------

class StreamMix : public Workload {
 public:
  StreamMix(const StreamMixOptions& o, const GenOptions& g)
      : o_(o),
        g_(g),
        pass_ns_(SecondsToNs(o.pass_s)),
        pass2_ns_(SecondsToNs(o.stream2_pass_s)),
        from2_ns_(SecondsToNs(o.stream2_from_s)) {}

  Access Draw(uint32_t thread, uint64_t rel_ns, Rng& rng) const override {
    Access a;
    const double r = rng.Uniform();
    if (r < o_.stream_share) {
      // A stream pointer: one pass over every cache line per pass.
      const bool second =
          o_.stream2_pages > 0 && rel_ns >= from2_ns_ && r < o_.stream2_share;
      const uint64_t pages = second ? o_.stream2_pages : o_.stream_pages;
      const uint64_t pass = second ? pass2_ns_ : pass_ns_;
      const uint64_t lines = pages * (kPageBytes / 64);
      const uint64_t line = static_cast<uint64_t>(
          static_cast<unsigned __int128>(rel_ns % pass) * lines / pass);
      a.vaddr =
          (second ? kStream2Base : kStreamBase) + line * 64 + 8 * rng.Below(8);
      a.cls = AccessClass::kSequential;
    } else if (r < o_.stream_share + o_.hot_share) {
      a.vaddr = WordIn(PageAddr(kStreamHotBase, rng.Below(o_.hot_pages)), rng);
      a.cls = AccessClass::kHot;
    } else {
      a.vaddr =
          WordIn(PageAddr(kStreamColdBase, rng.Below(o_.cold_pages)), rng);
      a.cls = AccessClass::kCold;
    }
    a.store = rng.Chance(g_.write_share);
    return a;
  }

  GroundTruth Truth() const override {
    GroundTruth t;
    const Range stream = PagesRange(kStreamBase, 0, o_.stream_pages);
    const Range hot = PagesRange(kStreamHotBase, 0, o_.hot_pages);
    const Range cold = PagesRange(kStreamColdBase, 0, o_.cold_pages);
    t.regions.push_back({"stream", stream});
    t.regions.push_back({"hot-set", hot});
    t.regions.push_back({"cold-heap", cold});
    const uint64_t end = internal::DurationNs(g_);
    if (o_.stream2_pages == 0 || from2_ns_ >= end) {
      t.phases.push_back({0,
                          end,
                          {{stream, o_.stream_share, "stream (sequential)"},
                           {hot, o_.hot_share, "latency-sensitive hot set"}}});
      return t;
    }
    const Range stream2 = PagesRange(kStream2Base, 0, o_.stream2_pages);
    t.regions.push_back({"stream-2", stream2});
    if (from2_ns_ > 0) {
      t.phases.push_back({0,
                          from2_ns_,
                          {{stream, o_.stream_share, "stream (sequential)"},
                           {hot, o_.hot_share, "latency-sensitive hot set"}}});
    }
    t.phases.push_back(
        {from2_ns_,
         end,
         {{stream, o_.stream_share - o_.stream2_share, "stream (sequential)"},
          {stream2, o_.stream2_share, "second stream (sequential)"},
          {hot, o_.hot_share, "latency-sensitive hot set"}}});
    return t;
  }

 private:
  StreamMixOptions o_;
  GenOptions g_;
  uint64_t pass_ns_;
  uint64_t pass2_ns_;
  uint64_t from2_ns_;
};

// --- packages --------------------------------------------------------------

class Packages : public Workload {
 public:
  Packages(const PackagesOptions& o, const GenOptions& g) : o_(o), g_(g) {}

  uint32_t threads() const override { return o_.threads; }
  uint32_t Package(uint32_t thread) const {
    return thread < o_.threads / 2 ? 0 : 1;
  }
  uint32_t Cpu(uint32_t thread) const override {
    const uint32_t p = Package(thread);
    const uint32_t j = thread - p * (o_.threads / 2);
    return p * o_.cpus_per_package + j % o_.cpus_per_package;
  }

  Access Draw(uint32_t thread, uint64_t rel_ns, Rng& rng) const override {
    Access a;
    const double u = rng.Uniform();
    if (u < o_.private_share) {
      a.vaddr =
          WordIn(PageAddr(ArenaBase(thread), rng.Below(o_.private_pages)), rng);
      a.cls = AccessClass::kHot;
    } else if (u < o_.private_share + o_.shared_share) {
      a.vaddr = WordIn(PageAddr(kSharedBase, rng.Below(o_.shared_pages)), rng);
      a.cls = AccessClass::kWarm;
    } else {
      a.vaddr = WordIn(PageAddr(kColdBase, rng.Below(o_.cold_pages)), rng);
      a.cls = AccessClass::kCold;
    }
    a.store = rng.Chance(g_.write_share);
    return a;
  }

  GroundTruth Truth() const override {
    GroundTruth t;
    Phase ph;
    ph.start_ns = 0;
    ph.end_ns = internal::DurationNs(g_);
    for (uint32_t i = 0; i < o_.threads; ++i) {
      const Range r = PagesRange(ArenaBase(i), 0, o_.private_pages);
      const std::string who =
          absl::StrCat("thread ", i, " (tid ", Tid(g_.pid, i), ", cpu ", Cpu(i),
                       ", package ", Package(i), ")");
      t.regions.push_back({absl::StrCat("private-", i), r});
      ph.hot.push_back(
          {r, o_.private_share / o_.threads, absl::StrCat(who, " private")});
    }
    const Range shared = PagesRange(kSharedBase, 0, o_.shared_pages);
    t.regions.push_back({"shared", shared});
    t.regions.push_back({"cold", PagesRange(kColdBase, 0, o_.cold_pages)});
    ph.hot.push_back({shared, o_.shared_share, "shared by all threads"});
    std::sort(ph.hot.begin(), ph.hot.end(),
              [](const HotRange& a, const HotRange& b) {
                return a.range.start < b.range.start;
              });
    std::sort(t.regions.begin(), t.regions.end(),
              [](const NamedRange& a, const NamedRange& b) {
                return a.range.start < b.range.start;
              });
    t.phases.push_back(std::move(ph));
    return t;
  }

 private:
  static uint64_t ArenaBase(uint32_t thread) {
    return kArenaBase + thread * kArenaStride;
  }

  PackagesOptions o_;
  GenOptions g_;
};

}  // namespace

namespace internal {

uint64_t MeanGapNs(const GenOptions& g) {
  const double gap = static_cast<double>(g.sample_period) * 1e9 / g.access_rate;
  return std::max<uint64_t>(1, static_cast<uint64_t>(gap + 0.5));
}

uint64_t DurationNs(const GenOptions& g) { return SecondsToNs(g.duration_s); }

}  // namespace internal

absl::StatusOr<std::unique_ptr<Workload>> MakeGups(const GupsOptions& o,
                                                   const GenOptions& g) {
  HOTPAGE_RETURN_IF_ERROR(CheckGen(g));
  HOTPAGE_RETURN_IF_ERROR(CheckCount("pages", o.pages, 1, 1ull << 28));
  if (!(o.hot_fraction > 0 && o.hot_fraction <= 1)) {
    return Invalid("hot-fraction", "a fraction in (0, 1]", o.hot_fraction);
  }
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("hot-share", o.hot_share));
  if (!(o.shift_every_s >= 0 && o.shift_every_s <= 1e6)) {
    return Invalid("shift-every", "seconds in [0, 1e6]", o.shift_every_s);
  }
  HOTPAGE_RETURN_IF_ERROR(CheckCount("threads", o.threads, 1, 256));
  return std::unique_ptr<Workload>(new Gups(o, g));
}

absl::StatusOr<std::unique_ptr<Workload>> MakeZipf(const ZipfOptions& o,
                                                   const GenOptions& g) {
  HOTPAGE_RETURN_IF_ERROR(CheckGen(g));
  HOTPAGE_RETURN_IF_ERROR(CheckCount("keys", o.keys, 1, 1ull << 26));
  if (o.value_bytes < 8 || o.value_bytes > kPageBytes ||
      (o.value_bytes & (o.value_bytes - 1))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--value-bytes wants a power of two from 8 to 4096, got ",
                     o.value_bytes));
  }
  if (!(o.s >= 0 && o.s <= 10))
    return Invalid("zipf-s", "an exponent in [0, 10]", o.s);
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("index-share", o.index_share));
  HOTPAGE_RETURN_IF_ERROR(CheckCount("threads", o.threads, 1, 256));
  return std::unique_ptr<Workload>(new Zipf(o, g));
}

absl::StatusOr<std::unique_ptr<Workload>> MakeScan(const ScanOptions& o,
                                                   const GenOptions& g) {
  HOTPAGE_RETURN_IF_ERROR(CheckGen(g));
  HOTPAGE_RETURN_IF_ERROR(
      CheckCount("scan-pages", o.scan_pages, 1, 1ull << 28));
  HOTPAGE_RETURN_IF_ERROR(CheckCount("ws-pages", o.ws_pages, 1, 1ull << 28));
  if (!(o.cold_at_s >= 0 && o.cold_at_s <= 1e6)) {
    return Invalid("cold-at", "seconds in [0, 1e6]", o.cold_at_s);
  }
  if (!(o.pass_s >= 1e-6 && o.pass_s <= 1e6)) {
    return Invalid("pass", "seconds in [1e-6, 1e6]", o.pass_s);
  }
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("focus-share", o.focus_share));
  return std::unique_ptr<Workload>(new Scan(o, g));
}

absl::StatusOr<std::unique_ptr<Workload>> MakeStreamMix(
    const StreamMixOptions& o, const GenOptions& g) {
  HOTPAGE_RETURN_IF_ERROR(CheckGen(g));
  HOTPAGE_RETURN_IF_ERROR(
      CheckCount("stream-pages", o.stream_pages, 1, 1ull << 28));
  HOTPAGE_RETURN_IF_ERROR(CheckCount("hot-pages", o.hot_pages, 1, 1ull << 28));
  HOTPAGE_RETURN_IF_ERROR(
      CheckCount("cold-pages", o.cold_pages, 1, 1ull << 28));
  if (!(o.pass_s >= 1e-6 && o.pass_s <= 1e6)) {
    return Invalid("pass", "seconds in [1e-6, 1e6]", o.pass_s);
  }
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("stream-share", o.stream_share));
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("hot-share", o.hot_share));
  if (o.stream_share + o.hot_share > 1) {
    return Invalid("hot-share", "at most 1 - stream-share", o.hot_share);
  }
  HOTPAGE_RETURN_IF_ERROR(
      CheckCount("stream2-pages", o.stream2_pages, 0, 1ull << 28));
  if (!(o.stream2_pass_s >= 1e-6 && o.stream2_pass_s <= 1e6)) {
    return Invalid("stream2-pass", "seconds in [1e-6, 1e6]", o.stream2_pass_s);
  }
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("stream2-share", o.stream2_share));
  if (o.stream2_share > o.stream_share) {
    return Invalid("stream2-share", "at most stream-share", o.stream2_share);
  }
  if (!(o.stream2_from_s >= 0 && o.stream2_from_s <= 1e6)) {
    return Invalid("stream2-from", "seconds in [0, 1e6]", o.stream2_from_s);
  }
  return std::unique_ptr<Workload>(new StreamMix(o, g));
}

absl::StatusOr<std::unique_ptr<Workload>> MakePackages(const PackagesOptions& o,
                                                       const GenOptions& g) {
  HOTPAGE_RETURN_IF_ERROR(CheckGen(g));
  if (o.threads < 2 || o.threads > 256 || o.threads % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads wants an even number from 2 to 256 (half on "
                     "each package), got ",
                     o.threads));
  }
  HOTPAGE_RETURN_IF_ERROR(
      CheckCount("cpus-per-package", o.cpus_per_package, 1, 1024));
  HOTPAGE_RETURN_IF_ERROR(CheckCount("private-pages", o.private_pages, 1,
                                     kArenaStride / kPageBytes));
  HOTPAGE_RETURN_IF_ERROR(
      CheckCount("shared-pages", o.shared_pages, 1, 1ull << 21));
  HOTPAGE_RETURN_IF_ERROR(
      CheckCount("cold-pages", o.cold_pages, 1, 1ull << 21));
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("private-share", o.private_share));
  HOTPAGE_RETURN_IF_ERROR(CheckFraction("shared-share", o.shared_share));
  if (o.private_share + o.shared_share > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--private-share + --shared-share must be at most 1, got ",
                     o.private_share + o.shared_share));
  }
  return std::unique_ptr<Workload>(new Packages(o, g));
}

absl::StatusOr<GenStats> GenerateTrace(const Workload& w, const GenOptions& g,
                                       TraceWriter* writer) {
  absl::Status status;
  std::set<uint32_t> cpus;
  absl::flat_hash_set<uint64_t> pages;
  GenStats st = GenerateSamples(w, g, [&](const Sample& s) {
    if (status.ok()) status = writer->Append(s);
    cpus.insert(s.cpu);
    pages.insert(s.vaddr / kPageBytes);
  });
  st.distinct_pages = pages.size();
  HOTPAGE_RETURN_IF_ERROR(status);
  for (uint32_t cpu : cpus) {
    CpuCounters c;
    c.cpu = cpu;
    HOTPAGE_RETURN_IF_ERROR(writer->SetCounters(c));
  }
  HOTPAGE_RETURN_IF_ERROR(writer->Close());
  return st;
}

TraceHeader GeneratedHeader(const GenOptions& g, const std::string& command,
                            const std::string& topology_json) {
  TraceHeader h;
  h.sample_period = g.sample_period;
  h.start_realtime_ns = g.start_realtime_ns;
  h.start_clock_ns = g.start_clock_ns;
  h.source = SampleSourceName(SampleSource::kPebsLoad);
  h.event_config = absl::StrCat("cpu/mem-loads,ldlat=30/P",
                                g.write_share > 0 ? ",cpu/mem-stores/P" : "",
                                " (modelled, not recorded: ", command, ")");
  h.topology_json = topology_json;
  return h;
}

std::string FormatTruth(const GroundTruth& truth, const GenOptions& g,
                        const std::string& command) {
  std::string out =
      "# Ground truth of a generated trace (tools/trace_gen/trace_gen.h: "
      "GroundTruth).\n"
      "# region NAME START END: address ranges the workload touches, [START, "
      "END)\n"
      "# phase K START_NS END_NS: time_ns of the samples, [START_NS, END_NS)\n"
      "# hot START END SHARE LABEL: a hot range of the phase above and the\n"
      "#   expected fraction of the phase's samples that fall in it\n";
  absl::StrAppend(&out, "command ", command, "\n");
  for (const NamedRange& r : truth.regions) {
    absl::StrAppendFormat(&out, "region %s 0x%x 0x%x\n", r.name, r.range.start,
                          r.range.end);
  }
  for (size_t k = 0; k < truth.phases.size(); ++k) {
    const Phase& p = truth.phases[k];
    absl::StrAppendFormat(&out, "phase %d %d %d\n", k,
                          g.start_clock_ns + p.start_ns,
                          g.start_clock_ns + p.end_ns);
    for (const HotRange& h : p.hot) {
      absl::StrAppendFormat(&out, "hot 0x%x 0x%x %.6f %s\n", h.range.start,
                            h.range.end, h.share, h.label);
    }
  }
  return out;
}

}  // namespace trace_gen
}  // namespace hotpage
