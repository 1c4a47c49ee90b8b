// Event configuration: turns "sample memory accesses with source X" into
// perf_event_attr structs the running kernel accepts, and explains itself
// when it cannot.
//
// Sources:
//  - Intel PEBS load latency (mem-loads, ldlat in config1) and stores.
//    Encoded through libpfm4 when it knows the CPU, otherwise through the
//    kernel's own aliases in /sys/bus/event_source/devices/cpu/events/
//    (applied through that PMU's format/ files, never hard-coded bits).
//    Where the kernel has mem-loads-aux (Sapphire Rapids and later), the
//    load event must sit in a group led by mem-loads-aux or the kernel
//    answers ENODATA; the group is built here.
//  - AMD IBS op: the ibs_op PMU's dynamic type and format bits from sysfs
//    (cnt_ctl, l3missonly, swfilt); period with the low 4 bits masked and
//    a minimum of 0x90; one IBS event per group; no exclude_* bits (EINVAL)
//    unless swfilt exists.
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
  bool sampling = true;  // false for a non-sampling group leader
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

// Default periods: PEBS loads 1000 above ldlat (perf mem uses ~4000 Hz);
// IBS 0x10000 ops; page faults 1 (every fault).
inline constexpr uint64_t kDefaultPebsPeriod = 1000;
inline constexpr uint64_t kDefaultIbsPeriod = 0x10000;
inline constexpr uint64_t kDefaultPageFaultPeriod = 1;

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

// --- sources ---------------------------------------------------------------

absl::StatusOr<EventGroup> PageFaultEvents(const SamplingOptions& opt);
// `libpfm_pmu`: encode through libpfm4 for this PMU name when set.
absl::StatusOr<EventGroup> PebsEvents(const KernelFs& fs,
                                      const SamplingOptions& opt,
                                      std::optional<std::string> libpfm_pmu);
absl::StatusOr<EventGroup> IbsEvents(const KernelFs& fs,
                                     const SamplingOptions& opt);

// What the machine offers, for `auto` and for error messages (the PMU part
// from ProbePmu, pmu_probe.h, the one probe every caller uses).
struct SamplerAvailability {
  bool pebs = false;        // cpu (or cpu_core) PMU with mem-loads
  bool ibs = false;         // ibs_op PMU
  bool core_pmu = false;    // any hardware core PMU at all
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
