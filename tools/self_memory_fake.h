// FakeSelfMempolicy: the SelfMempolicy of tests (tools/self_memory.h).
// Records every Set, answers Threads and CurrentMode with what the test
// put there, and fails Set with `set_error` when it is not OK. Threads may
// instead be a function (the in-process attach tests count the threads the
// command under test started).

#ifndef HOTPAGE_TOOLS_SELF_MEMORY_FAKE_H_
#define HOTPAGE_TOOLS_SELF_MEMORY_FAKE_H_

#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/self_memory.h"

namespace hotpage {

class FakeSelfMempolicy : public SelfMempolicy {
 public:
  struct Call {
    int mode = 0;
    std::vector<int> nodes;
  };

  absl::StatusOr<int> Threads() override {
    ++threads_calls;
    if (threads_fn) return threads_fn();
    return threads;
  }
  absl::StatusOr<int> CurrentMode() override { return current_mode; }
  absl::Status Set(int mode, const std::vector<int>& nodes) override {
    calls.push_back({mode, nodes});
    if (!set_error.ok()) return set_error;
    current_mode = mode;
    return absl::OkStatus();
  }

  absl::StatusOr<int> threads = 1;
  std::function<absl::StatusOr<int>()> threads_fn;  // overrides `threads`
  int threads_calls = 0;
  int current_mode = kMpolDefault;
  absl::Status set_error;
  std::vector<Call> calls;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SELF_MEMORY_FAKE_H_
