// PageMover: the seam between the migrator and move_pages(2).
//
// move_pages(2) does two jobs, and the seam keeps them apart:
//   Query  nodes=NULL: where each page is now (node id, or -ENOENT for a
//          page never touched / swapped out, -EFAULT for an unmapped
//          address). Cheap: about 13x faster per page than a move.
//   Move   MPOL_MF_MOVE: move each page to its node, only pages mapped by
//          this process alone (a shared page answers -EACCES; moving those
//          would need MPOL_MF_MOVE_ALL and CAP_SYS_NICE, and would move
//          memory under other processes' feet).
//
// Kernel facts the callers rely on (Linux 4.17+; mm/migrate.c do_pages_move):
//  - Per-page statuses: node id on success (also when the page already was
//    on the node), -EBUSY (could not be isolated: pinned, under I/O, being
//    migrated already; transient), -ENOMEM (target node full), -EFAULT,
//    -ENOENT, -EACCES (shared).
//  - The kernel groups consecutive pages with the same target node and
//    migrates each group at once. If a group partly fails it gives up and
//    returns a POSITIVE count of pages not migrated; entries from that group
//    on are not written. Callers therefore pre-fill status with
//    kPageStatusUnset and treat entries still holding it as "not done".
//  - Call-level errors: ESRCH (no such process), EPERM (another process's
//    pages need ptrace read access, find_mm_struct() in mm/migrate.c: the
//    same user or CAP_SYS_PTRACE; CAP_SYS_NICE only for MPOL_MF_MOVE_ALL),
//    ENODEV (target node
//    has no memory), EACCES (target node outside the process's cpuset),
//    ENOMEM (migration could not allocate on the target).
//  - A transparent huge page moves as a whole 2 MiB unit when any 4 KiB
//    address inside it is named: name one address per huge page (naming
//    all 512 makes 511 of them answer -EBUSY, the folio being isolated).
//
// Threading: implementations are thread-safe (the live one is stateless).

#ifndef HOTPAGE_MIGRATOR_PAGE_MOVER_H_
#define HOTPAGE_MIGRATOR_PAGE_MOVER_H_

#include <sys/types.h>

#include <cstdint>
#include <limits>

#include "absl/types/span.h"

namespace hotpage {

// A status value the kernel never writes: entries still holding it after a
// call were not reached.
inline constexpr int kPageStatusUnset = std::numeric_limits<int>::min();

class PageMover {
 public:
  virtual ~PageMover() = default;

  // move_pages(pid, n, pages, NULL, status, 0). `status` has pages.size()
  // entries. Returns 0, or -errno for the whole call.
  virtual long Query(pid_t pid, absl::Span<const uint64_t> pages,
                     absl::Span<int> status) = 0;

  // move_pages(pid, n, pages, nodes, status, MPOL_MF_MOVE). `nodes` and
  // `status` have pages.size() entries. Returns 0 (every entry written),
  // > 0 (pages not migrated; unreached entries keep their value), or
  // -errno for the whole call.
  virtual long Move(pid_t pid, absl::Span<const uint64_t> pages,
                    absl::Span<const int> nodes, absl::Span<int> status) = 0;
};

// The live kernel: syscall(SYS_move_pages, ...). pid 0 means the caller.
class SyscallPageMover : public PageMover {
 public:
  long Query(pid_t pid, absl::Span<const uint64_t> pages,
             absl::Span<int> status) override;
  long Move(pid_t pid, absl::Span<const uint64_t> pages,
            absl::Span<const int> nodes, absl::Span<int> status) override;
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_PAGE_MOVER_H_
