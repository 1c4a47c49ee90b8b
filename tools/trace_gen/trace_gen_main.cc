// hotpage_trace_gen: writes deterministic PEBS-like .hpt traces of
// memory-access patterns (trace_gen.h), or converts a real program's
// Valgrind Lackey trace into one (lackey.h). tests/traces/ holds its output
// and the exact command lines.

#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sampler/trace/trace_writer.h"
#include "tools/base/status_macros.h"
#include "tools/cli.h"
#include "tools/trace_gen/lackey.h"
#include "tools/trace_gen/trace_gen.h"

namespace hotpage {
namespace trace_gen {
namespace {

constexpr char kProgram[] = "hotpage_trace_gen";

// A flag that shapes the output: it appears, with its value, in the
// command line recorded in the trace header and the truth file.
struct ModelFlag {
  std::string name;
  std::string value_name;
  std::string default_text;
  std::string help;
};

const std::vector<ModelFlag>& CommonFlags() {
  static const auto* flags = new std::vector<ModelFlag>{
      {"seed", "N", "1", "seed of every random choice"},
      {"duration", "SEC", "60", "workload time covered by the trace"},
      {"sample-period", "N", "8000",
       "qualifying accesses per sample and thread (PEBS period)"},
      {"access-rate", "PER_SEC", "20e6",
       "qualifying accesses (loads of 30+ cycles, stores) per second per "
       "thread"},
      {"write-share", "F", "0", "fraction of samples that are stores"},
      {"pid", "PID", "4242",
       "process id in the samples (thread ids follow it)"},
      {"samples-per-block", "N", "65536",
       "trace file: samples per block (1..65536; 'hotpage record' writes "
       "4096)"},
      {"zstd-level", "N", "19",
       "trace file: zstd level (1..22; 'hotpage record' uses 3)"},
  };
  return *flags;
}

struct Shape {
  std::string name;
  std::string summary;
  std::vector<ModelFlag> flags;  // shape-specific
  std::vector<std::pair<std::string, std::string>>
      common_defaults;  // overrides
};

const std::vector<Shape>& Shapes() {
  static const auto* shapes = new std::vector<Shape>{
      {"gups",
       "GUPS-like table with a shifting hot set: hot-fraction of the pages get "
       "hot-share of the\n"
       "accesses, the rest are uniform over the other pages; every shift-every "
       "seconds the hot\n"
       "set moves to another slot of the table (HeMem's GUPS with a hot-set "
       "shift)",
       {{"pages", "N", "8192", "pages in the table (4 KiB each)"},
        {"hot-fraction", "F", "0.1",
         "fraction of the pages in the hot set (contiguous)"},
        {"hot-share", "F", "0.9",
         "fraction of the accesses that go to the hot set"},
        {"shift-every", "SEC", "20",
         "move the hot set every SEC seconds (0: never)"},
        {"threads", "N", "1",
         "threads (on cpus 0..N-1), all sharing the table"}},
       {{"sample-period", "15000"}}},
      {"zipf",
       "key-value store: Zipf(s) key popularity; each access reads the key's "
       "hash-index bucket\n"
       "or its value; keys are shuffled over the value slots, so hot pages are "
       "scattered; stores\n"
       "(--write-share, default 0.05 here) go to values",
       {{"keys", "N", "200000", "keys in the store"},
        {"value-bytes", "N", "256", "bytes per value (power of two, 8..4096)"},
        {"zipf-s", "S", "0.99", "Zipf exponent"},
        {"index-share", "F", "0.3",
         "fraction of the loads that read the hash index"},
        {"threads", "N", "1", "threads (on cpus 0..N-1)"}},
       {{"duration", "40"},
        {"sample-period", "10000"},
        {"write-share", "0.05"}}},
      {"scan",
       "a scan that turns cold: until cold-at, focus-share of the accesses "
       "stream sequentially\n"
       "through the scan region (one pass per --pass seconds); then the scan "
       "stops and\n"
       "focus-share go uniformly to a separate working set; the rest is "
       "uniform over both",
       {{"scan-pages", "N", "8192", "pages of the scanned region"},
        {"ws-pages", "N", "2048", "pages of the working set that becomes hot"},
        {"cold-at", "SEC", "15",
         "when the scan stops and the working set takes over"},
        {"pass", "SEC", "2",
         "seconds per sequential pass over the scan region"},
        {"focus-share", "F", "0.9",
         "fraction of the accesses on the scan, then the working set"}},
       {{"duration", "45"}, {"sample-period", "15000"}}},
      {"stream_mix",
       "bandwidth decides: a high-rate sequential stream over a small range "
       "(stream-share of\n"
       "the accesses) beside a latency-sensitive hot set (hot-share) and a "
       "cold heap; at the\n"
       "defaults the demand (access-rate x 64 B = 20.48 GB/s) equals one "
       "DRAM node's peak:\n"
       "the stream and the hot set alone saturate it (Colloid, SOSP'24)",
       {{"stream-pages", "N", "512", "pages of the streamed range"},
        {"hot-pages", "N", "1024", "pages of the hot set"},
        {"cold-pages", "N", "8192", "pages of the cold heap"},
        {"pass", "SEC", "0.001", "seconds per sequential pass over the stream"},
        {"stream-share", "F", "0.75", "fraction of the accesses on the stream"},
        {"hot-share", "F", "0.2",
         "fraction on the hot set (the rest: cold heap)"}},
       {{"duration", "25"},
        {"sample-period", "100000"},
        {"access-rate", "3.2e8"}}},
      {"stream_grow",
       "bandwidth decides, and the streamed set grows: stream_mix's first "
       "stream, hot set and\n"
       "cold heap, and from stream2-from on a second, sparser stream over "
       "stream2-pages that\n"
       "takes stream2-share of the accesses from the first (the demand stays, "
       "spread over\n"
       "more pages); at the defaults the hot set and the streams load one DRAM "
       "node to 84%\n"
       "of its peak, below Colloid's equal-latency point",
       {{"stream-pages", "N", "256", "pages of the first stream"},
        {"hot-pages", "N", "1024", "pages of the hot set"},
        {"cold-pages", "N", "8192", "pages of the cold heap"},
        {"pass", "SEC", "0.001", "seconds per pass over the first stream"},
        {"stream-share", "F", "0.7",
         "fraction of the accesses on the streams (both, once the second "
         "runs)"},
        {"hot-share", "F", "0.2",
         "fraction on the hot set (the rest: cold heap)"},
        {"stream2-pages", "N", "768", "pages of the second stream"},
        {"stream2-pass", "SEC", "0.004",
         "seconds per pass over the second stream"},
        {"stream2-share", "F", "0.4",
         "fraction of the accesses on the second stream once it runs (taken "
         "from the first)"},
        {"stream2-from", "SEC", "8", "when the second stream starts"}},
       {{"duration", "24"},
        {"sample-period", "150000"},
        {"access-rate", "3e8"}}},
      {"packages",
       "threads on two CPU packages: the first half of the threads on package "
       "0, the second on\n"
       "package 1; package p owns cpus p*K..p*K+K-1 (K = cpus-per-package; K = "
       "1: cpu 0 is\n"
       "package 0, cpu 1 package 1, as in the 2pkg+cxl guest); each thread "
       "mostly uses its own\n"
       "private arena, plus a region shared by all threads and a cold heap",
       {{"threads", "N", "4", "threads (even)"},
        {"cpus-per-package", "K", "1", "CPUs per package"},
        {"private-pages", "N", "512", "pages of each thread's private arena"},
        {"shared-pages", "N", "1024", "pages of the region all threads share"},
        {"cold-pages", "N", "8192", "pages of the rarely used heap"},
        {"private-share", "F", "0.6",
         "fraction of a thread's accesses to its arena"},
        {"shared-share", "F", "0.3",
         "fraction to the shared region (the rest: cold heap)"}},
       {{"duration", "40"}, {"access-rate", "5e6"}}},
  };
  return *shapes;
}

const std::vector<ModelFlag>& LackeyFlags() {
  static const auto* flags = new std::vector<ModelFlag>{
      {"sample-period", "N", "100", "counted loads (and stores) per sample"},
      {"stores", "", "", "also sample stores (as 'hotpage record --stores')"},
      {"ldlat", "CYCLES", "30",
       "count loads of at least CYCLES modelled latency"},
      {"ghz", "GHZ", "2",
       "modelled clock: one instruction per cycle plus stalls"},
      {"time-scale", "S", "1", "stretch modelled time by S (see lackey.h)"},
      {"l1-kib", "KIB", "32", "L1 data cache (8-way)"},
      {"l2-kib", "KIB", "1024", "L2 cache (16-way)"},
      {"llc-kib", "KIB", "2048", "last-level cache share (16-way)"},
      {"seed", "N", "1", "seed of the latency jitter"},
      {"samples-per-block", "N", "65536",
       "trace file: samples per block (1..65536; 'hotpage record' writes "
       "4096)"},
      {"zstd-level", "N", "19",
       "trace file: zstd level (1..22; 'hotpage record' uses 3)"},
  };
  return *flags;
}

std::string Usage(absl::string_view command, absl::string_view synopsis,
                  absl::string_view description,
                  const std::vector<FlagSpec>& specs) {
  // FormatUsage is written for `hotpage COMMAND`; this is its own binary.
  std::string u = FormatUsage(command, synopsis, description, specs);
  const std::string from = "Usage: hotpage ";
  if (u.compare(0, from.size(), from) == 0) {
    u.replace(0, from.size(), absl::StrCat("Usage: ", kProgram, " "));
  }
  return u;
}

int UsageError(absl::string_view command, absl::string_view msg) {
  std::cerr << kProgram << " " << command << ": " << msg << "\nTry '"
            << kProgram << " " << command << " --help'.\n";
  return kExitUsage;
}

int Fail(absl::string_view command, const absl::Status& s) {
  std::cerr << kProgram << " " << command << ": " << s.message() << "\n";
  return kExitFailure;
}

// The flag texts that define the output, with defaults filled in.
struct ModelValues {
  std::vector<std::pair<std::string, std::string>> values;  // in flag order
  std::string command;  // "hotpage_trace_gen SHAPE --flag value ..."

