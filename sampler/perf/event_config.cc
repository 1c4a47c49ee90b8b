#include "sampler/perf/event_config.h"

#include <perfmon/pfmlib_perf_event.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sampler/perf/pmu_probe.h"
#include "tools/base/kernel/capabilities.h"
#include "tools/base/parse.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

constexpr const char* kPmuDir = kPmuDevicesDir;

perf_event_attr BaseAttr() {
  perf_event_attr a;
  std::memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  a.sample_type = kSampleType;
  a.sample_id_all = 1;
  a.disabled = 1;
  // Timestamps on CLOCK_MONOTONIC (Linux 4.1+), so that samples line up
  // with the recorder's own clock and with other tools.
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  return a;
}

std::optional<uint64_t> ParseNumber(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  uint64_t v = 0;
  if (absl::ConsumePrefix(&s, "0x") || absl::ConsumePrefix(&s, "0X")) {
    if (s.empty() || s.size() > 16) return std::nullopt;
    for (char c : s) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)))
        return std::nullopt;
    }
    if (!absl::SimpleHexAtoi(s, &v)) return std::nullopt;
    return v;
  }
  if (!absl::SimpleAtoi(s, &v)) return std::nullopt;
  return v;
}

__u64* Word(perf_event_attr& a, int word) {
  switch (word) {
    case 0:
      return &a.config;
    case 1:
      return &a.config1;
    case 2:
      return &a.config2;
    default:
      return nullptr;
  }
}

// Writes `value` into the bits of `field` (low bits of value go to the
// first range, as the kernel's perf tool does).
absl::Status ApplyField(perf_event_attr& a, const FormatField& f,
                        uint64_t value, absl::string_view name) {
  __u64* w = Word(a, f.word);
  if (w == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat("format field ", name, " targets config", f.word));
  }
  int shift = 0;
  for (auto [lo, hi] : f.ranges) {
    const int width = hi - lo + 1;
    const uint64_t mask =
        width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    *w = (*w & ~(mask << lo)) | (((value >> shift) & mask) << lo);
    shift += width;
  }
  if (shift < 64 && (value >> shift) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("value ", value, " does not fit format field ", name, " (",
                     shift, " bits)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> PmuType(const KernelFs& fs, absl::string_view pmu) {
  HOTPAGE_ASSIGN_OR_RETURN(
      int64_t type, fs.ReadInt(absl::StrCat(kPmuDir, "/", pmu, "/type")));
  if (type < 0 || type > UINT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat(fs.Display(absl::StrCat(kPmuDir, "/", pmu, "/type")),
                     ": bad PMU type ", type));
  }
  return static_cast<uint32_t>(type);
}

void UserOnly(perf_event_attr& a, bool user_only) {
  a.exclude_kernel = user_only;
  a.exclude_hv = user_only;
}

}  // namespace

absl::StatusOr<SourceRequest> ParseSourceRequest(absl::string_view s) {
  if (s == "auto") return SourceRequest::kAuto;
  if (s == "pebs") return SourceRequest::kPebs;
  if (s == "ibs") return SourceRequest::kIbs;
  if (s == "pagefault") return SourceRequest::kPageFault;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown source '", s, "' (expected auto, pebs, ibs or pagefault)"));
}

std::string EventGroup::Describe() const {
  // Groups in order of first appearance; a group of several events (when
  // grouped) in braces; events restricted to some CPUs say which.
  std::vector<std::string> parts;
  std::vector<int> seen;
  for (const EventSpec& e : events) {
    if (std::find(seen.begin(), seen.end(), e.group) != seen.end()) continue;
    seen.push_back(e.group);
    std::vector<std::string> names;
    const EventSpec* first = nullptr;
    for (const EventSpec& m : events) {
      if (m.group != e.group) continue;
      if (first == nullptr) first = &m;
      names.push_back(m.name);
    }
    std::string part = absl::StrJoin(names, ",");
    if (grouped && names.size() > 1) part = absl::StrCat("{", part, "}");
    if (!first->cpus.empty()) {
      part = absl::StrCat(part, "@cpus:", FormatCpuList(first->cpus));
    }
    parts.push_back(part);
  }
  std::string s = absl::StrCat(absl::StrJoin(parts, ","), " via ", encoder);
  if (!why.empty()) absl::StrAppend(&s, " (", why, ")");
  return s;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::vector<std::string> out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out.push_back(j == i ? absl::StrCat(cpus[i])
                         : absl::StrCat(cpus[i], "-", cpus[j]));
    i = j + 1;
  }
  return absl::StrJoin(out, ",");
}

