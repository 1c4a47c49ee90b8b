#include "tools/trace_gen/lackey.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace hotpage {
namespace trace_gen {
namespace {

constexpr uint64_t kLineBytes = 64;
constexpr uint32_t kMaxAccessBytes = 1 << 20;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "ADDR,SIZE" exactly.
bool ParseAccess(absl::string_view s, uint64_t* addr, uint32_t* size) {
  size_t i = 0;
  uint64_t a = 0;
  while (i < s.size() && HexDigit(s[i]) >= 0) {
    if (i >= 16) return false;
    a = a << 4 | static_cast<uint64_t>(HexDigit(s[i]));
    ++i;
  }
  if (i == 0 || i >= s.size() || s[i] != ',') return false;
  ++i;
  const size_t digits = i;
  uint64_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    n = n * 10 + static_cast<uint64_t>(s[i] - '0');
    if (n > kMaxAccessBytes) return false;
    ++i;
  }
  if (i == digits || i != s.size() || n == 0) return false;
  *addr = a;
  *size = static_cast<uint32_t>(n);
  return true;
}

// "==PID==" or "--PID--" at the start of a Valgrind message.
bool ParseMessage(absl::string_view line, LackeyRecord* out) {
  if (line.size() < 5) return false;
  const char c = line[0];
  if ((c != '=' && c != '-') || line[1] != c) return false;
  size_t i = 2;
  uint64_t pid = 0;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') {
    pid = pid * 10 + static_cast<uint64_t>(line[i] - '0');
    if (pid > 0xffffffffull) return false;
    ++i;
  }
  if (i == 2 || i + 2 > line.size() || line[i] != c || line[i + 1] != c)
    return false;
  if (i + 2 < line.size() && line[i + 2] != ' ') return false;
  out->kind = LackeyRecord::kMessage;
  out->pid = static_cast<uint32_t>(pid);
  out->text = line.substr(i + 2);
  absl::ConsumePrefix(&out->text, " ");
  return true;
}

}  // namespace

std::optional<LackeyRecord> ParseLackeyLine(absl::string_view line) {
  LackeyRecord r;
  if (line.size() >= 3 && line[0] == 'I' && line[1] == ' ' && line[2] == ' ') {
    r.kind = LackeyRecord::kInstr;
  } else if (line.size() >= 3 && line[0] == ' ' && line[2] == ' ') {
    switch (line[1]) {
      case 'L':
        r.kind = LackeyRecord::kLoad;
        break;
      case 'S':
        r.kind = LackeyRecord::kStore;
        break;
      case 'M':
        r.kind = LackeyRecord::kModify;
        break;
      default:
        return std::nullopt;
    }
  } else if (ParseMessage(line, &r)) {
    return r;
  } else {
    return std::nullopt;
  }
  if (!ParseAccess(line.substr(3), &r.addr, &r.size)) return std::nullopt;
  return r;
}

LruCache::LruCache(uint64_t sets, uint32_t ways)
    : sets_(std::max<uint64_t>(1, sets)),
      ways_(std::max<uint32_t>(1, ways)),
      entries_(sets_ * ways_, 0) {}

bool LruCache::Access(uint64_t tag) {
  const uint64_t key = tag + 1;  // 0 marks an empty way
  uint64_t* set = &entries_[(tag % sets_) * ways_];
  uint32_t i = 0;
  while (i < ways_ && set[i] != key && set[i] != 0) ++i;
  const bool hit = i < ways_ && set[i] == key;
  if (i == ways_) i = ways_ - 1;  // miss in a full set: evict the last
  std::memmove(set + 1, set, i * sizeof(uint64_t));
  set[0] = key;
  return hit;
}

absl::Status CheckLackeyOptions(const LackeyOptions& o) {
  if (o.sample_period < 1)
    return absl::InvalidArgumentError("--sample-period wants at least 1");
  if (o.ldlat_cycles < 1 || o.ldlat_cycles > 65535) {
    return absl::InvalidArgumentError("--ldlat wants cycles from 1 to 65535");
  }
  if (!(o.ghz >= 0.1 && o.ghz <= 10)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ghz wants 0.1 to 10, got ", o.ghz));
  }
  if (!(o.time_scale >= 1e-3 && o.time_scale <= 1e6)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time-scale wants 0.001 to 1e6, got ", o.time_scale));
  }
  struct Level {
    const char* flag;
    uint64_t bytes;
    uint32_t ways;
  };
  for (const Level& l : {Level{"l1-kib", o.l1_bytes, o.l1_ways},
                         Level{"l2-kib", o.l2_bytes, o.l2_ways},
                         Level{"llc-kib", o.llc_bytes, o.llc_ways}}) {
    if (l.ways < 1 || l.ways > 64 || l.bytes < kLineBytes * l.ways ||
        l.bytes > (1ull << 32) || l.bytes % (kLineBytes * l.ways) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", l.flag, ": ", l.bytes,
                       " bytes is not a whole number of sets of ", l.ways,
                       " 64-byte lines (ways 1 to 64, at most 4 GiB)"));
    }
  }
  return absl::OkStatus();
}

