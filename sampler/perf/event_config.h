// Event configuration: turns "sample memory accesses with source X" into
// perf_event_attr structs the running kernel accepts, and explains itself
// when it cannot.
//
// Sources:
//  - Intel PEBS load latency (mem-loads, ldlat in config1) and stores.
//    Encoded through libpfm4 when it knows the CPU, otherwise through the
//    kernel's own aliases in /sys/bus/event_source/devices/cpu/events/
//    (applied through that PMU's format/ files, never hard-coded bits).
//    When libpfm4 fails (it cannot encode MEM_TRANS_RETIRED:LOAD_LATENCY
//    for snb/ivb/nhm/wsm), the kernel's alias is used and EventGroup::why
//    says so. Where the kernel has mem-loads-aux (Sapphire Rapids and
//    later), the load event must sit in a group led by mem-loads-aux or the
//    kernel answers ENODATA (intel_pmu_hw_config() in
//    arch/x86/events/intel/core.c); the group is built here, and the aux
//    leader is marked keep_samples=false: it is a sampling PEBS event the
//    kernel writes records for, but they are not loads.
//    Hybrid parts (cpu_core + cpu_atom PMUs): one plan entry per core PMU,
//    each restricted to its PMU's `cpus` (the kernel answers ENOENT on the
//    other CPUs: x86_pmu_event_init() in arch/x86/events/core.c), always
//    through the kernel's per-PMU aliases. Stores are separate events in
//    their own groups, never members of the aux group (SPR's store event
//    0x2cd is limited to counter 0: a group is scheduled all or nothing).
//
// The plan: EventGroup::events lists every event; events with the same
// EventSpec::group form one perf group (leader first), each group is opened
// on EventSpec::cpus (empty: every sampled CPU).
//  - AMD IBS op: the ibs_op PMU's dynamic type and format bits from sysfs
//    (cnt_ctl, l3missonly, swfilt); period with the low 4 bits masked and
//    a minimum of 0x90; one IBS event per group; no exclude_* bits (EINVAL)
//    unless swfilt exists. Before Linux 6.1 the kernel fills neither ADDR
//    nor DATA_SRC for IBS (perf_ibs_handle_irq() in
//    arch/x86/events/amd/ibs.c reads IbsDcLinAd only for PERF_SAMPLE_RAW;
//    the ADDR/DATA_SRC parsing came with 7c10dd0a88b1 in 6.1): there the
//    plan adds PERF_SAMPLE_RAW and the ring reader takes the address from
//    the raw IbsOpData3/IbsDcLinAd (ibs_raw.h).
//    With cnt_ctl every dispatched op is a candidate: most sampled ops are
//    neither loads nor stores and carry no address; the ring reader counts
//    them as RingCounters::ibs_non_memory, not as lost or filtered.
//    With l3missonly the hardware discards the ops that hit and restarts
//    the count with random low bits, so a sample's PERIOD is no longer the
//    number of ops it stands for (it is far below): rates derived from
//    PERIOD under --l3-miss-only undercount.
//  - Software page faults (PERF_COUNT_SW_PAGE_FAULTS with ADDR): works on
//    every machine, including VMs without a PMU. It sees only faults
//    (first touches, and touches after reclaim or migration), not repeated
//    accesses, so it is for testing and for seeding placement, not for
//    measuring hotness.
//
// Every function here is pure over a KernelFs (and libpfm4's tables), so
// tests encode for CPUs this machine does not have.

#ifndef HOTPAGE_SAMPLER_PERF_EVENT_CONFIG_H_
#define HOTPAGE_SAMPLER_PERF_EVENT_CONFIG_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sampler/sample.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

enum class SourceRequest { kAuto, kPebs, kIbs, kPageFault };
absl::StatusOr<SourceRequest> ParseSourceRequest(absl::string_view s);

