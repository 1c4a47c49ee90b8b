#include "policy/loaded_latency.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(LoadedLatency, IdleAtZeroUtilisation) {
  EXPECT_DOUBLE_EQ(LoadedLatencyFactor(0), 1.0);
  EXPECT_DOUBLE_EQ(LoadedLatencyFactor(-1), 1.0);
  EXPECT_DOUBLE_EQ(LoadedLatencyFactor(std::nan("")), 1.0);
  EXPECT_DOUBLE_EQ(LoadedLatencyNs(80, 0), 80);
}

TEST(LoadedLatency, MonotoneAndBounded) {
  double prev = 0;
  for (int i = 0; i <= 2000; ++i) {
    const double f = LoadedLatencyFactor(i / 1000.0);
    EXPECT_GE(f, prev) << "u=" << i / 1000.0;
    EXPECT_LE(f, 5.0 + 1e-9);
    prev = f;
  }
  EXPECT_GT(LoadedLatencyFactor(0.9), LoadedLatencyFactor(0.5));
}

// P2 of the header: Colloid SOSP'24, a saturated default tier at 2.5x the
// alternate tier's latency, whose idle latency is 2x (70 ns vs 140 ns).
TEST(LoadedLatency, ReproducesColloidSaturationWithinOnePercent) {
  const double local_idle = 70, remote_idle = 140;
  const double saturated = LoadedLatencyNs(local_idle, 1.0);
  EXPECT_NEAR(saturated / remote_idle, 2.5, 0.025);
  EXPECT_NEAR(LoadedLatencyFactor(kMaxUtilisation), 5.0, 0.05);
}

// The shape the header states: flat below ~half the peak, the knee above.
TEST(LoadedLatency, ShapeAsDocumented) {
  EXPECT_NEAR(LoadedLatencyFactor(0.2), 1.05, 0.01);
  EXPECT_NEAR(LoadedLatencyFactor(0.5), 1.21, 0.01);
  EXPECT_NEAR(LoadedLatencyFactor(0.7), 1.49, 0.01);
  EXPECT_NEAR(LoadedLatencyFactor(0.8), 1.84, 0.01);
  EXPECT_NEAR(LoadedLatencyFactor(0.9), 2.89, 0.01);
}

TEST(LoadedLatency, UtilisationForFactorInverts) {
  for (double u : {0.1, 0.3, 0.6, 0.85, 0.94}) {
    EXPECT_NEAR(UtilisationForFactor(LoadedLatencyFactor(u)), u, 1e-9);
  }
  EXPECT_EQ(UtilisationForFactor(1.0), 0);
  EXPECT_EQ(UtilisationForFactor(100), kMaxUtilisation);
}

TEST(LoadedLatency, DemandFromSamples) {
  // 4000 samples of period 100000 in 1 s: 4e8 lines, 25.6 GB/s.
  EXPECT_DOUBLE_EQ(DemandBytesPerSec(4000.0 * 100000, 1000000000), 25.6e9);
  EXPECT_EQ(DemandBytesPerSec(100, 0), 0);
  EXPECT_DOUBLE_EQ(Utilisation(10.24e9, 20.48e9), 0.5);
  EXPECT_EQ(Utilisation(1e9, 0), 0);
}

NodeInfo Node(int id, bool cpus, std::vector<int> distance,
              std::optional<int64_t> ns, std::optional<int64_t> mbps,
              std::vector<int> initiators, int tier) {
  NodeInfo n;
  n.id = id;
  if (cpus) n.cpus = {id};
  n.distance = std::move(distance);
  n.hmat.read_latency_ns = ns;
  n.hmat.read_bandwidth_mbps = mbps;
  n.hmat.initiators = std::move(initiators);
  n.tier = tier;
  return n;
}

// Two packages, each DRAM + CXL (the simulator's 2pkg+cxl preset).
Topology TwoPackages() {
  Topology t;
  t.nodes = {
      Node(0, true, {10, 21, 24, 31}, 80, 20480, {0}, 0),
      Node(1, true, {21, 10, 31, 24}, 80, 20480, {1}, 0),
      Node(2, false, {24, 31, 10, 41}, 250, 8192, {0}, 1),
      Node(3, false, {31, 24, 41, 10}, std::nullopt, std::nullopt, {1}, 1)};
  return t;
}

