// Every machine profile loads (LoadMachineProfile) and holds what
// tests/pmu/profiles/README.md says: kernel, PMUs, their CPUs and features.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sampler/perf/testing/fake_perf_kernel.h"
#include "tests/pmu/profile_harness.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

FakeKernelConfig Load(const std::string& name) {
  // A copy: the runfiles are symlinks out of the tree, which KernelFs
  // never follows.
  FakeTree t;
  ProfileRun::CopyProfile(name, t.root());
  absl::StatusOr<KernelFs> fs = KernelFs::Open(t.root());
  EXPECT_TRUE(fs.ok()) << fs.status();
  if (!fs.ok()) return {};
  absl::StatusOr<FakeKernelConfig> c = LoadMachineProfile(*fs);
  EXPECT_TRUE(c.ok()) << name << ": " << c.status();
  return c.ok() ? *c : FakeKernelConfig{};
}

TEST(ProfilesLoadTest, IntelServers) {
  for (const char* name : {"skylake_sp", "icelake_sp", "sapphire_rapids"}) {
    SCOPED_TRACE(name);
    FakeKernelConfig c = Load(name);
    EXPECT_EQ(c.name, name);
    EXPECT_EQ(c.online_cpus, (std::vector<int>{0, 1, 2, 3}));
    ASSERT_EQ(c.pmus.size(), 1u);
    EXPECT_EQ(c.pmus[0].name, "cpu");
    EXPECT_EQ(c.pmus[0].type, 4u);
    EXPECT_TRUE(c.pmus[0].pebs);
    EXPECT_TRUE(c.pmus[0].cpus.empty());
    EXPECT_EQ(c.pmus[0].mem_loads_aux, std::string(name) == "sapphire_rapids");
    EXPECT_EQ(c.paranoid, 2);
    EXPECT_EQ(c.max_sample_rate, 100000u);
  }
}

TEST(ProfilesLoadTest, Hybrid) {
  for (const char* name : {"alder_lake", "meteor_lake"}) {
    SCOPED_TRACE(name);
    FakeKernelConfig c = Load(name);
    EXPECT_EQ(c.online_cpus.size(), 8u);
    const FakePmu* core = c.PmuByName("cpu_core");
    const FakePmu* atom = c.PmuByName("cpu_atom");
    ASSERT_NE(core, nullptr);
    ASSERT_NE(atom, nullptr);
    EXPECT_EQ(c.PmuByName("cpu"), nullptr);
    EXPECT_EQ(core->type, 4u);
    EXPECT_EQ(core->cpus, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(atom->cpus, (std::vector<int>{4, 5, 6, 7}));
    EXPECT_TRUE(core->pebs && atom->pebs);
    // adl_hybrid_mem_attrs has mem-loads-aux (hybrid_big); mtl's has none.
    EXPECT_EQ(core->mem_loads_aux, std::string(name) == "alder_lake");
    EXPECT_FALSE(atom->mem_loads_aux);
  }
}

TEST(ProfilesLoadTest, Amd) {
  FakeKernelConfig z2 = Load("zen2_5_15");
  EXPECT_FALSE(z2.KernelAtLeast(6, 1));
  const FakePmu* ibs = z2.PmuByName("ibs_op");
  ASSERT_NE(ibs, nullptr);
  EXPECT_TRUE(ibs->ibs);
  EXPECT_FALSE(ibs->ibs_swfilt);
  EXPECT_FALSE(z2.PmuByName("cpu")->pebs);
  FakeKernelConfig z4 = Load("zen4_6_8");
  EXPECT_TRUE(z4.KernelAtLeast(6, 2));
  ASSERT_NE(z4.PmuByName("ibs_op"), nullptr);
}

TEST(ProfilesLoadTest, VirtualMachines) {
  FakeKernelConfig v = Load("vm_vpmu");
  ASSERT_EQ(v.pmus.size(), 1u);
  EXPECT_FALSE(v.pmus[0].pebs);
  EXPECT_EQ(v.pmus[0].max_precise, 0);
  FakeKernelConfig n = Load("vm_nopmu");
  EXPECT_TRUE(n.pmus.empty());
}

}  // namespace
}  // namespace hotpage