struct EventSpec {
  std::string
      name;  // for messages and trace headers: "cpu/mem-loads,ldlat=30/"
  perf_event_attr attr{};  // complete, ready for perf_event_open
  SampleSource source = SampleSource::kUnknown;
  // false: the sampler leaves this event's period alone (PERF_EVENT_IOC_PERIOD
  // goes only to sampling events). The mem-loads-aux leader is false here:
  // it still samples in the kernel's sense (PEBS events must sample:
  // x86_pmu_hw_config()), with a huge period, and keep_samples=false.
  bool sampling = true;
  // The PMU directory name under /sys/bus/event_source/devices ("cpu",
  // "cpu_core", "cpu_atom", "ibs_op"; "software" for page faults).
  std::string pmu;
  // The CPUs this event may be opened on: its PMU's `cpus` file on hybrid
  // parts (the kernel answers ENOENT elsewhere: x86_pmu_event_init()).
  // Empty: every CPU the sampler samples. The sampler opens the event on
  // the intersection with SamplerConfig::cpus.
  std::vector<int> cpus;
  // Events with the same `group` form one perf group when
  // EventGroup::grouped; its leader is the first event of that group in
  // `events`. Different groups are opened independently (hybrid: one
  // group per core PMU, each on its own CPUs).
  int group = 0;
  // false: the event samples (it is a PEBS event) but its records are not
  // memory accesses to keep, e.g. the mem-loads-aux leader on Sapphire
  // Rapids: the ring reader recognises them by id, counts them and drops
  // them.
  bool keep_samples = true;
};

// Events opened together on each CPU: events[0] leads the group when
// `grouped`, otherwise each is opened on its own (and redirected into one
// ring per CPU).
struct EventGroup {
  std::vector<EventSpec> events;
  bool grouped = false;
  std::string encoder;  // "libpfm4", "sysfs", "software"
  // Why the plan is what it is, where it is not the obvious choice, in one
  // line for the user: libpfm4's failure and the fallback, the RAW block
  // IBS needs before 6.1, the period a kernel limit forced. Empty when
  // there is nothing to say.
  std::string why;
  // "{a,b},c via encoder": groups in braces, groups of other PMUs with the
  // CPUs they open on.
  std::string Describe() const;
};

struct SamplingOptions {
  uint64_t sample_period = 0;  // 0: the source's default
  int ldlat_cycles = 30;       // PEBS load-latency threshold
  bool pebs_stores = false;    // also sample stores (PEBS)
  bool ibs_l3_miss_only = false;
  // Exclude kernel-mode samples in the kernel (PEBS always; IBS only with
  // swfilt). User-space addresses are filtered afterwards anyway.
  bool user_only = true;
};

// --- default periods ---------------------------------------------------------
//
// The kernel throttles an event that takes more than
// max_samples_per_tick = DIV_ROUND_UP(perf_event_max_sample_rate, HZ)
// samples in one tick on one CPU (__perf_event_account_interrupt() in
// kernel/events/core.c): it stops the event until the next tick and writes
// PERF_RECORD_THROTTLE; the samples it did not take are not counted as lost.
// perf_event_max_sample_rate defaults to 100000/s (DEFAULT_MAX_SAMPLE_RATE)
// and perf_sample_event_took() lowers it, for the whole machine, when the
// sampling interrupts take more than perf_cpu_time_max_percent (25%) of a
// CPU (dmesg: "perf: interrupt took too long ..., lowering
// kernel.perf_event_max_sample_rate to 25000" is common). Every PEBS sample
// is its own PMI here (large PEBS stays off with use_clockid:
// intel_pmu_large_pebs_flags()), every IBS sample an NMI.
//
// So a default period is chosen from the worst-case event rate of one busy
// core, so that that core stays under both limits:
//   allowed = min(kMaxSamplesPerSecPerCpu, max_sample_rate / 2)
//   period  = ceil(worst_events_per_sec / allowed)
// The factor 2 leaves room for the tick granularity and for bursts, and
// follows the kernel when it lowers the rate; kMaxSamplesPerSecPerCpu is
// hotpage's own budget (20000/s per CPU: the ring reader decodes a sample
// in well under 1 us, so a fully busy CPU costs the reader under 2% of a
// core; perf mem samples at 4000 Hz).
// Worst-case event rates of one core:
//  - PEBS loads above ldlat (30 cycles: at least an L2 miss): 1e9/s
//    (a 4-5 GHz core with 16+ outstanding L1D misses at ~15 ns L3 latency).
//    At the kernel's default rate: 1e9 / 20000 = 50000.
//  - IBS op with cnt_ctl (dispatched ops): 3e10/s (Zen 4: 6 ops/cycle at
//    5 GHz): 3e10 / 20000 = 1500000 (the kernel splits periods above the
//    hardware's 0xFFFF0 maximum into several counts: perf_ibs_set_period()).
//  - IBS op without cnt_ctl (cycles): 5e9/s: 250000.
// Typical memory-bound code runs 1e7..1e8 qualifying loads/s per core, so
// the default PEBS period gives 200..2000 samples/s per busy CPU; the
// period controller (--cpu-budget) raises it further when the reader is
// over budget.
inline constexpr uint64_t kKernelDefaultMaxSampleRate = 100000;
inline constexpr uint64_t kMaxSamplesPerSecPerCpu = 20000;
inline constexpr uint64_t kPebsWorstLoadsPerSec = 1'000'000'000;
inline constexpr uint64_t kIbsWorstOpsPerSec = 30'000'000'000;
inline constexpr uint64_t kIbsWorstCyclesPerSec = 5'000'000'000;