TEST(LoadedLatencyModel, FromHmatElseDefaults) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  ASSERT_EQ(m.nodes().size(), 4u);
  EXPECT_DOUBLE_EQ(m.IdleLatencyNs(0), 80);
  EXPECT_DOUBLE_EQ(m.PeakBytesPerSec(0), 20480e6);
  EXPECT_TRUE(m.Find(2)->from_hmat);
  EXPECT_FALSE(m.Find(3)->from_hmat);
  EXPECT_DOUBLE_EQ(m.IdleLatencyNs(3), kDefaultSlowLatencyNs);
  EXPECT_DOUBLE_EQ(m.PeakBytesPerSec(3), kDefaultSlowBytesPerSec);
  EXPECT_EQ(m.Find(7), nullptr);
  EXPECT_EQ(m.LatencyNs(7, 1e9), 0);
  // Half the peak: 1.21x.
  EXPECT_NEAR(m.LatencyNs(0, 10240e6), 80 * 1.2105, 0.01);
}

TEST(LoadedLatencyModel, RemotePackagePenaltyFromSlit) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  EXPECT_EQ(m.RemotePenaltyNs(0, 0), 0);
  EXPECT_EQ(m.RemotePenaltyNs(1, 1), 0);
  // The other package's DRAM: 80 * (21 / 10 - 1) = 88 ns.
  EXPECT_NEAR(m.RemotePenaltyNs(1, 0), 88, 1e-9);
  // Local CXL (its HMAT initiator is node 0): none; from package 1:
  // 250 * (31 / 24 - 1).
  EXPECT_EQ(m.RemotePenaltyNs(0, 2), 0);
  EXPECT_NEAR(m.RemotePenaltyNs(1, 2), 250 * (31.0 / 24 - 1), 1e-9);
  EXPECT_EQ(m.RemotePenaltyNs(-1, 0), 0);
  EXPECT_EQ(m.RemotePenaltyNs(9, 0), 0);
}

TEST(LoadedLatencyModel, DemandAtLatencyInvertsLatencyNs) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  for (double d : {1e9, 8e9, 15e9, 19e9}) {
    EXPECT_NEAR(m.DemandAtLatency(0, m.LatencyNs(0, d)), d, d * 1e-9);
  }
  EXPECT_EQ(m.DemandAtLatency(0, 80), 0);
  EXPECT_EQ(m.DemandAtLatency(0, 50), 0);
  EXPECT_DOUBLE_EQ(m.DemandAtLatency(0, 1e6), kMaxUtilisation * 20480e6);
  EXPECT_EQ(m.DemandAtLatency(7, 100), 0);
}

// Colloid's balance: the stream_mix case of tests/traces (DRAM at 95% of
// its peak, CXL at 1 GB/s). After the move both run at the same latency.
TEST(BalanceLatencies, SaturatedFastNodeShedsUntilTheLatenciesMeet) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  const double dram = 0.95 * 20480e6, cxl = 1e9;
  ASSERT_GT(m.LatencyNs(0, dram), m.LatencyNs(2, cxl));
  const NodeDemand donors[] = {{0, dram}};
  const NodeDemand receivers[] = {{2, cxl}};
  const LatencyBalance b = BalanceLatencies(m, donors, receivers);
  ASSERT_GT(b.moved_bytes_per_sec, 0);
  const double fast = m.LatencyNs(0, dram - b.moved_bytes_per_sec);
  const double slow = m.LatencyNs(2, cxl + b.moved_bytes_per_sec);
  EXPECT_NEAR(fast, slow, 0.001 * slow);
  EXPECT_NEAR(b.latency_ns, slow, 0.001 * slow);
  ASSERT_EQ(b.shed.size(), 1u);
  EXPECT_EQ(b.shed[0].node, 0);
  EXPECT_DOUBLE_EQ(b.shed[0].bytes_per_sec, b.moved_bytes_per_sec);
  // About 0.7 GB/s: the knee is steep, a little demand goes a long way
  // (400 ns -> 264 ns on both).
  EXPECT_NEAR(b.moved_bytes_per_sec, 0.69e9, 0.02e9);
  EXPECT_NEAR(b.latency_ns, 264, 2);
}

TEST(BalanceLatencies, NothingMovesWhenTheDonorIsFaster) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  const NodeDemand donors[] = {{0, 10e9}};    // 97 ns
  const NodeDemand receivers[] = {{2, 1e9}};  // 250 ns
  const LatencyBalance b = BalanceLatencies(m, donors, receivers);
  EXPECT_EQ(b.moved_bytes_per_sec, 0);
  EXPECT_EQ(b.shed[0].bytes_per_sec, 0);
  // The other way round the latencies cannot meet: CXL idle is slower
  // than DRAM with all of CXL's demand on it, so all of it moves.
  const LatencyBalance up = BalanceLatencies(m, receivers, donors);
  EXPECT_NEAR(up.moved_bytes_per_sec, 1e9, 1e3);
  EXPECT_LT(m.LatencyNs(0, 11e9), m.IdleLatencyNs(2));
  EXPECT_EQ(BalanceLatencies(m, {}, donors).moved_bytes_per_sec, 0);
}

