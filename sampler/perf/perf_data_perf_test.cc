// PerfDataReader against the real `perf` tool: records
// //sampler/perf:touch_pages with Debian's perf in file mode, pipe mode (`-o
// -`) and `-z`, two events at once with `-d -W --phys-data --sample-cpu`, and
// checks the reader's samples against perf's own decoding, sample for sample:
//
//  - `perf script -G -F ... --ns` (perf sorts by time; the reader keeps file
//    order, so its samples are compared after a stable sort by time);
//  - `perf script --dump-unsorted-raw-trace` (file order, with each
//    record's file offset), compared without reordering;
//  - every page touch_pages touched appears, on both events.
//
// Synthetic files (perf_data_testing) with what this machine cannot record
// -- PEBS-like weights and data sources, every variable-length sample field,
// loss and throttle records -- get the same two comparisons, and the
// committed files in testdata/perf are cross-checked against the dump's
// per-CPU record counts. Skips only when perf is not installed.

#include <sys/wait.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sampler/perf/perf_data_format.h"
#include "sampler/perf/perf_data_reader.h"
#include "sampler/perf/perf_data_testing.h"
#include "sampler/sample.h"

namespace hotpage {
namespace {

struct CmdResult {
  int exit_code = -1;
  std::string out;
};

// Runs `cmd` with /bin/sh; stdout is returned, stderr goes to the test log.
CmdResult RunCommand(const std::string& cmd) {
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "hotpage") +
         "/" + path;
}

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

bool PerfInstalled() {
  CmdResult r = RunCommand("perf --version 2>/dev/null");
  return r.exit_code == 0 && r.out.rfind("perf version", 0) == 0;
}

#define SKIP_WITHOUT_PERF()                                                    \
  if (!PerfInstalled()) {                                                      \
    GTEST_SKIP()                                                               \
        << "perf is not installed (Debian package linux-perf; tools/setup.sh " \
           "installs it)";                                                     \
  }

// One sample as perf prints it.
struct PerfSample {
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t time_ns = 0, period = 0, addr = 0, data_src = 0, weight = 0,
           phys = 0;
  uint64_t offset = 0;  // dump only
  std::string event;    // script only
};

std::string Describe(const PerfSample& p) {
  return absl::StrCat(p.pid, "/", p.tid, " cpu ", p.cpu, " t ", p.time_ns, " ",
                      p.event, " period ", p.period, " addr ",
                      absl::Hex(p.addr), " src ", absl::Hex(p.data_src), " w ",
                      p.weight, " phys ", absl::Hex(p.phys), " @",
                      absl::Hex(p.offset));
}

std::string Describe(const Sample& s, const PerfSampleOrigin& o,
                     const PerfDataStats& st) {
  PerfSample p;
  p.pid = s.pid;
  p.tid = s.tid;
  p.cpu = s.cpu;
  p.time_ns = s.time_ns;
  p.period = s.period;
  p.addr = s.vaddr;
  p.data_src = s.data_src;
  p.weight = s.weight;
  p.phys = s.paddr;
  p.offset = o.file_offset;
  p.event = st.events[o.event].name;
  return Describe(p);
}

// `perf script -F pid,tid,cpu,time,period,event,addr,data_src,weight,phys_addr
// --ns`:
//  2609/2609  [001]  1279.834407513:  1  page-faults:  55db917c1018  1e05080021
//  |OP N/A|LVL N/A or N/A|SNP N/A|TLB N/A|LCK N/A|BLK  N/A  0  0
// In pipe mode perf may break a sample's line before phys_addr; a line that
// does not start with PID/TID continues the previous one.
std::vector<PerfSample> ParseScript(const std::string& text) {
  std::vector<std::string> joined;
  {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string first;
      unsigned pid, tid;
      if (!(f >> first)) continue;
      if (std::sscanf(first.c_str(), "%u/%u", &pid, &tid) == 2 ||
          joined.empty()) {
        joined.push_back(line);
      } else {
        joined.back() += " " + line;
      }
    }
  }
  std::vector<PerfSample> out;
  for (const std::string& line : joined) {
    std::istringstream f(line);
    std::vector<std::string> t;
    std::string tok;
    while (f >> tok) t.push_back(tok);
    if (t.size() < 9) continue;
    PerfSample p;
    if (std::sscanf(t[0].c_str(), "%u/%u", &p.pid, &p.tid) != 2) continue;
    std::sscanf(t[1].c_str(), "[%u]", &p.cpu);
    unsigned long long sec = 0, nsec = 0;
    std::sscanf(t[2].c_str(), "%llu.%llu:", &sec, &nsec);
    p.time_ns = sec * 1000000000ULL + nsec;
    p.period = std::strtoull(t[3].c_str(), nullptr, 10);
    p.event = t[4].substr(0, t[4].size() - 1);
    p.addr = std::strtoull(t[5].c_str(), nullptr, 16);
    p.data_src = std::strtoull(t[6].c_str(), nullptr, 16);
    p.weight = std::strtoull(t[t.size() - 2].c_str(), nullptr, 10);
    p.phys = std::strtoull(t.back().c_str(), nullptr, 16);
    out.push_back(p);
  }
  return out;
}

