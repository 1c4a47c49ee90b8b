// ProbePmu on fake sysfs trees: each kind of machine, and that the event
// choice (event_config.h) reports exactly what the probe found.

#include "sampler/perf/pmu_probe.h"

#include <string>

#include "gtest/gtest.h"
#include "sampler/perf/event_config.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

const std::string kPmus = "/sys/bus/event_source/devices";

KernelFs Fs(const FakeTree& t) { return *KernelFs::Open(t.root()); }

void ExpectAvailabilityAgrees(const FakeTree& t) {
  const PmuProbe p = ProbePmu(Fs(t));
  const SamplerAvailability a = ProbeAvailability(Fs(t));
  EXPECT_EQ(a.pebs, p.pebs());
  EXPECT_EQ(a.ibs, p.ibs_op);
  EXPECT_EQ(a.core_pmu, p.core_pmu);
}

TEST(PmuProbe, NoPmuAtAll) {
  FakeTree t;
  t.Mkdir(kPmus + "/software");
  const PmuProbe p = ProbePmu(Fs(t));
  EXPECT_FALSE(p.pebs());
  EXPECT_FALSE(p.ibs_op);
  EXPECT_FALSE(p.core_pmu);
  ExpectAvailabilityAgrees(t);
}

TEST(PmuProbe, CorePmuWithoutMemorySampling) {
  FakeTree t;
  t.Write(kPmus + "/cpu/type", "4\n");
  const PmuProbe p = ProbePmu(Fs(t));
  EXPECT_FALSE(p.pebs());
  EXPECT_TRUE(p.core_pmu);
  ExpectAvailabilityAgrees(t);
}

TEST(PmuProbe, IntelPebsWithAux) {
  FakeTree t;
  t.Write(kPmus + "/cpu/type", "4\n");
  t.Write(kPmus + "/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write(kPmus + "/cpu/events/mem-loads-aux", "event=0x03,umask=0x82\n");
  const PmuProbe p = ProbePmu(Fs(t));
  EXPECT_EQ(p.pebs_pmu, "cpu");
  EXPECT_TRUE(p.pebs_mem_loads_aux);
  EXPECT_FALSE(p.ibs_op);
  ExpectAvailabilityAgrees(t);
}

TEST(PmuProbe, HybridPCorePmu) {
  FakeTree t;
  t.Write(kPmus + "/cpu_atom/type", "10\n");
  t.Write(kPmus + "/cpu_core/type", "8\n");
  t.Write(kPmus + "/cpu_core/events/mem-loads",
          "event=0xcd,umask=0x1,ldlat=3\n");
  const PmuProbe p = ProbePmu(Fs(t));
  EXPECT_EQ(p.pebs_pmu, "cpu_core");
  EXPECT_FALSE(p.pebs_mem_loads_aux);
  EXPECT_TRUE(p.core_pmu);
  EXPECT_TRUE(p.hybrid);
  EXPECT_FALSE(p.atom_mem_loads);
  ExpectAvailabilityAgrees(t);
  t.Write(kPmus + "/cpu_atom/events/mem-loads",
          "event=0xd0,umask=0x5,ldlat=3\n");
  EXPECT_TRUE(ProbePmu(Fs(t)).atom_mem_loads);
}

TEST(PmuProbe, AtomOnlyHybridTreeIsACorePmu) {
  FakeTree t;
  t.Write(kPmus + "/cpu_atom/type", "10\n");
  const PmuProbe p = ProbePmu(Fs(t));
  EXPECT_TRUE(p.core_pmu);
  EXPECT_TRUE(p.hybrid);
  EXPECT_FALSE(p.pebs());
}

// The aux event counts only on the PMU the load event opens on: an aux
// event on another PMU does not make the group need it. (policy/topology
// once looked for it on either PMU and so could disagree with the sampler.)
TEST(PmuProbe, AuxOnlyOfThePebsPmu) {
  FakeTree t;
  t.Write(kPmus + "/cpu/type", "4\n");
  t.Write(kPmus + "/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write(kPmus + "/cpu_core/type", "8\n");
  t.Write(kPmus + "/cpu_core/events/mem-loads-aux", "event=0x03,umask=0x82\n");
  const PmuProbe p = ProbePmu(Fs(t));
  EXPECT_EQ(p.pebs_pmu, "cpu");
  EXPECT_FALSE(p.pebs_mem_loads_aux);
  EXPECT_FALSE(p.hybrid);  // a "cpu" PMU: not the hybrid layout
  ExpectAvailabilityAgrees(t);
}

TEST(PmuProbe, AmdIbs) {
  FakeTree t;
  t.Write(kPmus + "/ibs_op/type", "11\n");
  const PmuProbe p = ProbePmu(Fs(t));
  EXPECT_FALSE(p.pebs());
  EXPECT_TRUE(p.ibs_op);
  EXPECT_TRUE(p.core_pmu);
  ExpectAvailabilityAgrees(t);
}

}  // namespace
}  // namespace hotpage