uint64_t MaxSampleRate(const KernelFs& fs) {
  absl::StatusOr<int64_t> r =
      fs.ReadInt("/proc/sys/kernel/perf_event_max_sample_rate");
  if (!r.ok() || *r <= 0) return kKernelDefaultMaxSampleRate;
  return static_cast<uint64_t>(*r);
}

std::optional<std::pair<int, int>> KernelVersion(const KernelFs& fs) {
  absl::StatusOr<std::string> rel =
      fs.ReadTrimmed("/proc/sys/kernel/osrelease");
  if (!rel.ok()) return std::nullopt;
  return ParseKernelRelease(*rel);
}

std::string EventOpenHint(int err, const EventSpec& spec, int cpu) {
  const bool pebs = spec.source == SampleSource::kPebsLoad ||
                    spec.source == SampleSource::kPebsStore;
  switch (err) {
    case ENOENT:
      if (!spec.cpus.empty() && cpu >= 0 &&
          std::find(spec.cpus.begin(), spec.cpus.end(), cpu) ==
              spec.cpus.end()) {
        return absl::StrCat(
            "the ", spec.pmu, " PMU covers only CPUs ",
            FormatCpuList(spec.cpus), ", not cpu ", cpu,
            " (hybrid CPU: x86_pmu_event_init() answers ENOENT for an event "
            "of one core type on the other's CPUs)");
      }
      if (spec.pmu == "cpu_core" || spec.pmu == "cpu_atom") {
        return absl::StrCat("the ", spec.pmu,
                            " PMU refused the event on this CPU (hybrid "
                            "CPU: open each core PMU's events only on the "
                            "CPUs in its cpus file)");
      }
      return "";
    case EOPNOTSUPP:
      if (pebs) {
        return absl::StrCat(
            "precise_ip=", spec.attr.precise_ip,
            " is above what this PMU supports (x86_pmu_max_precise()), or "
            "PEBS is unavailable here (a VM without guest PEBS)");
      }
      return "";
    case ENODATA:
      return "this CPU requires mem-loads in a group led by mem-loads-aux "
             "(intel_pmu_hw_config())";
    case EINVAL:
      if (pebs) {
        return "for PEBS: WEIGHT_STRUCT needs Linux 5.12+, and ldlat must "
               "fit 16 bits";
      }
      if (spec.source == SampleSource::kIbsOp) {
        return "for IBS: exclude_* bits without swfilt, a period the PMU "
               "refuses, or per-task IBS before Linux 6.2";
      }
      return "";
    default:
      return "";
  }
}

absl::StatusOr<FormatField> ParseFormatField(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  FormatField f;
  size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad format \"", text, "\" (no ':')"));
  }
  absl::string_view word = text.substr(0, colon);
  if (word == "config")
    f.word = 0;
  else if (word == "config1")
    f.word = 1;
  else if (word == "config2")
    f.word = 2;
  else if (word == "config3")
    f.word = 3;
  else
    return absl::InvalidArgumentError(
        absl::StrCat("bad format word \"", word, "\""));
  int total = 0;
  for (absl::string_view r : absl::StrSplit(text.substr(colon + 1), ',')) {
    size_t dash = r.find('-');
    int lo = 0, hi = 0;
    bool ok = dash == absl::string_view::npos
                  ? absl::SimpleAtoi(r, &lo) && (hi = lo, true)
                  : absl::SimpleAtoi(r.substr(0, dash), &lo) &&
                        absl::SimpleAtoi(r.substr(dash + 1), &hi);
    if (!ok || lo < 0 || hi > 63 || lo > hi) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad bit range \"", r, "\" in \"", text, "\""));
    }
    total += hi - lo + 1;
    f.ranges.emplace_back(lo, hi);
  }
  if (total > 64)
    return absl::InvalidArgumentError(
        absl::StrCat("format \"", text, "\" wider than 64 bits"));
  return f;
}

