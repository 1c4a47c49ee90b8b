#ifndef HOTPAGE_TESTS_VM_SELF_PAGE_FAULT_EVENT_H_
#define HOTPAGE_TESTS_VM_SELF_PAGE_FAULT_EVENT_H_

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace hotpage {

// Opens a disabled software page-fault perf event on the calling task (pid
// 0, any CPU), as `hotpage attach` opens its page-fault source per task. A
// per-task page-fault event counts towards both perf static keys
// (static_key_pin.cc). Returns the descriptor, or -1 with errno set.
inline int OpenSelfPageFaultEvent() {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  attr.disabled = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, /*pid=*/0,
                                  /*cpu=*/-1, /*group_fd=*/-1, 0UL));
}

}  // namespace hotpage

#endif  // HOTPAGE_TESTS_VM_SELF_PAGE_FAULT_EVENT_H_
