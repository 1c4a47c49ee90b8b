// The machine a simulation runs on: a Topology (a preset or a
// `hotpage topology --json` file) scaled to the trace's footprint.
//
// Presets (PresetTopology), HMAT numbers like the repo's guest topologies
// (tests/testdata/sysfs): DRAM 80 ns / 20480 MB/s, CXL 250 ns / 8192 MB/s.
// The bandwidths are peaks: HMAT's bandwidth entries are the maximum a
// node delivers to its initiator (ACPI HMAT, System Locality Latency and
// Bandwidth Information), and the simulator's loaded latency
// (policy/loaded_latency.h) takes them as the 100%-utilisation point.
// 20480 MB/s is about one DDR4-2666 channel (2666 MT/s x 8 B = 21.3 GB/s
// theoretical); 8192 MB/s a CXL memory expander at 40% of DRAM's
// bandwidth; far memory 4096 MB/s.
//   dram+cxl  node 0: DRAM with CPUs 0-63 (64 GiB); node 1: CPU-less CXL
//             (128 GiB); SLIT 10/20.
//   2pkg+cxl  two packages, each a DRAM node with CPUs and a CPU-less CXL
//             node: node 0 (package 0) has the even CPUs 0, 2, ..., 62 and
//             node 1 (package 1) the odd ones 1, 3, ..., 63 (so cpu 0 is
//             package 0 and cpu 1 package 1, as the trace generator
//             assumes; interleaved numbering is what many 2-socket BIOSes
//             enumerate); nodes 2 and 3: CXL of package 0 and 1 (HMAT
//             initiators 0 and 1). 64 GiB DRAM and 128 GiB CXL each. SLIT:
//             remote DRAM 21, local CXL 24, remote CXL 31, CXL to CXL 41:
//             CXL is farther than the other package's DRAM, as in the
//             captured 2pkg-cxl guest, so first touch fills both DRAM nodes
//             before any CXL.
//   3tier     node 0: DRAM with CPUs 0-63 (64 GiB); node 1: CXL (64 GiB);
//             node 2: far memory (a switched CXL pool: 500 ns, 4096 MB/s,
//             256 GiB); SLIT 10/20/30, 25 between the two.
// Tiers come from HMAT exactly as on a live machine (DeriveTiers: the
// kernel's abstract-distance formula), packages from DerivePackages.
//
// Scaling (ScaleMachine). The trace's footprint F (distinct 4 KiB pages of
// the simulated process) sets the sizes:
//   fast tier   --fast-capacity SIZE: SIZE / 4 KiB pages; --ratio 1:N:
//               floor(F / (1 + N)) pages (at least 1); split over the
//               fastest tier's nodes in proportion to their memory
//               (equally if unknown), the remainder one page each to the
//               lowest ids;
//   middle      tiers between the fastest and the slowest keep the
//               machine's proportions: memory_bytes times the fast tier's
//               scale factor (at least 1 page per node);
//   slowest     every node of the slowest tier holds 2 F pages, so it never
//               fills (and its watermarks never block a demotion).
// The scaled Topology carries these capacities as memory_bytes and
// free_bytes (the engine's watermarks and hot threshold are fractions and
// sizes of them), so attach's engine sees the machine the simulation runs.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_MACHINE_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_MACHINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/topology.h"
#include "tools/simulate/simulated_memory.h"

namespace hotpage {

// "dram+cxl", "2pkg+cxl", "3tier".
std::vector<std::string> PresetNames();
// NotFound naming the presets for an unknown name.
absl::StatusOr<Topology> PresetTopology(absl::string_view name);

// --ratio 1:N -> N (1..1000000); errors say what is expected.
absl::StatusOr<uint64_t> ParseRatio(absl::string_view text);
// --fast-capacity: bytes with an optional K, M, G or T suffix (powers of
// 1024, optionally followed by "iB" or "B"), at least 4096.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);

struct CapacitySpec {
  std::optional<uint64_t> fast_bytes;  // --fast-capacity
  uint64_t ratio_n = 4;                // --ratio 1:N (when no fast_bytes)
};

struct SimMachine {
  Topology topology;  // memory_bytes = free_bytes = the simulated capacity
  std::vector<SimNodeCapacity> capacities;  // ascending node id
  uint64_t footprint_pages = 0;
  uint64_t fast_pages = 0;  // the fastest tier, all nodes
};

// Scales `machine` for a trace of `footprint_pages` (see the file comment).
// Errors: a topology with fewer than two tiers, an empty footprint.
absl::StatusOr<SimMachine> ScaleMachine(const Topology& machine,
                                        uint64_t footprint_pages,
                                        const CapacitySpec& spec);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_MACHINE_H_