absl::StatusOr<perf_event_attr> EncodeSysfsEvent(
    const KernelFs& fs, absl::string_view pmu, absl::string_view alias,
    const std::map<std::string, uint64_t>& overrides) {
  perf_event_attr a = BaseAttr();
  HOTPAGE_ASSIGN_OR_RETURN(a.type, PmuType(fs, pmu));
  std::map<std::string, uint64_t> terms;
  for (absl::string_view term : absl::StrSplit(
           absl::StripAsciiWhitespace(alias), ',', absl::SkipEmpty())) {
    size_t eq = term.find('=');
    std::string name(absl::StripAsciiWhitespace(term.substr(0, eq)));
    uint64_t value = 1;  // a bare term means 1
    if (eq != absl::string_view::npos) {
      std::optional<uint64_t> v = ParseNumber(term.substr(eq + 1));
      if (!v) {
        return absl::InvalidArgumentError(absl::StrCat(
            "bad value in event term \"", term, "\" of PMU ", pmu));
      }
      value = *v;
    }
    terms[name] = value;
  }
  for (const auto& [k, v] : overrides) terms[k] = v;
  for (const auto& [name, value] : terms) {
    std::string path = absl::StrCat(kPmuDir, "/", pmu, "/format/", name);
    absl::StatusOr<std::string> spec = fs.ReadTrimmed(path);
    if (!spec.ok()) {
      return absl::NotFoundError(absl::StrCat("PMU ", pmu,
                                              " has no format field '", name,
                                              "': ", spec.status().message()));
    }
    absl::StatusOr<FormatField> f = ParseFormatField(*spec);
    if (!f.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(fs.Display(path), ": ", f.status().message()));
    HOTPAGE_RETURN_IF_ERROR(ApplyField(a, *f, value, name));
  }
  return a;
}

// --- libpfm4 -----------------------------------------------------------------

namespace {
absl::Status PfmInit() {
  static int rc = [] { return pfm_initialize(); }();
  if (rc != PFM_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("libpfm4: pfm_initialize: ", pfm_strerror(rc)));
  }
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<perf_event_attr> EncodeLibpfm(const std::string& event) {
  HOTPAGE_RETURN_IF_ERROR(PfmInit());
  perf_event_attr a = BaseAttr();
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof(arg));
  arg.attr = &a;
  arg.size = sizeof(arg);
  // libpfm copies only attr->size bytes back: with a short size it would
  // drop config2 (pmu.md). BaseAttr() sets size = sizeof(attr).
  int rc = pfm_get_os_event_encoding(event.c_str(), PFM_PLM3,
                                     PFM_OS_PERF_EVENT_EXT, &arg);
  if (rc != PFM_SUCCESS) {
    return absl::InvalidArgumentError(absl::StrCat(
        "libpfm4 cannot encode \"", event, "\": ", pfm_strerror(rc)));
  }
  // pfm_get_os_event_encoding resets fields it owns; restore ours.
  a.size = sizeof(a);
  a.sample_type = kSampleType;
  a.sample_id_all = 1;
  a.disabled = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  return a;
}

std::optional<std::string> LibpfmHostPmu() {
  if (!PfmInit().ok()) return std::nullopt;
  pfm_pmu_info_t info;
  for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX; ++pmu) {
    std::memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(pmu), &info) != PFM_SUCCESS)
      continue;
    if (info.is_present && info.type == PFM_PMU_TYPE_CORE &&
        info.name != nullptr) {
      std::string name = info.name;
      // Only PMUs whose load-latency event we know; "perf" (software),
      // "ix86arch" (architectural only) do not qualify.
      if (name == "ix86arch" || name == "perf" || name == "perf_raw") continue;
      return name;
    }
  }
  return std::nullopt;
}

// --- sources
// -------------------------------------------------------------------

