#include "tools/daemon/daemon_loop.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/json_writer.h"
#include "tools/base/kernel/proc_stat.h"
#include "tools/base/parse.h"
#include "tools/base/prom_text.h"
#include "tools/daemon/fair_share.h"

namespace hotpage {

void AddNodeFree(uint64_t free, uint64_t low, uint64_t high, bool refused,
                 FastTierFree& f) {
  if (free > high) f.room_bytes += free - high;
  if (free < low || (refused && free < high)) f.short_bytes += high - free;
}
namespace {

// Time constant of the members' rate average for the shares, in ms: the
// engine's long window (ARMS' 10 s moving average).
constexpr double kShareRateTauMs = 10000;

MemberSnapshot& operator+=(MemberSnapshot& a, const MemberSnapshot& b) {
  a.fast_bytes += b.fast_bytes;
  a.fast_moved_bytes += b.fast_moved_bytes;
  a.hot_bytes += b.hot_bytes;
  a.samples += b.samples;
  a.rounds += b.rounds;
  a.promoted_pages += b.promoted_pages;
  a.demoted_pages += b.demoted_pages;
  a.failed_pages += b.failed_pages;
  a.promoted_entries += b.promoted_entries;
  a.yield_hits += b.yield_hits;
  a.demoted_entries += b.demoted_entries;
  a.regret_hits += b.regret_hits;
  a.first_touches_dropped += b.first_touches_dropped;
  a.cpu_seconds += b.cpu_seconds;
  return a;
}

// What a member holds on the fast tier now: its last round's reading plus
// what its migrator moved onto the fast tier since, less what it moved off
// (MemberSnapshot::fast_moved_bytes).
uint64_t FastNow(const MemberSnapshot& s) {
  const int64_t now = static_cast<int64_t>(s.fast_bytes) + s.fast_moved_bytes;
  return now > 0 ? static_cast<uint64_t>(now) : 0;
}

// The fields that need a new member when they change on reload.
bool SameIdentity(const WorkloadConfig& a, const WorkloadConfig& b) {
  return a.selector == b.selector && a.match == b.match && a.source == b.source;
}

}  // namespace

DaemonLoop::DaemonLoop(DaemonConfig config, DaemonParts parts)
    : config_(std::move(config)), parts_(std::move(parts)) {
  if (!parts_.uptime_s) parts_.uptime_s = [] { return 0.0; };
}

DaemonLoop::~DaemonLoop() { Stop(); }

size_t DaemonLoop::members() const { return running_.size(); }

const WorkloadConfig* DaemonLoop::FindWorkload(const std::string& name) const {
  for (const WorkloadConfig& w : config_.workloads) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

void DaemonLoop::StartMember(const WorkloadConfig& w,
                             const SelectedProcess& p) {
  absl::StatusOr<std::unique_ptr<DaemonMember>> m = parts_.factory(w, p);
  if (!m.ok()) {
    state_[w.name].failed.insert(p.key);
    *parts_.log << "hotpage daemon: " << w.name << ": pid " << p.key.pid << " ("
                << p.comm << "): not managed: " << m.status().message() << "\n";
    return;
  }
  auto r = std::make_unique<Running>();
  r->workload = w.name;
  r->process = p;
  r->member = std::move(*m);
  Running* raw = r.get();
  raw->thread = std::thread([raw] {
    raw->result = raw->member->Run(&raw->stop);
    // Release: the result written above is visible to whoever sees done.
    raw->done.store(true, std::memory_order_release);
  });
  *parts_.log << "hotpage daemon: " << w.name << ": managing pid " << p.key.pid
              << " (" << p.comm << ")" << (p.cgroup.empty() ? "" : " in ")
              << p.cgroup << "\n";
  running_.push_back(std::move(r));
}

void DaemonLoop::StopMember(Running* r) {
  r->stop.store(true, std::memory_order_relaxed);
  if (r->thread.joinable()) r->thread.join();
  const MemberSnapshot last = r->member->Snapshot();
  retired_cpu_seconds_ += last.cpu_seconds;
  state_[r->workload].retired += last;
  // The retired totals keep counters monotonic; a process's fast bytes and
  // hot set leave with it.
  state_[r->workload].retired.fast_bytes = 0;
  state_[r->workload].retired.fast_moved_bytes = 0;
  state_[r->workload].retired.hot_bytes = 0;
}

bool DaemonLoop::ProcessLives(const ProcessKey& k) const {
  absl::StatusOr<std::string> stat =
      parts_.fs->ReadFile(absl::StrCat("/proc/", k.pid, "/stat"));
  if (!stat.ok()) return false;
  const std::optional<ProcStat> st = ParseProcStat(*stat);
  return st.has_value() && st->start_time_ticks == k.start_time_ticks;
}

void DaemonLoop::ReapFinished() {
  for (auto it = running_.begin(); it != running_.end();) {
    Running* r = it->get();
    if (!r->done.load(std::memory_order_acquire)) {
      ++it;
      continue;
    }
    StopMember(r);
    *parts_.log << "hotpage daemon: " << r->workload << ": pid "
                << r->process.key.pid << " ended"
                << (r->result.ok() ? std::string()
                                   : absl::StrCat(": ", r->result.message()))
                << "\n";
    if (!r->result.ok()) last_error_ = std::string(r->result.message());
    it = running_.erase(it);
  }
}

void DaemonLoop::Tick() {
  if (Stopping()) return;
  ++ticks_;
  ReapFinished();
  absl::StatusOr<std::vector<std::vector<SelectedProcess>>> sel =
      SelectProcesses(*parts_.fs, config_, parts_.self);
  if (!sel.ok()) {
    last_error_ = std::string(sel.status().message());
    *parts_.log << "hotpage daemon: selecting processes: "
                << sel.status().message() << "\n";
  } else {
    for (size_t i = 0; i < config_.workloads.size(); ++i) {
      if (Stopping()) return;  // between workloads
      const WorkloadConfig& w = config_.workloads[i];
      WorkloadState& st = state_[w.name];
      const SelectionChange ch = Reconcile(st.selected, (*sel)[i]);
      st.selected = (*sel)[i];
      // A process that left: its member ends by itself when the process
      // exits; one that moved out of the cgroup is stopped here.
      for (const ProcessKey& k : ch.left) {
        st.failed.erase(k);
        for (auto it = running_.begin(); it != running_.end(); ++it) {
          if ((*it)->workload == w.name && (*it)->process.key == k) {
            // The selection can see a process's exit before its member
            // does (the member reads it at its next poll): said as
            // ReapFinished says it, not silently.
            StopMember(it->get());
            *parts_.log << "hotpage daemon: " << w.name << ": pid " << k.pid
                        << (ProcessLives(k) ? " left the workload" : " ended")
                        << "\n";
            running_.erase(it);
            break;
          }
        }
      }
      for (const SelectedProcess& p : st.selected) {
        if (Stopping()) return;  // between the members it starts
        if (st.failed.count(p.key)) continue;
        bool have = false;
        for (const auto& r : running_) {
          if (r->workload == w.name && r->process.key == p.key) have = true;
        }
        if (!have) StartMember(w, p);
      }
    }
    if (parts_.on_selection) {
      std::vector<ProcessKey> live;
      for (const std::vector<SelectedProcess>& ps : *sel) {
        for (const SelectedProcess& p : ps) live.push_back(p.key);
      }
      parts_.on_selection(live);
    }
  }
  if (Stopping()) return;
  ApplyShares();
  Publish();
}

void DaemonLoop::ApplyShares() {
  // Per workload: its members' snapshots summed.
  const size_t n = config_.workloads.size();
  std::vector<ShareInput> in(n);
  std::vector<std::vector<size_t>> members(n);  // indices into running_
  std::vector<MemberSnapshot> snaps(running_.size());
  for (size_t k = 0; k < running_.size(); ++k) {
    snaps[k] = running_[k]->member->Snapshot();
  }
  // Each member's recent sampled access rate: the samples of the last tick
  // (ticks are equal for every member, so a per-tick count ranks them as a
  // rate would), averaged with the time constant of the engine's long
  // window (ARMS' 10 s moving average) so one quiet tick does not flip the
  // shares. A rate, not the total since the member started: a workload that
  // cooled down, or one that started earlier, must not keep its share on
  // old samples.
  const double alpha =
      1 - std::exp(-std::max(config_.interval_ms, 1) / kShareRateTauMs);
  for (size_t k = 0; k < running_.size(); ++k) {
    Running& r = *running_[k];
    // Snapshot samples count from the member's start, so the first
    // difference is from 0.
    const uint64_t now = snaps[k].samples;
    const double d =
        static_cast<double>(now >= r.last_samples ? now - r.last_samples : 0);
    r.samples_per_tick =
        r.samples_per_tick < 0
            ? d
            : r.samples_per_tick + alpha * (d - r.samples_per_tick);
    r.last_samples = now;
  }
  const uint64_t capacity = parts_.fast_capacity_bytes;
  // Each member's demand: what it holds on the fast tier plus the part of
  // its hot set still on a slower tier (at least its hot set). A member's
  // fast pages outside its hot set may be pages its own engine cannot
  // move: the ones it never sampled, or no longer tracks (first touch, a
  // start-up phase), are in no list of its engine's, so no target below
  // them makes it demote them; a target under what it holds would have it
  // demote its tracked pages, its hot set, instead. So what it holds
  // counts as wanted, priced by its benefit (its rate over this demand):
  // a workload gives up fast memory when a hotter one's demand takes it,
  // never for a demand that is already on the fast tier. The daemon's
  // hot sets alone got it wrong in daemon_fair_vm_test: h held 82 MiB,
  // 16 MiB of it cold pages it no longer tracked, and 13 MiB of its 80 MiB
  // hot set stayed on the slow node, while c kept 26 MiB with no share
  // set (80 MiB of hot set "fitted" in h's 82); and with the hot set as
  // the demand once h's was up, c's bursts could cut h back to its 80 MiB.
  // Both at the member's last reading (not FastNow): a hot page promoted
  // since is still in its hot_slow_bytes, and counted once so.
  std::vector<uint64_t> demand(running_.size());
  for (size_t k = 0; k < running_.size(); ++k) {
    const MemberSnapshot& s = snaps[k];
    demand[k] = std::max(s.hot_bytes, s.fast_bytes + s.hot_slow_bytes);
  }
  uint64_t held = 0, unmet = 0;
  bool any_cap = false;
  for (size_t i = 0; i < n; ++i) {
    const WorkloadConfig& w = config_.workloads[i];
    in[i].floor_bytes = w.fast_floor.Resolve(capacity, false);
    in[i].cap_bytes =
        w.fast_cap.set ? w.fast_cap.Resolve(capacity, true) : UINT64_MAX;
    any_cap |= w.fast_cap.set;
    double rate = 0;
    for (size_t k = 0; k < running_.size(); ++k) {
      if (running_[k]->workload != w.name) continue;
      members[i].push_back(k);
      // Now, not at the member's last reading: the free room below is read
      // now, after the moves done since that reading (FastNow; with the
      // readings alone each of those moves is missing from both, and the
      // tier is shared out as that much smaller).
      in[i].fast_bytes += FastNow(snaps[k]);
      in[i].demand_bytes += demand[k];
      rate += running_[k]->samples_per_tick;
    }
    // Value of the next fast byte: sampled accesses per tick per hot byte
    // (comparable between workloads while their sampling periods are
    // equal).
    in[i].benefit_per_byte = rate / static_cast<double>(std::max<uint64_t>(
                                        in[i].demand_bytes, 4096));
    held += in[i].fast_bytes;
    if (in[i].demand_bytes > in[i].fast_bytes) {
      unmet += in[i].demand_bytes - in[i].fast_bytes;
    }
  }
  // What can be shared: the workloads' own fast memory plus the free room.
  uint64_t shareable = capacity;
  uint64_t deficit = 0;
  if (parts_.fast_free) {
    const FastTierFree f = parts_.fast_free();
    shareable = std::min(capacity, held + f.room_bytes);
    // A fast node below its low watermark: what restores its high
    // watermark is shared out too (FastTierFree::short_bytes), from the
    // workloads by benefit, so the colder gives it up, and the tier counts
    // as short.
    deficit = f.short_bytes;
  }
  const uint64_t room = shareable > held ? shareable - held : 0;
  deficit = std::min(deficit, shareable);
  shareable -= deficit;
  // Shares bite only when what the workloads under their demand still
  // want does not fit in the free room (or a cap is set): with room for
  // it, no process is held back, and cold pages stay where they are
  // instead of being moved out for nobody. Not the sum of the demands
  // against what is held: one workload's cold fast pages are no room for
  // another's hot set until someone demotes them, and without a share
  // nobody does (the engines demote for room only below the low
  // watermark, and then only until the high one: no room above it).
  const bool short_of_fast = unmet > room || deficit > 0;
  std::vector<uint64_t> targets;
  if (short_of_fast) targets = FairShares(shareable, in);

  double share_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!members[i].empty()) share_sum += config_.workloads[i].rate_share;
  }
  const double budget = static_cast<double>(config_.rate_limit_mbps) * 1e6;
  for (size_t i = 0; i < n; ++i) {
    if (members[i].empty()) continue;
    const double rate = budget * config_.workloads[i].rate_share /
                        std::max(share_sum, 1e-9) / members[i].size();
    uint64_t target = kNoFastTarget;
    if (short_of_fast) {
      target = targets[i];
    } else if (any_cap && in[i].cap_bytes != UINT64_MAX) {
      target = in[i].cap_bytes;
    }
    // Split over the workload's processes by demand (equal when none has
    // one yet); in[i].demand_bytes is their sum.
    const uint64_t hot = in[i].demand_bytes;
    for (size_t k : members[i]) {
      Running* r = running_[k].get();
      uint64_t mine = target;
      if (target != kNoFastTarget) {
        mine = hot > 0 ? static_cast<uint64_t>(
                             static_cast<long double>(target) * demand[k] / hot)
                       : target / members[i].size();
      }
      r->target = mine;
      r->member->SetFastTarget(mine);
      r->member->SetRateLimit(rate);
    }
  }
}