LackeyConverter::LackeyConverter(const LackeyOptions& o, SampleSink sink)
    : o_(o),
      sink_(std::move(sink)),
      l1_(o.l1_bytes / kLineBytes / o.l1_ways, o.l1_ways),
      l2_(o.l2_bytes / kLineBytes / o.l2_ways, o.l2_ways),
      llc_(o.llc_bytes / kLineBytes / o.llc_ways, o.llc_ways),
      stlb_(128, 12),
      rng_(DeriveSeed(o.seed, 0)),
      load_countdown_(o.sample_period),
      store_countdown_(o.sample_period) {}

uint64_t LackeyConverter::NowNs() const {
  const double ns = static_cast<double>(stats_.cycles) / o_.ghz * o_.time_scale;
  return o_.start_clock_ns + static_cast<uint64_t>(ns);
}

absl::Status LackeyConverter::Load(uint64_t addr) {
  ++stats_.loads;
  const uint64_t line = addr / kLineBytes;
  const bool stlb_miss = !stlb_.Access(addr >> 12);
  stats_.stlb_misses += stlb_miss ? 1 : 0;
  ServedBy by = ServedBy::kL1;
  int level = 0;
  if (!l1_.Access(line)) {
    by = ServedBy::kL2;
    level = 1;
    if (!l2_.Access(line)) {
      by = ServedBy::kL3;
      level = 2;
      if (!llc_.Access(line)) {
        by = ServedBy::kDram;
        level = 3;
      }
    }
  }
  ++stats_.loads_by_level[level];
  const uint32_t latency = LoadLatency(by, stlb_miss, rng_);
  stats_.cycles += (latency - 5) / 2;
  if (latency < o_.ldlat_cycles) return absl::OkStatus();
  ++stats_.counted_loads;
  if (--load_countdown_ > 0) return absl::OkStatus();
  load_countdown_ = o_.sample_period;
  Sample s;
  s.vaddr = addr;
  s.data_src = LoadDataSrc(by, stlb_miss);
  s.weight = latency;
  s.source = SampleSource::kPebsLoad;
  ++stats_.load_samples;
  return Emit(&s);
}

absl::Status LackeyConverter::Store(uint64_t addr) {
  ++stats_.stores;
  const uint64_t line = addr / kLineBytes;
  const bool stlb_miss = !stlb_.Access(addr >> 12);
  stats_.stlb_misses += stlb_miss ? 1 : 0;
  const bool l1_hit = l1_.Access(line);
  if (!l1_hit && !l2_.Access(line)) llc_.Access(line);  // write-allocate
  if (!o_.stores || --store_countdown_ > 0) return absl::OkStatus();
  store_countdown_ = o_.sample_period;
  Sample s;
  s.vaddr = addr;
  s.data_src = StoreDataSrc(l1_hit, stlb_miss);
  s.weight = 0;
  s.source = SampleSource::kPebsStore;
  ++stats_.store_samples;
  return Emit(&s);
}

absl::Status LackeyConverter::Emit(Sample* s) {
  const DecodedDataSrc d = DecodeDataSrc(s->data_src);
  s->level = d.level;
  s->tlb = d.tlb;
  s->flags = d.is_store ? kSampleStore : 0;
  s->time_ns = NowNs();
  s->pid = pid_;
  s->tid = pid_;  // Lackey does not say which thread; most programs have one
  s->cpu = o_.cpu;
  s->period = o_.sample_period;
  return sink_(*s);
}

absl::Status LackeyConverter::Feed(absl::string_view line,
                                   uint64_t line_number) {
  ++stats_.lines;
  const std::optional<LackeyRecord> r = ParseLackeyLine(line);
  if (!r) {
    constexpr size_t kShow = 60;
    return absl::InvalidArgumentError(absl::StrCat(
        "line ", line_number, " is not Lackey --trace-mem output: \"",
        absl::CHexEscape(line.substr(0, kShow)),
        line.size() > kShow ? "..." : "",
        "\" (expected \"I  ADDR,SIZE\", \" L|S|M ADDR,SIZE\" or a \"==PID==\" "
        "message)"));
  }
  switch (r->kind) {
    case LackeyRecord::kInstr:
      ++stats_.instructions;
      ++stats_.cycles;
      return absl::OkStatus();
    case LackeyRecord::kLoad:
      return Load(r->addr);
    case LackeyRecord::kStore:
      return Store(r->addr);
    case LackeyRecord::kModify: {
      absl::Status s = Load(r->addr);
      if (!s.ok()) return s;
      return Store(r->addr);
    }
    case LackeyRecord::kMessage: {
      if (pid_ == 0) pid_ = r->pid;
      absl::string_view text = r->text;
      if (command_.empty() && absl::ConsumePrefix(&text, "Command: ")) {
        command_ = std::string(text);
      } else if (valgrind_.empty() &&
                 absl::ConsumePrefix(&text, "Using Valgrind-")) {
        valgrind_ = std::string(text.substr(0, text.find(' ')));
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace trace_gen
}  // namespace hotpage
