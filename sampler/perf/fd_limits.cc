#include "sampler/perf/fd_limits.h"

#include <dirent.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "tools/base/status_macros.h"

namespace hotpage {

absl::Status LinuxFdLimits::Get(rlimit* limit) {
  if (getrlimit(RLIMIT_NOFILE, limit) != 0)
    return ErrnoStatus(errno, "getrlimit(RLIMIT_NOFILE)");
  return absl::OkStatus();
}

absl::Status LinuxFdLimits::Set(const rlimit& limit) {
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
    return ErrnoStatus(errno, "setrlimit(RLIMIT_NOFILE)");
  return absl::OkStatus();
}

size_t LinuxFdLimits::OpenNow() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return 0;
  size_t n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n > 0 ? n - 1 : 0;  // the directory stream's own descriptor
}

absl::StatusOr<uint64_t> EnsureDescriptors(size_t needed, FdLimits* limits) {
  rlimit lim{};
  HOTPAGE_RETURN_IF_ERROR(limits->Get(&lim));
  const uint64_t want =
      static_cast<uint64_t>(limits->OpenNow()) + needed + kFdHeadroom;
  if (lim.rlim_cur == RLIM_INFINITY || want <= lim.rlim_cur)
    return lim.rlim_cur;
  if (lim.rlim_max != RLIM_INFINITY && want > lim.rlim_max) {
    return absl::ResourceExhaustedError(
        absl::StrCat("sampling needs ", needed, " file descriptors (", want,
                     " with the ones open and ", kFdHeadroom,
                     " spare) but the RLIMIT_NOFILE hard limit is ",
                     lim.rlim_max, ": raise it (ulimit -Hn ", want,
                     ", or LimitNOFILE=", want, " in a systemd unit)"));
  }
  // Like perf: soft limit up to the hard limit, not just to `want`, so the
  // descriptors the run opens later fit as well.
  rlimit raised = lim;
  raised.rlim_cur = lim.rlim_max;
  HOTPAGE_RETURN_IF_ERROR(limits->Set(raised));
  return raised.rlim_cur;
}

}  // namespace hotpage
