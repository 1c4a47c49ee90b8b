// `hotpage attach` and `hotpage simulate` make the same decisions on the
// same sample stream, and carry them out with the same move_pages calls:
// they run the same PolicyEngine and the same Migrator, and their memory
// views and page movers agree.
//
// Two engines, built alike, ingest the same generated samples (a hot set
// that moves every few seconds over a footprint far larger than the fast
// tier, so there are promotions, watermark demotions and swaps under
// pressure, from two CPUs of two packages).
//   attach's path: LiveMemoryView (page nodes from move_pages queries to a
//     FakePageMover, free memory from node meminfo files in a fake /sys,
//     kept in step with the mover's pages every round, holds and back-offs
//     from the Migrator) and a Migrator over the FakePageMover, on a
//     FakeClock, with a target attached through a fake /proc;
//   simulate's path: SimulatedMemory as the view and a SimMigration (the
//     Migrator over a SimulatedPageMover, as sim_hotpage.h runs it).
// Each round's decision must print the same (DecisionToString); each side
// submits its own decision's requests (AppendMoveRequests, as cmd_attach.cc
// and sim_hotpage.cc do) to its own Migrator, which then runs until it has
// nothing left to do. Every call each Migrator makes to its PageMover (op,
// pid, addresses, target nodes, the result and every status) is recorded,
// and the two sequences must be identical, call by call; at the end both
// memories hold every page on the same node.
//
// The comparisons are checked: a view that reports a wrong free-memory
// value makes the decisions differ, and one move call of simulate's path
// that loses a page (a PageMover interposed between its Migrator and the
// simulated mover) makes the call sequences differ at that call.

#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "migrator/migrator.h"
#include "migrator/move_requests.h"
#include "migrator/page_mover.h"
#include "migrator/process_handle.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/live_memory_view.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_migration.h"
#include "tools/simulate/simulated_memory.h"
#include "tools/simulate/simulated_page_mover.h"
#include "tools/trace_gen/mixed.h"

namespace hotpage {
namespace {

// One PageMover call as the kernel would see it, and what it answered.
struct MoverCall {
  bool move = false;  // else a query
  pid_t pid = 0;
  std::vector<uint64_t> pages;
  std::vector<int> nodes;  // empty for queries
  long result = 0;
  std::vector<int> status;

  bool operator==(const MoverCall& o) const {
    return move == o.move && pid == o.pid && pages == o.pages &&
           nodes == o.nodes && result == o.result && status == o.status;
  }
  std::string ToString() const {
    return absl::StrCat(move ? "move" : "query", " pid ", pid, " ",
                        pages.size(), " pages [", absl::StrJoin(pages, ","),
                        "] nodes [", absl::StrJoin(nodes, ","), "] -> ", result,
                        " [", absl::StrJoin(status, ","), "]");
  }
};

// Records every call that reaches it and forwards it to `inner`.
class RecordingMover : public PageMover {
 public:
  void set_inner(PageMover* inner) { inner_ = inner; }
  const std::vector<MoverCall>& calls() const { return calls_; }

  long Query(pid_t pid, absl::Span<const uint64_t> pages,
             absl::Span<int> status) override {
    const long r = inner_->Query(pid, pages, status);
    calls_.push_back({false,
                      pid,
                      {pages.begin(), pages.end()},
                      {},
                      r,
                      {status.begin(), status.end()}});
    return r;
  }
  long Move(pid_t pid, absl::Span<const uint64_t> pages,
            absl::Span<const int> nodes, absl::Span<int> status) override {
    const long r = inner_->Move(pid, pages, nodes, status);
    calls_.push_back({true,
                      pid,
                      {pages.begin(), pages.end()},
                      {nodes.begin(), nodes.end()},
                      r,
                      {status.begin(), status.end()}});
    return r;
  }