std::optional<CpuModel> ParseCpuinfo(absl::string_view text) {
  CpuModel c;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StripAsciiWhitespace(line).empty()) break;  // end of cpu 0
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view key =
        absl::StripAsciiWhitespace(line.substr(0, colon));
    const absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    int n = 0;
    const bool num = absl::SimpleAtoi(value, &n) && n >= 0;
    if (key == "vendor_id") {
      c.vendor = std::string(value.substr(0, 64));
    } else if (key == "cpu family" && num) {
      c.family = n;
    } else if (key == "model" && num) {
      c.model = n;
    } else if (key == "stepping" && num) {
      c.stepping = n;
    } else if (key == "model name") {
      c.name = std::string(value.substr(0, 128));
    }
  }
  if (c.vendor.empty() || c.family < 0 || c.model < 0) return std::nullopt;
  return c;
}

std::string DescribeCpuModel(const CpuModel& cpu) {
  std::string out =
      absl::StrCat(cpu.vendor, " family ", cpu.family, " model ", cpu.model);
  if (cpu.stepping >= 0) absl::StrAppend(&out, " stepping ", cpu.stepping);
  if (!cpu.name.empty()) absl::StrAppend(&out, " (", cpu.name, ")");
  return out;
}

std::optional<std::string> LibpfmPmuForCpu(const CpuModel& cpu) {
  if (cpu.vendor != "GenuineIntel" || cpu.family != 6) return std::nullopt;
  struct Entry {
    int model;
    const char* pmu;
  };
  static constexpr Entry kTable[] = {
      {42, "snb"},  {45, "snb_ep"}, {78, "skl"},  {94, "skl"},
      {142, "skl"}, {158, "skl"},   {165, "skl"}, {166, "skl"},
      {108, "icl"}, {125, "icl"},   {126, "icl"}, {140, "icl"},
      {141, "icl"}, {157, "icl"},   {167, "icl"}, {106, "icx"},
  };
  if (cpu.model == 85) {  // Skylake-X and Cascade Lake-X share the model
    if (cpu.stepping < 0) return std::nullopt;
    return std::string(cpu.stepping < 5 ? "skx" : "clx");
  }
  for (const Entry& e : kTable) {
    if (e.model == cpu.model) return std::string(e.pmu);
  }
  return std::nullopt;
}

absl::StatusOr<EventGroup> PageFaultEvents(const SamplingOptions& opt) {
  EventGroup g;
  g.encoder = "software";
  EventSpec e;
  e.name = "software/page-faults/";
  e.pmu = "software";
  e.source = SampleSource::kPageFault;
  e.attr = BaseAttr();
  e.attr.type = PERF_TYPE_SOFTWARE;
  e.attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  e.attr.sample_period =
      opt.sample_period ? opt.sample_period : kDefaultPageFaultPeriod;
  UserOnly(e.attr, opt.user_only);
  g.events.push_back(e);
  return g;
}

namespace {

// One core PMU the PEBS plan opens events on.
struct PebsPmuPlan {
  std::string pmu;        // "cpu", "cpu_core", "cpu_atom"
  bool aux = false;       // events/mem-loads-aux exists: group behind it
  std::vector<int> cpus;  // its `cpus` file on hybrid parts; empty: all
};

absl::StatusOr<std::vector<int>> PmuCpus(const KernelFs& fs,
                                         absl::string_view pmu) {
  const std::string path = absl::StrCat(kPmuDir, "/", pmu, "/cpus");
  absl::StatusOr<std::vector<int>> cpus = fs.ReadList(path);
  if (!cpus.ok()) {
    return absl::Status(
        cpus.status().code(),
        absl::StrCat("hybrid PMU ", pmu, ": cannot read its CPU list ",
                     fs.Display(path), ": ", cpus.status().message()));
  }
  if (cpus->empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "hybrid PMU ", pmu, ": ", fs.Display(path), " lists no CPU"));
  }
  return cpus;
}

}  // namespace

