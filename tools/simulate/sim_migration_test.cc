// The simulator's migration: SimulatedPageMover (move_pages over the
// simulated memory, in modelled time) and SimMigration (attach's Migrator
// driven round by round in simulated time), and AppendMoveRequests as the
// hotpage policy feeds them.

#include "tools/simulate/sim_migration.h"

#include <cerrno>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "migrator/migrator.h"
#include "migrator/move_requests.h"
#include "migrator/page_mover.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "tools/base/clock.h"
#include "tools/simulate/simulated_memory.h"
#include "tools/simulate/simulated_page_mover.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kSec = 1000000000;
constexpr pid_t kPid = 4242;
// 4096 bytes at min(20480, 8192) MiB/s, rounded.
constexpr uint64_t kCopyNs = 477;

uint64_t A(uint64_t i) { return kBase + i * kPage; }

NodeInfo Node(int id, std::vector<int> cpus, std::vector<int> distance,
              int tier, int64_t latency_ns, int64_t bw_mbps) {
  NodeInfo n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.memory_bytes = uint64_t{1} << 30;
  n.distance = std::move(distance);
  n.tier = tier;
  n.hmat.read_latency_ns = latency_ns;
  n.hmat.read_bandwidth_mbps = bw_mbps;
  return n;
}

// DRAM (cpus 0-1) + CXL, as the repo's dram+cxl guest.
Topology DramCxl() {
  Topology t;
  t.nodes = {Node(0, {0, 1}, {10, 20}, 0, 80, 20480),
             Node(1, {}, {20, 10}, 1, 250, 8192)};
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}};
  return t;
}