  const std::string& Text(absl::string_view name) const {
    for (const auto& [n, v] : values) {
      if (n == name) return v;
    }
    static const std::string* empty = new std::string;
    return *empty;
  }
};

ModelValues CollectValues(absl::string_view command,
                          const std::vector<ModelFlag>& flags,
                          const ParsedFlags& parsed) {
  ModelValues m;
  m.command = absl::StrCat(kProgram, " ", command);
  for (const ModelFlag& f : flags) {
    if (f.value_name.empty()) {  // boolean
      if (parsed.Has(f.name)) absl::StrAppend(&m.command, " --", f.name);
      m.values.push_back({f.name, parsed.Has(f.name) ? "1" : ""});
      continue;
    }
    const std::string v = parsed.Get(f.name).value_or(f.default_text);
    m.values.push_back({f.name, v});
    absl::StrAppend(&m.command, " --", f.name, " ", v);
  }
  return m;
}

// A model flag's text as the type of `out`; the error names the flag.
absl::Status Parse(const ModelValues& m, absl::string_view name,
                   uint64_t* out) {
  const std::string& t = m.Text(name);
  if (!absl::SimpleAtoi(t, out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", name, " wants a non-negative integer, got '", t, "'"));
  }
  return absl::OkStatus();
}

absl::Status Parse(const ModelValues& m, absl::string_view name,
                   uint32_t* out) {
  uint64_t v = 0;
  HOTPAGE_RETURN_IF_ERROR(Parse(m, name, &v));
  if (v > 0xffffffffull) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " is too large: ", v));
  }
  *out = static_cast<uint32_t>(v);
  return absl::OkStatus();
}

absl::Status Parse(const ModelValues& m, absl::string_view name, double* out) {
  const std::string& t = m.Text(name);
  if (!absl::SimpleAtod(t, out) || !std::isfinite(*out)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " wants a number, got '", t, "'"));
  }
  return absl::OkStatus();
}

