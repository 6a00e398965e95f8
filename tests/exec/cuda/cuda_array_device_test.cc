// CudaArrayDevice's element operations and parameter update against HostDevice's on the same
// arrays: every call must leave the same values (bit for bit: they are copies, sums of two
// floats and the optimizer's bit-exact kernels), and the caching allocator must reuse a freed
// block of the same size instead of asking the driver again.

#include "exec/cuda/cuda_array_device.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "exec/cuda/cuda_device.h"
#include "exec/runtime/host_device.h"
#include "tests/exec/cuda/cuda_test_util.h"

namespace splitbrain::exec::cuda {
namespace {

using testing::random_floats;

class CudaArrayDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    context_ = std::make_shared<CudaContext>(0);
    cuda_ = std::make_unique<CudaArrayDevice>(context_);
  }

  // The same array on both devices, from seeded random values.
  struct Twin {
    std::unique_ptr<DeviceArray> host;
    std::unique_ptr<DeviceArray> cuda;
  };
  enum class Values { any, non_negative };
  Twin twin(std::vector<int64_t> shape, unsigned seed, Values kind = Values::any) {
    Twin t{host_.allocate(shape, false), cuda_->allocate(shape, false)};
    std::vector<float> values = random_floats(static_cast<std::size_t>(t.host->elements()), seed);
    if (kind == Values::non_negative)
      for (float& value : values) value = std::abs(value);
    host_.upload(values, *t.host);
    cuda_->upload(values, *t.cuda);
    return t;
  }
  void expect_same(const Twin& t, const char* what) {
    EXPECT_EQ(host_copy(*cuda_, *t.cuda), host_copy(host_, *t.host)) << what;
  }

  HostDevice host_;
  std::shared_ptr<CudaContext> context_;
  std::unique_ptr<CudaArrayDevice> cuda_;
};

TEST_F(CudaArrayDeviceTest, ElementRangesMatchTheHostDevice) {
  Twin a = twin({6, 10}, 1);
  Twin b = twin({6, 10}, 2);
  host_.fill(*a.host, 3, 17, 2.5f);
  cuda_->fill(*a.cuda, 3, 17, 2.5f);
  host_.fill(*a.host, 30, 5, 0.0f);
  cuda_->fill(*a.cuda, 30, 5, 0.0f);
  expect_same(a, "fill");
  host_.copy(*b.host, 7, *a.host, 40, 12);
  cuda_->copy(*b.cuda, 7, *a.cuda, 40, 12);
  expect_same(a, "copy");
  host_.add(*b.host, *a.host);
  cuda_->add(*b.cuda, *a.cuda);
  expect_same(a, "add");
}

TEST_F(CudaArrayDeviceTest, BlocksMatchTheHostDevice) {
  Twin whole = twin({7, 9}, 3);
  Twin block = twin({3, 4}, 4);
  const std::vector<int64_t> offset{2, 5};
  host_.add_block(*block.host, *whole.host, offset);
  cuda_->add_block(*block.cuda, *whole.cuda, offset);
  expect_same(whole, "add_block");
  host_.copy_block(*whole.host, std::vector<int64_t>{4, 1}, *block.host);
  cuda_->copy_block(*whole.cuda, std::vector<int64_t>{4, 1}, *block.cuda);
  expect_same(block, "copy_block");
}

TEST_F(CudaArrayDeviceTest, PackAndUnpackMatchTheHostDevice) {
  Twin first = twin({5}, 5);
  Twin second = twin({2, 3}, 6);
  Twin flat = twin({16}, 7);
  host_.pack(std::vector<const DeviceArray*>{first.host.get(), second.host.get()}, *flat.host);
  cuda_->pack(std::vector<const DeviceArray*>{first.cuda.get(), second.cuda.get()}, *flat.cuda);
  expect_same(flat, "pack (the tail zeroed)");
  host_.fill(*flat.host, 0, 16, 1.5f);
  cuda_->fill(*flat.cuda, 0, 16, 1.5f);
  host_.unpack(*flat.host, std::vector<DeviceArray*>{first.host.get(), second.host.get()});
  cuda_->unpack(*flat.cuda, std::vector<DeviceArray*>{first.cuda.get(), second.cuda.get()});
  expect_same(first, "unpack, first part");
  expect_same(second, "unpack, second part");
}

TEST_F(CudaArrayDeviceTest, UpdatesMatchTheHostDevice) {
  for (const plans::OptimizerKind kind : {plans::OptimizerKind::sgd_momentum, plans::OptimizerKind::adam}) {
    plans::OptimizerConfig config;
    config.kind = kind;
    config.weight_decay = 0.01;
    // Adam's second moment is a mean of squares: a negative one would make both sides NaN.
    Twin p = twin({300}, 8), g = twin({300}, 9), m = twin({300}, 10), v = twin({300}, 11, Values::non_negative);
    for (int64_t step = 1; step <= 3; ++step) {
      host_.update(config, step, *p.host, *g.host, *m.host, v.host.get());
      cuda_->update(config, step, *p.cuda, *g.cuda, *m.cuda, v.cuda.get());
    }
    expect_same(p, "parameters after three updates");
    expect_same(m, "first moment");
  }
}

TEST_F(CudaArrayDeviceTest, TheAllocatorReusesFreedBlocksOfTheSameSize) {
  const DeviceMemoryPool& pool = cuda_->memory_pool();
  const int64_t reserved_before = pool.reserved_bytes();
  { auto array = cuda_->allocate({1000}, true); }
  const int64_t reserved_after_one = pool.reserved_bytes();
  EXPECT_GE(reserved_after_one - reserved_before, 4000);
  { auto again = cuda_->allocate({1000}, true); }
  EXPECT_EQ(pool.reserved_bytes(), reserved_after_one) << "the freed block was not reused";
  EXPECT_EQ(pool.in_use_bytes(), 0);
  EXPECT_GE(pool.peak_in_use_bytes(), 4000);
}

TEST_F(CudaArrayDeviceTest, TransfersAreCounted) {
  const int64_t before = cuda_->host_transfers().count;
  Twin a = twin({8}, 12);
  (void)host_copy(*cuda_, *a.cuda);
  EXPECT_EQ(cuda_->host_transfers().count - before, 2);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