std::unique_ptr<SimulatedMemory> Make(const Topology& t,
                                      std::vector<SimNodeCapacity> caps) {
  SimulatedMemoryOptions o;
  o.capacities = std::move(caps);
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> m =
      SimulatedMemory::Create(t, o);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

std::vector<MoveRequest> Requests(uint64_t first, uint64_t count, int to,
                                  MoveReason reason = MoveReason::kPromote) {
  std::vector<MoveRequest> out;
  for (uint64_t i = first; i < first + count; ++i) {
    MoveRequest r;
    r.vaddr = A(i);
    r.to_node = to;
    r.reason = reason;
    out.push_back(r);
  }
  return out;
}

// --- SimulatedPageMover ------------------------------------------------------

TEST(SimulatedPageMoverTest, QueryAnswersFromTheMemoryInNoTime) {
  const Topology topo = DramCxl();
  auto m = Make(topo, {{0, 10}, {1, 10}});
  m->Touch(A(0), 0, 0);
  m->Touch(A(1), 0, 0);
  m->Move(A(1), 1, 0);
  FakeClock clock(SimTime(5));
  SimulatedPageMover mover(m.get(), &clock, MigrationCost{});
  std::vector<uint64_t> pages = {A(0), A(1), A(2)};
  std::vector<int> status(3, kPageStatusUnset);
  EXPECT_EQ(mover.Query(kPid, pages, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{0, 1, -ENOENT}));
  EXPECT_EQ(clock.Now(), SimTime(5));
  EXPECT_EQ(mover.counters().query_calls, 1u);
}

// Every status is written, as move_pages writes them; the call takes
// per_call_ns plus the pages' costs, on the clock and as CPU time; the
// memory sees the call's start time and is charged the fixed cost too.
TEST(SimulatedPageMoverTest, MoveWritesEveryStatusAndTakesItsModelledTime) {
  const Topology topo = DramCxl();
  auto m = Make(topo, {{0, 2}, {1, 10}});
  m->Touch(A(0), 0, 0);  // node 0
  m->Touch(A(1), 0, 0);  // node 0 (now full)
  m->Touch(A(2), 0, 0);  // node 1
  m->Touch(A(3), 0, 0);  // node 1
  const uint64_t setup_ns = m->counters().migration_ns;
  std::vector<uint64_t> listened;
  m->set_move_listener(
      [&](uint64_t now_ns, uint64_t, int, int) { listened.push_back(now_ns); });
  MigrationCost cost;
  cost.per_call_ns = 70000;
  cost.per_page_ns = 2000;
  FakeClock clock(SimTime(100));
  SimulatedPageMover mover(m.get(), &clock, cost);

  // Demote A(0); A(2) is already on node 1; A(9) was never touched.
  std::vector<uint64_t> pages = {A(0), A(2), A(9)};
  std::vector<int> nodes = {1, 1, 1};
  std::vector<int> status(3, kPageStatusUnset);
  EXPECT_EQ(mover.Move(kPid, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{1, 1, -ENOENT}));
  const uint64_t call_ns = 70000 + 2000 + kCopyNs;
  EXPECT_EQ(clock.Now(), SimTime(100 + call_ns));
  EXPECT_EQ(clock.ThreadCpuTime(), absl::Nanoseconds(call_ns));
  EXPECT_EQ(listened, std::vector<uint64_t>{100});  // the call's start
  EXPECT_EQ(m->counters().migration_ns - setup_ns, call_ns);

  // Node 0 has one free page: A(2) fits, A(3) does not.
  pages = {A(2), A(3)};
  nodes = {0, 0};
  status.assign(2, kPageStatusUnset);
  EXPECT_EQ(mover.Move(kPid, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{0, -ENOMEM}));
  EXPECT_EQ(m->NodeOf(A(3)), 1);

  const SimulatedMoverCounters& c = mover.counters();
  EXPECT_EQ(c.move_calls, 2u);
  EXPECT_EQ(c.demoted_pages, 1u);
  EXPECT_EQ(c.promoted_pages, 1u);
  EXPECT_EQ(c.lateral_pages, 0u);
  EXPECT_EQ(c.moved_bytes, 2 * kPage);
  EXPECT_EQ(c.move_ns, call_ns + 70000 + 2000 + kCopyNs);
}

// A huge page moves whole whichever address of it is named: its 512 base
// pages, one status; one that does not fit whole answers -ENOMEM.
TEST(SimulatedPageMoverTest, HugePageMovesItsBasePages) {
  const Topology topo = DramCxl();
  auto m = Make(topo, {{0, 600}, {1, 2000}});
  const uint64_t huge = kBase;  // 2 MiB aligned
  for (uint64_t i = 0; i < 1024; ++i) m->Touch(A(i), 4000, 0);
  for (uint64_t i = 0; i < 1024; ++i) m->Move(A(i), 1, 0);
  FakeClock clock;
  SimulatedPageMover mover(m.get(), &clock, MigrationCost{});
  mover.AddHugePage(huge);
  mover.AddHugePage(huge + (2u << 20));
  std::vector<uint64_t> pages = {huge + 5 * kPage};
  std::vector<int> nodes = {0};
  std::vector<int> status = {kPageStatusUnset};
  EXPECT_EQ(mover.Move(kPid, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status[0], 0);
  EXPECT_EQ(mover.counters().promoted_pages, 512u);
  EXPECT_EQ(m->NodeOf(A(0)), 0);
  EXPECT_EQ(m->NodeOf(A(511)), 0);
  EXPECT_EQ(m->NodeOf(A(512)), 1);
  // The second: 88 pages of room on node 0.
  pages = {huge + (2u << 20)};
  status = {kPageStatusUnset};
  mover.Move(kPid, pages, nodes, absl::MakeSpan(status));
  EXPECT_EQ(status[0], -ENOMEM);
  EXPECT_EQ(mover.counters().promoted_pages, 600u);
}

// --- SimMigration: the Migrator in simulated time ----------------------------

// Pages moved by `t` at `rate_mbps` when 200k pages wait on the slow node
// (no CPU budget: the rate limit alone).
uint64_t MovedBy(double rate_mbps, uint64_t t, double cpu_budget = 0) {
  const Topology topo = DramCxl();
  auto m = Make(topo, {{0, 400000}, {1, 400000}});
  for (uint64_t i = 0; i < 200000; ++i) m->Touch(A(i), 4000, 0);
  for (uint64_t i = 0; i < 200000; ++i) m->Move(A(i), 1, 0);
  MigratorOptions o;
  o.rate_limit_bytes_per_sec = rate_mbps * 1e6;
  o.queue_capacity = 1 << 20;
  o.cpu_budget = cpu_budget;
  SimMigration mig(o, MigrationCost{}, m.get(), kPid, 0);
  mig.Submit(Requests(0, 200000, 0), 0);
  mig.RunUntil(t);
  return mig.stats().promoted_pages;
}

TEST(SimMigrationTest, MovesAtTheRateLimitInSimulatedTime) {
  // 256 MB/s with a 12.8 MB bucket (50 ms of the rate): after t seconds,
  // burst + rate * t bytes, within one batch (1024 pages).
  for (uint64_t secs : {1, 2}) {
    const double expect = (12.8e6 + 256e6 * secs) / kPage;
    const double got = static_cast<double>(MovedBy(256, secs * kSec));
    EXPECT_NEAR(got, expect, 1024) << secs << " s";
  }
  // Twice the rate, twice the pages (the bucket scales with it too).
  const double r = static_cast<double>(MovedBy(512, kSec)) /
                   static_cast<double>(MovedBy(256, kSec));
  EXPECT_NEAR(r, 2.0, 0.05);
  // At t = 0 one call of a batch; the next starts when it has taken its
  // modelled time.
  EXPECT_EQ(MovedBy(256, 0), 1024u);
}

// The calls' modelled time is the migrator thread's CPU time, so attach's
// CPU budget (a quarter of a core, 250 ms deep) applies: without a rate
// limit, 0.5 s moves (0.125 s + 0.25 s) / 2.55 us per page (2.477 us per
// page plus 70 us per 1024-page call), not 0.5 s / 2.55 us.
TEST(SimMigrationTest, TheCpuBudgetBindsWithoutARateLimit) {
  const double per_page_s = (2000 + kCopyNs + 70000.0 / 1024) * 1e-9;
  const double free_run =
      static_cast<double>(MovedBy(0, kSec / 2, /*cpu_budget=*/0));
  EXPECT_NEAR(free_run, 0.5 / per_page_s, 1024);
  const double budgeted =
      static_cast<double>(MovedBy(0, kSec / 2, /*cpu_budget=*/0.25));
  EXPECT_NEAR(budgeted, (0.125 + 0.25) / per_page_s, 2048);
  // At attach's 256 MB/s the budget never binds (16% of a core).
  EXPECT_EQ(MovedBy(256, kSec, 0.25), MovedBy(256, kSec, 0));
}

TEST(SimMigrationTest, QueueCapacityAndValidity) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 100000}});
  MigratorOptions o;
  SimMigration mig(o, MigrationCost{}, m.get(), kPid, 0);
  std::vector<MoveRequest> reqs = Requests(0, 70000, 0);
  reqs.push_back(MoveRequest{});  // vaddr 0: invalid
  EXPECT_EQ(mig.Submit(reqs, 0), 65536u);
  EXPECT_EQ(mig.stats().dropped_queue_full, 70000u - 65536u);
  EXPECT_EQ(mig.stats().dropped_invalid, 1u);
  EXPECT_EQ(mig.stats().queue_depth, 65536u);
}

