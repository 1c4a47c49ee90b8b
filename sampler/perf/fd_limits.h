// FdLimits: the seam between the sampler and RLIMIT_NOFILE, and the
// arithmetic that makes a sampling plan fit under it.
//
// Per-task sampling opens one perf event per (task, CPU, group member):
// a 3-thread target on a 224-CPU Sapphire Rapids with the mem-loads-aux
// leader needs 3 x 224 x 2 = 1344 descriptors, over the usual soft limit
// of 1024. perf raises the soft limit to the hard one and retries on
// EMFILE (rlimit__increase_nofile() in tools/perf/util/rlimit.c, called
// from evsel__open_cpu() in tools/perf/util/evsel.c); the sampler instead
// computes the need before opening anything (Sampler::Open) and calls
// EnsureDescriptors(), which raises the soft limit up to the hard one, or
// says how many descriptors are needed and what the limit is.
//
// LinuxFdLimits makes the system calls; tests inject a fake.

#ifndef HOTPAGE_SAMPLER_PERF_FD_LIMITS_H_
#define HOTPAGE_SAMPLER_PERF_FD_LIMITS_H_

#include <sys/resource.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hotpage {

class FdLimits {
 public:
  virtual ~FdLimits() = default;
  // getrlimit(RLIMIT_NOFILE) / setrlimit(RLIMIT_NOFILE).
  virtual absl::Status Get(rlimit* limit) = 0;
  virtual absl::Status Set(const rlimit& limit) = 0;
  // Descriptors the process has open now (they count against the limit:
  // the kernel's get_unused_fd_flags() compares the highest fd number with
  // RLIMIT_NOFILE, alloc_fd() in fs/file.c).
  virtual size_t OpenNow() = 0;
};

class LinuxFdLimits : public FdLimits {
 public:
  absl::Status Get(rlimit* limit) override;
  absl::Status Set(const rlimit& limit) override;
  size_t OpenNow() override;  // entries of /proc/self/fd
};

// Descriptors kept free beyond the plan, for what the process opens after
// the sampler (trace file, /proc reads, move_pages' pidfd, stats files).
inline constexpr size_t kFdHeadroom = 64;

// Makes room for `needed` more descriptors: when OpenNow() + needed +
// kFdHeadroom exceeds the soft limit, raises the soft limit to the hard
// limit. Returns the soft limit in force; ResourceExhausted, naming the
// number needed and the hard limit, when even the hard limit is too low.
absl::StatusOr<uint64_t> EnsureDescriptors(size_t needed, FdLimits* limits);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_FD_LIMITS_H_
