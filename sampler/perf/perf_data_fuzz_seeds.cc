// Writes synthetic perf.data fuzz seeds into a directory: layouts that the
// recorded seeds lack (PEBS fields, every variable-length sample field, old
// attr sizes, several events, ID_INDEX, loss and throttle records, zstd
// COMPRESSED and COMPRESSED2 records split mid-record, pipe mode).
//
//   perf_data_fuzz_seeds DIR

#include <cstdio>
#include <fstream>
#include <string>

#include "sampler/perf/perf_data_format.h"
#include "sampler/perf/perf_data_testing.h"

namespace {

namespace pf = ::hotpage::perf_format;
using ::hotpage::testing::PebsAttr;
using ::hotpage::testing::PerfDataBuilder;
using ::hotpage::testing::TestAttr;
using ::hotpage::testing::TestSample;

TestSample Sample(uint64_t id, int i) {
  TestSample s;
  s.id = id;
  s.ip = 0x401000 + i;
  s.pid = 7;
  s.tid = 7 + i % 2;
  s.time = 1000 + i;
  s.addr = 0x7f0000001000ULL + 64ULL * i;
  s.cpu = i % 3;
  s.period = 100;
  s.weight = 40 + i;
  s.data_src = 0x29080142ULL + i;
  s.phys_addr = 0x12340000ULL + 64ULL * i;
  s.read_group_nr = 2;
  s.callchain = {1, 2, 3};
  s.raw_size = 12;
  s.branch_nr = 2;
  s.stack_user_size = 16;
  s.aux_size = 8;
  return s;
}

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: perf_data_fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = true;

  // PEBS-shaped, two events, loss and throttle records, ID_INDEX.
  PerfDataBuilder pebs;
  const int loads = pebs.AddAttr(PebsAttr(11));
  TestAttr stores_attr = PebsAttr(22);
  stores_attr.name = "stores";
  const int stores = pebs.AddAttr(stores_attr);
  pebs.AddIdIndex();
  for (int i = 0; i < 6; ++i)
    pebs.AddSample(i % 2 ? stores : loads, Sample(i % 2 ? 22 : 11, i));
  pebs.AddLost(loads, 11, 4, Sample(11, 0));
  pebs.AddLostSamples(loads, 2, Sample(11, 1));
  pebs.AddThrottle(stores, false, 5, 22, Sample(22, 2));
  pebs.AddThrottle(stores, true, 6, 22, Sample(22, 3));
  ok &= Write(dir + "/pebs.file.perf.data", pebs.File());
  ok &= Write(dir + "/pebs.pipe.perf.data", pebs.Pipe());
  PerfDataBuilder::Options z;
  z.compress = true;
  z.flush_bytes = 300;
  z.max_payload = 40;
  ok &= Write(dir + "/pebs.zstd.perf.data", pebs.File(z));
  z.compressed2 = true;
  ok &= Write(dir + "/pebs.zstd2.pipe.perf.data", pebs.Pipe(z));

  // Every variable-length field before the kept ones.
  TestAttr all;
  all.sample_type = (uint64_t{1} << 25) - 1;
  all.sample_type &= ~uint64_t{pf::kSampleWeight};
  all.read_format = pf::kFormatGroup | pf::kFormatId | pf::kFormatLost |
                    pf::kFormatTotalTimeEnabled;
  all.branch_sample_type = pf::kBranchHwIndex | pf::kBranchCounters;
  all.sample_regs_user = 0xf;
  all.sample_regs_intr = 0x3;
  all.ids = {5};
  PerfDataBuilder every;
  const int e = every.AddAttr(all);
  for (int i = 0; i < 3; ++i) every.AddSample(e, Sample(5, i));
  ok &= Write(dir + "/every_field.file.perf.data", every.File());

  // The oldest attr layout (64 bytes, attr.size 0).
  TestAttr old = PebsAttr(3);
  old.attr_size = 64;
  old.size_field_zero = true;
  PerfDataBuilder v0;
  const int o = v0.AddAttr(old);
  for (int i = 0; i < 3; ++i) v0.AddSample(o, Sample(3, i));
  ok &= Write(dir + "/attr_v0.pipe.perf.data", v0.Pipe());

  if (!ok) {
    std::fprintf(stderr, "perf_data_fuzz_seeds: cannot write into %s\n",
                 dir.c_str());
    return 1;
  }
  return 0;
}