TEST(SimMigrationTest, UntouchedAndAlreadyPlacedPagesAreDropped) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  m->Touch(A(0), 0, 0);  // node 0
  m->Touch(A(1), 0, 0);
  m->Move(A(1), 1, 0);
  SimMigration mig(MigratorOptions{}, MigrationCost{}, m.get(), kPid, 0);
  EXPECT_TRUE(mig.idle());
  mig.Submit(Requests(0, 3, 0), 5);  // A(0) already there, A(2) untouched
  EXPECT_EQ(mig.NextEventNs(), 5u);
  mig.RunUntil(5);
  const SimMigrationStats s = mig.stats();
  EXPECT_EQ(s.already_on_target, 1u);
  EXPECT_EQ(s.failed_enoent, 1u);
  EXPECT_EQ(s.promoted_pages, 1u);
  EXPECT_EQ(s.query_calls, 1u);
  EXPECT_EQ(s.move_calls, 1u);
  EXPECT_EQ(m->NodeOf(A(1)), 0);
  EXPECT_TRUE(mig.idle() || mig.NextEventNs() > 5);
  mig.RunUntil(kSec);
  EXPECT_TRUE(mig.idle());
  EXPECT_EQ(mig.NextEventNs(), UINT64_MAX);
  EXPECT_EQ(mig.migrator().Snapshot().state, MigratorState::kRunning);
}