absl::StatusOr<EventGroup> PebsEvents(const KernelFs& fs,
                                      const SamplingOptions& opt,
                                      std::optional<std::string> libpfm_pmu) {
  const PmuProbe probe = ProbePmu(fs);
  if (!probe.pebs_pmu) {
    std::string where =
        fs.Display(absl::StrCat(kPmuDir, "/cpu/events/mem-loads"));
    if (probe.hybrid) {
      where = absl::StrCat(
          "this is a hybrid Intel CPU (cpu_core/cpu_atom PMUs) but ",
          fs.Display(absl::StrCat(kPmuDir, "/cpu_core/events/mem-loads")),
          " does not exist (PEBS is off in this kernel or hypervisor)");
    } else if (probe.core_pmu) {
      where = absl::StrCat(where,
                           " does not exist: the CPU PMU has no PEBS load "
                           "latency (not an Intel CPU with PEBS, or a VM "
                           "whose virtual PMU has no PEBS)");
    } else {
      where = absl::StrCat(where,
                           " does not exist and there is no CPU PMU at all "
                           "(no PMU driver, or a VM without a virtual PMU)");
    }
    return absl::NotFoundError(
        absl::StrCat("no PEBS load-latency event: ", where));
  }
  const uint64_t period =
      opt.sample_period
          ? opt.sample_period
          : DefaultPeriod(kPebsWorstLoadsPerSec, MaxSampleRate(fs));

  std::vector<PebsPmuPlan> pmus;
  if (probe.hybrid) {
    // Alder Lake and later: one plan per core PMU, each on its own CPUs.
    // The aux leader is a P-core requirement only
    // (require_mem_loads_aux_event(): hybrid_big).
    if (*probe.pebs_pmu == "cpu_core") {
      PebsPmuPlan core{"cpu_core", probe.pebs_mem_loads_aux, {}};
      HOTPAGE_ASSIGN_OR_RETURN(core.cpus, PmuCpus(fs, "cpu_core"));
      pmus.push_back(std::move(core));
    }
    if (probe.atom_mem_loads) {
      PebsPmuPlan atom{"cpu_atom", false, {}};
      HOTPAGE_ASSIGN_OR_RETURN(atom.cpus, PmuCpus(fs, "cpu_atom"));
      pmus.push_back(std::move(atom));
    }
  } else {
    pmus.push_back({*probe.pebs_pmu, probe.pebs_mem_loads_aux, {}});
  }

  EventGroup g;
  std::vector<std::string> why;
  auto finish = [&](EventSpec& e, SampleSource src, const PebsPmuPlan& p,
                    int group) {
    e.source = src;
    e.pmu = p.pmu;
    e.cpus = p.cpus;
    e.group = group;
    e.attr.sample_period = period;
    e.attr.precise_ip = 2;
    e.attr.sample_type |= PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;
    UserOnly(e.attr, opt.user_only);
  };
  auto alias = [&](const PebsPmuPlan& p,
                   absl::string_view event) -> absl::StatusOr<std::string> {
    return fs.ReadTrimmed(absl::StrCat(kPmuDir, "/", p.pmu, "/events/", event));
  };

  // libpfm4 only for a single "cpu" PMU: it encodes for the raw type 4 and
  // one CPU model. On any libpfm4 error, the kernel's alias (D4 of the PMU
  // audit: libpfm4 4.13 cannot encode MEM_TRANS_RETIRED:LOAD_LATENCY for
  // snb, snb_ep, ivb, ivb_ep, nhm, nhm_ex, wsm, wsm_dp, where the kernel
  // has mem_ld_snb / mem_ld_nhm).
  bool use_libpfm = libpfm_pmu.has_value() && !probe.hybrid;
  if (libpfm_pmu && probe.hybrid) {
    why.push_back(
        "hybrid CPU: the kernel's per-PMU aliases (libpfm4 encodes for one "
        "core type)");
  }
  int next_group = 0;
  for (const PebsPmuPlan& p : pmus) {
    const int group = next_group++;
    EventSpec load;
    bool encoded = false;
    if (use_libpfm) {
      const std::string name = absl::StrCat(
          *libpfm_pmu,
          "::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=", opt.ldlat_cycles);
      absl::StatusOr<perf_event_attr> a = EncodeLibpfm(name);
      if (a.ok()) {
        load.name = name;
        load.attr = *a;
        encoded = true;
        g.encoder = "libpfm4";
        // libpfm4 encodes for the raw core PMU type (4).
        if (p.pmu != "cpu") {
          HOTPAGE_ASSIGN_OR_RETURN(load.attr.type, PmuType(fs, p.pmu));
        }
      } else {
        use_libpfm = false;
        why.push_back(absl::StrCat(a.status().message(),
                                   "; using the kernel's sysfs alias"));
      }
    }
    if (!encoded) {
      g.encoder = "sysfs";
      HOTPAGE_ASSIGN_OR_RETURN(std::string a, alias(p, "mem-loads"));
      load.name =
          absl::StrCat(p.pmu, "/mem-loads,ldlat=", opt.ldlat_cycles, "/");
      HOTPAGE_ASSIGN_OR_RETURN(
          load.attr, EncodeSysfsEvent(
                         fs, p.pmu, a,
                         {{"ldlat", static_cast<uint64_t>(opt.ldlat_cycles)}}));
    }
    finish(load, SampleSource::kPebsLoad, p, group);

    if (p.aux) {
      // Sapphire Rapids and later, and Alder Lake's P-cores: mem-loads with
      // DATA_SRC must be in a group led by mem-loads-aux, or
      // perf_event_open fails with ENODATA (intel_pmu_hw_config()). The
      // leader must be a sampling PEBS event too (x86_pmu_hw_config(): "no
      // sense in having PEBS for non sampling events"), so its records
      // arrive in the ring: keep_samples=false makes the ring reader
      // count and drop them, and a huge period makes them rare.
      EventSpec aux;
      HOTPAGE_ASSIGN_OR_RETURN(std::string a, alias(p, "mem-loads-aux"));
      aux.name = absl::StrCat(p.pmu, "/mem-loads-aux/");
      HOTPAGE_ASSIGN_OR_RETURN(aux.attr, EncodeSysfsEvent(fs, p.pmu, a, {}));
      finish(aux, SampleSource::kPebsLoad, p, group);
      aux.attr.sample_period = kAuxLeaderPeriod;
      aux.sampling = false;
      aux.keep_samples = false;
      g.events.push_back(aux);
      g.grouped = true;
    }
    g.events.push_back(load);
  }

  if (opt.pebs_stores) {
    // Stores are events of their own (their own groups), as perf mem opens
    // them (cpu/mem-stores/P): inside the aux group, SPR's store event
    // (0x2cd, INTEL_PSD_CONSTRAINT(0x2cd, 0x1): counter 0 only) would
    // schedule the loads out whenever anything else holds counter 0.
    for (const PebsPmuPlan& p : pmus) {
      EventSpec store;
      const std::string events_dir =
          absl::StrCat(kPmuDir, "/", p.pmu, "/events/");
      // The kernel's alias first: libpfm4 4.13 encodes SPR's STORE_SAMPLE
      // as 0x3cd where the kernel uses 0x2cd.
      if (fs.Exists(events_dir + "mem-stores")) {
        HOTPAGE_ASSIGN_OR_RETURN(std::string a, alias(p, "mem-stores"));
        store.name = absl::StrCat(p.pmu, "/mem-stores/");
        HOTPAGE_ASSIGN_OR_RETURN(store.attr,
                                 EncodeSysfsEvent(fs, p.pmu, a, {}));
      } else if (libpfm_pmu && !probe.hybrid) {
        store.name = absl::StrCat(*libpfm_pmu, "::MEM_INST_RETIRED:ALL_STORES");
        HOTPAGE_ASSIGN_OR_RETURN(store.attr, EncodeLibpfm(store.name));
      } else {
        return absl::NotFoundError(
            absl::StrCat("store sampling requested but ",
                         fs.Display(events_dir + "mem-stores"),
                         " does not exist and libpfm4 does not know this CPU"));
      }
      finish(store, SampleSource::kPebsStore, p, next_group++);
      g.events.push_back(store);
    }
  }
  if (!opt.sample_period && period != kDefaultPebsPeriod) {
    why.push_back(absl::StrCat("period ", period,
                               ": kernel.perf_event_max_sample_rate is ",
                               MaxSampleRate(fs)));
  }
  g.why = absl::StrJoin(why, "; ");
  return g;
}

