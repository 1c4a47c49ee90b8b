#include "tools/daemon/live_member.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "migrator/migrator.h"
#include "migrator/page_mover.h"
#include "migrator/process_handle.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "sampler/damon/damon_source.h"
#include "sampler/perf/event_config.h"
#include "sampler/perf/sampler.h"
#include "sampler/write_fault_rearm.h"
#include "tools/attach/attach_engine.h"
#include "tools/attach/attach_loop.h"
#include "tools/attach/attach_stats.h"
#include "tools/attach/live_sources.h"
#include "tools/base/atomic_file.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/proc_stat.h"
#include "tools/base/mutex.h"
#include "tools/daemon/kernel_tiering.h"
#include "tools/daemon/machine_check.h"
#include "tools/daemon/share_view.h"
#include "tools/kernel_floor.h"
#include "tools/live_memory_view.h"

namespace hotpage {
namespace {

// Keeps the last stats the loop published (AttachStatsSink), and the
// working set: the most pages any of the last kDemandRounds rounds saw
// sampled. One round's window can miss a hot page that is sampled only
// now and then (a write-fault re-arm every second or more, a sparse PEBS
// period), so the demand the daemon shares out by is the recent maximum.
class SnapshotSink : public AttachStatsSink {
 public:
  static constexpr int kDemandRounds = 8;
  void Publish(const AttachStats& stats, bool final) override {
    MutexLock l(&mu_);
    stats_ = stats;
    stats_.hintfault = nullptr;
    stats_.write_faults = nullptr;
    if (!final) {
      active_[next_++ % kDemandRounds] = stats.active_pages;
    }
  }
  AttachStats Get() const {
    MutexLock l(&mu_);
    return stats_;
  }
  uint64_t DemandPages() const {
    MutexLock l(&mu_);
    uint64_t m = 0;
    for (uint64_t a : active_) m = std::max(m, a);
    return m;
  }

 private:
  mutable Mutex mu_;
  AttachStats stats_ ABSL_GUARDED_BY(mu_);
  uint64_t active_[kDemandRounds] ABSL_GUARDED_BY(mu_) = {};
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

class LiveMember : public DaemonMember {
 public:
  LiveMember(const LiveMemberEnv& env, std::string name, pid_t pid)
      : env_(env), name_(std::move(name)), pid_(pid) {}
  ~LiveMember() override {
    // Before the migrator goes (Remove waits for a round in progress).
    if (pooled_) env_.migrators->Remove(migrator_.get());
  }

  absl::Status Init(const WorkloadConfig& w, const SelectedProcess& p) {
    const KernelFs& fs = *env_.fs;
    // Pinned to the process the selection saw: a different start time
    // means the pid was reused in between.
    absl::StatusOr<ProcessHandle> handle = ProcessHandle::Attach(pid_, &fs);
    if (!handle.ok()) return handle.status();
    if (handle->start_time_ticks() != p.key.start_time_ticks) {
      return absl::FailedPreconditionError(
          "the pid was reused since it was selected");
    }
    handle_.emplace(std::move(*handle));
    absl::StatusOr<ProcessHandle> mh = ProcessHandle::Attach(pid_, &fs);
    if (!mh.ok()) return mh.status();
    if (mh->start_time_ticks() != p.key.start_time_ticks) {
      return absl::FailedPreconditionError(
          "the pid was reused since it was selected");
    }

    absl::StatusOr<PlacementConfig> rules =
        WorkloadRules(w, *env_.topology, env_.kernel_floors);
    if (!rules.ok()) return rules.status();
    // Sized by the process's footprint, not the whole fast tier (a small
    // process's member stays small), and grown with it (MaybeGrow).
    footprint_pages_ = FootprintPages();
    // The source first: "auto" resolves to the source it opened
    // (source_name_), and the engine's options depend on that name. Its
    // samples wait in its ring or inbox until the loop runs.
    if (absl::Status s = StartSource(w, p.key); !s.ok()) return s;
    EngineOptions eopt;
    eopt.interval_ns = static_cast<uint64_t>(env_.interval_ms) * 1000000;
    eopt.address_space = static_cast<uint32_t>(pid_);
    eopt.footprint_pages = footprint_pages_;
    eopt.table_by_footprint = true;
    // As attach sets them for the source it runs (pages never sampled are
    // swept for victims with a source that sees every access, also when
    // "auto" chose it; hint faults are slow-tier samples, placed as they
    // arrive, and leave the fast tier's victims to the kernel's reclaim
    // where it demotes, which take-over turns off).
    ApplySourceEngineOptions(source_name_, KernelDemotes(fs), &eopt);
    absl::StatusOr<std::unique_ptr<PolicyEngine>> engine =
        PolicyEngine::Create(*env_.topology, *rules, eopt);
    if (!engine.ok()) return engine.status();
    engine_ = std::move(*engine);

    MigratorOptions mopt;
    migrator_ = std::make_unique<Migrator>(mopt, std::move(*mh), &mover_,
                                           RealClock::Get());
    if (env_.migrators != nullptr && !env_.dry_run) {
      env_.migrators->Add(migrator_.get(), 1);
      pooled_ = true;
    }
    // numa_maps every round (RangesRefresh max_age 0), as before the view
    // could reuse a reading: FairShareView's accounting of what a member
    // holds was measured on a fresh reading per round, and with the reuse
    // the fairness guest's hotter member took 8-130 s instead of 5-11 s to
    // get 90% of its hot set (daemon_fair_vm_test, three runs each).
    RangesRefresh every_round;
    every_round.max_age = absl::ZeroDuration();
    live_view_ = std::make_unique<LiveMemoryView>(
        pid_, &mover_, &fs, env_.topology,
        env_.dry_run ? nullptr : migrator_.get(), every_round);
    view_ = std::make_unique<FairShareView>(live_view_.get(), env_.topology,
                                            &engine_->config());
    view_->SetFastMoved(
        [m = migrator_.get(), fast = env_.topology->FastNodes()] {
          const Migrator::MovedBytes b = m->MovedBytesOf(fast);
          return static_cast<int64_t>(b.in) - static_cast<int64_t>(b.out);
        });
    engine_->RefreshHugeChunks(*view_);
    OpenRoundsFile(w, p.key);
    return absl::OkStatus();
  }

