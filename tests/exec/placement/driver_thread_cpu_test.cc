// give_calling_thread_its_own_cpu (exec/comm/driver_thread_cpu.h): the driver ends alone on one of
// the process's CPUs, the threads that existed on all the others, and nothing moves when there is
// only one.

#include "exec/comm/driver_thread_cpu.h"
#include "exec/comm/rank_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace splitbrain::exec::comm {
namespace {

// A thread that exists before the call and reports its CPUs after it.
class WaitingHelper {
 public:
  WaitingHelper()
      : thread_([this] {
          while (!go_.load()) std::this_thread::yield();
          cpus_.set_value(allowed_cpus());
        }) {}
  ~WaitingHelper() {
    go_ = true;
    thread_.join();
  }
  std::vector<int> cpus_after_release() {
    go_ = true;
    return cpus_.get_future().get();
  }

 private:
  std::atomic<bool> go_{false};
  std::promise<std::vector<int>> cpus_;
  std::thread thread_;
};

TEST(DriverThreadCpu, TheDriverGetsOneCpuAndEveryOtherThreadTheRest) {
  const std::vector<int> before = allowed_cpus();
  if (before.size() < 2) GTEST_SKIP() << "needs 2 CPUs, this process has " << before.size();
  WaitingHelper helper;
  const auto placed = give_calling_thread_its_own_cpu();
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(allowed_cpus(), std::vector<int>{placed->driver_cpu});
  EXPECT_EQ(helper.cpus_after_release(), placed->helper_cpus);
  std::vector<int> together = placed->helper_cpus;
  together.push_back(placed->driver_cpu);
  std::sort(together.begin(), together.end());
  EXPECT_EQ(together, before);  // every CPU used once, none added
  // A thread the driver starts afterwards shares its CPU: why the call comes after the helpers.
  std::vector<int> later;
  std::thread([&] { later = allowed_cpus(); }).join();
  EXPECT_EQ(later, std::vector<int>{placed->driver_cpu});
  pin_calling_thread(before);
}

TEST(DriverThreadCpu, ASingleCpuIsLeftAsItIs) {
  const std::vector<int> before = allowed_cpus();
  pin_calling_thread({before.back()});
  WaitingHelper helper;  // started on the single CPU
  EXPECT_FALSE(give_calling_thread_its_own_cpu().has_value());
  EXPECT_EQ(allowed_cpus(), std::vector<int>{before.back()});
  EXPECT_EQ(helper.cpus_after_release(), std::vector<int>{before.back()});
  pin_calling_thread(before);
}

}  // namespace
}  // namespace splitbrain::exec::comm
