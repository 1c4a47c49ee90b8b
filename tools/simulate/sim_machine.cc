#include "tools/simulate/sim_machine.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

NodeInfo MemNode(int id, std::vector<int> cpus, uint64_t bytes,
                 std::vector<int> distance, int64_t latency_ns, int64_t bw_mbps,
                 std::vector<int> initiators) {
  NodeInfo n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.memory_bytes = bytes;
  n.free_bytes = bytes;
  n.distance = std::move(distance);
  n.hmat.read_latency_ns = latency_ns;
  n.hmat.write_latency_ns = latency_ns;
  n.hmat.read_bandwidth_mbps = bw_mbps;
  n.hmat.write_bandwidth_mbps = bw_mbps;
  n.hmat.initiators = std::move(initiators);
  return n;
}

std::vector<int> Cpus(int first, int last, int step) {
  std::vector<int> out;
  for (int c = first; c <= last; c += step) out.push_back(c);
  return out;
}

constexpr int64_t kDramNs = 80, kDramMbps = 20480;
constexpr int64_t kCxlNs = 250, kCxlMbps = 8192;
constexpr int64_t kFarNs = 500, kFarMbps = 4096;

}  // namespace

std::vector<std::string> PresetNames() {
  return {"dram+cxl", "2pkg+cxl", "3tier"};
}

absl::StatusOr<Topology> PresetTopology(absl::string_view name) {
  Topology t;
  t.root = absl::StrCat("preset:", name);
  std::vector<std::optional<int>> cpu_pkg;
  if (name == "dram+cxl") {
    t.nodes = {MemNode(0, Cpus(0, 63, 1), 64 * kGiB, {10, 20}, kDramNs,
                       kDramMbps, {0}),
               MemNode(1, {}, 128 * kGiB, {20, 10}, kCxlNs, kCxlMbps, {0})};
    cpu_pkg = {0, std::nullopt};
  } else if (name == "2pkg+cxl") {
    t.nodes = {
        MemNode(0, Cpus(0, 62, 2), 64 * kGiB, {10, 21, 24, 31}, kDramNs,
                kDramMbps, {0}),
        MemNode(1, Cpus(1, 63, 2), 64 * kGiB, {21, 10, 31, 24}, kDramNs,
                kDramMbps, {1}),
        MemNode(2, {}, 128 * kGiB, {24, 31, 10, 41}, kCxlNs, kCxlMbps, {0}),
        MemNode(3, {}, 128 * kGiB, {31, 24, 41, 10}, kCxlNs, kCxlMbps, {1})};
    cpu_pkg = {0, 1, std::nullopt, std::nullopt};
  } else if (name == "3tier") {
    t.nodes = {MemNode(0, Cpus(0, 63, 1), 64 * kGiB, {10, 20, 30}, kDramNs,
                       kDramMbps, {0}),
               MemNode(1, {}, 64 * kGiB, {20, 10, 25}, kCxlNs, kCxlMbps, {0}),
               MemNode(2, {}, 256 * kGiB, {30, 25, 10}, kFarNs, kFarMbps, {0})};
    cpu_pkg = {0, std::nullopt, std::nullopt};
  } else {
    return absl::NotFoundError(
        absl::StrCat("unknown topology preset '", name, "' (",
                     absl::StrJoin(PresetNames(), ", "),
                     ", or a file written by `hotpage topology --json`)"));
  }
  for (NodeInfo& n : t.nodes) n.weight = 1;
  DeriveTiers(t);
  DerivePackages(t, cpu_pkg);
  return t;
}