// Records in `perf script --dump-unsorted-raw-trace`, file order:
//   CPU TIME OFFSET [SIZE]: PERF_RECORD_SAMPLE(IP, 0x2): PID/TID: IP period: N
//   addr: A
//   ... weight: W,0x0,0x0
//    . data_src: 0x...
//    .. phys_addr: 0x...
// (CPU and TIME appear only when the sample_type has them.)
struct Dump {
  std::vector<PerfSample> samples;
  // Record counts per "TYPE CPU" ("cpu" -1 when the record carries none).
  std::map<std::pair<std::string, int>, uint64_t> counts;
};

Dump ParseDump(const std::string& text, bool has_cpu) {
  Dump d;
  std::istringstream lines(text);
  std::string line;
  PerfSample* cur = nullptr;
  while (std::getline(lines, line)) {
    const size_t rec = line.find(": PERF_RECORD_");
    if (rec != std::string::npos && line[0] != '.' && line[0] != ' ') {
      cur = nullptr;
      std::istringstream f(line.substr(0, rec));
      std::vector<std::string> t;
      std::string tok;
      while (f >> tok) t.push_back(tok);
      // t: [cpu] [time] offset [size]
      if (t.size() < 2) continue;
      std::string type = line.substr(rec + 14);
      type = type.substr(0, type.find_first_of(":( "));
      const size_t lead = t.size() - 2;  // tokens before the offset
      const int cpu = has_cpu && lead == 2 ? std::atoi(t[0].c_str()) : -1;
      ++d.counts[{type, cpu}];
      if (type != "SAMPLE") continue;
      PerfSample p;
      p.cpu = cpu < 0 ? 0 : static_cast<uint32_t>(cpu);
      p.time_ns =
          lead >= 1 ? std::strtoull(t[lead - 1].c_str(), nullptr, 10) : 0;
      p.offset = std::strtoull(t[lead].c_str(), nullptr, 16);
      const std::string rest = line.substr(rec);
      const size_t pt = rest.find("): ");
      if (pt != std::string::npos)
        std::sscanf(rest.c_str() + pt + 3, "%u/%u", &p.pid, &p.tid);
      const size_t per = rest.find("period: ");
      if (per != std::string::npos)
        p.period = std::strtoull(rest.c_str() + per + 8, nullptr, 10);
      const size_t ad = rest.find("addr: ");
      if (ad != std::string::npos)
        p.addr = std::strtoull(rest.c_str() + ad + 6, nullptr, 16);
      d.samples.push_back(p);
      cur = &d.samples.back();
      continue;
    }
    if (cur == nullptr) continue;
    size_t at;
    if ((at = line.find("... weight: ")) != std::string::npos) {
      cur->weight = std::strtoull(line.c_str() + at + 12, nullptr, 10);
    } else if ((at = line.find(". data_src: ")) != std::string::npos) {
      cur->data_src = std::strtoull(line.c_str() + at + 12, nullptr, 16);
    } else if ((at = line.find(".. phys_addr: ")) != std::string::npos) {
      cur->phys = std::strtoull(line.c_str() + at + 14, nullptr, 16);
    }
  }
  return d;
}

