#include "sampler/trace/trace_dump.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace hotpage {
namespace {

constexpr uint32_t kDenseCpus = 1 << 16;

// "00".."99": two digits per table lookup.
constexpr char kDigitPairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

char* PutDecimal(uint64_t v, char* out) {
  char tmp[20];
  char* p = tmp + sizeof(tmp);
  while (v >= 100) {
    const uint64_t r = v % 100;
    v /= 100;
    p -= 2;
    std::memcpy(p, kDigitPairs + 2 * r, 2);
  }
  if (v >= 10) {
    p -= 2;
    std::memcpy(p, kDigitPairs + 2 * v, 2);
  } else {
    *--p = static_cast<char>('0' + v);
  }
  const size_t n = static_cast<size_t>(tmp + sizeof(tmp) - p);
  std::memcpy(out, p, n);
  return out + n;
}

char* PutHex(uint64_t v, char* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out++ = '0';
  *out++ = 'x';
  const int digits = v == 0 ? 1 : (67 - __builtin_clzll(v)) / 4;
  for (int i = digits - 1; i >= 0; --i)
    out[digits - 1 - i] = kHex[(v >> (4 * i)) & 0xf];
  return out + digits;
}

std::string CountersText(uint64_t samples, const CpuCounters& c) {
  return absl::StrCat("samples=", samples, " lost=", c.lost,
                      " throttled=", c.throttled,
                      " unthrottled=", c.unthrottled, " skipped=", c.skipped);
}

}  // namespace

char* FormatSampleLine(const Sample& s, char* p) {
  p = PutDecimal(s.pid, p);
  *p++ = ' ';
  p = PutDecimal(s.tid, p);
  *p++ = ' ';
  p = PutDecimal(s.cpu, p);
  *p++ = ' ';
  p = PutDecimal(s.time_ns, p);
  *p++ = ' ';
  p = PutHex(s.vaddr, p);
  *p++ = ' ';
  p = PutHex(s.paddr, p);
  *p++ = ' ';
  p = PutDecimal(s.weight, p);
  *p++ = ' ';
  p = PutHex(s.data_src, p);
  *p++ = '\n';
  return p;
}

void TraceStats::Add(absl::Span<const Sample> samples) {
  samples_ += samples.size();
  for (const Sample& s : samples) {
    ++per_source_[static_cast<uint8_t>(s.source)];
    if (s.cpu < kDenseCpus) {
      if (s.cpu >= per_cpu_.size()) per_cpu_.resize(s.cpu + 1);
      ++per_cpu_[s.cpu];
    } else {
      ++sparse_cpu_[s.cpu];
    }
  }
}

std::string TraceStats::Summary() const {
  CpuCounters total;
  for (const CpuCounters& c : counters_) {
    total.lost += c.lost;
    total.throttled += c.throttled;
    total.unthrottled += c.unthrottled;
    total.skipped += c.skipped;
  }
  return absl::StrCat("# ", CountersText(samples_, total), "\n");
}

std::string TraceStats::PerCpu() const {
  // Merge the sample counts with the counters (both ascending by cpu).
  std::map<uint32_t, std::pair<uint64_t, CpuCounters>> rows;
  for (uint32_t cpu = 0; cpu < per_cpu_.size(); ++cpu) {
    if (per_cpu_[cpu] != 0) rows[cpu].first = per_cpu_[cpu];
  }
  for (const auto& [cpu, n] : sparse_cpu_) rows[cpu].first = n;
  for (const CpuCounters& c : counters_) rows[c.cpu].second = c;
  std::string out;
  for (const auto& [cpu, row] : rows) {
    absl::StrAppend(
        &out, "# cpu=", cpu == kUnknownCpu ? "unknown" : absl::StrCat(cpu), " ",
        CountersText(row.first, row.second), "\n");
  }
  return out;
}

std::string TraceStats::PerSource() const {
  std::string out;
  for (int v = 0; v < 256; ++v) {
    if (per_source_[v] == 0) continue;
    const auto source = static_cast<SampleSource>(v);
    // An unknown value keeps its number so it is not confused with kUnknown.
    std::string name = SampleSourceName(source);
    if (v != 0 && name == "unknown") name = absl::StrCat("unknown-", v);
    absl::StrAppend(&out, "# source=", name, " samples=", per_source_[v], "\n");
  }
  return out;
}

std::string FormatTraceHeader(const TraceHeader& h) {
  std::string out = absl::StrCat("# version=", h.version_major, ".",
                                 h.version_minor, "\n# source=", h.source,
                                 "\n# sample_period=", h.sample_period,
                                 "\n# start_realtime_ns=", h.start_realtime_ns,
                                 "\n# start_clock_ns=", h.start_clock_ns, "\n");
  // Strings come from the file: keep each on its own "# " line.
  for (absl::string_view line : absl::StrSplit(h.event_config, '\n')) {
    absl::StrAppend(&out, "# event_config=", line, "\n");
  }
  absl::StrAppend(&out, "# topology_json_bytes=", h.topology_json.size(), "\n");
  absl::string_view json = h.topology_json;
  if (!json.empty() && json.back() == '\n') json.remove_suffix(1);
  if (!json.empty()) {
    for (absl::string_view line : absl::StrSplit(json, '\n')) {
      absl::StrAppend(&out, "#   ", line, "\n");
    }
  }
  return out;
}

}  // namespace hotpage