// A model flag and the options field its value goes to.
struct Field {
  absl::string_view name;
  std::variant<uint64_t*, uint32_t*, double*> out;
};

// Parses each flag into its field, in order, and stops at the first error
// (so the message names the first bad flag, and the fields after it keep
// their values).
absl::Status ParseFields(const ModelValues& m,
                         std::initializer_list<Field> fields) {
  for (const Field& f : fields) {
    HOTPAGE_RETURN_IF_ERROR(
        std::visit([&](auto* out) { return Parse(m, f.name, out); }, f.out));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus(errno, absl::StrCat("open ", path));
  std::string s((std::istreambuf_iterator<char>(in)),
                std::istreambuf_iterator<char>());
  if (in.bad()) return ErrnoStatus(errno, absl::StrCat("read ", path));
  return s;
}

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return ErrnoStatus(errno, absl::StrCat("create ", path));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !ok)
    return ErrnoStatus(ok ? errno : err, absl::StrCat("write ", path));
  return absl::OkStatus();
}

// The text of the --topology-json file; empty without the flag.
absl::StatusOr<std::string> ReadTopologyJson(const ParsedFlags& flags) {
  const std::optional<std::string> path = flags.Get("topology-json");
  if (!path) return std::string();
  return ReadFile(*path);
}

