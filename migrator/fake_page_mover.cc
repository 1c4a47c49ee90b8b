#include "migrator/fake_page_mover.h"

#include <cerrno>
#include <utility>

namespace hotpage {

void FakePageMover::AddPages(uint64_t vaddr, size_t count, uint32_t page_bytes,
                             int node) {
  MutexLock lock(&mu_);
  for (size_t i = 0; i < count; ++i) {
    pages_[vaddr + i * page_bytes] = Page{page_bytes, node};
  }
}

std::map<uint64_t, FakePageMover::Page>::iterator FakePageMover::FindPage(
    uint64_t vaddr) const {
  auto it = pages_.upper_bound(vaddr);
  if (it == pages_.begin()) return pages_.end();
  --it;
  if (vaddr - it->first >= it->second.bytes) return pages_.end();
  return it;
}

std::optional<int> FakePageMover::NodeOf(uint64_t vaddr) const {
  MutexLock lock(&mu_);
  auto it = FindPage(vaddr);
  if (it == pages_.end()) return std::nullopt;
  return it->second.node;
}

size_t FakePageMover::CountOn(int node) const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [base, page] : pages_) n += page.node == node;
  return n;
}

void FakePageMover::SetNode(uint64_t vaddr, int node) {
  MutexLock lock(&mu_);
  auto it = FindPage(vaddr);
  if (it != pages_.end()) it->second.node = node;
}

void FakePageMover::InjectMoveError(uint64_t vaddr, int err, int times) {
  MutexLock lock(&mu_);
  auto it = FindPage(vaddr);
  move_errors_[it == pages_.end() ? vaddr : it->first] = Injected{err, times};
}

void FakePageMover::InjectQueryError(uint64_t vaddr, int err, int times) {
  MutexLock lock(&mu_);
  auto it = FindPage(vaddr);
  query_errors_[it == pages_.end() ? vaddr : it->first] = Injected{err, times};
}

void FakePageMover::SetNodeFull(int node, bool full, bool call_level) {
  MutexLock lock(&mu_);
  if (full) {
    full_nodes_[node] = call_level;
  } else {
    full_nodes_.erase(node);
  }
}

void FakePageMover::InjectCallError(Op op, int err, int times) {
  MutexLock lock(&mu_);
  call_errors_[op] = CallError{err, times};
}

void FakePageMover::InjectPartialGroup(size_t n) {
  MutexLock lock(&mu_);
  partial_group_ = n;
}

void FakePageMover::SetCallHook(std::function<void(Op)> hook) {
  MutexLock lock(&mu_);
  hook_ = std::move(hook);
}

std::vector<FakePageMover::Call> FakePageMover::calls() const {
  MutexLock lock(&mu_);
  return calls_;
}

size_t FakePageMover::query_calls() const {
  MutexLock lock(&mu_);
  return query_calls_;
}

size_t FakePageMover::move_calls() const {
  MutexLock lock(&mu_);
  return move_calls_;
}

uint64_t FakePageMover::pages_migrated() const {
  MutexLock lock(&mu_);
  return pages_migrated_;
}

void FakePageMover::set_record_calls(bool on) {
  MutexLock lock(&mu_);
  record_calls_ = on;
}

std::optional<int> FakePageMover::TakeInjected(std::map<uint64_t, Injected>& m,
                                               uint64_t base) {
  auto it = m.find(base);
  if (it == m.end()) return std::nullopt;
  const int err = it->second.err;
  if (it->second.times > 0 && --it->second.times == 0) m.erase(it);
  return err;
}

std::optional<int> FakePageMover::TakeCallError(Op op) {
  auto it = call_errors_.find(op);
  if (it == call_errors_.end()) return std::nullopt;
  const int err = it->second.err;
  if (it->second.times > 0 && --it->second.times == 0) call_errors_.erase(it);
  return err;
}

