#include "migrator/page_mover.h"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace hotpage {
namespace {

// move_pages(2) takes an array of pointers; uint64_t addresses have the
// same representation on every 64-bit Linux, so the array is passed as is.
static_assert(sizeof(void*) == sizeof(uint64_t), "64-bit only");

long MovePagesSyscall(pid_t pid, absl::Span<const uint64_t> pages,
                      const int* nodes, int* status, int flags) {
  if (pages.empty()) return 0;
  long rc = syscall(SYS_move_pages, pid, pages.size(),
                    reinterpret_cast<const void*>(pages.data()), nodes, status,
                    flags);
  return rc < 0 ? -errno : rc;
}

}  // namespace

long SyscallPageMover::Query(pid_t pid, absl::Span<const uint64_t> pages,
                             absl::Span<int> status) {
  if (status.size() < pages.size()) return -EINVAL;
  return MovePagesSyscall(pid, pages, nullptr, status.data(), 0);
}

long SyscallPageMover::Move(pid_t pid, absl::Span<const uint64_t> pages,
                            absl::Span<const int> nodes,
                            absl::Span<int> status) {
  if (status.size() < pages.size() || nodes.size() < pages.size()) {
    return -EINVAL;
  }
  return MovePagesSyscall(pid, pages, nodes.data(), status.data(),
                          MPOL_MF_MOVE);
}

}  // namespace hotpage
