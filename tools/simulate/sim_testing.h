// What the simulator's scripted tests share: a dram+cxl machine scaled to
// a fast tier of a given size, its simulated memory, a policy's detail.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_TESTING_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_TESTING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_policy.h"
#include "tools/simulate/simulated_memory.h"

namespace hotpage::sim_testing {

// The dram+cxl preset (node 0 DRAM with the CPUs, 80 ns; node 1 CXL, 250
// ns) scaled to `footprint_pages` with `fast_pages` of DRAM and plenty of
// CXL.
inline SimMachine DramCxlMachine(uint64_t fast_pages,
                                 uint64_t footprint_pages) {
  absl::StatusOr<Topology> t = PresetTopology("dram+cxl");
  EXPECT_TRUE(t.ok());
  CapacitySpec spec;
  spec.fast_bytes = fast_pages * kSimPageBytes;
  absl::StatusOr<SimMachine> m = ScaleMachine(*t, footprint_pages, spec);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

// `m`'s memory; first touch on `first_touch_node` when >= 0.
inline std::unique_ptr<SimulatedMemory> MemoryOf(const SimMachine& m,
                                                 int first_touch_node = -1) {
  SimulatedMemoryOptions o;
  o.capacities = m.capacities;
  o.first_touch_node = first_touch_node;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem =
      SimulatedMemory::Create(m.topology, o);
  EXPECT_TRUE(mem.ok()) << mem.status();
  return std::move(*mem);
}

// The value of the policy's detail `name` (a failure if it has none).
inline uint64_t Detail(const SimPolicy& p, const std::string& name) {
  for (const auto& [k, v] : p.Details()) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no detail " << name;
  return 0;
}

}  // namespace hotpage::sim_testing

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_TESTING_H_
