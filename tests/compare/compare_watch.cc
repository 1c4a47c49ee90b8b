#include "tests/compare/compare_watch.h"

#include <cerrno>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace compare {

uint64_t WorkloadLayout::hot_pages() const {
  uint64_t n = 0;
  for (const auto& [s, e] : hot) n += (e - s) / kPageBytes;
  return n;
}

namespace {

bool ParseHex(absl::string_view s, uint64_t* out) {
  absl::ConsumePrefix(&s, "0x");
  return !s.empty() && absl::SimpleHexAtoi(s, out);
}

}  // namespace

absl::StatusOr<WorkloadLayout> ParseLayout(absl::string_view text) {
  WorkloadLayout l;
  bool have_base = false, have_bytes = false;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout line ", line_no, " '", line, "': ", why));
    };
    const absl::string_view key = f[0];
    if (key == "base") {
      if (f.size() != 2 || !ParseHex(f[1], &l.base))
        return bad("want `base 0xHEX`");
      have_base = true;
    } else if (key == "bytes") {
      if (f.size() != 2 || !absl::SimpleAtoi(f[1], &l.bytes))
        return bad("want `bytes N`");
      have_bytes = true;
    } else if (key == "phase") {
      if (f.size() != 2 || !absl::SimpleAtoi(f[1], &l.phase))
        return bad("want `phase N`");
    } else if (key == "switch_ns") {
      if (f.size() != 2 || !absl::SimpleAtoi(f[1], &l.switch_ns))
        return bad("want `switch_ns N`");
    } else if (key == "hot") {
      uint64_t s = 0, e = 0;
      if (f.size() != 3 || !ParseHex(f[1], &s) || !ParseHex(f[2], &e))
        return bad("want `hot 0xSTART 0xEND`");
      if (e <= s || s % kPageBytes != 0 || e % kPageBytes != 0)
        return bad("empty or unaligned run");
      l.hot.emplace_back(s, e);
    } else if (key == "bind") {
      int node = -1;
      if (f.size() != 4 || !ParseHex(f[1], &l.bind_start) ||
          !ParseHex(f[2], &l.bind_end) || !absl::SimpleAtoi(f[3], &node) ||
          node < 0 || node > 63) {
        return bad("want `bind 0xSTART 0xEND NODE`");
      }
      if (l.bind_end <= l.bind_start || l.bind_start % kPageBytes != 0 ||
          l.bind_end % kPageBytes != 0) {
        return bad("empty or unaligned bind range");
      }
      l.bind_node = node;
    }
    // Other keys: written by a newer workload; skipped.
  }
  if (!have_base || !have_bytes || l.bytes == 0)
    return absl::InvalidArgumentError("layout: no base/bytes");
  if (l.hot.empty()) return absl::InvalidArgumentError("layout: no hot run");
  for (const auto& [s, e] : l.hot) {
    if (s < l.base || e > l.base + l.bytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("layout: hot run 0x%x-0x%x outside the area", s, e));
    }
  }
  return l;
}

int64_t PeekLayoutPhase(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "phase ")) {
      int64_t v;
      return absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &v) && v >= 0
                 ? v
                 : -1;
    }
    if (absl::StartsWith(line, "hot ")) break;  // the header is over
  }
  return -1;
}

std::map<std::string, uint64_t> ParseVmstat(absl::string_view text) {
  std::map<std::string, uint64_t> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t v;
    if (f.size() == 2 && absl::SimpleAtoi(f[1], &v)) out[std::string(f[0])] = v;
  }
  return out;
}

const std::vector<std::string>& VmstatKeys() {
  static const auto* keys = new std::vector<std::string>{
      "pgmigrate_success",   "pgmigrate_fail",      "pgpromote_success",
      "pgpromote_candidate", "pgdemote_kswapd",     "pgdemote_direct",
      "pgdemote_khugepaged", "numa_pages_migrated", "numa_hint_faults",
      "numa_pte_updates",
  };
  return *keys;
}