// Two donors: each ends at the common level, and their sheds add up.
TEST(BalanceLatencies, EachDonorShedsDownToTheCommonLevel) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  const NodeDemand donors[] = {{0, 19e9}, {1, 19.3e9}};  // 304, 354 ns
  const NodeDemand receivers[] = {{2, 0}, {3, 0}};
  const LatencyBalance b = BalanceLatencies(m, donors, receivers);
  ASSERT_EQ(b.shed.size(), 2u);
  EXPECT_NEAR(b.shed[0].bytes_per_sec + b.shed[1].bytes_per_sec,
              b.moved_bytes_per_sec, 1);
  EXPECT_LT(b.shed[0].bytes_per_sec, b.shed[1].bytes_per_sec);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(
        m.LatencyNs(i, donors[i].bytes_per_sec - b.shed[i].bytes_per_sec),
        b.latency_ns, 0.001 * b.latency_ns);
  }
}

TEST(MarginalLatency, FactorIsTheDerivativeOfTheTotal) {
  // d(u L(u))/du by a central difference, below the cap.
  for (double u : {0.05, 0.3, 0.6, 0.8, 0.9, 0.94}) {
    const double h = 1e-6;
    const double num = ((u + h) * LoadedLatencyFactor(u + h) -
                        (u - h) * LoadedLatencyFactor(u - h)) /
                       (2 * h);
    EXPECT_NEAR(MarginalLatencyFactor(u), num, 1e-4 * num) << "u=" << u;
    EXPECT_GE(MarginalLatencyFactor(u), LoadedLatencyFactor(u));
    EXPECT_NEAR(UtilisationForMarginalFactor(MarginalLatencyFactor(u)), u,
                1e-9);
  }
  EXPECT_DOUBLE_EQ(MarginalLatencyFactor(0), 1.0);
  // Above the cap the curve is flat: M = L = 5; the left limit is 85.
  EXPECT_NEAR(MarginalLatencyFactor(1.2), 5.0, 1e-9);
  EXPECT_NEAR(MarginalLatencyFactor(1.2, /*below_cap=*/true), 85.0, 1e-6);
  EXPECT_EQ(UtilisationForMarginalFactor(1.0), 0);
  EXPECT_EQ(UtilisationForMarginalFactor(1e6), kMaxUtilisation);
  // The header's example: DRAM's marginal reaches an idle CXL node's
  // 250 ns at 70% of its peak, where its latency is 119 ns.
  const double u = UtilisationForMarginalFactor(250.0 / 80);
  EXPECT_NEAR(u, 0.70, 0.005);
  EXPECT_NEAR(LoadedLatencyNs(80, u), 119, 1);
}

// The brute-force minimum of the total latency over the amount moved from
// one donor to one receiver.
double BruteForceBest(const LoadedLatencyModel& m, NodeDemand donor,
                      NodeDemand receiver) {
  double best = std::numeric_limits<double>::infinity();
  const int steps = 20000;
  for (int i = 0; i <= steps; ++i) {
    const double x = donor.bytes_per_sec * i / steps;
    const NodeDemand after[] = {{donor.node, donor.bytes_per_sec - x},
                                {receiver.node, receiver.bytes_per_sec + x}};
    best = std::min(best, TotalLatencyNsPerSec(m, after));
  }
  return best;
}

double TotalAfter(const LoadedLatencyModel& m,
                  absl::Span<const NodeDemand> donors,
                  absl::Span<const NodeDemand> receivers,
                  const LatencyBalance& b) {
  std::vector<NodeDemand> after;
  double shed = 0, absorbed = 0;
  for (size_t i = 0; i < donors.size(); ++i) {
    after.push_back(
        {donors[i].node, donors[i].bytes_per_sec - b.shed[i].bytes_per_sec});
    shed += b.shed[i].bytes_per_sec;
  }
  for (size_t j = 0; j < receivers.size(); ++j) {
    after.push_back({receivers[j].node,
                     receivers[j].bytes_per_sec + b.absorbed[j].bytes_per_sec});
    absorbed += b.absorbed[j].bytes_per_sec;
  }
  EXPECT_NEAR(shed, b.moved_bytes_per_sec, 1e-6 * (1 + shed));
  EXPECT_NEAR(absorbed, b.moved_bytes_per_sec, 1e-6 * (1 + absorbed));
  return TotalLatencyNsPerSec(m, after);
}

