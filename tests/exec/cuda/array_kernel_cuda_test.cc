// The GPU's queued host transfers (the labels up, the loss down): queued behind the stream's work
// without waiting for it, in the stream's order, counted, and through page-locked slots reused
// once their copies are done. And its row copies (a height split's block into its extended array),
// against the host kernel's.

#include "exec/cuda/array_kernel.h"

#include <gtest/gtest.h>

#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/stream_hold.h"
#include "exec/kernels/array_kernel.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::OnDevice;

TEST(CudaArrayKernel, RowCopiesMatchTheHostKernel) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaContext context(0);
  ArrayKernel kernel(context);
  // 3 planes of 5 rows of 4 into 3 planes of 7 rows: rows 1-2 of each plane to rows 3-4.
  const kernels::RowCopy copy{3, 4, 2, 5, 1, 7, 3};
  std::vector<float> from(3 * 5 * 4);
  for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<float>(i) + 0.5f;
  std::vector<float> expected(3 * 7 * 4, -1.0f);
  kernels::make_host_array_kernel()->copy_rows(from.data(), expected.data(), copy);
  const OnDevice<float> source(from);
  const OnDevice<float> target(std::vector<float>(3 * 7 * 4, -1.0f));
  kernel.copy_rows(source.get(), target.get(), copy);
  EXPECT_EQ(target.host(), expected);
  EXPECT_EQ(context.host_transfers().count(), 0);
}

TEST(CudaArrayKernel, QueuedTransfersWaitForNothingAndKeepTheStreamsOrder) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaContext context(0);
  ArrayKernel kernel(context);
  const OnDevice<int32_t> labels(4);
  const OnDevice<double> loss(std::vector<double>{2.5});
  // The stream is busy for a while: what is queued now runs after it.
  hold_stream(context.stream(), 0.2);
  {
    std::vector<int32_t> host{3, 1, 4, 1};
    kernel.upload_queued(host, labels.get());
    host.assign(4, -1);  // the host's copy may change as soon as the upload is queued
  }
  auto download = kernel.download_queued(loss.get());
  // Queued after the download: the download must read the value from before it.
  SB_CUDA_CHECK(cudaMemsetAsync(loss.get(), 0, sizeof(double), context.stream()));
  // Neither call waited for the held stream.
  EXPECT_EQ(cudaStreamQuery(context.stream()), cudaErrorNotReady);
  EXPECT_EQ(download->wait(), 2.5);
  EXPECT_EQ(labels.host(), (std::vector<int32_t>{3, 1, 4, 1}));
  EXPECT_EQ(loss.host(), std::vector<double>{0.0});
  EXPECT_EQ(context.host_transfers().count(), 2);
  EXPECT_EQ(context.host_transfers().bytes, 4 * 4 + 8);
  EXPECT_EQ(context.host_transfers().count_of(HostTransferPurpose::labels), 1);
  EXPECT_EQ(context.host_transfers().count_of(HostTransferPurpose::loss), 1);
}

TEST(CudaArrayKernel, SlotsAreReusedOnceTheirCopiesAreDone) {
  if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  CudaContext context(0);
  ArrayKernel kernel(context);
  const OnDevice<int32_t> labels(64);
  const OnDevice<double> loss(std::vector<double>{1.0});
  const std::vector<int32_t> host(64, 7);
  for (int step = 0; step < 50; ++step) {
    kernel.upload_queued(host, labels.get());
    auto download = kernel.download_queued(loss.get());
    EXPECT_EQ(download->wait(), 1.0);
  }
  // One slot for the download, held while it is read; the upload's done by the next step.
  EXPECT_LE(kernel.page_locked_slots(), 3U);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