void MoveTracker::Observe(const std::vector<int>& nodes) {
  if (pages_.size() != nodes.size()) pages_.assign(nodes.size(), PageState{});
  last_by_node_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int n = nodes[i];
    if (n < 0 || n > 63) continue;
    ++last_by_node_[n];
    PageState& p = pages_[i];
    if (p.node >= 0 && p.node != n) {
      if (p.moves == 0) ++moved_pages_;
      if (p.moves < 255) ++p.moves;
      ++moves_;
      if (!p.pingpong && (p.visited & (uint64_t{1} << n)) != 0) {
        p.pingpong = true;
        ++pingpong_pages_;
      }
    }
    p.node = static_cast<int8_t>(n);
    p.visited |= uint64_t{1} << n;
  }
}

bool Watcher::IsFast(int node) const {
  for (int f : options_.fast_nodes) {
    if (f == node) return true;
  }
  return false;
}

absl::Status Watcher::Begin(absl::string_view vmstat_before) {
  if (!vmstat_before.empty()) {
    vmstat_before_ = ParseVmstat(vmstat_before);
  } else {
    HOTPAGE_ASSIGN_OR_RETURN(std::string v, env_.read_vmstat());
    vmstat_before_ = ParseVmstat(v);
  }
  last_pte_updates_ = vmstat_before_["numa_pte_updates"];
  return absl::OkStatus();
}

absl::Status Watcher::LoadLayoutIfChanged() {
  HOTPAGE_ASSIGN_OR_RETURN(std::string text, env_.read_layout());
  const int64_t phase = PeekLayoutPhase(text);
  if (have_layout_ && phase == static_cast<int64_t>(layout_.phase))
    return absl::OkStatus();
  HOTPAGE_ASSIGN_OR_RETURN(WorkloadLayout l, ParseLayout(text));
  if (have_layout_ && (l.base != layout_.base || l.bytes != layout_.bytes)) {
    return absl::FailedPreconditionError(
        "layout: the area changed (another workload?)");
  }
  if (!have_layout_) {
    start_ns_ = l.phase == 0 ? l.switch_ns : env_.now_ns();
    for (uint64_t a = l.base; a < l.base + l.bytes; a += kPageBytes)
      area_addrs_.push_back(a);
    for (uint64_t a = l.bind_start; a < l.bind_end; a += kPageBytes)
      area_addrs_.push_back(a);
    bind_pages_ = (l.bind_end - l.bind_start) / kPageBytes;
  }
  hot_addrs_.clear();
  for (const auto& [s, e] : l.hot) {
    for (uint64_t a = s; a < e; a += kPageBytes) hot_addrs_.push_back(a);
  }
  layout_ = std::move(l);
  have_layout_ = true;
  PhaseResult r;
  r.phase = layout_.phase;
  r.hot_pages = hot_addrs_.size();
  phases_.push_back(r);
  return absl::OkStatus();
}

absl::Status Watcher::Scan() {
  status_.assign(area_addrs_.size(), kPageStatusUnset);
  const long rc =
      env_.mover->Query(env_.pid, area_addrs_, absl::MakeSpan(status_));
  if (rc == -ESRCH)
    return absl::NotFoundError(absl::StrCat("pid ", env_.pid, " exited"));
  if (rc < 0)
    return ErrnoStatus(static_cast<int>(-rc), "move_pages query (area)");
  const size_t area_pages = area_addrs_.size() - bind_pages_;
  moves_.Observe(
      std::vector<int>(status_.begin(), status_.begin() + area_pages));
  uint64_t off = 0;
  for (size_t i = area_pages; i < status_.size(); ++i) {
    if (status_[i] >= 0 && status_[i] != layout_.bind_node) ++off;
  }
  bind_off_last_ = off;
  bind_off_max_ = std::max(bind_off_max_, off);
  scanned_ = true;
  // The kernel's NUMA scanner: did it mark PTEs since the last scan?
  if (absl::StatusOr<std::string> v = env_.read_vmstat(); v.ok()) {
    const uint64_t pte = ParseVmstat(*v)["numa_pte_updates"];
    if (pte > last_pte_updates_ && kernel_scan_times_.size() < kMaxScanTimes) {
      const uint64_t now = env_.now_ns();
      kernel_scan_times_.push_back(
          now > start_ns_ ? static_cast<double>(now - start_ns_) / 1e9 : 0);
    }
    last_pte_updates_ = pte;
  }
  return absl::OkStatus();
}

