#include "sampler/write_fault_rearm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/base/clock.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

class LiveClearRefs : public ClearRefsFile {
 public:
  explicit LiveClearRefs(int fd) : fd_(fd) {}
  ~LiveClearRefs() override { close(fd_); }
  LiveClearRefs(const LiveClearRefs&) = delete;
  LiveClearRefs& operator=(const LiveClearRefs&) = delete;

  int ClearSoftDirty() override {
    // One write(2) per command: clear_refs_write parses the whole buffer.
    ssize_t n;
    do {
      n = pwrite(fd_, "4", 1, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
    return n == 1 ? 0 : EIO;
  }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ClearRefsFile>> OpenClearRefs(pid_t pid) {
  if (pid <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("clear_refs: bad pid ", pid));
  const std::string path = absl::StrCat("/proc/", pid, "/clear_refs");
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      // /proc/PID missing: the process is gone; clear_refs alone missing:
      // the kernel lacks CONFIG_PROC_PAGE_MONITOR.
      if (access(absl::StrCat("/proc/", pid).c_str(), F_OK) == 0) {
        return absl::UnimplementedError(absl::StrCat(
            path,
            " does not exist: this kernel has no clear_refs "
            "(CONFIG_PROC_PAGE_MONITOR), --write-faults cannot work"));
      }
      return absl::NotFoundError(
          absl::StrCat("pid ", pid, ": no such process"));
    }
    return ErrnoStatus(err, absl::StrCat("open ", path));
  }
  return std::unique_ptr<ClearRefsFile>(new LiveClearRefs(fd));
}

absl::Status ProbeSoftDirty() {
  void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return ErrnoStatus(errno, "mmap (soft-dirty probe)");
  volatile char* page = static_cast<volatile char*>(p);
  page[0] = 1;  // populated and writable
  absl::Status result = absl::OkStatus();
  absl::StatusOr<std::unique_ptr<ClearRefsFile>> self = OpenClearRefs(getpid());
  if (!self.ok()) {
    result = self.status();
  } else if (const int err = (*self)->ClearSoftDirty(); err != 0) {
    result = ErrnoStatus(err, "write \"4\" to /proc/self/clear_refs");
  } else {
    rusage before, after;
    getrusage(RUSAGE_THREAD, &before);
    page[0] = 2;
    getrusage(RUSAGE_THREAD, &after);
    if (after.ru_minflt == before.ru_minflt) {
      result = absl::UnimplementedError(
          "clearing soft-dirty bits makes no write fault on this kernel (built "
          "without CONFIG_MEM_SOFT_DIRTY): "
          "--write-faults would see nothing");
    }
  }
  munmap(p, 4096);
  return result;
}

WriteFaultRearm::WriteFaultRearm(std::unique_ptr<ClearRefsFile> file,
                                 WriteFaultRearmOptions options)
    : file_(std::move(file)), options_(std::move(options)) {
  if (!options_.clock) options_.clock = MonotonicNs;
  if (!(options_.cpu_budget > 0 && options_.cpu_budget <= 1))
    options_.cpu_budget = 0.03;
  stats_.interval_ns =
      static_cast<uint64_t>(absl::ToInt64Nanoseconds(options_.min_interval));
}

absl::StatusOr<std::unique_ptr<WriteFaultRearm>> StartWriteFaultRearm(
    pid_t pid, absl::FunctionRef<bool()> same_process,
    WriteFaultRearmOptions options) {
  absl::StatusOr<std::unique_ptr<ClearRefsFile>> f = OpenClearRefs(pid);
  if (!f.ok()) return f.status();
  if (!same_process()) {
    return absl::NotFoundError(
        absl::StrCat("pid ", pid, " exited before --write-faults started"));
  }
  return std::make_unique<WriteFaultRearm>(std::move(*f), std::move(options));
}

absl::StatusOr<bool> WriteFaultRearm::MaybeRearm(uint64_t now_ns,
                                                 uint64_t faults_total) {
  if (started_ && now_ns < next_due_ns_) return false;
  started_ = true;
  const uint64_t faults_since_last =
      faults_total > faults_at_rearm_ ? faults_total - faults_at_rearm_ : 0;
  faults_at_rearm_ = faults_total;
  stats_.faults += faults_since_last;
  const uint64_t t0 = options_.clock();
  const int err = file_->ClearSoftDirty();
  const uint64_t t1 = options_.clock();
  const uint64_t cost = t1 > t0 ? t1 - t0 : 0;
  // The interval: at least min_interval, and long enough that the clears
  // and the faults they cause take at most cpu_budget of one CPU.
  const uint64_t min_ns = static_cast<uint64_t>(
      std::max<int64_t>(0, absl::ToInt64Nanoseconds(options_.min_interval)));
  const double spent = static_cast<double>(cost) +
                       static_cast<double>(faults_since_last) *
                           static_cast<double>(options_.fault_cost_ns);
  const uint64_t budget_ns =
      static_cast<uint64_t>(std::min(spent / options_.cpu_budget, 3600e9));
  stats_.interval_ns = std::max(min_ns, budget_ns);
  next_due_ns_ = now_ns + stats_.interval_ns;
  if (err != 0) {
    if (err == ESRCH)
      return absl::NotFoundError("the process exited (clear_refs: ESRCH)");
    return ErrnoStatus(err, "write \"4\" to clear_refs");
  }
  ++stats_.rearms;
  stats_.clear_ns_total += cost;
  stats_.clear_ns_max = std::max(stats_.clear_ns_max, cost);
  return true;
}

}  // namespace hotpage
