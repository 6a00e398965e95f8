// The progress pump: it runs only while held, and it completes a started all-reduce while the
// working thread makes no MPI call (what a long layer does to a gradient bucket's reduction).

#include "exec/comm/progress_pump.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace splitbrain::exec::comm {
namespace {

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

TEST(ProgressPump, ProbesOnlyWhileHeld) {
  const ProgressPump* pump = process_progress_pump();  // MpiProcess's (mpi_test_main.cc)
  ASSERT_NE(pump, nullptr) << "MPI did not provide MPI_THREAD_MULTIPLE";
  // A probe under way when an earlier test's hold ended still counts once it finishes (CI read
  // 777 then 778); probes take microseconds, so 5 ms lets it end before the idle count is read.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const long idle = pump->probes();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(pump->probes(), idle);
  {
    const ProgressHold progress = keep_mpi_progressing();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const long held = pump->probes();
  EXPECT_GT(held, idle);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_LE(pump->probes(), held + 1);  // the probe under way when the hold ended
}

TEST(ProgressPump, OnePerProcess) { EXPECT_THROW(ProgressPump(MPI_COMM_WORLD, 100e-6), std::logic_error); }

TEST(ProgressPump, CompletesAStartedAllReduceWhileTheCallerComputes) {
  if (world_size() == 1) GTEST_SKIP() << "one rank: the all-reduce completes when it starts";
  std::vector<float> buffer(size_t{1} << 20, 1.0f);  // 4 MiB: libnbc needs several rounds
  MPI_Request request = MPI_REQUEST_NULL;
  ProgressHold progress = keep_mpi_progressing();
  ASSERT_EQ(MPI_Iallreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, MPI_SUM,
                           MPI_COMM_WORLD, &request),
            MPI_SUCCESS);
  // No MPI call here for far longer than the sum takes over shared memory (a few ms).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  int done = 0;
  ASSERT_EQ(MPI_Test(&request, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_NE(done, 0) << "the all-reduce did not complete while the caller slept";
  if (done == 0) MPI_Wait(&request, MPI_STATUS_IGNORE);
  EXPECT_EQ(buffer.front(), static_cast<float>(world_size()));
  EXPECT_EQ(buffer.back(), static_cast<float>(world_size()));
}

}  // namespace
}  // namespace splitbrain::exec::comm