TEST(SimMigrationTest, CallsTakeModelledTime) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  m->Touch(A(0), 0, 0);
  m->Move(A(0), 1, 0);
  MigrationCost cost;
  cost.per_call_ns = 70000;
  cost.per_page_ns = 2000;
  SimMigration mig(MigratorOptions{}, cost, m.get(), kPid, 0);
  mig.Submit(Requests(0, 1, 0), 100);
  mig.RunUntil(100);
  // Busy until 100 + 70 us + 2 us + 4096 B at 8 GiB/s; then idle.
  EXPECT_EQ(mig.NextEventNs(), 100u + 70000 + 2000 + kCopyNs);
  mig.RunUntil(mig.NextEventNs());
  EXPECT_TRUE(mig.idle());
  EXPECT_EQ(m->counters().migration_ns,
            70000u + 2000 + kCopyNs + (2000 + kCopyNs));
  EXPECT_EQ(mig.migrator().Snapshot().cpu_time,
            absl::Nanoseconds(70000 + 2000 + kCopyNs));
}

// A policy round can fall inside a move call (it started before the round
// and ends after): the Submit at the round's time sets the clock back; the
// migrator's next round still starts when the call ends.
TEST(SimMigrationTest, ASubmitDuringACallWaitsForTheCallsEnd) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  m->Touch(A(0), 4000, 0);
  m->Touch(A(1), 4000, 0);
  m->Move(A(0), 1, 0);
  m->Move(A(1), 1, 0);
  MigrationCost cost;
  cost.per_call_ns = kSec;  // a one-second call
  MigratorOptions o;
  o.cpu_budget = 0;  // else that second of CPU time is a debt to wait out
  SimMigration mig(o, cost, m.get(), kPid, 0);
  mig.Submit(Requests(0, 1, 0), 0);
  mig.RunUntil(0);
  const uint64_t end = mig.NextEventNs();
  EXPECT_GT(end, kSec);
  EXPECT_EQ(mig.Submit(Requests(1, 1, 0), kSec / 2), 1u);
  EXPECT_EQ(mig.NextEventNs(), end);
  mig.RunUntil(end - 1);
  EXPECT_EQ(m->NodeOf(A(1)), 1);
  mig.RunUntil(end);
  EXPECT_EQ(m->NodeOf(A(1)), 0);
  EXPECT_EQ(mig.stats().promoted_pages, 2u);
}

TEST(SimMigrationTest, EnomemBacksTheNodeOff) {
  auto m = Make(DramCxl(), {{0, 1}, {1, 10}});
  m->Touch(A(0), 0, 0);  // fills node 0
  m->Touch(A(1), 0, 0);  // node 1
  SimMigration mig(MigratorOptions{}, MigrationCost{}, m.get(), kPid, 0);
  m->set_gate(&mig);
  mig.Submit(Requests(1, 1, 0), 0);
  mig.RunUntil(0);
  EXPECT_EQ(mig.stats().failed_enomem, 1u);
  EXPECT_EQ(mig.BackedOffNodes(kSec / 2), std::vector<int>{0});
  m->set_now(kSec / 2);
  EXPECT_EQ(m->BackedOffNodes(), std::vector<int>{0});
  // Submitting to it during the back-off is refused; after the first
  // back-off's second (MigratorOptions::enomem_backoff_first, from the
  // failed call's end) it is not.
  EXPECT_EQ(mig.Submit(Requests(1, 1, 0), kSec / 2), 0u);
  EXPECT_EQ(mig.stats().dropped_node_backoff, 1u);
  EXPECT_TRUE(mig.BackedOffNodes(2 * kSec).empty());
  EXPECT_EQ(mig.Submit(Requests(1, 1, 0), 2 * kSec), 1u);
}

TEST(SimMigrationTest, PingPongPagesAreHeld) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  m->Touch(A(0), 0, 0);
  SimMigration mig(MigratorOptions{}, MigrationCost{}, m.get(), kPid, 0);
  m->set_gate(&mig);
  // 0 -> 1 -> 0 -> 1 -> 0: the third reversal (fourth move) holds it
  // (PingPongOptions: more than 2 reversals within 60 s).
  uint64_t t = 0;
  for (int i = 0; i < 4; ++i) {
    t += kSec;
    mig.Submit(Requests(0, 1, i % 2 == 0 ? 1 : 0), t);
    mig.RunUntil(t + kSec / 2);
  }
  EXPECT_EQ(mig.stats().pingpong_pages, 1u);
  m->set_now(t + kSec / 2);
  EXPECT_TRUE(m->IsHeld(A(0)));
  t += kSec;
  mig.Submit(Requests(0, 1, 1), t);
  mig.RunUntil(t + kSec / 2);
  EXPECT_EQ(mig.stats().skipped_held, 1u);
  EXPECT_EQ(m->NodeOf(A(0)), 0);
  // The policy's view ends the hold (the engine at a change point) at the
  // view's time, through the gate: the page moves again.
  t += kSec;
  m->set_now(t);
  EXPECT_EQ(m->ReleaseHolds(), 1u);
  EXPECT_FALSE(m->IsHeld(A(0)));
  mig.Submit(Requests(0, 1, 1), t);
  mig.RunUntil(t + kSec / 2);
  EXPECT_EQ(mig.stats().skipped_held, 1u);
  EXPECT_EQ(m->NodeOf(A(0)), 1);
}

