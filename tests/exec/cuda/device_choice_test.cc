// One GPU per rank: a node that runs more ranks than it sees GPUs (or sees none) is refused with
// the counts and what to do, instead of NCCL's "internal error" at ncclCommInitRank. Needs no GPU.

#include <gtest/gtest.h>

#include <string>

#include "exec/cuda/cuda_device.h"

namespace splitbrain::exec::cuda {
namespace {

TEST(DeviceChoice, EveryRankOfANodeNeedsItsOwnGpu) {
  EXPECT_EQ(device_shortage(1, 1), "");
  EXPECT_EQ(device_shortage(8, 8), "");
  EXPECT_EQ(device_shortage(2, 8), "");
  const std::string too_many = device_shortage(4, 2);
  EXPECT_NE(too_many.find("4 ranks run on this node but it has 2 visible GPUs"), std::string::npos) << too_many;
  EXPECT_NE(too_many.find("at most 2 ranks per node"), std::string::npos) << too_many;
  EXPECT_NE(device_shortage(2, 1).find("1 visible GPU;"), std::string::npos) << device_shortage(2, 1);
  EXPECT_NE(device_shortage(1, 0).find("no CUDA device is visible"), std::string::npos);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