  absl::Status Run(const std::atomic<bool>* stop) override {
    // A stop ends the round in progress at its next placement query.
    view_->SetStopFlag(stop);
    AttachLoopOptions lopt;
    lopt.dry_run = env_.dry_run;
    lopt.source_name = source_name_;
    lopt.log_prefix =
        absl::StrCat("hotpage daemon: ", name_, ": pid ", pid_, ": ");
    lopt.round_lines = env_.round_lines;
    AttachLoopParts parts;
    parts.source = source_.get();
    parts.engine = engine_.get();
    parts.view = view_.get();
    parts.migrator = migrator_.get();
    parts.migrator_external = pooled_;
    parts.clock = RealClock::Get();
    parts.stats = &sink_;
    parts.target_alive = [this] { return handle_->Alive(); };
    parts.stop = stop;
    parts.damon_recovered = damon_ ? damon_->recovered() : std::string();
    parts.rearm = rearm_.get();
    parts.rounds = rounds_ != nullptr ? rounds_->get() : nullptr;
    // Hint faults: the first-touch filter's budget (attach_loop.h).
    if (source_name_ == "hintfault") {
      parts.resident_pages = [this] { return FootprintPages(); };
      parts.resident_before_source = footprint_pages_;  // read before it
    }
    parts.log = env_.log;
    parts.before_round = [this] {
      ApplyPending();
      MaybeGrow();
    };
    absl::Status s = AttachLoop(lopt, std::move(parts)).Run();
    if (pooled_) {
      // Pending moves are abandoned (counted) at once: no drain wait, so
      // the daemon stops within a second.
      env_.migrators->Remove(migrator_.get());
      pooled_ = false;
      migrator_->Stop();
    }
    return s;
  }

  void SetFastTarget(uint64_t bytes) override {
    view_->SetTarget(bytes == kNoFastTarget ? FairShareView::kNoTarget : bytes);
  }
  void SetRateLimit(double bytes_per_sec) override {
    // Pooled: the daemon's split of the budget is the member's weight in
    // the pool, whose global limit is the budget (unused shares go to the
    // members that have work).
    if (pooled_) {
      env_.migrators->SetWeight(migrator_.get(), bytes_per_sec);
    } else {
      migrator_->SetRateLimit(bytes_per_sec);
    }
  }

  absl::Status Reconfigure(const WorkloadConfig& w) override {
    absl::StatusOr<PlacementConfig> rules =
        WorkloadRules(w, *env_.topology, env_.kernel_floors);
    if (!rules.ok()) return rules.status();
    const PlacementConfig& now = engine_->config();
    if (rules->locality != now.locality ||
        rules->max_move_bytes != now.max_move_bytes) {
      return absl::FailedPreconditionError(
          "locality changed: the engine is recreated");
    }
    MutexLock l(&mu_);
    pending_ = *rules;
    return absl::OkStatus();
  }

