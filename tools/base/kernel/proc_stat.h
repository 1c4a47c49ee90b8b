// The one parser of /proc/PID/stat (proc(5), fs/proc/array.c do_task_stat).
//
// Who reads it and for what:
//   - ProcessHandle (migrator/process_handle.h): pid, state and start time,
//     to prove the target is still the process it attached to;
//   - the hint-fault watchdog (sampler): minflt and utime + stime of the
//     target, to tell a stalled scanner from an idle process;
//   - the DAMON and hint-fault sources: this process's own start time,
//     written into their crash-recovery state files (SelfStartTimeTicks).
//
// The line is "pid (comm) state ppid ... starttime ...", and comm is chosen
// by the process: it may hold spaces, parentheses, ") R 1 2 3" or anything
// but NUL. ParseProcStat() therefore splits at the LAST ')' and reads
// fields 3.. after it, where no field can contain a parenthesis.
//
// Untrusted input (the target names itself): bounded work, never reads past
// the text, never crashes; proc_stat_fuzz.cc drives it under libFuzzer.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_PROC_STAT_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_PROC_STAT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// The fields of /proc/PID/stat hotpage uses (1-based field numbers as in
// proc(5)).
struct ProcStat {
  int64_t pid = 0;           // field 1
  std::string comm;          // field 2: between the first '(' and the last ')'
  char state = '?';          // field 3: R, S, D, Z, X, ...
  int64_t ppid = 0;          // field 4
  uint64_t minflt = 0;       // field 10: minor faults
  uint64_t utime_ticks = 0;  // field 14: user CPU, clock ticks
  uint64_t stime_ticks = 0;  // field 15: system CPU, clock ticks
  uint64_t start_time_ticks = 0;  // field 22: clock ticks after boot
};

// Parses /proc/PID/stat text. std::nullopt on anything malformed: no
// "pid (", no ')', fewer than 22 fields, non-numeric pid/ppid/minflt/
// utime/stime/starttime, a state that is not one character. Never reads
// past `text`, bounded work.
std::optional<ProcStat> ParseProcStat(absl::string_view text);

// Field 22 of /proc/self/stat read through `fs`; 0 if unreadable or
// malformed. For messages and state files only: it names a run, it does not
// prove one.
uint64_t SelfStartTimeTicks(const KernelFs& fs);

// The resident set of a /proc/PID/statm text (proc(5); fs/proc/array.c
// proc_pid_statm: seven numbers the kernel writes, the second the resident
// pages) in system pages; std::nullopt if the second field is missing or
// not a number.
std::optional<uint64_t> ParseStatmResident(absl::string_view text);

// The process's resident set in 4 KiB pages, read through `fs`; 0 if
// unreadable (the process exited) or malformed. The footprint the engine's
// hotness table is sized by (EngineOptions::footprint_pages).
uint64_t ResidentPages4K(const KernelFs& fs, int64_t pid);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_PROC_STAT_H_
