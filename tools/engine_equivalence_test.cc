// `hotpage attach` and `hotpage simulate` make the same decisions on the
// same sample stream: they run the same PolicyEngine, and their memory views
// agree.
//
// Two engines, built alike, ingest the same generated samples (a hot set
// that moves every few seconds over a footprint far larger than the fast
// tier, so there are promotions, watermark demotions and swaps under
// pressure, from two CPUs of two packages). One sees attach's view,
// LiveMemoryView: page nodes from move_pages queries (a FakePageMover) and
// free memory from node meminfo files in a fake /sys, kept in step with the
// mover's pages every round. The other sees the simulator's view,
// SimulatedMemory. Every round's decision must print the same
// (DecisionToString), and each round's moves are applied to both memories.
// The comparison itself is checked: a view that reports a wrong free-memory
// value makes the decisions differ.

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "migrator/simulated_memory.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "tools/base/fake_tree.h"
#include "tools/base/kernel_fs.h"
#include "tools/live_memory_view.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_testing.h"

namespace hotpage {
namespace {

constexpr uint32_t kPid = 4242;

struct Outcome {
  int rounds = 0;
  int first_divergence = -1;  // round number, -1: none
  std::string live, sim;      // the two decisions of that round
  uint64_t promoted = 0, demoted = 0, swaps = 0, watermark = 0;
};

// Runs both engines over the workload. `free_skew_pages` is added to node
// 0's MemFree in the fake /sys (0: the truth).
Outcome Compare(int64_t free_skew_pages) {
  Outcome out;
  absl::StatusOr<Topology> preset = PresetTopology("2pkg+cxl");
  EXPECT_TRUE(preset.ok());
  SyntheticWorkload w;
  w.pages = 3000;
  w.samples_per_sec = 6000;
  w.duration_ms = 12000;
  w.hot_pages = 300;
  w.shift_ms = 4000;
  w.pid = kPid;
  const std::vector<Sample> samples = GenerateSamples(w);
  CapacitySpec spec;
  spec.ratio_n = 4;
  absl::StatusOr<SimMachine> machine = ScaleMachine(*preset, w.pages, spec);
  EXPECT_TRUE(machine.ok());
  const Topology& topo = machine->topology;

  EngineOptions eopt;
  eopt.address_space = kPid;
  eopt.footprint_pages = w.pages;
  absl::StatusOr<std::unique_ptr<PolicyEngine>> live_engine = PolicyEngine::Create(topo, PlacementConfig{}, eopt);
  absl::StatusOr<std::unique_ptr<PolicyEngine>> sim_engine = PolicyEngine::Create(topo, PlacementConfig{}, eopt);
  EXPECT_TRUE(live_engine.ok() && sim_engine.ok());

  // The simulator's memory, and attach's: a fake mover plus a fake /sys.
  SimulatedMemoryOptions mopt;
  mopt.capacities = machine->capacities;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem = SimulatedMemory::Create(topo, mopt);
  EXPECT_TRUE(mem.ok());
  FakePageMover mover;
  mover.set_record_calls(false);
  FakeTree tree;
  auto write_meminfo = [&]() {
    for (const SimNodeCapacity& c : machine->capacities) {
      int64_t free_pages = static_cast<int64_t>(c.pages) - static_cast<int64_t>(mover.CountOn(c.node));
      if (c.node == 0) free_pages += free_skew_pages;
      tree.Write(absl::StrCat("/sys/devices/system/node/node", c.node, "/meminfo"),
                 absl::StrCat("Node ", c.node, " MemTotal:  ", c.pages * 4, " kB\n", "Node ", c.node,
                              " MemFree:  ", std::max<int64_t>(free_pages, 0) * 4, " kB\n"));
    }
  };
  write_meminfo();
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  EXPECT_TRUE(fs.ok());
  LiveMemoryView live_view(kPid, &mover, &*fs, &topo, /*migrator=*/nullptr);
  SimulatedMemory& sim_view = **mem;

  const uint64_t start = samples.front().time_ns;
  (*live_engine)->Start(start);
  (*sim_engine)->Start(start);
  std::vector<Sample> batch;
  auto run_round = [&](uint64_t t) {
    (*live_engine)->Ingest(batch);
    (*sim_engine)->Ingest(batch);
    batch.clear();
    write_meminfo();
    const RoundReport a = (*live_engine)->RunRound(live_view, t);
    sim_view.set_now(t);
    const RoundReport b = (*sim_engine)->RunRound(sim_view, t);
    ++out.rounds;
    const std::string da = DecisionToString(a.decision), db = DecisionToString(b.decision);
    if (da != db && out.first_divergence < 0) {
      out.first_divergence = static_cast<int>(a.round);
      out.live = da;
      out.sim = db;
    }
    // Carry out attach's decision in both memories.
    for (const PlannedMove& m : a.decision.moves) {
      (m.reason == PlacementReason::kPromote ? out.promoted : out.demoted) += 1;
      out.swaps += m.trigger == PlacementTrigger::kSwap;
      out.watermark += m.trigger == PlacementTrigger::kWatermark;
      std::vector<uint64_t> pages = {m.vaddr};
      std::vector<int> nodes = {m.to_node}, status = {kPageStatusUnset};
      mover.Move(kPid, pages, nodes, absl::MakeSpan(status));
      sim_view.Move(m.vaddr, m.to_node, t);
    }
  };
  for (const Sample& s : samples) {
    while ((*sim_engine)->RoundDue(s.time_ns)) run_round((*sim_engine)->next_round_ns());
    // First touch in the simulator; the same page appears in the mover.
    const bool known = sim_view.NodeOf(s.vaddr) >= 0;
    const int node = sim_view.Touch(s.vaddr, s.cpu, s.time_ns);
    EXPECT_GE(node, 0);
    if (!known) mover.AddPages(s.vaddr & ~uint64_t{4095}, 1, 4096, node);
    batch.push_back(s);
  }
  run_round((*sim_engine)->next_round_ns());
  return out;
}

TEST(EngineEquivalenceTest, AttachAndSimulateDecideTheSameOnTheSameSamples) {
  const Outcome o = Compare(0);
  EXPECT_EQ(o.first_divergence, -1) << "round " << o.first_divergence << "\nattach:\n"
                                    << o.live << "\nsimulate:\n" << o.sim;
  // The stream exercised what it should.
  EXPECT_GE(o.rounds, 12);
  EXPECT_GT(o.promoted, 100u);
  EXPECT_GT(o.watermark, 0u);
  EXPECT_GT(o.swaps, 0u);
}

// The comparison catches views that disagree: attach's /sys reporting 50
// pages more free memory on node 0 than there are changes the decisions.
TEST(EngineEquivalenceTest, AWrongFreeMemoryValueIsCaught) {
  const Outcome o = Compare(50);
  EXPECT_GE(o.first_divergence, 1);
}

}  // namespace
}  // namespace hotpage