struct ReadResult {
  std::vector<Sample> samples;
  std::vector<PerfSampleOrigin> origins;
  PerfDataStats stats;
  // perf's last COMPRESSED record ended inside a record (perf_tail_ok).
  bool perf_tail_dropped = false;
};

// `perf_tail_ok`: a file `perf record -z` wrote may end with a partial
// record in its last COMPRESSED record (seen once, in a CI run under
// ASan: "the compressed data end inside a record (64 bytes of it
// decompressed)"; every comparison with perf passed in that run, so
// `perf script` read the same samples and ignored the remainder). This
// reader reports it (DATA_LOSS, every sample before it valid). For perf's
// own -z files that one error is accepted; the comparisons with `perf
// script` and its raw dump that follow still check that both read exactly
// the same samples.
ReadResult ReadAll(const std::string& path, bool perf_tail_ok = false) {
  ReadResult r;
  auto reader = PerfDataReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return r;
  Sample s;
  PerfSampleOrigin o;
  while (reader->Next(&s, &o)) {
    r.samples.push_back(s);
    r.origins.push_back(o);
  }
  const absl::Status& st = reader->status();
  if (perf_tail_ok && absl::IsDataLoss(st) &&
      absl::StrContains(st.message(),
                        "the compressed data end inside a record")) {
    std::printf(
        "%s: perf's last COMPRESSED record ends inside a record "
        "(dropped by perf too): %s\n",
        path.c_str(), std::string(st.message()).c_str());
    r.perf_tail_dropped = true;
  } else {
    EXPECT_TRUE(st.ok()) << st;
  }
  r.stats = reader->stats();
  return r;
}

void CompareWithScript(const std::string& path, const ReadResult& got) {
  const CmdResult script = RunCommand(
      "perf script -i '" + path +
      "' -G -F pid,tid,cpu,time,period,event,addr,data_src,weight,phys_addr "
      "--ns "
      "2>/dev/null");
  ASSERT_EQ(script.exit_code, 0) << "perf script failed on " << path;
  const std::vector<PerfSample> want = ParseScript(script.out);
  ASSERT_FALSE(want.empty());
  // perf script orders by time (ordered_events, stable for equal times).
  std::vector<size_t> order(got.samples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return got.samples[a].time_ns < got.samples[b].time_ns;
  });
  ASSERT_EQ(got.samples.size(), want.size())
      << "sample count differs from perf script";
  for (size_t i = 0; i < want.size(); ++i) {
    const Sample& s = got.samples[order[i]];
    const PerfSample& w = want[i];
    const std::string event =
        got.stats.events[got.origins[order[i]].event].name;
    const bool same = s.pid == w.pid && s.tid == w.tid && s.cpu == w.cpu &&
                      s.time_ns == w.time_ns && s.period == w.period &&
                      event == w.event && s.vaddr == w.addr &&
                      s.data_src == w.data_src && s.weight == w.weight &&
                      s.paddr == w.phys;
    ASSERT_TRUE(same) << "sample " << i
                      << " (time order)\n  perf script: " << Describe(w)
                      << "\n  reader:      "
                      << Describe(s, got.origins[order[i]], got.stats);
  }
}

