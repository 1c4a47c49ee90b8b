// Converts a real program's memory trace, as printed by Valgrind's Lackey
// tool (`valgrind --tool=lackey --trace-mem=yes`), into the samples Intel
// PEBS load-latency sampling would have taken of that program: a .hpt
// trace from a real access stream, on machines without a PMU.
//
// Lackey prints every instruction fetch and data access of the program, in
// program order, one per line:
//   "I  04017e53,3"   instruction fetch (address in hex, size in bytes)
//   " L 1ffefffb48,8" load
//   " S 1ffefffb40,8" store
//   " M 0403c108,4"   modify (a load and a store of the same bytes)
// mixed with Valgrind's own messages ("==1234== Command: sort big.txt").
// It knows neither time nor caches, so the converter models both:
//  - caches: L1d, L2 and LLC, set-associative with LRU replacement and
//    64-byte lines (defaults 32 KiB/8-way, 1 MiB/16-way, 2 MiB/16-way: one
//    core's share of a server's LLC), and a 1536-entry 12-way STLB of
//    4 KiB pages. An access is looked up level by level; a miss fills the
//    line in every level it missed (non-inclusive, write-allocate). Only
//    the first line of an access that straddles two is modelled.
//  - latency: L1 5, L2 14, LLC 38-62, DRAM 180-279 (+ a 1-in-16 tail of up
//    to 400) cycles, +25-54 on an STLB miss (pebs_model.h).
//  - time: one cycle per instruction plus half of every load's latency
//    beyond L1 (a crude stand-in for out-of-order overlap), at --ghz, then
//    multiplied by --time-scale (see below).
// Sampling follows `hotpage record --source pebs`: loads whose modelled
// latency is at least ldlat (30) cycles are counted, and every
// sample_period-th counted load is a sample (weight = latency, data_src
// as the kernel encodes it); with `stores`, every sample_period-th store is
// a store sample, as with `--stores`.
//
// Time scale. Valgrind runs a program ~100x slower, so a Lackey run covers
// a short stretch of modelled time (about a second for 10^9 instructions).
// --time-scale S stretches it: the trace then looks like the same program
// running S times slower, or equally like S times the work sampled at an
// S times longer period, which is what a policy with a 1 s interval needs
// to see several intervals. Access order and the sampling are unchanged.
//
// Untrusted input: the parser checks every field, and a malformed line is
// an error naming its line number (lackey_fuzz.cc fuzzes it).

#ifndef HOTPAGE_TOOLS_TRACE_GEN_LACKEY_H_
#define HOTPAGE_TOOLS_TRACE_GEN_LACKEY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sampler/sample.h"
#include "tools/trace_gen/pebs_model.h"
#include "tools/trace_gen/prng.h"

namespace hotpage {
namespace trace_gen {

struct LackeyRecord {
  enum Kind : uint8_t { kInstr, kLoad, kStore, kModify, kMessage };
  Kind kind = kMessage;
  uint64_t addr = 0;
  uint32_t size = 0;
  uint32_t pid = 0;        // kMessage: from "==PID==" or "--PID--"
  absl::string_view text;  // kMessage: what follows the prefix
};

// Parses one line (without its newline). nullopt if malformed: a line must
// be an access as above (address 1-16 hex digits, size 1 to 2^20) or a
// Valgrind message. Never reads outside `line`; no allocation.
std::optional<LackeyRecord> ParseLackeyLine(absl::string_view line);

// A set-associative cache with LRU replacement, of `sets` x `ways` entries
// keyed by a 64-bit tag (a line or page number).
class LruCache {
 public:
  LruCache(uint64_t sets, uint32_t ways);
  // True on a hit (the entry becomes most recent); on a miss, inserts it,
  // evicting the least recent entry of its set.
  bool Access(uint64_t tag);

 private:
  uint64_t sets_;
  uint32_t ways_;
  std::vector<uint64_t> entries_;  // per set, most recent first; 0 = empty
};

struct LackeyOptions {
  uint64_t sample_period = 100;
  bool stores = false;
  uint32_t ldlat_cycles = 30;
  double ghz = 2.0;
  double time_scale = 1;
  uint64_t l1_bytes = 32 << 10;
  uint32_t l1_ways = 8;
  uint64_t l2_bytes = 1 << 20;
  uint32_t l2_ways = 16;
  uint64_t llc_bytes = 2 << 20;
  uint32_t llc_ways = 16;
  uint64_t seed = 1;  // latency jitter
  uint32_t cpu = 0;
  uint64_t start_clock_ns = 1'000'000'000'000ull;
};

// Checks the options; InvalidArgument names the flag.
absl::Status CheckLackeyOptions(const LackeyOptions& o);

struct LackeyStats {
  uint64_t lines = 0;
  uint64_t instructions = 0;
  uint64_t loads = 0;                         // including the load half of M
  uint64_t stores = 0;                        // including the store half of M
  uint64_t loads_by_level[4] = {0, 0, 0, 0};  // L1, L2, LLC, DRAM
  uint64_t stlb_misses = 0;
  uint64_t counted_loads = 0;  // latency >= ldlat
  uint64_t load_samples = 0;
  uint64_t store_samples = 0;
  uint64_t cycles = 0;
};

// Streams Lackey lines in, samples out. Thread-compatible.
class LackeyConverter {
 public:
  using SampleSink = std::function<absl::Status(const Sample&)>;
  // `o` must pass CheckLackeyOptions.
  LackeyConverter(const LackeyOptions& o, SampleSink sink);

  // One line without its newline; line_number (1-based) is for errors.
  absl::Status Feed(absl::string_view line, uint64_t line_number);

  const LackeyStats& stats() const { return stats_; }
  // From Valgrind's preamble: the traced command ("Command: ..."), the
  // Valgrind version ("Using Valgrind-3.19.0 ...") and the pid.
  const std::string& command() const { return command_; }
  const std::string& valgrind_version() const { return valgrind_; }
  uint32_t pid() const { return pid_; }

 private:
  absl::Status Load(uint64_t addr);
  absl::Status Store(uint64_t addr);
  absl::Status Emit(Sample* s);  // fills the common fields, calls sink_
  uint64_t NowNs() const;

  LackeyOptions o_;
  SampleSink sink_;
  LruCache l1_, l2_, llc_, stlb_;
  Rng rng_;
  LackeyStats stats_;
  uint64_t load_countdown_;
  uint64_t store_countdown_;
  std::string command_;
  std::string valgrind_;
  uint32_t pid_ = 0;
};

}  // namespace trace_gen
}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_TRACE_GEN_LACKEY_H_
