// static_key_pin: holds the kernel's perf static keys enabled for the life of
// a VM test guest, so that the code patching that flips them never runs
// while a test does.
//
// Why. Under QEMU's multi-threaded TCG a 6.12 guest sometimes oopses on an
// int3 that the kernel's own code patching left behind (text_poke_bp: int3,
// sync, tail, sync, first byte, sync): one vCPU keeps running a translation
// of the patched bytes made while the int3 was there, after the patch is
// done, and the kernel's int3 handler no longer recognises it. It is an
// emulator race (real CPUs serialise on the sync IPIs); the more the host
// preempts QEMU's vCPU threads, the likelier it is. Every static key flip
// is a chance, and `hotpage attach` flips two of them per perf source it
// opens and two more when it closes it:
//   - perf_sched_events, which gates perf_event_task_sched_{in,out} in
//     __schedule: enabled by the first per-task event (account_event in
//     kernel/events/core.c), disabled a second after the last one goes;
//   - perf_swevent_enabled[PERF_COUNT_SW_PAGE_FAULTS], which gates the
//     perf_sw_event() call in the page-fault path: enabled by the first
//     page-fault event (perf_swevent_init), disabled by the last's destroy.
// A CI run failed on exactly this: "Oops: int3" in __schedule at the
// perf_event_task_sched_out site, as attach started. Both keys are
// reference counted (static_key_slow_inc/dec), so one event of each kind
// held open from boot keeps them enabled and makes every later open and
// close a count change with no patching. The cost is the enabled hooks'
// check on each context switch and page fault, for every run alike.
// (kernel.numa_balancing's key is set, not counted: the hintfault tests'
// flips of it remain, and run_vm.sh retries a guest that hits the race.)
//
// Usage: static_key_pin
//   Forks; the child opens a disabled software page-fault event on itself
//   (pid 0, any CPU: a per-task event, so it counts for both keys) and
//   sleeps until the guest powers off. The parent exits 0 once the child's
//   event is open, 1 with a message when it could not be.

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tests/vm/self_page_fault_event.h"

int main(int argc, char** argv) {
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s (no arguments)\n", argv[0]);
    return 2;
  }
  int ready[2];
  if (pipe(ready) != 0) {
    std::fprintf(stderr, "static_key_pin: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "static_key_pin: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    close(ready[0]);
    const int fd = hotpage::OpenSelfPageFaultEvent();
    const int err = fd < 0 ? errno : 0;
    if (write(ready[1], &err, sizeof(err)) != sizeof(err) || fd < 0) _exit(1);
    close(ready[1]);
    for (;;) pause();
  }
  close(ready[1]);
  int err = 0;
  ssize_t n;
  do {
    n = read(ready[0], &err, sizeof(err));
  } while (n < 0 && errno == EINTR);
  if (n != sizeof(err) || err != 0) {
    std::fprintf(stderr,
                 "static_key_pin: perf_event_open(software page-faults, "
                 "self): %s; the perf static keys are not pinned\n",
                 n == sizeof(err) ? std::strerror(err) : "child died");
    waitpid(child, nullptr, 0);
    return 1;
  }
  std::printf("static_key_pin: pid %d holds the perf static keys enabled\n",
              static_cast<int>(child));
  return 0;
}