// --- AppendMoveRequests ----------------------------------------------------

PlannedMove Planned(uint64_t vaddr, int from, int to, PlacementReason reason,
                    uint32_t bytes = 4096) {
  PlannedMove m;
  m.vaddr = vaddr;
  m.page_bytes = bytes;
  m.from_node = from;
  m.to_node = to;
  m.reason = reason;
  return m;
}

TEST(MoveRequestsTest, DemotionsFirstIn4KiBPages) {
  PlacementDecision d;
  d.moves = {
      Planned(A(1), 0, 1, PlacementReason::kDemote),
      Planned(A(2), 1, 0, PlacementReason::kPromote),
      Planned(A(3), 0, 1, PlacementReason::kDemote),
      Planned(kBase + (4 << 20), 1, 0, PlacementReason::kPromote, 2 << 20)};
  std::vector<MoveRequest> r;
  AppendMoveRequests(d, SimTime(5), &r);
  ASSERT_EQ(r.size(), 3u + 512u);
  EXPECT_EQ(r[0].vaddr, A(1));
  EXPECT_EQ(r[1].vaddr, A(3));
  EXPECT_EQ(r[1].reason, MoveReason::kDemote);
  EXPECT_EQ(r[2].vaddr, A(2));
  EXPECT_EQ(r[2].reason, MoveReason::kPromote);
  EXPECT_EQ(r[3].vaddr, kBase + (4 << 20));
  EXPECT_EQ(r.back().vaddr, kBase + (4 << 20) + (511 << 12));
  for (const MoveRequest& q : r) {
    EXPECT_EQ(q.page_bytes, 4096u);
    EXPECT_EQ(q.from_node, -1);
    EXPECT_EQ(q.hot_since, SimTime(5));
  }
}

// 600 swaps on a full fast node. In the decision's order (demotion,
// promotion, demotion, ...) the migrator's one-node-per-call batches run
// promotions before the demotions that make their room: ENOMEM, and the
// node is backed off. Demotions first: every promotion finds its room.
TEST(MoveRequestsTest, DemotionsFirstKeepPromotionsBehindTheirRoom) {
  for (const bool demotions_first : {false, true}) {
    auto m = Make(DramCxl(), {{0, 600}, {1, 10000}});
    for (int i = 0; i < 1200; ++i) m->Touch(A(i), 0, 0);  // 0..599 on node 0
    PlacementDecision d;
    for (int i = 0; i < 600; ++i) {
      d.moves.push_back(Planned(A(i), 0, 1, PlacementReason::kDemote));
      d.moves.push_back(Planned(A(600 + i), 1, 0, PlacementReason::kPromote));
    }
    std::vector<MoveRequest> reqs;
    if (demotions_first) {
      AppendMoveRequests(d, SimTime(0), &reqs);
    } else {
      for (const PlannedMove& p : d.moves) {
        MoveRequest q;
        q.vaddr = p.vaddr;
        q.to_node = p.to_node;
        reqs.push_back(q);
      }
    }
    SimMigration mig(MigratorOptions{}, MigrationCost{}, m.get(), kPid, 0);
    mig.Submit(reqs, 0);
    mig.RunUntil(10 * kSec);
    SCOPED_TRACE(demotions_first ? "demotions first" : "decision order");
    if (demotions_first) {
      EXPECT_EQ(mig.stats().failed_enomem, 0u);
      EXPECT_EQ(mig.stats().promoted_pages, 600u);
      EXPECT_TRUE(mig.BackedOffNodes(10 * kSec).empty());
    } else {
      // The promotions ahead of their room met ENOMEM, and the back-off
      // dropped others.
      EXPECT_GT(mig.stats().failed_enomem, 0u);
      EXPECT_LT(mig.stats().promoted_pages, 600u);
    }
  }
}

}  // namespace
}  // namespace hotpage