// In pipe mode perf counts offsets from the end of the 16-byte header; the
// reader gives file offsets.
void CompareWithDump(const std::string& path, const ReadResult& got,
                     uint64_t offset_bias) {
  const CmdResult dump = RunCommand("perf script -i '" + path +
                                    "' --dump-unsorted-raw-trace 2>/dev/null");
  ASSERT_EQ(dump.exit_code, 0)
      << "perf script --dump-unsorted-raw-trace failed on " << path;
  const Dump d = ParseDump(dump.out, true);
  ASSERT_EQ(got.samples.size(), d.samples.size())
      << "sample count differs from perf's dump";
  for (size_t i = 0; i < d.samples.size(); ++i) {
    const Sample& s = got.samples[i];
    const PerfSample& w = d.samples[i];
    const bool same = s.pid == w.pid && s.tid == w.tid && s.cpu == w.cpu &&
                      s.time_ns == w.time_ns && s.period == w.period &&
                      s.vaddr == w.addr && s.data_src == w.data_src &&
                      s.weight == w.weight && s.paddr == w.phys &&
                      got.origins[i].file_offset == w.offset + offset_bias;
    ASSERT_TRUE(same) << "sample " << i
                      << " (file order)\n  perf dump: " << Describe(w)
                      << "\n  reader:    "
                      << Describe(s, got.origins[i], got.stats);
  }
  // Per-CPU sample counts, as perf attributes them.
  std::map<int, uint64_t> per_cpu;
  for (const auto& [key, n] : d.counts) {
    if (key.first == "SAMPLE") per_cpu[key.second] += n;
  }
  for (const auto& [cpu, n] : per_cpu) {
    ASSERT_GE(cpu, 0);
    ASSERT_LT(static_cast<size_t>(cpu), got.stats.per_cpu.size());
    EXPECT_EQ(got.stats.per_cpu[cpu].samples, n) << "cpu " << cpu;
  }
  for (const char* type : {"LOST", "LOST_SAMPLES", "THROTTLE", "UNTHROTTLE"}) {
    uint64_t n = 0;
    for (const auto& [key, c] : d.counts) {
      if (key.first == type) n += c;
    }
    const PerfDataStats& st = got.stats;
    const uint64_t mine = std::string(type) == "LOST" ? st.lost_records
                          : std::string(type) == "LOST_SAMPLES"
                              ? st.lost_samples_records
                          : std::string(type) == "THROTTLE" ? st.throttle
                                                            : st.unthrottle;
    EXPECT_EQ(mine, n) << type;
  }
}

enum class Mode { kFile, kPipe, kZstd };

struct Recording {
  std::string path;
  uint64_t base = 0;
  int pages = 0;
};

Recording Record(Mode mode, int pages, int threads) {
  Recording rec;
  const std::string name = mode == Mode::kFile   ? "file"
                           : mode == Mode::kPipe ? "pipe"
                                                 : "zstd";
  rec.path = TmpDir() + "/touch." + name + ".perf.data";
  rec.pages = pages;
  const std::string base_file = TmpDir() + "/touch." + name + ".txt";
  const std::string workload =
      Runfile("sampler/perf/touch_pages") +
      absl::StrCat(" --pages ", pages, " --threads ", threads) + " --out '" +
      base_file + "'";
  const std::string events =
      "-e page-faults -e minor-faults -c 1 -d --phys-data -W --sample-cpu";
  std::string cmd = "perf record -q " + events;
  switch (mode) {
    case Mode::kFile:
      cmd += " -o '" + rec.path + "' -- " + workload;
      break;
    case Mode::kPipe:
      cmd += " -o - -- " + workload + " > '" + rec.path + "'";
      break;
    case Mode::kZstd:
      // -m: an 8 MiB ring per CPU. perf's writer compresses on the way
      // out, so on a loaded machine the default 512 KiB ring overflowed
      // and samples were LOST (37-38k of 40k seen on CI-like load).
      cmd += " -z -m 2048 -o '" + rec.path + "' -- " + workload;
      break;
  }
  const CmdResult r = RunCommand(cmd + " 2>&1 1>&2");
  EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.out;
  const std::string info = ReadFile(base_file);
  const size_t at = info.find("base=");
  EXPECT_NE(at, std::string::npos) << "touch_pages did not run: " << cmd;
  if (at != std::string::npos)
    rec.base = std::strtoull(info.c_str() + at + 5, nullptr, 16);
  return rec;
}