void DaemonLoop::Reload(DaemonConfig config) {
  // Workloads gone, or whose selector or source changed: stop their
  // members. Kept ones get their new rules before their next round.
  for (auto it = running_.begin(); it != running_.end();) {
    Running* r = it->get();
    const WorkloadConfig* old_w = FindWorkload(r->workload);
    const WorkloadConfig* new_w = nullptr;
    for (const WorkloadConfig& w : config.workloads) {
      if (w.name == r->workload) new_w = &w;
    }
    bool restart =
        new_w == nullptr || old_w == nullptr || !SameIdentity(*old_w, *new_w);
    if (!restart) {
      absl::Status s = r->member->Reconfigure(*new_w);
      if (!s.ok()) {
        *parts_.log << "hotpage daemon: " << r->workload << ": pid "
                    << r->process.key.pid << ": restarting: " << s.message()
                    << "\n";
        restart = true;
      }
    }
    if (restart) {
      StopMember(r);
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  std::map<std::string, WorkloadState> kept;
  for (const WorkloadConfig& w : config.workloads) {
    auto it = state_.find(w.name);
    if (it != state_.end()) {
      kept[w.name] = std::move(it->second);
      kept[w.name].failed.clear();  // a new config may fix what failed
    }
  }
  state_ = std::move(kept);
  // A restarted workload's processes are selected anew at the next tick:
  // forget the selection of workloads whose members were stopped.
  for (auto& [name, st] : state_) {
    bool any = false;
    for (const auto& r : running_) any |= r->workload == name;
    if (!any) st.selected.clear();
  }
  config_ = std::move(config);
  *parts_.log << "hotpage daemon: reloaded " << config_.path << ": "
              << config_.workloads.size() << " workload(s)\n";
}

void DaemonLoop::Stop() {
  for (auto& r : running_) r->stop.store(true, std::memory_order_relaxed);
  for (auto& r : running_) {
    if (r->thread.joinable()) r->thread.join();
  }
  running_.clear();
}

void DaemonLoop::Publish() {
  const uint64_t capacity = parts_.fast_capacity_bytes;
  JsonWriter j(2);
  j.BeginObject();
  j.Key("config");
  j.String(config_.path);
  j.Key("uptime_s");
  j.Double(parts_.uptime_s());
  j.Key("ticks");
  j.Uint(ticks_);
  j.Key("fast_capacity_bytes");
  j.Uint(capacity);
  j.Key("last_error");
  j.String(last_error_);
  j.Key("workloads");
  j.BeginArray();
  // The metric families, in the order the text lists them (the enum
  // indexes them); each family's series collect while the workloads are
  // walked.
  enum {
    kWFast,
    kWTarget,
    kWFloor,
    kWCap,
    kWProcs,
    kWPromoted,
    kWDemoted,
    kWFailed,
    kWSamples,
    kPFast,
    kPHot,
    kPPromoted,
    kPDemoted,
    kFamilies
  };
  PromText prom({
      {"hotpage_workload_fast_bytes", "gauge",
       "Bytes of the workload's processes on the fast tier."},
      {"hotpage_workload_target_bytes", "gauge",
       "The workload's fair share of the fast tier while it is short."},
      {"hotpage_workload_floor_bytes", "gauge",
       "Configured fast-tier floor (0: none)."},
      {"hotpage_workload_cap_bytes", "gauge",
       "Configured fast-tier cap (the tier's size: none)."},
      {"hotpage_workload_processes", "gauge",
       "Processes of the workload being managed."},
      {"hotpage_workload_promoted_pages_total", "counter",
       "4 KiB pages moved to a faster tier."},
      {"hotpage_workload_demoted_pages_total", "counter",
       "4 KiB pages moved to a slower tier."},
      {"hotpage_workload_failed_pages_total", "counter",
       "Pages move_pages failed to move."},
      {"hotpage_workload_samples_total", "counter",
       "Access samples taken for the workload."},
      {"hotpage_process_fast_bytes", "gauge",
       "Bytes of the process on the fast tier."},
      {"hotpage_process_hot_bytes", "gauge", "The process's hot set."},
      {"hotpage_process_promoted_pages_total", "counter",
       "4 KiB pages of the process moved to a faster tier."},
      {"hotpage_process_demoted_pages_total", "counter",
       "4 KiB pages of the process moved to a slower tier."},
  });
  auto series = [&prom](int f, absl::string_view labels, uint64_t value) {
    prom.Add(f, labels, value);
  };
  // Later families (after the ones above, whose order is pinned).
  const size_t kWCpu = prom.Declare(
      {"hotpage_workload_cpu_seconds_total", "counter",
       "CPU time of the workload's members: their loop threads and their "
       "migrators' rounds (ended members included)."});
  const size_t kWFirstTouches = prom.Declare(
      {"hotpage_workload_first_touches_dropped_total", "counter",
       "Hint-fault samples dropped as possible first touches while a "
       "process of the workload grew (ended members included)."});
  double live_cpu = 0;
  for (const WorkloadConfig& w : config_.workloads) {
    const WorkloadState& st = state_[w.name];
    MemberSnapshot total = st.retired;
    uint64_t target = 0;
    bool targeted = false;
    j.BeginObject();
    j.Key("name");
    j.String(w.name);
    j.Key("selector");
    j.String(SelectorKindName(w.selector));
    j.Key("match");
    j.String(w.match);
    j.Key("processes");
    j.BeginArray();
    size_t procs = 0;
    for (const auto& r : running_) {
      if (r->workload != w.name) continue;
      ++procs;
      const MemberSnapshot s = r->member->Snapshot();
      total += s;
      if (r->target != kNoFastTarget) {
        target += r->target;
        targeted = true;
      }
      j.BeginObject();
      j.Key("pid");
      j.Int(r->process.key.pid);
      j.Key("comm");
      j.String(r->process.comm);
      j.Key("cgroup");
      j.String(r->process.cgroup);
      j.Key("source");
      j.String(s.source);
      j.Key("rounds_file");
      if (s.rounds_file.empty()) {
        j.Null();
      } else {
        j.String(s.rounds_file);
      }
      j.Key("fast_bytes");
      j.Uint(FastNow(s));
      j.Key("target_bytes");
      if (r->target == kNoFastTarget) {
        j.Null();
      } else {
        j.Uint(r->target);
      }
      j.Key("hot_bytes");
      j.Uint(s.hot_bytes);
      j.Key("samples");
      j.Uint(s.samples);
      j.Key("promoted_pages");
      j.Uint(s.promoted_pages);
      j.Key("demoted_pages");
      j.Uint(s.demoted_pages);
      j.Key("failed_pages");
      j.Uint(s.failed_pages);
      j.Key("first_touches_dropped");
      j.Uint(s.first_touches_dropped);
      j.Key("cpu_seconds");
      j.Double(s.cpu_seconds);
      j.EndObject();
      live_cpu += s.cpu_seconds;
      const std::string pl =
          PromLabels({{"workload", w.name},
                      {"pid", absl::StrCat(r->process.key.pid)},
                      {"cgroup", r->process.cgroup}});
      series(kPFast, pl, FastNow(s));
      series(kPHot, pl, s.hot_bytes);
      series(kPPromoted, pl, s.promoted_pages);
      series(kPDemoted, pl, s.demoted_pages);
    }
    j.EndArray();
    const uint64_t floor = w.fast_floor.Resolve(capacity, false);
    const uint64_t cap = w.fast_cap.Resolve(capacity, true);
    const uint64_t total_fast = FastNow(total);
    j.Key("fast_bytes");
    j.Uint(total_fast);
    j.Key("fast_share");
    j.Double(capacity ? static_cast<double>(total_fast) / capacity : 0);
    j.Key("floor_bytes");
    j.Uint(floor);
    j.Key("cap_bytes");
    j.Uint(cap);
    j.Key("floor_used");
    j.Double(floor ? std::min(1.0, static_cast<double>(total_fast) /
                                       static_cast<double>(floor))
                   : 1.0);
    j.Key("cap_used");
    j.Double(cap ? static_cast<double>(total_fast) / cap : 0);
    j.Key("target_bytes");
    if (targeted) {
      j.Uint(target);
    } else {
      j.Null();
    }
    j.Key("hot_bytes");
    j.Uint(total.hot_bytes);
    j.Key("samples");
    j.Uint(total.samples);
    j.Key("promoted_pages");
    j.Uint(total.promoted_pages);
    j.Key("demoted_pages");
    j.Uint(total.demoted_pages);
    j.Key("failed_pages");
    j.Uint(total.failed_pages);
    j.Key("first_touches_dropped");
    j.Uint(total.first_touches_dropped);
    j.Key("yield");
    j.Double(total.promoted_entries
                 ? static_cast<double>(total.yield_hits) /
                       static_cast<double>(total.promoted_entries)
                 : 0);
    j.Key("regret");
    j.Double(total.demoted_entries
                 ? static_cast<double>(total.regret_hits) /
                       static_cast<double>(total.demoted_entries)
                 : 0);
    j.Key("cpu_seconds");
    j.Double(total.cpu_seconds);
    j.Key("not_managed");
    j.Uint(st.failed.size());
    j.EndObject();
    const std::string l = PromLabels({{"workload", w.name}});
    series(kWFast, l, total_fast);
    if (targeted) series(kWTarget, l, target);
    series(kWFloor, l, floor);
    series(kWCap, l, cap);
    series(kWProcs, l, procs);
    series(kWPromoted, l, total.promoted_pages);
    series(kWDemoted, l, total.demoted_pages);
    series(kWFailed, l, total.failed_pages);
    series(kWSamples, l, total.samples);
    prom.Add(kWCpu, l, total.cpu_seconds);
    prom.Add(kWFirstTouches, l, total.first_touches_dropped);
  }
  j.EndArray();
  PublishMachine(live_cpu, &j, &prom);
  j.EndObject();

  std::string text = prom.Text();
  MutexLock l(&mu_);
  published_.status = j.str();
  published_.metrics = std::move(text);
}

void DaemonLoop::PublishMachine(double live_member_cpu, JsonWriter* j,
                                PromText* prom) const {
  MachineReport m = parts_.machine ? parts_.machine() : MachineReport();
  double machine_cpu = 0;
  for (const MachineThreadReport& t : m.threads) machine_cpu += t.cpu_seconds;
  if (parts_.process_cpu_s) {
    const double listed = retired_cpu_seconds_ + live_member_cpu + machine_cpu;
    const double other = std::max(0.0, parts_.process_cpu_s() - listed);
    m.threads.push_back({"other", other});
    machine_cpu += other;
  }
  const double total_cpu = retired_cpu_seconds_ + live_member_cpu + machine_cpu;
  // The machine's own: no workload label, the daemon's instead (two
  // daemons on one host never write the same series).
  const std::string d = PromLabels({{"daemon", parts_.instance}});
  const size_t kDCpu =
      prom->Declare({"hotpage_daemon_cpu_seconds_total", "counter",
                     "CPU time of the whole daemon: every member's (ended ones "
                     "included) plus the machine threads'."});
  const size_t kMThreadCpu = prom->Declare(
      {"hotpage_machine_thread_cpu_seconds_total", "counter",
       "CPU time of a machine-level thread that no member's cpu_seconds "
       "holds (the migrator pool's outside members' rounds, a machine "
       "sampler's routing thread)."});
  enum {
    kRouted,
    kUnmapped,
    kInboxFull,
    kReopens,
    kThrottle,
    kUnthrottle,
    kLost,
    kLostSamples,
    kEvents,
    kMapped,
    kSamplerFamilies
  };
  static constexpr PromText::Family kSampler[kSamplerFamilies] = {
      {"hotpage_machine_sampler_routed_samples_total", "counter",
       "Samples the machine sampler handed to a member."},
      {"hotpage_machine_sampler_unmapped_samples_total", "counter",
       "Samples of a pid no live member owns (dropped)."},
      {"hotpage_machine_sampler_inbox_full_samples_total", "counter",
       "Samples dropped because a member's inbox was full."},
      {"hotpage_machine_sampler_reopens_total", "counter",
       "Per-task fallback: times the event plan was reopened."},
      {"hotpage_machine_sampler_throttle_total", "counter",
       "PERF_RECORD_THROTTLE records of the machine's rings."},
      {"hotpage_machine_sampler_unthrottle_total", "counter",
       "PERF_RECORD_UNTHROTTLE records of the machine's rings."},
      {"hotpage_machine_sampler_lost_records_total", "counter",
       "Records lost to a full ring (PERF_RECORD_LOST)."},
      {"hotpage_machine_sampler_lost_samples_total", "counter",
       "Samples the kernel dropped (PERF_RECORD_LOST_SAMPLES)."},
      {"hotpage_machine_sampler_events", "gauge",
       "Perf events the machine sampler has open."},
      {"hotpage_machine_sampler_mapped_processes", "gauge",
       "Processes the machine sampler routes samples of."},
  };
  size_t f[kSamplerFamilies];
  for (int i = 0; i < kSamplerFamilies; ++i) f[i] = prom->Declare(kSampler[i]);

  j->Key("cpu_seconds");
  j->Double(total_cpu);
  j->Key("machine");
  j->BeginObject();
  j->Key("cpu_seconds");
  j->Double(machine_cpu);
  j->Key("threads");
  j->BeginArray();
  for (const MachineThreadReport& t : m.threads) {
    j->BeginObject();
    j->Key("thread");
    j->String(t.thread);
    j->Key("cpu_seconds");
    j->Double(t.cpu_seconds);
    j->EndObject();
    prom->Add(kMThreadCpu, PromAddLabels(d, {{"thread", t.thread}}),
              t.cpu_seconds);
  }
  j->EndArray();
  j->Key("samplers");
  j->BeginArray();
  for (const MachineSamplerReport& r : m.samplers) {
    const uint64_t v[kSamplerFamilies] = {
        r.routed,     r.unmapped, r.inbox_full,   r.reopens, r.throttle,
        r.unthrottle, r.lost,     r.lost_samples, r.events,  r.mapped};
    static constexpr const char* kKeys[kSamplerFamilies] = {
        "routed",     "unmapped", "inbox_full",   "reopens", "throttle",
        "unthrottle", "lost",     "lost_samples", "events",  "mapped"};
    j->BeginObject();
    j->Key("source");
    j->String(r.source);
    const std::string l = PromAddLabels(d, {{"source", r.source}});
    for (int i = 0; i < kSamplerFamilies; ++i) {
      j->Key(kKeys[i]);
      j->Uint(v[i]);
      prom->Add(f[i], l, v[i]);
    }
    j->EndObject();
  }
  j->EndArray();
  if (m.self_memory) {
    const size_t kSelf = prom->Declare(
        {"hotpage_daemon_self_memory_info", "gauge",
         "Always 1; the labels say where the daemon's own memory goes "
         "(--self-memory / self_memory): requested slow, local or a node; "
         "mode preferred-many, preferred, default (first touch) or inherited; "
         "nodes as a kernel list."});
    prom->Add(
        kSelf,
        PromAddLabels(d, {{"requested", m.self_memory->requested},
                          {"mode", m.self_memory->mode},
                          {"nodes", FormatKernelList(m.self_memory->nodes)}}),
        uint64_t{1});
    j->Key("self_memory");
    j->BeginObject();
    j->Key("requested");
    j->String(m.self_memory->requested);
    j->Key("mode");
    j->String(m.self_memory->mode);
    j->Key("nodes");
    j->IntArray(m.self_memory->nodes);
    j->EndObject();
  }
  j->EndObject();
  prom->Add(kDCpu, d, total_cpu);
}

std::string DaemonLoop::StatusJson() const {
  MutexLock l(&mu_);
  return published_.status;
}

std::string DaemonLoop::MetricsProm() const {
  MutexLock l(&mu_);
  return published_.metrics;
}

}  // namespace hotpage
