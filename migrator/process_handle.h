// ProcessHandle: the migrator's grip on its target process, proof against
// pid reuse.
//
// A pid is only a number: once the target exits and is reaped, the kernel
// may hand the same number to an unrelated process, and move_pages(2) by
// pid would then move that process's memory. The handle pins the identity
// two ways, captured at Attach():
//   - a pidfd (pidfd_open(2), Linux 5.3+), which refers to the process
//     itself and becomes readable when it exits;
//   - the process start time, field 22 of /proc/PID/stat (clock ticks since
//     boot), read through KernelFs.
// StillSame() re-reads the start time and then polls the pidfd. If the
// pidfd still says "running" after the read, the stat we read was our
// process's (a pid cannot be reused before its holder has exited), so a
// matching start time proves identity at that moment. The migrator calls it
// before every move_pages batch. What remains is the window between that
// check and the system call (microseconds, against the pid space wrapping
// around: up to 4M pids); move_pages has no pidfd form to close it.
//
// Without pidfd_open (kernels before 5.3, or seccomp), the start time and
// the stat's state (Z/X = exited) are checked alone.
//
// ForSimulation() makes a handle for a process that exists only in a
// simulation (`hotpage simulate` runs the real Migrator over simulated
// memory): no pidfd, no /proc reads, and StillSame() always kSame. Only
// the replay simulator and tests create one; attach and record get their
// handles from Attach().
//
// /proc/PID/stat is parsed by ParseProcStat (tools/base/kernel/proc_stat.h),
// which copes with a comm that holds spaces and parentheses.
//
// Thread-compatible: one thread (the migrator's) uses a handle.

#ifndef HOTPAGE_MIGRATOR_PROCESS_HANDLE_H_
#define HOTPAGE_MIGRATOR_PROCESS_HANDLE_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/proc_stat.h"

namespace hotpage {

enum class TargetState {
  kSame,        // the process attached to is alive and is still this pid
  kExited,      // it exited (zombie or gone)
  kReused,      // the pid now names a different process
  kUnverified,  // alive per the pidfd, but /proc/PID/stat is missing or
                // malformed: identity cannot be checked, so never act
};
const char* TargetStateName(TargetState s);

class ProcessHandle {
 public:
  // Attaches to `pid` (> 0): opens a pidfd, reads the start time through
  // `fs`. `fs` must outlive the handle. Errors: NotFound "pid 123: no such
  // process" (ESRCH, or no /proc/123/stat), InvalidArgument for pid <= 0, a
  // thread id that is not a process id, or an unparsable stat,
  // FailedPrecondition if it is already a zombie.
  static absl::StatusOr<ProcessHandle> Attach(pid_t pid, const KernelFs* fs);

  // A handle for `pid` in a simulation (see the file comment): nothing is
  // opened or read; the target never exits and its pid is never reused.
  // Not for live processes: it checks nothing.
  static ProcessHandle ForSimulation(pid_t pid);

  ProcessHandle(ProcessHandle&& other) noexcept;
  ProcessHandle& operator=(ProcessHandle&& other) noexcept;
  ProcessHandle(const ProcessHandle&) = delete;
  ProcessHandle& operator=(const ProcessHandle&) = delete;
  ~ProcessHandle();

  pid_t pid() const { return pid_; }
  uint64_t start_time_ticks() const { return start_time_ticks_; }
  const std::string& comm() const { return comm_; }
  bool has_pidfd() const { return pidfd_ >= 0; }
  bool simulated() const { return simulated_; }

  // False once the process has exited (pidfd readable). Without a pidfd:
  // whether /proc/PID/stat shows a live process with the same start time.
  bool Alive() const;

  // Re-reads /proc/PID/stat and checks the pidfd (see the file comment).
  TargetState StillSame() const;

  // "pid 123 (comm)": for messages.
  std::string Describe() const;

 private:
  ProcessHandle(pid_t pid, int pidfd, uint64_t start, std::string comm,
                const KernelFs* fs)
      : pid_(pid),
        pidfd_(pidfd),
        start_time_ticks_(start),
        comm_(std::move(comm)),
        fs_(fs) {}

  // Start time and state as /proc/PID/stat shows them now.
  std::optional<ProcStat> ReadStat() const;
  bool PidfdExited() const;

  pid_t pid_ = 0;
  int pidfd_ = -1;
  uint64_t start_time_ticks_ = 0;
  std::string comm_;
  const KernelFs* fs_ = nullptr;
  bool simulated_ = false;  // ForSimulation(): no pidfd, no fs_
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_PROCESS_HANDLE_H_
