#include "policy/loaded_latency.h"

#include <cmath>

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

}  // namespace
}  // namespace hotpage