// Over a grid of loads, from idle to twice the fast node's peak, with the
// receiver idle to saturated: never worse than the brute-force minimum (to
// its grid's resolution), and where Colloid's balance moves something,
// at least as good as it.
TEST(BalanceMarginalLatencies, MatchesTheBruteForceMinimum) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  int moved = 0;
  for (double fu = 0.1; fu <= 2.0; fu += 0.05) {
    for (double su : {0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.1}) {
      const NodeDemand donors[] = {{0, fu * 20480e6}};
      const NodeDemand receivers[] = {{2, su * 8192e6}};
      const LatencyBalance b = BalanceMarginalLatencies(m, donors, receivers);
      const double got = TotalAfter(m, donors, receivers, b);
      const double want = BruteForceBest(m, donors[0], receivers[0]);
      EXPECT_LE(got, want * (1 + 1e-4)) << "fast u=" << fu << " slow u=" << su;
      const LatencyBalance c = BalanceLatencies(m, donors, receivers);
      std::vector<NodeDemand> colloid = {
          {0, donors[0].bytes_per_sec - c.moved_bytes_per_sec},
          {2, receivers[0].bytes_per_sec + c.moved_bytes_per_sec}};
      EXPECT_LE(got, TotalLatencyNsPerSec(m, colloid) * (1 + 1e-9))
          << "fast u=" << fu << " slow u=" << su;
      moved += b.moved_bytes_per_sec > 0;
    }
  }
  EXPECT_GT(moved, 50);  // 91 of the 273 cases move something
}

// Two donors and two receivers: no pair of per-node amounts on a grid does
// better.
TEST(BalanceMarginalLatencies, TwoDonorsMatchTheBruteForceMinimum) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  for (auto [d0, d1] : {std::pair{15e9, 19e9}, std::pair{18e9, 10e9},
                        std::pair{19.3e9, 19.4e9}, std::pair{12e9, 14e9}}) {
    const NodeDemand donors[] = {{0, d0}, {1, d1}};
    const NodeDemand receivers[] = {{2, 1e9}, {3, 3e9}};
    const LatencyBalance b = BalanceMarginalLatencies(m, donors, receivers);
    const double got = TotalAfter(m, donors, receivers, b);
    double want = std::numeric_limits<double>::infinity();
    const int steps = 200;
    for (int i = 0; i <= steps; ++i) {
      for (int j = 0; j <= steps; ++j) {
        const double s0 = d0 * 0.6 * i / steps, s1 = d1 * 0.6 * j / steps;
        // The receivers split what moves at equal marginal latency (their
        // own optimum); search that split too, coarsely.
        for (int k = 0; k <= 20; ++k) {
          const double to2 = (s0 + s1) * k / 20;
          const NodeDemand after[] = {{0, d0 - s0},
                                      {1, d1 - s1},
                                      {2, 1e9 + to2},
                                      {3, 3e9 + s0 + s1 - to2}};
          want = std::min(want, TotalLatencyNsPerSec(m, after));
        }
      }
    }
    EXPECT_LE(got, want * (1 + 1e-4)) << d0 << " " << d1;
  }
}

// The stream_mix case again: the marginal rule sheds more than Colloid's
// (the fast node ends faster than the receiver) and the total is lower.
TEST(BalanceMarginalLatencies, ShedsMoreThanColloidAndWins) {
  const LoadedLatencyModel m = LoadedLatencyModel::FromTopology(TwoPackages());
  const NodeDemand donors[] = {{0, 0.93 * 20480e6}};
  const NodeDemand receivers[] = {{2, 1e9}};
  const LatencyBalance b = BalanceMarginalLatencies(m, donors, receivers);
  const LatencyBalance c = BalanceLatencies(m, donors, receivers);
  ASSERT_GT(c.moved_bytes_per_sec, 0);
  EXPECT_GT(b.moved_bytes_per_sec, c.moved_bytes_per_sec);
  const double fast =
      m.LatencyNs(0, donors[0].bytes_per_sec - b.moved_bytes_per_sec);
  const double slow = m.LatencyNs(2, 1e9 + b.moved_bytes_per_sec);
  EXPECT_LT(fast, slow);
  EXPECT_NEAR(
      m.MarginalLatencyNs(0, donors[0].bytes_per_sec - b.moved_bytes_per_sec),
      m.MarginalLatencyNs(2, 1e9 + b.moved_bytes_per_sec),
      0.001 * b.latency_ns);
  const NodeDemand before[] = {donors[0], receivers[0]};
  EXPECT_LT(TotalAfter(m, donors, receivers, b),
            TotalLatencyNsPerSec(m, before));
  // Nothing moves the other way, nor from a lightly loaded node.
  const NodeDemand light[] = {{0, 5e9}};
  EXPECT_EQ(BalanceMarginalLatencies(m, light, receivers).moved_bytes_per_sec,
            0);
  EXPECT_EQ(BalanceMarginalLatencies(m, {}, receivers).moved_bytes_per_sec, 0);
}

}  // namespace
}  // namespace hotpage
