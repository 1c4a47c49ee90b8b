#include "tools/base/termination_signals.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(TerminationSignalThread, SigtermBecomesACallbackOnAnOrdinaryThread) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> got;
  std::thread::id cb_thread;
  auto t = TerminationSignalThread::Start([&](int signo) {
    std::lock_guard<std::mutex> l(mu);  // a lock: fine here, fatal in a handler
    got.push_back(signo);
    cb_thread = std::this_thread::get_id();
    cv.notify_all();
  });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);  // process-directed, like `kill PID`
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(10),
                            [&] { return got.size() >= 2; }));
    EXPECT_NE(cb_thread, std::this_thread::get_id());
  }
  // Both may be pending at once; the kernel then hands out the lower first.
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int>{SIGINT, SIGTERM}));
  EXPECT_EQ((*t)->received(), 2);
  t->reset();  // stops, joins, restores the mask; the process is still alive
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, nullptr, &now);
  EXPECT_FALSE(sigismember(&now, SIGTERM));
}

TEST(TerminationSignalThread, StopsCleanlyWithoutSignals) {
  int calls = 0;
  auto t = TerminationSignalThread::Start([&](int) { ++calls; });
  ASSERT_TRUE(t.ok());
  t->reset();
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace hotpage