 private:
  PageMover* inner_ = nullptr;
  std::vector<MoverCall> calls_;
};

// The negative control: the `which`-th Move call (1-based) of at least two
// pages reaches `inner` without its last page, whose status stays unwritten
// (as for a page the kernel did not reach).
class DropOnePage : public PageMover {
 public:
  DropOnePage(PageMover* inner, int which) : inner_(inner), which_(which) {}

  long Query(pid_t pid, absl::Span<const uint64_t> pages,
             absl::Span<int> status) override {
    return inner_->Query(pid, pages, status);
  }
  long Move(pid_t pid, absl::Span<const uint64_t> pages,
            absl::Span<const int> nodes, absl::Span<int> status) override {
    if (pages.size() < 2 || ++moves_ != which_)
      return inner_->Move(pid, pages, nodes, status);
    const size_t n = pages.size() - 1;
    return inner_->Move(pid, pages.subspan(0, n), nodes.subspan(0, n),
                        status.subspan(0, n));
  }

 private:
  PageMover* const inner_;
  const int which_;
  int moves_ = 0;
};

struct Outcome {
  int rounds = 0;
  int first_divergence = -1;  // round number, -1: none
  std::string live, sim;      // the two decisions of that round
  uint64_t promoted = 0, demoted = 0, swaps = 0, watermark = 0;
  // The Migrators' call sequences.
  size_t attach_calls = 0, sim_calls = 0, move_calls = 0, pages_moved = 0;
  long first_call_divergence = -1;    // index into the sequence, -1: none
  std::string attach_call, sim_call;  // the two calls there
  size_t pages_on_other_nodes = 0;    // at the end, between the memories
};

// Runs both paths over the workload. `free_skew_pages` is added to node
// 0's MemFree in the fake /sys (0: the truth); `drop_in_move_call` > 0
// drops a page from that Move call of simulate's path.
Outcome Compare(int64_t free_skew_pages, int drop_in_move_call = 0) {
  Outcome out;
  const pid_t pid = getpid();  // attach's Migrator checks it through /proc
  absl::StatusOr<Topology> preset = PresetTopology("2pkg+cxl");
  EXPECT_TRUE(preset.ok());
  trace_gen::MixedOptions w;
  w.pages = 3000;
  w.samples_per_sec = 6000;
  w.duration_ms = 12000;
  w.hot_pages = 300;
  w.shift_ms = 4000;
  w.pid = static_cast<uint32_t>(pid);
  const std::vector<Sample> samples = trace_gen::GenerateMixed(w);
  CapacitySpec spec;
  spec.ratio_n = 4;
  absl::StatusOr<SimMachine> machine = ScaleMachine(*preset, w.pages, spec);
  EXPECT_TRUE(machine.ok());
  const Topology& topo = machine->topology;

  EngineOptions eopt;
  eopt.address_space = w.pid;
  eopt.footprint_pages = w.pages;
  absl::StatusOr<std::unique_ptr<PolicyEngine>> live_engine =
      PolicyEngine::Create(topo, PlacementConfig{}, eopt);
  absl::StatusOr<std::unique_ptr<PolicyEngine>> sim_engine =
      PolicyEngine::Create(topo, PlacementConfig{}, eopt);
  EXPECT_TRUE(live_engine.ok() && sim_engine.ok());

  // The simulator's memory, and attach's: a fake mover plus a fake /sys
  // and /proc.
  SimulatedMemoryOptions mopt;
  mopt.capacities = machine->capacities;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem =
      SimulatedMemory::Create(topo, mopt);
  EXPECT_TRUE(mem.ok());
  FakePageMover mover;
  mover.set_record_calls(false);
  FakeTree tree;
  auto write_meminfo = [&]() {
    for (const SimNodeCapacity& c : machine->capacities) {
      int64_t free_pages = static_cast<int64_t>(c.pages) -
                           static_cast<int64_t>(mover.CountOn(c.node));
      if (c.node == 0) free_pages += free_skew_pages;
      tree.Write(
          absl::StrCat("/sys/devices/system/node/node", c.node, "/meminfo"),
          absl::StrCat("Node ", c.node, " MemTotal:  ", c.pages * 4, " kB\n",
                       "Node ", c.node, " MemFree:  ",
                       std::max<int64_t>(free_pages, 0) * 4, " kB\n"));
    }
  };
  write_meminfo();
  tree.WriteProcStat(pid);
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  EXPECT_TRUE(fs.ok());
  absl::StatusOr<ProcessHandle> target = ProcessHandle::Attach(pid, &*fs);
  EXPECT_TRUE(target.ok()) << target.status();

  const uint64_t start = samples.front().time_ns;
  // attach's Migrator (synchronous, on a fake clock) over the fake mover.
  FakeClock attach_clock(SimTime(start));
  RecordingMover attach_rec;
  attach_rec.set_inner(&mover);
  Migrator attach_migrator(MigratorOptions{}, std::move(*target), &attach_rec,
                           &attach_clock);
  LiveMemoryView live_view(pid, &mover, &*fs, &topo, &attach_migrator);
  // simulate's: the SimMigration sim_hotpage.cc runs, with the recorder
  // (and the negative control's breaker) between its Migrator and mover.
  RecordingMover sim_rec;
  DropOnePage breaker(&sim_rec, drop_in_move_call);
  SimMigration sim_migration(MigratorOptions{}, MigrationCost{}, mem->get(),
                             pid, start,
                             [&](PageMover* simulated) -> PageMover* {
                               sim_rec.set_inner(simulated);
                               if (drop_in_move_call > 0) return &breaker;
                               return &sim_rec;
                             });
  SimulatedMemory& sim_view = **mem;
  sim_view.set_gate(&sim_migration);

  (*live_engine)->Start(start);
  (*sim_engine)->Start(start);
  std::vector<Sample> batch;
  std::vector<MoveRequest> attach_requests, sim_requests;
  auto run_round = [&](uint64_t t) {
    (*live_engine)->Ingest(batch);
    (*sim_engine)->Ingest(batch);
    batch.clear();
    write_meminfo();
    attach_clock.Set(SimTime(t));
    const RoundReport a = (*live_engine)->RunRound(live_view, t);
    sim_view.set_now(t);
    const RoundReport b = (*sim_engine)->RunRound(sim_view, t);
    ++out.rounds;
    const std::string da = DecisionToString(a.decision),
                      db = DecisionToString(b.decision);
    if (da != db && out.first_divergence < 0) {
      out.first_divergence = static_cast<int>(a.round);
      out.live = da;
      out.sim = db;
    }
    for (const PlannedMove& m : a.decision.moves) {
      (m.reason == PlacementReason::kPromote ? out.promoted : out.demoted) += 1;
      out.swaps += m.trigger == PlacementTrigger::kSwap;
      out.watermark += m.trigger == PlacementTrigger::kWatermark;
    }
    // Each path carries out its own decision, as cmd_attach.cc and
    // sim_hotpage.cc do, until its Migrator has nothing left to do.
    attach_requests.clear();
    sim_requests.clear();
    AppendMoveRequests(a.decision, SimTime(t), &attach_requests);
    AppendMoveRequests(b.decision, SimTime(t), &sim_requests);
    attach_migrator.Submit(attach_requests);
    sim_migration.Submit(sim_requests, t);
    for (;;) {  // attach's Migrator thread, its sleeps on the fake clock
      const MigratorRound r = attach_migrator.RunOnce();
      if (r.next == MigratorRound::Next::kMore) continue;
      if (r.next == MigratorRound::Next::kDone) break;
      if (r.next == MigratorRound::Next::kWaitForWork &&
          r.wait == absl::InfiniteDuration())
        break;
      attach_clock.Advance(r.wait);
    }
    while (!sim_migration.idle())
      sim_migration.RunUntil(sim_migration.NextEventNs());
  };
  for (const Sample& s : samples) {
    while ((*sim_engine)->RoundDue(s.time_ns))
      run_round((*sim_engine)->next_round_ns());
    // First touch in the simulator; the same page appears in the mover.
    const bool known = sim_view.NodeOf(s.vaddr) >= 0;
    const int node = sim_view.Touch(s.vaddr, s.cpu, s.time_ns);
    EXPECT_GE(node, 0);
    if (!known) mover.AddPages(s.vaddr & ~uint64_t{4095}, 1, 4096, node);
    batch.push_back(s);
  }
  run_round((*sim_engine)->next_round_ns());

  const std::vector<MoverCall>& ca = attach_rec.calls();
  const std::vector<MoverCall>& cs = sim_rec.calls();
  out.attach_calls = ca.size();
  out.sim_calls = cs.size();
  for (size_t i = 0; i < std::max(ca.size(), cs.size()); ++i) {
    if (i < ca.size() && i < cs.size() && ca[i] == cs[i]) {
      if (ca[i].move) {
        ++out.move_calls;
        out.pages_moved += ca[i].pages.size();
      }
      continue;
    }
    out.first_call_divergence = static_cast<long>(i);
    out.attach_call = i < ca.size() ? ca[i].ToString() : "(none)";
    out.sim_call = i < cs.size() ? cs[i].ToString() : "(none)";
    break;
  }
  for (const auto& [vaddr, node] : sim_view.Snapshot()) {
    out.pages_on_other_nodes += mover.NodeOf(vaddr) != node;
  }
  return out;
}

TEST(EngineEquivalenceTest, AttachAndSimulateDecideTheSameOnTheSameSamples) {
  const Outcome o = Compare(0);
  EXPECT_EQ(o.first_divergence, -1)
      << "round " << o.first_divergence << "\nattach:\n"
      << o.live << "\nsimulate:\n"
      << o.sim;
  // The stream exercised what it should.
  EXPECT_GE(o.rounds, 12);
  EXPECT_GT(o.promoted, 100u);
  EXPECT_GT(o.watermark, 0u);
  EXPECT_GT(o.swaps, 0u);
}

TEST(EngineEquivalenceTest, AttachAndSimulateMakeTheSameMovePagesCalls) {
  const Outcome o = Compare(0);
  EXPECT_EQ(o.first_call_divergence, -1)
      << "call " << o.first_call_divergence << "\nattach:   " << o.attach_call
      << "\nsimulate: " << o.sim_call;
  EXPECT_EQ(o.attach_calls, o.sim_calls);
  EXPECT_EQ(o.pages_on_other_nodes, 0u);
  // Every decided move went through a move call, in batches.
  EXPECT_GT(o.move_calls, 10u);
  EXPECT_EQ(o.pages_moved, o.promoted + o.demoted);
  EXPECT_GT(o.attach_calls, o.move_calls);  // queries too
}

// The comparisons catch views that disagree: attach's /sys reporting 50
// pages more free memory on node 0 than there are changes the decisions.
TEST(EngineEquivalenceTest, AWrongFreeMemoryValueIsCaught) {
  const Outcome o = Compare(50);
  EXPECT_GE(o.first_divergence, 1);
}

// ... and movers that disagree: simulate's third move call losing its last
// page shows at that very call.
TEST(EngineEquivalenceTest, AMoveCallMissingAPageIsCaught) {
  const Outcome clean = Compare(0);
  const Outcome o = Compare(0, /*drop_in_move_call=*/3);
  ASSERT_GE(o.first_call_divergence, 0);
  // The calls before it agreed, two move calls among them.
  EXPECT_GE(o.move_calls, 2u);
  EXPECT_NE(o.attach_call.find("move"), std::string::npos) << o.attach_call;
  EXPECT_NE(o.sim_call.find("move"), std::string::npos) << o.sim_call;
  EXPECT_NE(o.attach_call, o.sim_call);
  EXPECT_EQ(clean.first_call_divergence, -1);
}

}  // namespace
}  // namespace hotpage
