// perf_churn: opens and closes a per-task software page-fault perf event on
// itself N times, as `hotpage attach` does once per run with its perf
// sources. Each first open and last close would flip the kernel's perf
// static keys; run in a guest by perf_churn_vm_test, it shows that
// static_key_pin keeps them from being patched (the guest survives).
//
// Usage: perf_churn N
// Prints "perf_churn: N opens and closes" and exits 0; 1 when an open
// fails, 2 on bad usage.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/vm/self_page_fault_event.h"

int main(int argc, char** argv) {
  char* end = nullptr;
  const long n = argc == 2 ? std::strtol(argv[1], &end, 10) : -1;
  if (argc != 2 || *end != '\0' || n <= 0 || n > 1000000) {
    std::fprintf(stderr, "usage: perf_churn N (1..1000000)\n");
    return 2;
  }
  for (long i = 0; i < n; ++i) {
    const int fd = hotpage::OpenSelfPageFaultEvent();
    if (fd < 0) {
      std::fprintf(stderr, "perf_churn: open %ld: %s\n", i,
                   std::strerror(errno));
      return 1;
    }
    close(fd);
  }
  std::printf("perf_churn: %ld opens and closes\n", n);
  return 0;
}
