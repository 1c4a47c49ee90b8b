#include "sampler/perf/perf_event_system.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace hotpage {

int LinuxPerfEventSystem::Open(perf_event_attr* attr, pid_t pid, int cpu,
                               int group_fd, unsigned long flags) {
  long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
                    flags | PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

void* LinuxPerfEventSystem::Map(int fd, size_t bytes, int* err) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    *err = errno;
    return nullptr;
  }
  return p;
}

void LinuxPerfEventSystem::Unmap(void* addr, size_t bytes) {
  munmap(addr, bytes);
}

int LinuxPerfEventSystem::Ioctl(int fd, unsigned long request,
                                unsigned long arg) {
  return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

void LinuxPerfEventSystem::Close(int fd) { close(fd); }

}  // namespace hotpage
