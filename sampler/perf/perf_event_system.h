// PerfEventSystem: the seam between the sampler and the kernel's
// perf_event interface (perf_event_open, mmap of the ring, ioctls, epoll
// is left to the caller since it only sees fds). The live implementation
// makes the system calls; tests inject a fake to exercise error paths
// (EACCES, ENODATA, ENOENT, EMFILE) that this machine cannot produce.

#ifndef HOTPAGE_SAMPLER_PERF_PERF_EVENT_SYSTEM_H_
#define HOTPAGE_SAMPLER_PERF_PERF_EVENT_SYSTEM_H_

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace hotpage {

class PerfEventSystem {
 public:
  virtual ~PerfEventSystem() = default;
  // perf_event_open(2); returns an fd or -errno.
  virtual int Open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd,
                   unsigned long flags) = 0;
  // mmap(2) of `bytes` of an event fd, shared read-write; nullptr and
  // *err = errno on failure.
  virtual void* Map(int fd, size_t bytes, int* err) = 0;
  virtual void Unmap(void* addr, size_t bytes) = 0;
  // ioctl(2) with an integer or pointer argument; returns 0 or -errno.
  virtual int Ioctl(int fd, unsigned long request, unsigned long arg) = 0;
  virtual void Close(int fd) = 0;
};

class LinuxPerfEventSystem : public PerfEventSystem {
 public:
  int Open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd,
           unsigned long flags) override;
  void* Map(int fd, size_t bytes, int* err) override;
  void Unmap(void* addr, size_t bytes) override;
  int Ioctl(int fd, unsigned long request, unsigned long arg) override;
  void Close(int fd) override;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_PERF_EVENT_SYSTEM_H_