// The file layout options (they change the bytes, not the samples).
absl::StatusOr<TraceWriter::Options> WriterOptions(const ModelValues& m) {
  TraceWriter::Options o;
  uint64_t block = 0, level = 0;
  HOTPAGE_RETURN_IF_ERROR(
      ParseFields(m, {{"samples-per-block", &block}, {"zstd-level", &level}}));
  if (block < 1 || block > kMaxSamplesPerBlock) {
    return absl::InvalidArgumentError(
        absl::StrCat("--samples-per-block wants 1 to ", kMaxSamplesPerBlock,
                     ", got ", block));
  }
  if (level < 1 || level > 22) {
    return absl::InvalidArgumentError(
        absl::StrCat("--zstd-level wants 1 to 22, got ", level));
  }
  o.samples_per_block = static_cast<uint32_t>(block);
  o.zstd_level = static_cast<int>(level);
  return o;
}

// Flags that do not shape the samples: where the output goes, and the
// topology text copied into the header.
std::vector<FlagSpec> OutputSpecs() {
  return {
      {"output", "FILE", "write the trace here (required)", false, 'o'},
      {"topology-json", "FILE",
       "copy this 'hotpage topology --json' output into the trace header "
       "(default: none); the "
       "path as given goes into the recorded command line"},
  };
}

std::vector<FlagSpec> ToSpecs(const std::vector<ModelFlag>& flags,
                              const std::string& suffix = "") {
  std::vector<FlagSpec> specs;
  for (const ModelFlag& f : flags) {
    specs.push_back({f.name, f.value_name,
                     f.default_text.empty()
                         ? f.help
                         : absl::StrCat(f.help, " (default ", f.default_text,
                                        suffix, ")")});
  }
  return specs;
}

// A command line past the checks every command makes first.
struct Invocation {
  ParsedFlags flags;
  std::string output;  // -o
  ModelValues model;
};