  MemberSnapshot Snapshot() const override {
    const AttachStats s = sink_.Get();
    MemberSnapshot m;
    const FairShareView::FastNow fast_now = view_->Fast();
    m.fast_bytes = fast_now.read_bytes;
    m.fast_moved_bytes = fast_now.moved_since;
    m.hot_bytes = sink_.DemandPages() * 4096;
    const std::vector<int> fast = env_.topology->FastNodes();
    for (const auto& [node, pages] : s.hot_pages_by_node) {
      if (std::find(fast.begin(), fast.end(), node) == fast.end()) {
        m.hot_slow_bytes += pages * 4096;
      }
    }
    m.samples = s.samples;
    m.rounds = s.rounds;
    m.promoted_pages = s.migrator.promoted_pages;
    m.demoted_pages = s.migrator.demoted_pages;
    m.failed_pages = FailedTotal(s.migrator);
    m.promoted_entries = s.promoted_entries;
    m.yield_hits = s.yield_hits;
    m.demoted_entries = s.demoted_entries;
    m.regret_hits = s.regret_hits;
    m.first_touches_dropped = s.first_touches_dropped;
    // Every thread the member runs: the loop's and the migrator's.
    m.cpu_seconds = s.cpu_seconds + absl::ToDoubleSeconds(s.migrator.cpu_time);
    m.source = source_name_;
    if (rounds_ != nullptr) m.rounds_file = rounds_->path();
    return m;
  }

 private:
  // `rounds`: the member's file in the rounds directory. A file that
  // cannot be made is said once in the log; the member runs without it
  // (placement does not wait on a record of it).
  void OpenRoundsFile(const WorkloadConfig& w, const ProcessKey& key) {
    if (!w.rounds || env_.rounds_dir == nullptr) return;
    const std::string file =
        absl::StrCat(name_, "-", pid_, "-", key.start_time_ticks, ".jsonl");
    absl::StatusOr<std::unique_ptr<RoundsDir::File>> f =
        env_.rounds_dir->Create(file);
    const std::string prefix =
        absl::StrCat("hotpage daemon: ", name_, ": pid ", pid_, ": ");
    if (!f.ok()) {
      *env_.log << prefix << "warning: rounds: " << f.status().message()
                << "; its rounds are not recorded\n";
      return;
    }
    *env_.log << prefix << "rounds to " << (*f)->path() << "\n";
    rounds_ = std::move(*f);
  }

  absl::Status StartSource(const WorkloadConfig& w, const ProcessKey& key) {
    if (w.source == "hintfault") {
      // The sysctls are the daemon's (kernel_tiering.h: take-over with a
      // hintfault workload sets them at its start); a member only checks.
      const KernelMovers k = ReadNumaBalancingSysctls(*env_.fs);
      if (!SysctlsSenseHintFaults(k)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "source hintfault: kernel.numa_balancing is ", k.numa_balancing,
            " and its promotion rate limit ", k.promote_rate_limit_mbps,
            " MB/s, where hint faults without the kernel's own promotions "
            "need 2 and 0; the daemon sets them when it starts with a "
            "hintfault workload under kernel_tiering = \"take-over\" (one "
            "added by a reload needs a restart)"));
      }
    }
    if (w.source == "damon" && env_.damon != nullptr) {
      absl::StatusOr<std::unique_ptr<AttachSource>> d = env_.damon->Attach(key);
      if (!d.ok()) return d.status();
      source_ = std::move(*d);
      source_name_ = "damon";
      return absl::OkStatus();
    }
    if (w.source == "damon") {
      DamonOptions dopt;
      std::ostream* log = env_.log;
      const std::string prefix =
          absl::StrCat("hotpage daemon: ", name_, ": pid ", pid_, ": ");
      dopt.warn = [log, prefix](const std::string& line) {
        *log << prefix << line << "\n";
      };
      absl::StatusOr<std::unique_ptr<DamonSource>> d =
          DamonSource::Start(pid_, dopt);
      if (!d.ok()) return d.status();
      damon_ = std::move(*d);
      source_ = std::make_unique<DamonAttachSource>(damon_.get());
      source_name_ = "damon";
      return absl::OkStatus();
    }
    if (env_.samplers != nullptr) {
      absl::StatusOr<std::unique_ptr<RoutedAttachSource>> routed =
          env_.samplers->Attach(w.source, w.write_faults, key, &source_name_,
                                footprint_pages_);
      if (!routed.ok()) return routed.status();
      routed_ = routed->get();
      source_ = std::move(*routed);
      return StartRearm(w);
    }
    const bool hint = w.source == "hintfault";
    absl::StatusOr<SourceRequest> req =
        ParseSourceRequest(hint ? "pagefault" : w.source);
    if (!req.ok()) return req.status();
    std::string why;
    absl::StatusOr<EventGroup> events =
        ChooseEvents(*env_.fs, *req, SamplingOptions(), &why);
    if (!events.ok()) return events.status();
    absl::StatusOr<std::vector<int>> cpus = OnlineCpus(*env_.fs);
    if (!cpus.ok()) return cpus.status();
    SamplerConfig scfg;
    scfg.events = *events;
    scfg.pids = {pid_};
    scfg.cpus = *cpus;
    IncludeExistingThreads(*env_.fs, &scfg);
    if (w.write_faults || hint) SizeRingsForFaultBursts(&scfg);
    absl::StatusOr<std::unique_ptr<Sampler>> s =
        Sampler::Open(scfg, &perf_sys_);
    if (!s.ok()) return s.status();
    sampler_ = std::move(*s);
    if (absl::Status st = sampler_->Enable(); !st.ok()) return st;
    source_ = std::make_unique<SamplerAttachSource>(sampler_.get());
    source_name_ =
        events->events.empty() || hint
            ? w.source
            : std::string(SampleSourceName(events->events.front().source));
    return StartRearm(w);
  }

