// CudaEventClock times the stream, not the host: a mark after a held stream reads the hold, with
// the host returning at once; the stream's waits for the host are in the reading, unless a lead
// queued the work first; and a new start forgets the previous marks.

#include "exec/cuda/cuda_event_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "exec/cuda/cuda_device.h"
#include "exec/cuda/stream_hold.h"

namespace splitbrain::exec::cuda {
namespace {

class CudaEventClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    context_ = std::make_shared<CudaContext>(0);
  }
  std::shared_ptr<CudaContext> context_;
};

TEST_F(CudaEventClockTest, MarksReadTheStreamWithoutTheHostWaiting) {
  CudaEventClock clock(context_);
  clock.start();
  const auto host_start = std::chrono::steady_clock::now();
  hold_stream(context_->stream(), 0.020);
  clock.mark();
  hold_stream(context_->stream(), 0.010);
  clock.mark();
  const double host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
  EXPECT_LT(host_seconds, 0.015) << "queuing the holds and marks must not wait for them";
  const std::vector<double> seconds = clock.seconds_since_start();
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_GE(seconds[0], 0.020);
  EXPECT_LT(seconds[0], 0.030);
  EXPECT_GE(seconds[1] - seconds[0], 0.010);
  EXPECT_LT(seconds[1] - seconds[0], 0.020);
}

TEST_F(CudaEventClockTest, TheReadingIncludesTheStreamWaitingForTheHost) {
  // The host queues the work 5 ms after start(): the stream waits idle for it, and that wait is
  // part of the step the mark times.
  CudaEventClock clock(context_);
  clock.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  hold_stream(context_->stream(), 0.001);
  clock.mark();
  EXPECT_GE(clock.seconds_since_start().at(0), 0.006);
}

TEST_F(CudaEventClockTest, ALeadKeepsTheHostsDelayOutOfTheReading) {
  // The host queues the work 5 ms after start(): with a 20 ms lead it is queued before the
  // timeline starts, and the mark reads the work alone.
  CudaEventClock clock(context_, 0.020);
  clock.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  hold_stream(context_->stream(), 0.001);
  clock.mark();
  const double seconds = clock.seconds_since_start().at(0);
  EXPECT_GE(seconds, 0.001);
  EXPECT_LT(seconds, 0.004);
}

TEST_F(CudaEventClockTest, StartForgetsTheMarksBefore) {
  CudaEventClock clock(context_);
  clock.start();
  clock.mark();
  clock.mark();
  EXPECT_EQ(clock.seconds_since_start().size(), 2u);
  clock.start();
  hold_stream(context_->stream(), 0.002);
  clock.mark();
  const std::vector<double> seconds = clock.seconds_since_start();
  ASSERT_EQ(seconds.size(), 1u);
  EXPECT_GE(seconds[0], 0.002);
  EXPECT_THROW(CudaEventClock(context_).mark(), std::logic_error);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