// What every command does first: parses `args` against `specs`, answers
// --help with the usage, rejects more than `max_positional` arguments and
// a missing -o (usage errors), and collects the values of `model` into
// `inv`; the recorded command line gets --topology-json with its path as
// given. Returns the exit code when the command ends here, else nullopt.
std::optional<int> StartCommand(absl::string_view command,
                                const std::vector<std::string>& args,
                                absl::string_view synopsis,
                                absl::string_view description,
                                const std::vector<FlagSpec>& specs,
                                const std::vector<ModelFlag>& model,
                                size_t max_positional, Invocation* inv) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return UsageError(command, flags.status().message());
  if (flags->Has("help")) {
    std::cout << Usage(command, synopsis, description, specs);
    return kExitOk;
  }
  if (flags->positional().size() > max_positional) {
    return UsageError(command,
                      absl::StrCat("unexpected argument '",
                                   flags->positional()[max_positional], "'"));
  }
  const std::optional<std::string> out = flags->Get("output");
  if (!out) return UsageError(command, "-o FILE.hpt is required");
  inv->output = *out;
  inv->model = CollectValues(command, model, *flags);
  if (std::optional<std::string> t = flags->Get("topology-json")) {
    absl::StrAppend(&inv->model.command, " --topology-json ", *t);
  }
  inv->flags = *std::move(flags);
  return std::nullopt;
}

int RunShape(const Shape& shape, const std::vector<std::string>& args) {
  std::vector<ModelFlag> model = CommonFlags();
  for (ModelFlag& f : model) {
    for (const auto& [name, value] : shape.common_defaults) {
      if (f.name == name) f.default_text = value;
    }
  }
  model.insert(model.end(), shape.flags.begin(), shape.flags.end());
  std::vector<FlagSpec> specs = OutputSpecs();
  specs.push_back({"truth", "FILE",
                   "also write the ground truth here: regions, phases, hot "
                   "ranges and their "
                   "expected share of the samples"});
  for (const FlagSpec& s : ToSpecs(model)) specs.push_back(s);
  const std::string synopsis = "-o FILE.hpt [--truth FILE] [options]";
  const std::string description = absl::StrCat(
      "Writes a deterministic .hpt trace of PEBS load-latency samples (as "
      "'hotpage record'\n"
      "writes them) of this workload: ",
      shape.summary,
      ".\n"
      "Samples: each thread's qualifying accesses are sampled every "
      "--sample-period (so\n"
      "access-rate / sample-period samples per second per thread, gaps "
      "jittered +-50%),\n"
      "merged in time order; levels, latencies and data sources follow\n"
      "tools/trace_gen/pebs_model.h. The same options give the same bytes on "
      "any machine.\n"
      "The header's event_config records the full command line (every option, "
      "defaults\n"
      "included).");
  Invocation inv;
  if (std::optional<int> done =
          StartCommand(shape.name, args, synopsis, description, specs, model,
                       /*max_positional=*/0, &inv)) {
    return *done;
  }
  const ModelValues& m = inv.model;

  GenOptions g;
  absl::Status st = ParseFields(m, {{"seed", &g.seed},
                                    {"duration", &g.duration_s},
                                    {"sample-period", &g.sample_period},
                                    {"access-rate", &g.access_rate},
                                    {"write-share", &g.write_share},
                                    {"pid", &g.pid}});
  absl::StatusOr<std::unique_ptr<Workload>> w = absl::InternalError("no shape");
  if (st.ok() && shape.name == "gups") {
    GupsOptions o;
    st = ParseFields(m, {{"pages", &o.pages},
                         {"hot-fraction", &o.hot_fraction},
                         {"hot-share", &o.hot_share},
                         {"shift-every", &o.shift_every_s},
                         {"threads", &o.threads}});
    if (st.ok()) w = MakeGups(o, g);
  } else if (st.ok() && shape.name == "zipf") {
    ZipfOptions o;
    st = ParseFields(m, {{"keys", &o.keys},
                         {"value-bytes", &o.value_bytes},
                         {"zipf-s", &o.s},
                         {"index-share", &o.index_share},
                         {"threads", &o.threads}});
    if (st.ok()) w = MakeZipf(o, g);
  } else if (st.ok() && shape.name == "scan") {
    ScanOptions o;
    st = ParseFields(m, {{"scan-pages", &o.scan_pages},
                         {"ws-pages", &o.ws_pages},
                         {"cold-at", &o.cold_at_s},
                         {"pass", &o.pass_s},
                         {"focus-share", &o.focus_share}});
    if (st.ok()) w = MakeScan(o, g);
  } else if (st.ok() &&
             (shape.name == "stream_mix" || shape.name == "stream_grow")) {
    // stream_grow is stream_mix with its second stream's flags.
    StreamMixOptions o;
    st = ParseFields(m, {{"stream-pages", &o.stream_pages},
                         {"hot-pages", &o.hot_pages},
                         {"cold-pages", &o.cold_pages},
                         {"pass", &o.pass_s},
                         {"stream-share", &o.stream_share},
                         {"hot-share", &o.hot_share}});
    if (st.ok() && shape.name == "stream_grow") {
      st = ParseFields(m, {{"stream2-pages", &o.stream2_pages},
                           {"stream2-pass", &o.stream2_pass_s},
                           {"stream2-share", &o.stream2_share},
                           {"stream2-from", &o.stream2_from_s}});
    }
    if (st.ok()) w = MakeStreamMix(o, g);
  } else if (st.ok() && shape.name == "packages") {
    PackagesOptions o;
    st = ParseFields(m, {{"threads", &o.threads},
                         {"cpus-per-package", &o.cpus_per_package},
                         {"private-pages", &o.private_pages},
                         {"shared-pages", &o.shared_pages},
                         {"cold-pages", &o.cold_pages},
                         {"private-share", &o.private_share},
                         {"shared-share", &o.shared_share}});
    if (st.ok()) w = MakePackages(o, g);
  }
  if (!st.ok()) return UsageError(shape.name, st.message());
  const absl::StatusOr<TraceWriter::Options> wo = WriterOptions(m);
  if (!wo.ok()) return UsageError(shape.name, wo.status().message());
  if (!w.ok()) {
    if (absl::IsInvalidArgument(w.status()))
      return UsageError(shape.name, w.status().message());
    return Fail(shape.name, w.status());
  }

  const absl::StatusOr<std::string> topology = ReadTopologyJson(inv.flags);
  if (!topology.ok()) return Fail(shape.name, topology.status());
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer = TraceWriter::Create(
      inv.output, GeneratedHeader(g, m.command, *topology), *wo);
  if (!writer.ok()) return Fail(shape.name, writer.status());
  absl::StatusOr<GenStats> stats = GenerateTrace(**w, g, writer->get());
  if (!stats.ok()) return Fail(shape.name, stats.status());
  if (std::optional<std::string> truth = inv.flags.Get("truth")) {
    if (absl::Status s =
            WriteTextFile(*truth, FormatTruth((*w)->Truth(), g, m.command));
        !s.ok()) {
      return Fail(shape.name, s);
    }
  }
  std::cerr << absl::StrFormat(
      "%s: %s: %d samples (%d stores) over %.1f s, %d distinct pages, %d bytes "
      "(%.1f bytes/sample)\n",
      kProgram, inv.output, stats->samples, stats->stores,
      static_cast<double>(stats->last_ns - stats->first_ns) / 1e9,
      stats->distinct_pages, (*writer)->bytes_written(),
      stats->samples
          ? static_cast<double>((*writer)->bytes_written()) / stats->samples
          : 0.0);
  return kExitOk;
}

