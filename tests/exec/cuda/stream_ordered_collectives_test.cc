// Collectives on device memory order themselves against the compute stream by events, not by the
// host. On one GPU the communicator has one member, and NCCL's gather and reduce-scatter are then
// its own copies on the communication stream: with the compute stream held (stream_hold.h) and
// the input written behind the hold, the copy must still read the written values, test() must
// say "not finished" while the hold lasts, and what the compute stream queues after wait() must
// see the result, all without the host waiting in between.

#include "exec/cuda/stream_ordered_collectives.h"

#include <gtest/gtest.h>

#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/device_buffer.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/cuda/stream_hold.h"

namespace splitbrain::exec::cuda {
namespace {

constexpr int64_t kElements = 1 << 16;
constexpr double kHoldSeconds = 0.05;  // far longer than the host takes to queue and test

class StreamOrderedCollectivesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    context_ = std::make_unique<CudaContext>(0);
    int device = 0;
    SB_NCCL_CHECK(ncclCommInitAll(&communicator_, 1, &device));
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&communication_, cudaStreamNonBlocking));
    // A communicator's first calls may do one-time work that waits for the device (loading
    // kernels): done here, so "not finished while held" below tests the ordering alone.
    const DeviceBuffer from(sizeof(float));
    const DeviceBuffer into(sizeof(float));
    SB_NCCL_CHECK(ncclAllGather(from.data(), into.data(), 1, ncclFloat, communicator_, communication_));
    SB_NCCL_CHECK(ncclReduceScatter(from.data(), into.data(), 1, ncclFloat, ncclSum, communicator_, communication_));
    SB_NCCL_CHECK(ncclAllReduce(from.data(), into.data(), 1, ncclFloat, ncclSum, communicator_, communication_));
    SB_CUDA_CHECK(cudaStreamSynchronize(communication_));
  }
  void TearDown() override {
    if (communicator_ != nullptr) SB_NCCL_CHECK(ncclCommDestroy(communicator_));
    if (communication_ != nullptr) SB_CUDA_CHECK(cudaStreamDestroy(communication_));
  }

  // `buffer` written `value` behind a hold of the compute stream.
  void write_late(const DeviceBuffer& buffer, float value) {
    fill_on_device(context_->stream(), kElements, -1.0f, buffer.as<float>());
    hold_stream(context_->stream(), kHoldSeconds);
    fill_on_device(context_->stream(), kElements, value, buffer.as<float>());
  }
  // `from`'s values as the compute stream sees them next: copied on it, then read.
  std::vector<float> seen_by_compute(const DeviceBuffer& from) {
    const DeviceBuffer copy(from.bytes());
    SB_CUDA_CHECK(
        cudaMemcpyAsync(copy.data(), from.data(), from.bytes(), cudaMemcpyDeviceToDevice, context_->stream()));
    std::vector<float> values(static_cast<size_t>(kElements));
    download(context_->stream(), copy, copy.bytes(), values.data());
    SB_CUDA_CHECK(cudaStreamSynchronize(context_->stream()));
    return values;
  }
  OrderedStreams streams() const { return {context_->stream(), communication_}; }

  std::unique_ptr<CudaContext> context_;
  ncclComm_t communicator_ = nullptr;
  cudaStream_t communication_ = nullptr;
};

TEST_F(StreamOrderedCollectivesTest, AGatherReadsWhatTheComputeStreamWroteAndIsReadAfterIt) {
  const DeviceBuffer input(kElements * sizeof(float));
  const DeviceBuffer output(kElements * sizeof(float));
  write_late(input, 3.0f);
  auto pending = start_all_gather(streams(), communicator_, input.as<float>(), output.as<float>(), kElements);
  EXPECT_FALSE(pending->test()) << "finished while the compute stream was still held before the input's writes";
  pending->wait();
  EXPECT_EQ(seen_by_compute(output), std::vector<float>(kElements, 3.0f));
  EXPECT_TRUE(pending->test());
}

TEST_F(StreamOrderedCollectivesTest, AReduceScatterAndAnInPlaceSumFollowTheComputeStreamToo) {
  const DeviceBuffer input(kElements * sizeof(float));
  const DeviceBuffer output(kElements * sizeof(float));
  write_late(input, 5.0f);
  auto scatter = start_reduce_scatter(streams(), communicator_, input.as<float>(), output.as<float>(), kElements);
  scatter->wait();
  auto sum = start_all_reduce(streams(), communicator_, output.as<float>(), kElements);  // one member: unchanged
  sum->wait();
  EXPECT_EQ(seen_by_compute(output), std::vector<float>(kElements, 5.0f));
}

TEST_F(StreamOrderedCollectivesTest, AnOperationDroppedUnwaitedFinishesBeforeItsBuffersCanGo) {
  const DeviceBuffer input(kElements * sizeof(float));
  const DeviceBuffer output(kElements * sizeof(float));
  write_late(input, 7.0f);
  {
    auto dropped = start_all_gather(streams(), communicator_, input.as<float>(), output.as<float>(), kElements);
  }  // the destructor waits on the host: the gather has run
  const cudaError_t query = cudaStreamQuery(communication_);
  EXPECT_EQ(query, cudaSuccess) << cudaGetErrorString(query);
  EXPECT_EQ(seen_by_compute(output), std::vector<float>(kElements, 7.0f));
}

}  // namespace
}  // namespace splitbrain::exec::cuda
