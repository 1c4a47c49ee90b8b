#include "tools/base/status_macros.h"

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

// The names hotpage printed from its own table before it used glibc's
// strerrorname_np: the same text (messages, --stats-json keys and
// Prometheus labels depend on it).
TEST(ErrnoName, NamesAsBefore) {
  const struct {
    int err;
    const char* name;
  } kNames[] = {
      {EPERM, "EPERM"},           {ENOENT, "ENOENT"},   {ESRCH, "ESRCH"},
      {EINTR, "EINTR"},           {EIO, "EIO"},         {E2BIG, "E2BIG"},
      {EBADF, "EBADF"},           {EAGAIN, "EAGAIN"},   {ENOMEM, "ENOMEM"},
      {EACCES, "EACCES"},         {EFAULT, "EFAULT"},   {EBUSY, "EBUSY"},
      {EEXIST, "EEXIST"},         {ENODEV, "ENODEV"},   {ENOTDIR, "ENOTDIR"},
      {EISDIR, "EISDIR"},         {EINVAL, "EINVAL"},   {EMFILE, "EMFILE"},
      {EFBIG, "EFBIG"},           {ENOSPC, "ENOSPC"},   {ERANGE, "ERANGE"},
      {ENOSYS, "ENOSYS"},         {ENODATA, "ENODATA"}, {ELOOP, "ELOOP"},
      {EOPNOTSUPP, "EOPNOTSUPP"}, {ENXIO, "ENXIO"},     {EXDEV, "EXDEV"},
  };
  for (const auto& n : kNames) EXPECT_EQ(ErrnoName(n.err), n.name);
}

TEST(ErrnoName, NamesEveryErrnoAndNumbersTheRest) {
  EXPECT_EQ(ErrnoName(ENFILE), "ENFILE");  // "E23" before
  EXPECT_EQ(ErrnoName(EHWPOISON), "EHWPOISON");
  EXPECT_EQ(ErrnoName(0), "E0");
  EXPECT_EQ(ErrnoName(4095), "E4095");
  EXPECT_EQ(ErrnoName(-1), "E-1");
}

TEST(ErrnoStatus, NamesWhatAndErrno) {
  absl::Status s = ErrnoStatus(ENOENT, "open /sys/x");
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_EQ(s.message(), "open /sys/x: ENOENT (No such file or directory)");
}

}  // namespace
}  // namespace hotpage