int RunLackey(const std::vector<std::string>& args) {
  const std::string cmd = "lackey";
  std::vector<FlagSpec> specs = OutputSpecs();
  specs.push_back(
      {"pid", "PID", "pid in the samples (default: Valgrind's, from the log)"});
  for (const FlagSpec& s : ToSpecs(LackeyFlags())) specs.push_back(s);
  const std::string synopsis = "-o FILE.hpt [options] [LACKEY_LOG | -]";
  const std::string description =
      "Converts the output of\n"
      "  valgrind --tool=lackey --trace-mem=yes --log-fd=N PROGRAM ...\n"
      "(every instruction and data access of a real program, from LACKEY_LOG "
      "or standard\n"
      "input) into the samples Intel PEBS load-latency sampling would take of "
      "it: an L1/L2/LLC\n"
      "and STLB model gives each load a latency, loads of --ldlat cycles or "
      "more are counted,\n"
      "every --sample-period-th is a sample; modelled time is one cycle per "
      "instruction plus\n"
      "load stalls, stretched by --time-scale (tools/trace_gen/lackey.h has "
      "the model).\n"
      "Pipe Lackey straight in: its output is ~20 bytes per access. The traced "
      "command and\n"
      "Valgrind's version go into the header's event_config. All samples are "
      "tid = pid on\n"
      "one cpu (Lackey does not name threads).";
  Invocation inv;
  if (std::optional<int> done =
          StartCommand(cmd, args, synopsis, description, specs, LackeyFlags(),
                       /*max_positional=*/1, &inv)) {
    return *done;
  }
  const ParsedFlags& flags = inv.flags;
  const ModelValues& m = inv.model;
  LackeyOptions o;
  uint64_t l1 = 0, l2 = 0, llc = 0;
  std::optional<uint32_t> pid;
  o.stores = flags.Has("stores");
  absl::Status st = ParseFields(m, {{"sample-period", &o.sample_period},
                                    {"ldlat", &o.ldlat_cycles},
                                    {"ghz", &o.ghz},
                                    {"time-scale", &o.time_scale},
                                    {"l1-kib", &l1},
                                    {"l2-kib", &l2},
                                    {"llc-kib", &llc},
                                    {"seed", &o.seed}});
  if (st.ok() && flags.Has("pid")) {
    absl::StatusOr<int64_t> p = FlagInt(flags, "pid", 0, 1, 0xffffffffll);
    if (!p.ok())
      st = p.status();
    else
      pid = static_cast<uint32_t>(*p);
  }
  if (st.ok() && (l1 > (1u << 22) || l2 > (1u << 22) || llc > (1u << 22))) {
    st = absl::InvalidArgumentError(
        "cache sizes are limited to 4 GiB (4194304 KiB)");
  }
  o.l1_bytes = l1 << 10;
  o.l2_bytes = l2 << 10;
  o.llc_bytes = llc << 10;
  if (st.ok()) st = CheckLackeyOptions(o);
  if (!st.ok()) return UsageError(cmd, st.message());
  const absl::StatusOr<TraceWriter::Options> wo = WriterOptions(m);
  if (!wo.ok()) return UsageError(cmd, wo.status().message());

  const std::string in_name =
      flags.positional().empty() ? "-" : flags.positional()[0];
  FILE* in = in_name == "-" ? stdin : std::fopen(in_name.c_str(), "r");
  if (in == nullptr)
    return Fail(cmd, ErrnoStatus(errno, absl::StrCat("open ", in_name)));

  std::unique_ptr<TraceWriter> writer;
  const absl::StatusOr<std::string> topology = ReadTopologyJson(flags);
  if (!topology.ok()) return Fail(cmd, topology.status());
  LackeyConverter* conv_ptr = nullptr;
  // The header is written with the first sample, once Valgrind's preamble
  // (the traced command, its version) has been read.
  auto open_writer = [&]() -> absl::Status {
    TraceHeader h;
    h.sample_period = o.sample_period;
    h.start_realtime_ns = 0;  // unknown: the modelled run has no wall time
    h.start_clock_ns = o.start_clock_ns;
    h.source = SampleSourceName(SampleSource::kPebsLoad);
    h.event_config = absl::StrCat(
        "cpu/mem-loads,ldlat=", o.ldlat_cycles, "/P",
        o.stores ? ",cpu/mem-stores/P" : "", " (modelled from a Valgrind ",
        conv_ptr->valgrind_version(), " Lackey trace of '", conv_ptr->command(),
        "': ", m.command, ")");
    h.topology_json = *topology;
    HOTPAGE_ASSIGN_OR_RETURN(writer, TraceWriter::Create(inv.output, h, *wo));
    return absl::OkStatus();
  };
  absl::flat_hash_set<uint64_t> pages;
  LackeyConverter conv(o, [&](const Sample& s) -> absl::Status {
    if (writer == nullptr) HOTPAGE_RETURN_IF_ERROR(open_writer());
    Sample c = s;
    if (pid) c.pid = c.tid = *pid;
    pages.insert(c.vaddr >> 12);
    return writer->Append(c);
  });
  conv_ptr = &conv;
  char* line = nullptr;
  size_t cap = 0;
  uint64_t n = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, in)) >= 0) {
    ++n;
    absl::string_view l(line, static_cast<size_t>(len));
    if (!l.empty() && l.back() == '\n') l.remove_suffix(1);
    if (absl::Status s = conv.Feed(l, n); !s.ok()) {
      free(line);
      return Fail(cmd, absl::Status(s.code(),
                                    absl::StrCat(in_name, ": ", s.message())));
    }
  }
  const int read_err = ferror(in) ? errno : 0;
  free(line);
  if (in != stdin) std::fclose(in);
  if (read_err != 0)
    return Fail(cmd, ErrnoStatus(read_err, absl::StrCat("read ", in_name)));
  if (writer == nullptr) {
    if (absl::Status s = open_writer(); !s.ok()) return Fail(cmd, s);
  }
  CpuCounters c;
  c.cpu = o.cpu;
  absl::Status s = writer->SetCounters(c);
  if (s.ok()) s = writer->Close();
  if (!s.ok()) return Fail(cmd, s);
  const LackeyStats& t = conv.stats();
  std::cerr << absl::StrFormat(
      "%s lackey: %s: '%s' (Valgrind %s): %d lines, %d instructions, %d loads "
      "(L1 %d, L2 %d, "
      "LLC %d, DRAM %d), %d stores, %d STLB misses, %d loads of %d+ cycles; %d "
      "load + %d "
      "store samples over %.2f s modelled (x%s), %d distinct pages, %d bytes\n",
      kProgram, inv.output, conv.command(), conv.valgrind_version(), t.lines,
      t.instructions, t.loads, t.loads_by_level[0], t.loads_by_level[1],
      t.loads_by_level[2], t.loads_by_level[3], t.stores, t.stlb_misses,
      t.counted_loads, o.ldlat_cycles, t.load_samples, t.store_samples,
      static_cast<double>(t.cycles) / o.ghz / 1e9 * o.time_scale,
      m.Text("time-scale"), pages.size(), writer->bytes_written());
  return kExitOk;
}