// ceil(worst_events_per_sec / min(kMaxSamplesPerSecPerCpu,
// max_sample_rate / 2)); max_sample_rate 0 or 1 is taken as 2 (a sample
// per half second at most).
constexpr uint64_t DefaultPeriod(uint64_t worst_events_per_sec,
                                 uint64_t max_sample_rate) {
  uint64_t allowed = max_sample_rate / 2;
  if (allowed > kMaxSamplesPerSecPerCpu) allowed = kMaxSamplesPerSecPerCpu;
  if (allowed == 0) allowed = 1;
  return (worst_events_per_sec + allowed - 1) / allowed;
}

// The defaults at the kernel's default rate (the plan recomputes them from
// the running kernel's perf_event_max_sample_rate). Page faults: 1 (every
// fault; the kernel's own fault rate bounds them).
inline constexpr uint64_t kDefaultPebsPeriod =
    DefaultPeriod(kPebsWorstLoadsPerSec, kKernelDefaultMaxSampleRate);
inline constexpr uint64_t kDefaultIbsPeriod =
    DefaultPeriod(kIbsWorstOpsPerSec, kKernelDefaultMaxSampleRate);
inline constexpr uint64_t kDefaultPageFaultPeriod = 1;
static_assert(kDefaultPebsPeriod == 50000);
static_assert(kDefaultIbsPeriod == 1500000);

// The mem-loads-aux leader's period: it must sample (PEBS), but its records
// are thrown away, so it should almost never interrupt. 2^30 is below every
// x86 counter's max_period (2^31 - 1 without full-width writes; every part
// with mem-loads-aux has them, 2^47 - 1) and below the sign bit perf_event_
// open() refuses.
inline constexpr uint64_t kAuxLeaderPeriod = uint64_t{1} << 30;

// A kernel CPU list ("0-15,20") for messages; cpus ascending.
std::string FormatCpuList(const std::vector<int>& cpus);

// /proc/sys/kernel/perf_event_max_sample_rate, or the kernel's default
// when it cannot be read (a tree without it).
uint64_t MaxSampleRate(const KernelFs& fs);

// The running kernel's major.minor from /proc/sys/kernel/osrelease
// ("5.15.0-91-generic" -> {5, 15}); nullopt when absent or unparsable.
std::optional<std::pair<int, int>> KernelVersion(const KernelFs& fs);

// The sample_type every hotpage event uses (the ring reader and trace
// writer rely on IDENTIFIER for multi-event rings).
inline constexpr uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

// --- sysfs event aliases and formats ---------------------------------------

// A PMU format field: "config:0-7", "config1:0-15", "config:0-7,32-35",
// "config2:0". Returns the bit ranges per target word.
struct FormatField {
  int word = 0;  // 0 config, 1 config1, 2 config2, 3 config3
  std::vector<std::pair<int, int>> ranges;  // [lo, hi] bit ranges, in order
};
absl::StatusOr<FormatField> ParseFormatField(absl::string_view text);

// Encodes an event alias ("event=0xcd,umask=0x1,ldlat=3") of PMU `pmu`
// (a directory under /sys/bus/event_source/devices) with `overrides`
// applied (e.g. {"ldlat", 30}); type from the PMU's `type` file.
absl::StatusOr<perf_event_attr> EncodeSysfsEvent(
    const KernelFs& fs, absl::string_view pmu, absl::string_view alias,
    const std::map<std::string, uint64_t>& overrides);