  absl::Status StartRearm(const WorkloadConfig& w) {
    if (!w.write_faults) return absl::OkStatus();
    // Opened once and bound to this process (write_fault_rearm.h); the
    // handle check after the open proves the pid was not reused.
    if (absl::Status p = ProbeSoftDirty(); !p.ok()) return p;
    absl::StatusOr<std::unique_ptr<WriteFaultRearm>> r = StartWriteFaultRearm(
        pid_, [this] { return handle_->StillSame() == TargetState::kSame; });
    if (!r.ok()) return r.status();
    rearm_ = std::move(*r);
    return absl::OkStatus();
  }

  // The process's resident 4 KiB pages (/proc/PID/statm); 0: unknown.
  uint64_t FootprintPages() const { return ResidentPages4K(*env_.fs, pid_); }

  // At a round boundary (the loop's thread: nothing ingests meanwhile):
  // when the process grew, the engine's table and the inbox grow with it
  // (each bounded: EngineOptions::table_by_footprint,
  // SampleInbox::InboxSamplesFor). Never shrinks.
  void MaybeGrow() {
    const uint64_t now = FootprintPages();
    if (now <= footprint_pages_) return;
    footprint_pages_ = now;
    if (absl::StatusOr<bool> g = engine_->GrowTable(now); !g.ok()) {
      *env_.log << "hotpage daemon: " << name_ << ": pid " << pid_
                << ": hotness table not grown: " << g.status().message()
                << "\n";
    }
    if (routed_ != nullptr) routed_->ResizeInbox(now);
  }

  void ApplyPending() {
    std::optional<PlacementConfig> p;
    {
      MutexLock l(&mu_);
      p.swap(pending_);
    }
    if (!p) return;
    if (absl::Status s = engine_->Reconfigure(*p); !s.ok()) {
      *env_.log << "hotpage daemon: " << name_ << ": pid " << pid_
                << ": new rules not applied: " << s.message() << "\n";
    }
  }

  const LiveMemberEnv env_;
  const std::string name_;
  const pid_t pid_;
  std::optional<ProcessHandle> handle_;
  std::unique_ptr<PolicyEngine> engine_;
  std::unique_ptr<RoundsDir::File> rounds_;  // `rounds`; null: none
  LinuxPerfEventSystem perf_sys_;            // outlives the sampler
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<DamonSource> damon_;
  std::unique_ptr<WriteFaultRearm> rearm_;
  std::unique_ptr<AttachSource> source_;
  std::string source_name_;
  RoutedAttachSource* routed_ = nullptr;  // source_, when routed
  // The footprint the table and inbox are sized for (the loop's thread
  // after Init).
  uint64_t footprint_pages_ = 0;
  SyscallPageMover mover_;
  std::unique_ptr<Migrator> migrator_;
  // In env_.migrators (set on the daemon's thread in Init, cleared on the
  // member's in Run; the daemon joins that thread before destroying it).
  bool pooled_ = false;
  std::unique_ptr<LiveMemoryView> live_view_;
  std::unique_ptr<FairShareView> view_;
  SnapshotSink sink_;
  mutable Mutex mu_;
  std::optional<PlacementConfig> pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

MemberFactory LiveMemberFactory(LiveMemberEnv env) {
  return [env](const WorkloadConfig& w, const SelectedProcess& p)
             -> absl::StatusOr<std::unique_ptr<DaemonMember>> {
    auto m = std::make_unique<LiveMember>(env, w.name, p.key.pid);
    if (absl::Status s = m->Init(w, p); !s.ok()) return s;
    return std::unique_ptr<DaemonMember>(std::move(m));
  };
}

}  // namespace hotpage