absl::StatusOr<EventGroup> IbsEvents(const KernelFs& fs,
                                     const SamplingOptions& opt) {
  const std::string dir = absl::StrCat(kPmuDir, "/ibs_op");
  if (!fs.Exists(dir + "/type")) {
    return absl::NotFoundError(
        absl::StrCat("no AMD IBS: ", fs.Display(dir),
                     " does not exist (not an AMD CPU, or a VM without IBS)"));
  }
  EventGroup g;
  g.encoder = "sysfs";
  EventSpec e;
  e.source = SampleSource::kIbsOp;
  e.attr = BaseAttr();
  HOTPAGE_ASSIGN_OR_RETURN(e.attr.type, PmuType(fs, "ibs_op"));
  std::vector<std::string> terms;
  auto set_bit = [&](const char* field) -> absl::Status {
    std::string path = absl::StrCat(dir, "/format/", field);
    HOTPAGE_ASSIGN_OR_RETURN(std::string spec, fs.ReadTrimmed(path));
    absl::StatusOr<FormatField> f = ParseFormatField(spec);
    if (!f.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(fs.Display(path), ": ", f.status().message()));
    terms.push_back(absl::StrCat(field, "=1"));
    return ApplyField(e.attr, *f, 1, field);
  };
  // Count dispatched ops rather than cycles: samples then follow the
  // instruction mix, which is what "accesses" means.
  const bool cnt_ctl = fs.Exists(dir + "/format/cnt_ctl");
  if (cnt_ctl) HOTPAGE_RETURN_IF_ERROR(set_bit("cnt_ctl"));
  std::vector<std::string> why;
  if (opt.ibs_l3_miss_only) {
    if (!fs.Exists(dir + "/format/l3missonly")) {
      return absl::NotFoundError(absl::StrCat(
          "--l3-miss-only needs Zen 4 or later: ",
          fs.Display(dir + "/format/l3missonly"), " does not exist"));
    }
    HOTPAGE_RETURN_IF_ERROR(set_bit("l3missonly"));
    why.push_back(
        "l3missonly: the hardware drops the ops that hit and restarts the "
        "count, so a sample's PERIOD understates the ops it stands for");
  }
  // IBS rejects exclude_* with EINVAL unless the kernel has swfilt.
  if (opt.user_only && fs.Exists(dir + "/format/swfilt")) {
    HOTPAGE_RETURN_IF_ERROR(set_bit("swfilt"));
    e.attr.exclude_kernel = 1;
  }
  uint64_t period =
      opt.sample_period
          ? opt.sample_period
          : DefaultPeriod(cnt_ctl ? kIbsWorstOpsPerSec : kIbsWorstCyclesPerSec,
                          MaxSampleRate(fs));
  period &= ~uint64_t{0xf};  // the hardware ignores the low 4 bits
  if (period < 0x90) period = 0x90;
  e.attr.sample_period = period;
  e.attr.sample_type |= PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;
  // Before 6.1, perf_ibs_handle_irq() fills no ADDR (nor DATA_SRC): the
  // address is only in the raw register dump, which it reads in full only
  // for PERF_SAMPLE_RAW (offset_max = perf_ibs->offset_max).
  if (std::optional<std::pair<int, int>> v = KernelVersion(fs);
      v && *v < std::make_pair(6, 1)) {
    e.attr.sample_type |= PERF_SAMPLE_RAW;
    why.push_back(absl::StrCat(
        "kernel ", v->first, ".", v->second,
        " < 6.1: IBS fills the data address only in PERF_SAMPLE_RAW; "
        "decoding IbsOpData3/IbsDcLinAd from it"));
  }
  e.pmu = "ibs_op";
  e.name = absl::StrCat("ibs_op/", absl::StrJoin(terms, ","), "/");
  g.events.push_back(e);
  g.why = absl::StrJoin(why, "; ");
  return g;
}

