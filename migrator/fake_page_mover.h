// FakePageMover: a PageMover over an in-memory page -> node map, for tests
// and for runs that must not touch a real process (the replay simulator).
//
// It behaves as Linux 4.17+ does (see page_mover.h): per-page statuses are
// written as pages are examined; pages to migrate are queued and written
// only when the whole group moved; a group that fails leaves its entries
// unwritten and returns a positive count; call-level errors write nothing
// more. A huge page added with page_bytes = 2 MiB moves as a unit whichever
// address inside it is named, as a THP does.
//
// Injection: per-page errors on Move or Query (-EBUSY, -ENOMEM, -EFAULT,
// -ENOENT, -EACCES, any errno) for a number of calls or for ever; full
// nodes (per-page -ENOMEM, or call-level ENOMEM); call-level errors (ESRCH,
// EPERM, ...); a partial group (positive return). Every call is recorded.
//
// Thread-safe (one mutex): the migrator calls it from its thread while the
// test thread injects and inspects.

#ifndef HOTPAGE_MIGRATOR_FAKE_PAGE_MOVER_H_
#define HOTPAGE_MIGRATOR_FAKE_PAGE_MOVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "migrator/page_mover.h"
#include "tools/base/mutex.h"

namespace hotpage {

class FakePageMover : public PageMover {
 public:
  enum class Op { kQuery, kMove };

  struct Call {
    Op op;
    pid_t pid;
    std::vector<uint64_t> pages;
    std::vector<int> nodes;  // empty for queries
    long result;
  };

  // Maps `count` pages of `page_bytes` from `vaddr` on `node`. A negative
  // node is the status both Query and Move report for the page (-ENOENT:
  // never touched).
  void AddPages(uint64_t vaddr, size_t count, uint32_t page_bytes, int node)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Node of the page containing `vaddr` (negative: its error status), or
  // nullopt if unmapped.
  std::optional<int> NodeOf(uint64_t vaddr) const ABSL_LOCKS_EXCLUDED(mu_);

  // Pages (any size) on `node`.
  size_t CountOn(int node) const ABSL_LOCKS_EXCLUDED(mu_);

  // Moves the page containing `vaddr` behind the mover's back (another agent
  // or the kernel's NUMA balancing did it).
  void SetNode(uint64_t vaddr, int node) ABSL_LOCKS_EXCLUDED(mu_);

  // The next `times` Move (or Query) calls that name the page containing
  // `vaddr` report -err for it; times < 0: every call.
  void InjectMoveError(uint64_t vaddr, int err, int times = -1)
      ABSL_LOCKS_EXCLUDED(mu_);
  void InjectQueryError(uint64_t vaddr, int err, int times = -1)
      ABSL_LOCKS_EXCLUDED(mu_);

  // While full, moves to `node` fail: per page with -ENOMEM, or, with
  // call_level, the whole group with call-level ENOMEM.
  void SetNodeFull(int node, bool full, bool call_level = false)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The next `times` calls of `op` fail with -err and write nothing.
  void InjectCallError(Op op, int err, int times = 1) ABSL_LOCKS_EXCLUDED(mu_);

  // The next Move migrates only the first `n` pages of its group, writes no
  // status for the group and returns how many were not migrated.
  void InjectPartialGroup(size_t n) ABSL_LOCKS_EXCLUDED(mu_);

  // Called (without the lock) at the start of every call.
  void SetCallHook(std::function<void(Op)> hook) ABSL_LOCKS_EXCLUDED(mu_);

  std::vector<Call> calls() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t query_calls() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t move_calls() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t pages_migrated() const ABSL_LOCKS_EXCLUDED(mu_);
  // Stop recording calls (benchmarks): counters still count.
  void set_record_calls(bool on) ABSL_LOCKS_EXCLUDED(mu_);

  long Query(pid_t pid, absl::Span<const uint64_t> pages,
             absl::Span<int> status) override ABSL_LOCKS_EXCLUDED(mu_);
  long Move(pid_t pid, absl::Span<const uint64_t> pages,
            absl::Span<const int> nodes, absl::Span<int> status) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Page {
    uint32_t bytes;
    int node;
  };
  struct Injected {
    int err;
    int times;  // < 0: for ever
  };
  struct CallError {
    int err;
    int times;
  };

  // The page containing `vaddr`: iterator into pages_ or end().
  std::map<uint64_t, Page>::iterator FindPage(uint64_t vaddr) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Consumes one use of an injected error for the page at `base`.
  static std::optional<int> TakeInjected(std::map<uint64_t, Injected>& m,
                                         uint64_t base);
  std::optional<int> TakeCallError(Op op) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Record(Op op, pid_t pid, absl::Span<const uint64_t> pages,
              absl::Span<const int> nodes, long result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  // By base address; mutable so that const lookups can share FindPage().
  mutable std::map<uint64_t, Page> pages_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Injected> move_errors_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Injected> query_errors_ ABSL_GUARDED_BY(mu_);
  std::map<int, bool> full_nodes_ ABSL_GUARDED_BY(mu_);  // node -> call level
  std::map<Op, CallError> call_errors_ ABSL_GUARDED_BY(mu_);
  std::optional<size_t> partial_group_ ABSL_GUARDED_BY(mu_);
  std::function<void(Op)> hook_ ABSL_GUARDED_BY(mu_);
  std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
  bool record_calls_ ABSL_GUARDED_BY(mu_) = true;
  size_t query_calls_ ABSL_GUARDED_BY(mu_) = 0;
  size_t move_calls_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t pages_migrated_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_FAKE_PAGE_MOVER_H_