void PrintUsage(std::ostream& os) {
  os << "Usage: " << kProgram << " SHAPE -o FILE.hpt [options]\n"
     << "       " << kProgram
     << " lackey -o FILE.hpt [options] [LACKEY_LOG | -]\n\n"
     << "Writes .hpt sample traces (the format of 'hotpage record') for tests "
        "and the replay\n"
        "simulator: deterministic workloads, or a real program's Valgrind "
        "Lackey trace.\n\n"
        "Shapes:\n";
  // The names in a column as wide as the longest plus two spaces.
  size_t width = std::string("lackey").size();
  for (const Shape& s : Shapes()) width = std::max(width, s.name.size());
  width += 2;
  for (const Shape& s : Shapes()) {
    os << "  " << s.name << std::string(width - s.name.size(), ' ')
       << s.summary.substr(0, s.summary.find(':')) << "\n";
  }
  os << "  lackey" << std::string(width - 6, ' ')
     << "convert 'valgrind --tool=lackey --trace-mem=yes' output "
        "of a real program\n"
     << "\nRun '" << kProgram << " SHAPE --help' for its options.\n";
}

}  // namespace
}  // namespace trace_gen
}  // namespace hotpage

int main(int argc, char** argv) {
  using namespace hotpage::trace_gen;
  if (argc < 2) {
    PrintUsage(std::cerr);
    return hotpage::kExitUsage;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    PrintUsage(std::cout);
    return hotpage::kExitOk;
  }
  if (cmd == "lackey") return RunLackey(args);
  for (const Shape& s : Shapes()) {
    if (s.name == cmd) return RunShape(s, args);
  }
  std::cerr << kProgram << ": unknown shape '" << cmd << "'\n\n";
  PrintUsage(std::cerr);
  return hotpage::kExitUsage;
}