// `allowed_missing`: how many touched pages may have no sample at all.
// 0 for plain files and pipes. perf record -z has lost the samples of a
// few hundred faults near the end of a run without a LOST record and
// without a partial record to show for it (page 19667 of 20000, a CI run
// under ASan, after 636b431 handled the partial-record case): its
// compressing writer falls behind under load and what it drops is not
// counted anywhere, so no check here can tell it from a reader error.
// What tells them apart is CompareWithScript and CompareWithDump, which
// run first and require the reader to produce exactly perf's own samples;
// this check then bounds how much perf may have dropped.
void CheckTouchedPages(const Recording& rec, const ReadResult& got,
                       int allowed_missing) {
  // touch_pages's pid: the one that touched page 0.
  uint32_t pid = 0;
  for (const Sample& s : got.samples) {
    if (s.vaddr == rec.base) pid = s.pid;
  }
  ASSERT_NE(pid, 0u) << "no sample at the first touched page "
                     << absl::StrCat("0x", absl::Hex(rec.base));
  // Every touched page faults at least once, on both events. A page may
  // fault twice: when the fault handler finds its page table changed under
  // it (pte_offset_map_lock() fails while the other thread installs or
  // frees a page table, or the per-VMA lock gives way to the mmap lock),
  // it returns without installing the page and the access faults again.
  // Both attempts raise PERF_COUNT_SW_PAGE_FAULTS (do_user_addr_fault()
  // counts on entry) and, unless the first returned VM_FAULT_RETRY, both
  // count as minor (mm_account_fault()). It is rare (one page in 20,000
  // under ASan on CI, twice in three sessions), so a repeat is allowed on a
  // few pages; that the reader's counts are exactly perf script's is
  // checked separately (CompareWithScript), so a repeat here is not a
  // reader error.
  int repeated = 0;
  int missing = 0;
  std::string missing_list;
  for (int i = 0; i < rec.pages; ++i) {
    const uint64_t addr = rec.base + 4096ULL * i + (64ULL * i) % 4096;
    int seen[2] = {0, 0};
    for (size_t k = 0; k < got.samples.size(); ++k) {
      if (got.samples[k].vaddr == addr && got.samples[k].pid == pid) {
        ++seen[got.origins[k].event % 2];
      }
    }
    if (seen[0] == 0 || seen[1] == 0) {
      ++missing;
      if (missing <= 8) {
        absl::StrAppend(&missing_list, " ", i,
                        seen[0] == 0 ? " (page-faults)" : "",
                        seen[1] == 0 ? " (minor-faults)" : "");
      }
      EXPECT_LE(missing, allowed_missing)
          << "no sample for page " << i << " at "
          << absl::StrCat("0x", absl::Hex(addr)) << " on"
          << (seen[0] == 0 ? " page-faults" : "")
          << (seen[1] == 0 ? " minor-faults" : "");
      if (missing > allowed_missing) return;
      continue;
    }
    if (seen[0] > 1 || seen[1] > 1) ++repeated;
  }
  if (missing > 0) {
    std::printf(
        "%d of %d pages have no sample in perf's own output (perf script "
        "agrees), first:%s\n",
        missing, rec.pages, missing_list.c_str());
  }
  EXPECT_LE(repeated, rec.pages / 100 + 1)
      << "more pages faulted twice than page-table races explain";
}

class PerfRecordTest : public ::testing::TestWithParam<Mode> {};