// --- libpfm4 ---------------------------------------------------------------

// Encodes a libpfm4 event string
// ("spr::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=32") for user-level sampling.
// Initializes libpfm4 once per process.
absl::StatusOr<perf_event_attr> EncodeLibpfm(const std::string& event);

// The name libpfm4 gives the host's active core PMU ("spr", "icx", ...), or
// nullopt when it knows none. (libpfm4 detects by CPUID, even when the
// kernel exposes no PMU: callers check sysfs too.)
std::optional<std::string> LibpfmHostPmu();

// The CPU as the first processor of /proc/cpuinfo describes it: what
// libpfm4 reads through CPUID (pfm_intel_x86_detect(), pfm_amd64_detect()).
struct CpuModel {
  std::string vendor;  // vendor_id: GenuineIntel, AuthenticAMD
  int family = -1;     // cpu family
  int model = -1;      // model
  int stepping = -1;   // stepping; -1 when the file has none
  std::string name;    // model name
};
// Parses /proc/cpuinfo text; nullopt without vendor_id, cpu family and
// model in the first processor's block (non-x86 files, garbage).
std::optional<CpuModel> ParseCpuinfo(absl::string_view text);
// "GenuineIntel family 6 model 85 stepping 4 (Intel(R) Xeon(R) ...)".
std::string DescribeCpuModel(const CpuModel& cpu);
// The core PMU libpfm4 would detect on `cpu`, from its detection tables
// (cpu_models and pmu_detect of lib/pfmlib_intel_snb.c, _skl.c, _icl.c):
// snb 42, snb_ep 45; skl 78 94 142 158 165 166; skx 85 below stepping 5,
// clx 85 from stepping 5 (pfm_skx_detect(), pfm_clx_detect()); icl 108 125
// 126 140 141 157 167; icx 106 (Intel family 6 only). nullopt for a model
// outside that table (hotpage does not guess libpfm4's answer) and for 85
// without a stepping.
std::optional<std::string> LibpfmPmuForCpu(const CpuModel& cpu);

// --- sources ---------------------------------------------------------------

absl::StatusOr<EventGroup> PageFaultEvents(const SamplingOptions& opt);
// `libpfm_pmu`: encode through libpfm4 for this PMU name when set.
absl::StatusOr<EventGroup> PebsEvents(const KernelFs& fs,
                                      const SamplingOptions& opt,
                                      std::optional<std::string> libpfm_pmu);
absl::StatusOr<EventGroup> IbsEvents(const KernelFs& fs,
                                     const SamplingOptions& opt);

// The event side of a perf_event_open failure: what `err` means for this
// event on `cpu` (-1: any), naming the real cause where the plan knows it
// (a hybrid PMU's event on a CPU outside its `cpus` is ENOENT from
// x86_pmu_event_init(), not a missing PMU; EOPNOTSUPP on a PEBS event is
// precise_ip above x86_pmu_max_precise(); ENODATA is the aux group). Empty
// when the event says nothing more than the errno.
std::string EventOpenHint(int err, const EventSpec& spec, int cpu);

// What the machine offers, for `auto` and for error messages (the PMU part
// from ProbePmu, pmu_probe.h, the one probe every caller uses).
struct SamplerAvailability {
  bool pebs = false;        // cpu (or cpu_core) PMU with mem-loads
  bool ibs = false;         // ibs_op PMU
  bool core_pmu = false;    // any hardware core PMU at all
  bool hybrid = false;      // cpu_core/cpu_atom PMUs (PmuProbe::hybrid)
  bool hypervisor = false;  // running under a hypervisor
  std::optional<int64_t> paranoid;
  bool cap_perfmon = false;  // effective CAP_PERFMON or CAP_SYS_ADMIN
};
SamplerAvailability ProbeAvailability(const KernelFs& fs);

// Picks the source: the requested one, or for kAuto the best available
// (PEBS, then IBS, then page faults). Errors name what is missing and the
// alternatives. `why` receives a one-line explanation of the choice.
absl::StatusOr<EventGroup> ChooseEvents(const KernelFs& fs, SourceRequest req,
                                        const SamplingOptions& opt,
                                        std::string* why);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_EVENT_CONFIG_H_