absl::StatusOr<uint64_t> ParseRatio(absl::string_view text) {
  const std::string s(absl::StripAsciiWhitespace(text));
  const size_t colon = s.find(':');
  uint64_t one = 0, n = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(s.substr(0, colon), &one) || one != 1 ||
      !absl::SimpleAtoi(s.substr(colon + 1), &n) || n < 1 || n > 1000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ratio '", text,
                     "': expected 1:N with N from 1 to 1000000 (fast : slow "
                     "memory, e.g. 1:4)"));
  }
  return n;
}

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  std::string s = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  for (absl::string_view suffix : {"IB", "B"}) {
    if (s.size() > suffix.size() && absl::EndsWith(s, suffix) &&
        std::isalpha(
            static_cast<unsigned char>(s[s.size() - suffix.size() - 1]))) {
      s.resize(s.size() - suffix.size());
      break;
    }
  }
  if (s == "B") s.clear();
  int shift = 0;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        break;
    }
    if (shift != 0) s.pop_back();
  }
  uint64_t v = 0;
  if (s.empty() || !absl::SimpleAtoi(s, &v) ||
      v > (UINT64_MAX >> 20) >> shift) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fast-capacity '", text,
                     "': expected a size such as 65536, 512K, 64M or 2G"));
  }
  v <<= shift;
  if (v < kSimPageBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fast-capacity '", text, "': at least one 4 KiB page"));
  }
  return v;
}

absl::StatusOr<SimMachine> ScaleMachine(const Topology& machine,
                                        uint64_t footprint_pages,
                                        const CapacitySpec& spec) {
  if (machine.tiers.size() < 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the topology has ", machine.tiers.size(),
        " memory tier(s): a simulation needs a fast and a slower tier"));
  }
  if (footprint_pages == 0)
    return absl::InvalidArgumentError("the trace touches no page");
  SimMachine m;
  m.topology = machine;
  m.footprint_pages = footprint_pages;
  const uint64_t fast_pages =
      spec.fast_bytes
          ? std::max<uint64_t>(*spec.fast_bytes / kSimPageBytes, 1)
          : std::max<uint64_t>(footprint_pages / (1 + spec.ratio_n), 1);
  m.fast_pages = fast_pages;
  const std::vector<int>& fast = machine.tiers.front().nodes;
  const std::vector<int>& slowest = machine.tiers.back().nodes;
  uint64_t fast_real = 0;
  for (int n : fast) {
    if (const NodeInfo* info = machine.FindNode(n))
      fast_real += info->memory_bytes / kSimPageBytes;
  }
  std::map<int, uint64_t> cap;
  // Fast tier: proportional split, remainder to the lowest ids.
  uint64_t given = 0;
  for (int n : fast) {
    const NodeInfo* info = machine.FindNode(n);
    const uint64_t share =
        fast_real > 0 ? static_cast<uint64_t>(
                            static_cast<long double>(fast_pages) *
                            (info->memory_bytes / kSimPageBytes) / fast_real)
                      : fast_pages / fast.size();
    cap[n] = share;
    given += share;
  }
  for (size_t i = 0; given < fast_pages; i = (i + 1) % fast.size(), ++given)
    ++cap[fast[i]];
  const long double factor =
      fast_real > 0 ? static_cast<long double>(fast_pages) / fast_real : 1.0L;
  for (size_t t = 1; t + 1 < machine.tiers.size(); ++t) {
    for (int n : machine.tiers[t].nodes) {
      const NodeInfo* info = machine.FindNode(n);
      const uint64_t real = info->memory_bytes / kSimPageBytes;
      cap[n] = std::max<uint64_t>(
          static_cast<uint64_t>(
              real > 0 ? real * factor : static_cast<long double>(fast_pages)),
          1);
    }
  }
  for (int n : slowest) cap[n] = 2 * footprint_pages + 16;
  for (NodeInfo& n : m.topology.nodes) {
    auto it = cap.find(n.id);
    const uint64_t pages = it == cap.end() ? 0 : it->second;
    n.memory_bytes = pages * kSimPageBytes;
    n.free_bytes = n.memory_bytes;
    if (pages > 0) m.capacities.push_back({n.id, pages});
  }
  return m;
}

}  // namespace hotpage