SamplerAvailability ProbeAvailability(const KernelFs& fs) {
  SamplerAvailability a;
  const PmuProbe pmu = ProbePmu(fs);
  a.pebs = pmu.pebs();
  a.ibs = pmu.ibs_op;
  a.core_pmu = pmu.core_pmu;
  a.hybrid = pmu.hybrid;
  if (absl::StatusOr<int64_t> p =
          fs.ReadInt("/proc/sys/kernel/perf_event_paranoid");
      p.ok()) {
    a.paranoid = *p;
  }
  if (absl::StatusOr<std::string> cpuinfo = fs.ReadFile("/proc/cpuinfo");
      cpuinfo.ok()) {
    a.hypervisor = absl::StrContains(*cpuinfo, " hypervisor");
  }
  const uint64_t caps = EffectiveCapabilities(fs);
  a.cap_perfmon =
      HasCapability(caps, kCapPerfmon) || HasCapability(caps, kCapSysAdmin);
  return a;
}

absl::StatusOr<EventGroup> ChooseEvents(const KernelFs& fs, SourceRequest req,
                                        const SamplingOptions& opt,
                                        std::string* why) {
  SamplerAvailability a = ProbeAvailability(fs);
  auto missing = [&]() {
    std::vector<std::string> r;
    if (req == SourceRequest::kPebs && a.ibs) {
      r.push_back(
          "no PEBS: this CPU has AMD IBS (the ibs_op PMU), not Intel PEBS");
    } else if (req == SourceRequest::kIbs && a.pebs) {
      r.push_back("no IBS: this CPU has Intel PEBS (mem-loads), not AMD IBS");
    } else if (!a.core_pmu) {
      r.push_back(a.hypervisor
                      ? "this is a VM without a virtual PMU (no cpu PMU in "
                        "/sys/bus/event_source/devices)"
                      : "no hardware PMU driver is loaded");
    } else if (a.hybrid) {
      r.push_back(
          "this hybrid Intel CPU's P-core PMU (cpu_core) has no PEBS "
          "mem-loads (PEBS off in this kernel or hypervisor)");
    } else {
      r.push_back("the CPU PMU has neither PEBS mem-loads nor AMD ibs_op");
    }
    if (a.paranoid && *a.paranoid > 0 && !a.cap_perfmon) {
      r.push_back(absl::StrCat(
          "perf_event_paranoid is ", *a.paranoid,
          " and the process lacks CAP_PERFMON (system-wide sampling needs "
          "one of: paranoid <= 0, CAP_PERFMON, root)"));
    }
    return absl::StrJoin(r, "; ");
  };
  switch (req) {
    case SourceRequest::kPageFault:
      *why = "page-fault source requested (sees first touches only)";
      return PageFaultEvents(opt);
    case SourceRequest::kPebs: {
      if (!a.pebs) {
        return absl::NotFoundError(
            absl::StrCat("--source pebs: ", missing(),
                         ". Alternatives: --source ibs on AMD, --source "
                         "pagefault anywhere"));
      }
      *why = "PEBS load latency requested";
      return PebsEvents(fs, opt, fs.is_live() ? LibpfmHostPmu() : std::nullopt);
    }
    case SourceRequest::kIbs:
      if (!a.ibs) {
        return absl::NotFoundError(
            absl::StrCat("--source ibs: ", missing(),
                         ". Alternatives: --source pebs on Intel, --source "
                         "pagefault anywhere"));
      }
      *why = "AMD IBS op requested";
      return IbsEvents(fs, opt);
    case SourceRequest::kAuto:
      if (a.pebs) {
        *why = "auto: Intel PEBS load latency is available";
        return PebsEvents(fs, opt,
                          fs.is_live() ? LibpfmHostPmu() : std::nullopt);
      }
      if (a.ibs) {
        *why = "auto: AMD IBS op is available";
        return IbsEvents(fs, opt);
      }
      *why = absl::StrCat(
          "auto: no hardware memory sampler (", missing(),
          "); using software page faults, which see first touches only");
      return PageFaultEvents(opt);
  }
  return absl::InternalError("unreachable");
}

}  // namespace hotpage