absl::Status Watcher::Sample() {
  HOTPAGE_RETURN_IF_ERROR(LoadLayoutIfChanged());
  const uint64_t now = env_.now_ns();
  status_.assign(hot_addrs_.size(), kPageStatusUnset);
  const long rc =
      env_.mover->Query(env_.pid, hot_addrs_, absl::MakeSpan(status_));
  if (rc == -ESRCH)
    return absl::NotFoundError(absl::StrCat("pid ", env_.pid, " exited"));
  if (rc < 0)
    return ErrnoStatus(static_cast<int>(-rc), "move_pages query (hot set)");
  uint64_t fast = 0;
  hot_by_node_.clear();
  for (int s : status_) {
    if (s < 0) continue;
    ++hot_by_node_[s];
    if (IsFast(s)) ++fast;
  }
  PhaseResult& p = phases_.back();
  const double fraction =
      hot_addrs_.empty()
          ? 0
          : static_cast<double>(fast) / static_cast<double>(hot_addrs_.size());
  const double since_s =
      now > layout_.switch_ns
          ? static_cast<double>(now - layout_.switch_ns) / 1e9
          : 0;
  if (p.t90_s < 0 && fraction >= options_.target_fraction) p.t90_s = since_s;
  p.end_fraction = fraction;
  p.max_fraction = std::max(p.max_fraction, fraction);
  ++p.samples;
  if (!scanned_ || now - last_scan_ns_ >= options_.scan_interval_ns) {
    last_scan_ns_ = now;
    HOTPAGE_RETURN_IF_ERROR(Scan());
  }
  return absl::OkStatus();
}

absl::Status Watcher::End() {
  absl::Status scan = have_layout_ ? Scan() : absl::OkStatus();
  if (!scan.ok() && !absl::IsNotFound(scan)) return scan;
  HOTPAGE_ASSIGN_OR_RETURN(std::string v, env_.read_vmstat());
  const std::map<std::string, uint64_t> after = ParseVmstat(v);
  vmstat_delta_.clear();
  for (const std::string& k : VmstatKeys()) {
    auto b = vmstat_before_.find(k);
    auto a = after.find(k);
    const int64_t before_v =
        b == vmstat_before_.end() ? 0 : static_cast<int64_t>(b->second);
    const int64_t after_v =
        a == after.end() ? 0 : static_cast<int64_t>(a->second);
    vmstat_delta_[k] = after_v - before_v;
  }
  return absl::OkStatus();
}

std::string Watcher::ResultKv() const {
  std::string out = absl::StrCat(
      "hot_pages=", phases_.empty() ? 0 : phases_.front().hot_pages,
      " phases=", phases_.size());
  for (size_t i = 0; i < phases_.size(); ++i) {
    const PhaseResult& p = phases_[i];
    absl::StrAppend(
        &out, absl::StrFormat(" t90_%d=%.2f end_frac_%d=%.3f samples_%d=%d", i,
                              p.t90_s, i, p.end_fraction, i, p.samples));
  }
  absl::StrAppend(&out, " moved_pages=", moves_.moved_pages(),
                  " moves_seen=", moves_.moves(),
                  " pingpong_seen=", moves_.pingpong_pages());
  for (const auto& [node, n] : moves_.last_by_node())
    absl::StrAppend(&out, " area_node", node, "=", n);
  for (const auto& [node, n] : hot_by_node_)
    absl::StrAppend(&out, " hot_node", node, "=", n);
  absl::StrAppend(&out, " bind_pages=", bind_pages_,
                  " bind_off_max=", bind_off_max_,
                  " bind_off_end=", bind_off_last_);
  for (const auto& [k, d] : vmstat_delta_)
    absl::StrAppend(&out, " vm_", k, "=", d);
  if (!kernel_scan_times_.empty()) {
    absl::StrAppend(
        &out, " kernel_scans_at=",
        absl::StrJoin(kernel_scan_times_, ",", [](std::string* o, double t) {
          absl::StrAppend(o, absl::StrFormat("%.0f", t));
        }));
  }
  return out;
}

}  // namespace compare
}  // namespace hotpage