TEST_P(PerfRecordTest, ReaderAgreesWithPerfScript) {
  SKIP_WITHOUT_PERF();
  // -z gets enough data for the zstd stream to split records across
  // COMPRESSED records (perf cuts its output at ~64 KiB).
  const int pages = GetParam() == Mode::kZstd ? 20000 : 2000;
  const Recording rec = Record(GetParam(), pages, 2);
  ASSERT_NE(rec.base, 0u);
  const ReadResult got =
      ReadAll(rec.path, /*perf_tail_ok=*/GetParam() == Mode::kZstd);
  ASSERT_EQ(got.stats.events.size(), 2u);
  EXPECT_EQ(got.stats.events[0].name, "page-faults");
  EXPECT_EQ(got.stats.events[1].name, "minor-faults");
  // Every fault is sampled unless perf itself dropped records (LOST):
  // then the reader must count the same losses perf does (CompareWithDump)
  // and the per-page check below cannot hold.
  const bool perf_lost = got.stats.lost > 0 || got.stats.lost_samples > 0;
  if (!perf_lost && !got.perf_tail_dropped) {
    EXPECT_GE(got.samples.size(), 2u * pages);
  }
  EXPECT_EQ(got.stats.skipped_no_addr, 0u);
  EXPECT_EQ(got.stats.skipped_unknown_id, 0u);
  if (GetParam() == Mode::kZstd) {
    EXPECT_GT(got.stats.compressed_records, 0u);
  }
  std::printf("%s: %zu samples, %" PRIu64 " records, %" PRIu64
              " compressed records, %" PRIu64
              " records split across them; per CPU:",
              rec.path.c_str(), got.samples.size(), got.stats.records,
              got.stats.compressed_records, got.stats.split_records);
  for (size_t c = 0; c < got.stats.per_cpu.size(); ++c) {
    std::printf(" %zu:%" PRIu64, c, got.stats.per_cpu[c].samples);
  }
  std::printf("\n");
  if (perf_lost) {
    std::printf("perf lost %" PRIu64 " + %" PRIu64
                " samples under load: the per-page check is skipped\n",
                got.stats.lost, got.stats.lost_samples);
  } else if (got.perf_tail_dropped) {
    // The rest of that COMPRESSED record is gone for perf too, with the
    // samples in it (a CI run under ASan: page 19457 of 20000 had none),
    // and how many is not recorded. The comparisons with perf below still
    // check that both read exactly the same samples.
    std::printf(
        "perf dropped the rest of its last COMPRESSED record: the per-page "
        "check is skipped\n");
  }
  // The reader must produce exactly perf's samples before the per-page
  // check may excuse what perf itself dropped.
  CompareWithScript(rec.path, got);
  if (HasFatalFailure()) return;
  CompareWithDump(rec.path, got, GetParam() == Mode::kPipe ? 16 : 0);
  if (HasFatalFailure()) return;
  if (!perf_lost && !got.perf_tail_dropped) {
    // -z: up to 5% of the pages (see CheckTouchedPages).
    CheckTouchedPages(rec, got, GetParam() == Mode::kZstd ? pages / 20 : 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, PerfRecordTest,
                         ::testing::Values(Mode::kFile, Mode::kPipe,
                                           Mode::kZstd),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                           return info.param == Mode::kFile
                                      ? std::string("File")
                                  : info.param == Mode::kPipe
                                      ? std::string("Pipe")
                                      : std::string("Zstd");
                         });

// Synthetic files with what this machine cannot record (PEBS-like weights
// and data sources on two events, every variable-length sample field with
// lengths that change per sample, loss and throttle records on several
// CPUs), decoded by perf and by the reader.
TEST(PerfSynthetic, ReaderAgreesWithPerfScript) {
  SKIP_WITHOUT_PERF();
  namespace pf = ::hotpage::perf_format;
  using ::hotpage::testing::PerfDataBuilder;
  using ::hotpage::testing::TestAttr;
  using ::hotpage::testing::TestSample;
  TestAttr loads;
  loads.type = 4;  // raw
  loads.config = 0x1cd;
  // Every field but READ: perf script delivers PERF_SAMPLE_READ samples
  // once per counter value with periods from the counter deltas (`perf
  // record -s` semantics), so they do not compare one to one; the unit
  // tests cover READ layouts.
  loads.sample_type =
      pf::kSampleIdentifier | pf::kSampleIp | pf::kSampleTid | pf::kSampleTime |
      pf::kSampleAddr | pf::kSampleId | pf::kSampleStreamId | pf::kSampleCpu |
      pf::kSamplePeriod | pf::kSampleCallchain | pf::kSampleRaw |
      pf::kSampleBranchStack | pf::kSampleRegsUser | pf::kSampleStackUser |
      pf::kSampleWeightStruct | pf::kSampleDataSrc | pf::kSampleTransaction |
      pf::kSampleRegsIntr | pf::kSamplePhysAddr | pf::kSampleCgroup |
      pf::kSampleDataPageSize | pf::kSampleCodePageSize | pf::kSampleAux;
  loads.branch_sample_type = pf::kBranchHwIndex;
  loads.sample_regs_user = 0xff0fff;
  loads.sample_regs_intr = 0x3;
  loads.ids = {101, 102};
  loads.name = "cpu/mem-loads,ldlat=30/P";
  TestAttr stores = loads;
  stores.config = 0x2cd;
  stores.ids = {201, 202};
  stores.name = "cpu/mem-stores/P";
  PerfDataBuilder b;
  const int l = b.AddAttr(loads);
  const int st = b.AddAttr(stores);
  // Real encodings: L1 hit, L3 hit, local DRAM, remote DRAM, CXL, a store.
  const uint64_t srcs[] = {0x68100142ULL, 0x6a100842ULL,   0x1a10080142ULL,
                           0x69102042ULL, 0x2290082142ULL, 0x6a100242ULL};
  for (int i = 0; i < 600; ++i) {
    const bool is_load = i % 3 != 2;
    TestSample s;
    s.id = is_load ? 101 + i % 2 : 201 + i % 2;
    s.ip = 0x401000 + 16 * i;
    s.pid = 4242;
    s.tid = 4242 + i % 4;
    s.cpu = static_cast<uint32_t>(i % 3);
    s.time = 5'000'000'000ULL + 1000ULL * i + (i % 7);
    s.addr = 0x7f1200000000ULL + 4096ULL * (i % 97) + 8 * i;
    s.stream_id = s.id;
    s.period = 20000 + i;
    s.callchain.assign(i % 6, 0x401000 + i);
    s.raw_size = static_cast<uint32_t>(i % 29);
    s.branch_nr = i % 4;
    s.regs_user_abi = i % 5 ? 2 : 0;
    s.stack_user_size = 8 * (i % 9);
    // WEIGHT_STRUCT: latency in var1_dw, instruction latency and pipeline
    // stage cycles in the upper halves (ignored by hotpage, as by perf's
    // weight field).
    s.weight = (static_cast<uint64_t>(7 + i % 5) << 48) |
               (static_cast<uint64_t>(3 + i % 11) << 32) |
               static_cast<uint64_t>(30 + (i * 37) % 900);
    s.data_src = srcs[i % 6];
    s.transaction = i % 2;
    s.regs_intr_abi = i % 4 ? 2 : 0;
    s.phys_addr = 0x2340000000ULL + 4096ULL * (i % 97) + 8 * i;
    s.cgroup = 1;
    s.data_page_size = 4096;
    s.code_page_size = 4096;
    s.aux_size = 8 * (i % 3);
    b.AddSample(is_load ? l : st, s);
    if (i % 100 == 50) {
      TestSample id = s;
      b.AddLost(is_load ? l : st, s.id, 3 + i, id);
      b.AddLostSamples(is_load ? l : st, 1, id);
      b.AddThrottle(is_load ? l : st, false, s.time, s.id, id);
      id.time += 10;
      b.AddThrottle(is_load ? l : st, true, id.time, s.id, id);
    }
  }
  PerfDataBuilder::Options zstd;
  zstd.compress = true;
  zstd.flush_bytes = 3000;  // flushes end mid-record
  struct Case {
    const char* name;
    std::string bytes;
    uint64_t bias;
  };
  const Case cases[] = {{"synthetic.file.perf.data", b.File(), 0},
                        {"synthetic.pipe.perf.data", b.Pipe(), 16},
                        {"synthetic.zstd.perf.data", b.File(zstd), 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = TmpDir() + "/" + c.name;
    {
      std::ofstream out(path, std::ios::binary);
      out.write(c.bytes.data(), static_cast<std::streamsize>(c.bytes.size()));
    }
    const ReadResult got = ReadAll(path);
    ASSERT_EQ(got.samples.size(), 600u);
    EXPECT_EQ(got.stats.lost_records, 6u);
    EXPECT_EQ(got.stats.lost, 53u + 153 + 253 + 353 + 453 + 553);
    EXPECT_EQ(got.stats.lost_samples, 6u);
    EXPECT_EQ(got.stats.throttle, 6u);
    EXPECT_EQ(got.stats.unthrottle, 6u);
    std::printf("%s: %zu samples, %" PRIu64 " compressed records, %" PRIu64
                " split records, lost %" PRIu64 " in %" PRIu64
                " records, throttle %" PRIu64 "\n",
                c.name, got.samples.size(), got.stats.compressed_records,
                got.stats.split_records, got.stats.lost, got.stats.lost_records,
                got.stats.throttle);
    CompareWithScript(path, got);
    CompareWithDump(path, got, c.bias);
  }
}

// The committed files (old formats from real machines, and this machine's
// recordings): every record count perf reports, per CPU where the records
// carry one, equals the reader's.
TEST(PerfTestdata, CountsAgreeWithPerfDump) {
  SKIP_WITHOUT_PERF();
  for (const char* name :
       {"perf.data.throttle-3.8", "perf.data.lost_samples-4.4",
        "perf.data.piped.target.throttled-3.4", "touch16.file.perf.data",
        "touch16.pipe.perf.data", "touch16.zstd.perf.data"}) {
    SCOPED_TRACE(name);
    const std::string path =
        Runfile(std::string("sampler/perf/testdata/") + name);
    const ReadResult got = ReadAll(path);
    const CmdResult dump = RunCommand(
        "perf script -i '" + path + "' --dump-unsorted-raw-trace 2>/dev/null");
    ASSERT_EQ(dump.exit_code, 0);
    bool has_cpu = true;
    for (const PerfEventInfo& e : got.stats.events)
      has_cpu &= (e.sample_type & (1u << 7)) != 0;
    const Dump d = ParseDump(dump.out, has_cpu);
    std::map<std::pair<std::string, int>, uint64_t> mine;
    for (size_t c = 0; c < got.stats.per_cpu.size(); ++c) {
      const PerfCpuCounts& k = got.stats.per_cpu[c];
      const int cpu = static_cast<int>(c);
      if (k.samples + k.skipped_no_addr)
        mine[{"SAMPLE", cpu}] = k.samples + k.skipped_no_addr;
      if (k.throttle) mine[{"THROTTLE", cpu}] = k.throttle;
      if (k.unthrottle) mine[{"UNTHROTTLE", cpu}] = k.unthrottle;
    }
    const PerfCpuCounts& k = got.stats.no_cpu;
    if (k.samples + k.skipped_no_addr)
      mine[{"SAMPLE", -1}] = k.samples + k.skipped_no_addr;
    if (k.throttle) mine[{"THROTTLE", -1}] = k.throttle;
    if (k.unthrottle) mine[{"UNTHROTTLE", -1}] = k.unthrottle;
    std::map<std::pair<std::string, int>, uint64_t> theirs;
    uint64_t lost = 0, lost_samples = 0;
    for (const auto& [key, n] : d.counts) {
      if (key.first == "SAMPLE" || key.first == "THROTTLE" ||
          key.first == "UNTHROTTLE") {
        theirs[key] = n;
      }
      if (key.first == "LOST") lost += n;
      if (key.first == "LOST_SAMPLES") lost_samples += n;
    }
    EXPECT_EQ(mine, theirs);
    EXPECT_EQ(got.stats.lost_records, lost);
    EXPECT_EQ(got.stats.lost_samples_records, lost_samples);
    for (const auto& [key, n] : theirs) {
      std::printf("%s: %s cpu %d: %" PRIu64 "\n", name, key.first.c_str(),
                  key.second, n);
    }
    std::printf("%s: LOST %" PRIu64 " LOST_SAMPLES %" PRIu64 "\n", name, lost,
                lost_samples);
  }
}

}  // namespace
}  // namespace hotpage