void FakePageMover::Record(Op op, pid_t pid, absl::Span<const uint64_t> pages,
                           absl::Span<const int> nodes, long result) {
  if (op == Op::kQuery) {
    ++query_calls_;
  } else {
    ++move_calls_;
  }
  if (!record_calls_) return;
  calls_.push_back(Call{op,
                        pid,
                        {pages.begin(), pages.end()},
                        {nodes.begin(), nodes.end()},
                        result});
}

long FakePageMover::Query(pid_t pid, absl::Span<const uint64_t> pages,
                          absl::Span<int> status) {
  std::function<void(Op)> hook;
  {
    MutexLock lock(&mu_);
    hook = hook_;
  }
  if (hook) hook(Op::kQuery);
  MutexLock lock(&mu_);
  if (std::optional<int> err = TakeCallError(Op::kQuery)) {
    Record(Op::kQuery, pid, pages, {}, -*err);
    return -*err;
  }
  for (size_t i = 0; i < pages.size(); ++i) {
    auto it = FindPage(pages[i]);
    if (it == pages_.end()) {
      status[i] = -EFAULT;
      continue;
    }
    if (std::optional<int> err = TakeInjected(query_errors_, it->first)) {
      status[i] = -*err;
      continue;
    }
    status[i] = it->second.node;
  }
  Record(Op::kQuery, pid, pages, {}, 0);
  return 0;
}

long FakePageMover::Move(pid_t pid, absl::Span<const uint64_t> pages,
                         absl::Span<const int> nodes, absl::Span<int> status) {
  std::function<void(Op)> hook;
  {
    MutexLock lock(&mu_);
    hook = hook_;
  }
  if (hook) hook(Op::kMove);
  MutexLock lock(&mu_);
  if (std::optional<int> err = TakeCallError(Op::kMove)) {
    Record(Op::kMove, pid, pages, nodes, -*err);
    return -*err;
  }
  // Like do_pages_move(): examine pages in order, queue those to migrate,
  // flush the queue whenever the target node changes and at the end.
  long result = 0;
  std::vector<size_t> group;    // indices queued for `group_node`
  std::set<uint64_t> isolated;  // base addresses of the queued pages
  int group_node = -1;
  auto flush = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> long {
    if (group.empty()) return 0;
    auto full = full_nodes_.find(group_node);
    if (full != full_nodes_.end()) {
      if (full->second) return -ENOMEM;  // call level: nothing written
      for (size_t i : group) status[i] = -ENOMEM;
      group.clear();
      isolated.clear();
      return 0;
    }
    size_t movable = group.size();
    if (partial_group_) {
      movable = std::min(*partial_group_, group.size());
      partial_group_.reset();
    }
    for (size_t k = 0; k < movable; ++k) {
      auto it = FindPage(pages[group[k]]);
      it->second.node = group_node;
      ++pages_migrated_;
    }
    if (movable < group.size()) {
      return static_cast<long>(group.size() - movable);
    }
    for (size_t i : group) status[i] = group_node;
    group.clear();
    isolated.clear();
    return 0;
  };
  for (size_t i = 0; i < pages.size() && result == 0; ++i) {
    if (nodes[i] != group_node) {
      result = flush();
      if (result != 0) {
        // Pages after the failed group were never examined either.
        if (result > 0) result += static_cast<long>(pages.size() - i);
        break;
      }
      group_node = nodes[i];
    }
    auto it = FindPage(pages[i]);
    if (it == pages_.end()) {
      status[i] = -EFAULT;
      continue;
    }
    if (std::optional<int> err = TakeInjected(move_errors_, it->first)) {
      status[i] = -*err;
      continue;
    }
    if (it->second.node < 0) {
      status[i] = it->second.node;
      continue;
    }
    if (it->second.node == nodes[i]) {
      status[i] = nodes[i];
      continue;
    }
    // A page named twice (two addresses of one huge page): the second
    // finds it isolated already, as isolate_lru_page() does.
    if (!isolated.insert(it->first).second) {
      status[i] = -EBUSY;
      continue;
    }
    group.push_back(i);
  }
  if (result == 0) result = flush();
  Record(Op::kMove, pid, pages, nodes, result);
  return result;
}

}  // namespace hotpage
