// CudaArrayDevice's element operations and parameter update against HostDevice's on the same
// arrays: every call must leave the same values (bit for bit: they are copies, sums of two
// floats and the optimizer's bit-exact kernels), and the caching allocator must reuse a freed
// block of the same size instead of asking the driver again.

#include "exec/cuda/cuda_array_device.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <memory_resource>
#include <vector>

#include "exec/cuda/cuda_device.h"
#include "exec/cuda/optimizer_kernels.h"
#include "exec/cuda/stream_hold.h"
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
    Twin t{host_.memory().allocate(shape, false), cuda_->memory().allocate(shape, false)};
    std::vector<float> values = random_floats(static_cast<std::size_t>(t.host->elements()), seed);
    if (kind == Values::non_negative)
      for (float& value : values) value = std::abs(value);
    host_.host_link().upload(values, *t.host);
    cuda_->host_link().upload(values, *t.cuda);
    return t;
  }
  void expect_same(const Twin& t, const char* what) {
    EXPECT_EQ(host_copy(cuda_->host_link(), *t.cuda), host_copy(host_.host_link(), *t.host)) << what;
  }

  HostDevice host_;
  std::shared_ptr<CudaContext> context_;
  std::unique_ptr<CudaArrayDevice> cuda_;
};

TEST_F(CudaArrayDeviceTest, ElementRangesMatchTheHostDevice) {
  Twin a = twin({6, 10}, 1);
  Twin b = twin({6, 10}, 2);
  host_.memory().fill(*a.host, 3, 17, 2.5f);
  cuda_->memory().fill(*a.cuda, 3, 17, 2.5f);
  host_.memory().fill(*a.host, 30, 5, 0.0f);
  cuda_->memory().fill(*a.cuda, 30, 5, 0.0f);
  expect_same(a, "fill");
  host_.memory().copy(*b.host, 7, *a.host, 40, 12);
  cuda_->memory().copy(*b.cuda, 7, *a.cuda, 40, 12);
  expect_same(a, "copy");
  host_.memory().add(*b.host, *a.host);
  cuda_->memory().add(*b.cuda, *a.cuda);
  expect_same(a, "add");
}

TEST_F(CudaArrayDeviceTest, BlocksMatchTheHostDevice) {
  Twin whole = twin({7, 9}, 3);
  Twin block = twin({3, 4}, 4);
  const std::vector<int64_t> offset{2, 5};
  host_.memory().add_block(*block.host, *whole.host, offset);
  cuda_->memory().add_block(*block.cuda, *whole.cuda, offset);
  expect_same(whole, "add_block");
  host_.memory().copy_block(*whole.host, std::vector<int64_t>{4, 1}, *block.host);
  cuda_->memory().copy_block(*whole.cuda, std::vector<int64_t>{4, 1}, *block.cuda);
  expect_same(block, "copy_block");
}

// A collective's pieces cut out along an inner dimension into a flat array at an offset, and laid
// back into a larger array's planes.
TEST_F(CudaArrayDeviceTest, RowCopiesMatchTheHostDevice) {
  Twin whole = twin({3, 8, 5}, 8);
  Twin flat = twin({70}, 9);
  const kernels::RowCopy cut{.planes = 3,
                             .row_elements = 5,
                             .rows = 4,
                             .from_plane_rows = 8,
                             .from_first_row = 4,
                             .into_plane_rows = 4,
                             .into_first_row = 0};
  host_.memory().copy_rows(*whole.host, 0, *flat.host, 7, cut);
  cuda_->memory().copy_rows(*whole.cuda, 0, *flat.cuda, 7, cut);
  expect_same(flat, "copy_rows out of planes");
  Twin wide = twin({3, 12, 5}, 10);
  const kernels::RowCopy place{.planes = 3,
                               .row_elements = 5,
                               .rows = 4,
                               .from_plane_rows = 4,
                               .from_first_row = 0,
                               .into_plane_rows = 12,
                               .into_first_row = 8};
  host_.memory().copy_rows(*flat.host, 7, *wide.host, 0, place);
  cuda_->memory().copy_rows(*flat.cuda, 7, *wide.cuda, 0, place);
  expect_same(wide, "copy_rows into planes");
  EXPECT_THROW(cuda_->memory().copy_rows(*flat.cuda, 20, *wide.cuda, 0, place), std::logic_error)
      << "past the source's end";
}

TEST_F(CudaArrayDeviceTest, PackAndUnpackMatchTheHostDevice) {
  Twin first = twin({5}, 5);
  Twin second = twin({2, 3}, 6);
  Twin flat = twin({16}, 7);
  host_.memory().pack(std::vector<const DeviceArray*>{first.host.get(), second.host.get()}, *flat.host);
  cuda_->memory().pack(std::vector<const DeviceArray*>{first.cuda.get(), second.cuda.get()}, *flat.cuda);
  expect_same(flat, "pack (the tail zeroed)");
  host_.memory().fill(*flat.host, 0, 16, 1.5f);
  cuda_->memory().fill(*flat.cuda, 0, 16, 1.5f);
  host_.memory().unpack(*flat.host, std::vector<DeviceArray*>{first.host.get(), second.host.get()});
  cuda_->memory().unpack(*flat.cuda, std::vector<DeviceArray*>{first.cuda.get(), second.cuda.get()});
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
      host_.kernels().update(config, step, *p.host, *g.host, *m.host, v.host.get());
      cuda_->kernels().update(config, step, *p.cuda, *g.cuda, *m.cuda, v.cuda.get());
    }
    expect_same(p, "parameters after three updates");
    expect_same(m, "first moment");
  }
}

// The optimizer's many-tensor update: tensors smaller than a chunk, one element either side of a
// chunk's end and several chunks long, and more of them than one launch takes, each updated as the
// host updates it alone; then a shorter list and the clearing of the gradients.
TEST_F(CudaArrayDeviceTest, UpdatingAndClearingManyTensorsInBatchedKernelsMatchesTheHostDevice) {
  std::vector<int64_t> sizes = {1, kElementsPerChunk - 1,     kElementsPerChunk, kElementsPerChunk + 1,
                                3, 5 * kElementsPerChunk + 17};
  for (int64_t i = 0; i < kTensorsPerBatch; ++i) sizes.push_back(1 + (i * 37) % 300);  // into a second launch
  for (const plans::OptimizerKind kind : {plans::OptimizerKind::sgd_momentum, plans::OptimizerKind::adam}) {
    plans::OptimizerConfig config;
    config.kind = kind;
    config.weight_decay = 0.01;
    std::vector<Twin> p, g, m, v;
    unsigned seed = 20;
    for (const int64_t size : sizes) {
      p.push_back(twin({size}, ++seed));
      g.push_back(twin({size}, ++seed));
      m.push_back(twin({size}, ++seed));
      v.push_back(twin({size}, ++seed, Values::non_negative));
    }
    // Each device's arrays of `twins`, the first `count`.
    auto host_arrays = [](std::vector<Twin>& twins, size_t count) {
      std::vector<DeviceArray*> arrays;
      for (size_t i = 0; i < count; ++i) arrays.push_back(twins[i].host.get());
      return arrays;
    };
    auto cuda_arrays = [](std::vector<Twin>& twins, size_t count) {
      std::vector<DeviceArray*> arrays;
      for (size_t i = 0; i < count; ++i) arrays.push_back(twins[i].cuda.get());
      return arrays;
    };
    const bool adam = kind == plans::OptimizerKind::adam;
    for (int64_t step = 1; step <= 3; ++step) {
      const size_t count = step < 3 ? sizes.size() : 4;  // the third step: a shorter list
      for (size_t i = 0; i < count; ++i)
        host_.kernels().update(config, step, *p[i].host, *g[i].host, *m[i].host, adam ? v[i].host.get() : nullptr);
      const std::vector<DeviceArray*> gradients = cuda_arrays(g, count);
      cuda_->kernels().update_all(config, step, cuda_arrays(p, count),
                                  std::vector<const DeviceArray*>(gradients.begin(), gradients.end()),
                                  cuda_arrays(m, count), adam ? cuda_arrays(v, count) : std::vector<DeviceArray*>{});
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      expect_same(p[i], "parameters after three updates");
      expect_same(m[i], "first moment");
      if (adam) expect_same(v[i], "second moment");
    }
    host_.memory().zero_all(host_arrays(g, sizes.size()));
    cuda_->memory().zero_all(cuda_arrays(g, sizes.size()));
    for (const Twin& gradient : g) expect_same(gradient, "cleared gradient");
  }
}

TEST_F(CudaArrayDeviceTest, TheAllocatorReusesFreedBlocksOfTheSameSize) {
  const DeviceMemoryPool& pool = cuda_->memory_pool();
  const int64_t reserved_before = pool.reserved_bytes();
  { auto array = cuda_->memory().allocate({1000}, true); }
  const int64_t reserved_after_one = pool.reserved_bytes();
  EXPECT_GE(reserved_after_one - reserved_before, 4000);
  { auto again = cuda_->memory().allocate({1000}, true); }
  EXPECT_EQ(pool.reserved_bytes(), reserved_after_one) << "the freed block was not reused";
  EXPECT_EQ(pool.in_use_bytes(), 0);
  EXPECT_GE(pool.peak_in_use_bytes(), 4000);
}

TEST_F(CudaArrayDeviceTest, TransfersAreCounted) {
  const int64_t before = cuda_->host_link().host_transfers().count();
  Twin a = twin({8}, 12);
  (void)host_copy(cuda_->host_link(), *a.cuda);
  EXPECT_EQ(cuda_->host_link().host_transfers().count() - before, 2);
  EXPECT_EQ(cuda_->host_link().host_transfers().count_of(HostTransferPurpose::other), 2)
      << "a plain upload and download";
}

// The input batches are read into upload_memory(): it must be page-locked (else each upload is
// first copied by the driver at a fraction of the link's rate), outlive the device, and upload
// and read back exactly.
TEST_F(CudaArrayDeviceTest, UploadMemoryIsPageLockedAndOutlivesTheDevice) {
  const std::shared_ptr<std::pmr::memory_resource> memory = cuda_->host_link().upload_memory();
  const std::vector<float> values = random_floats(4096, 13);
  std::pmr::vector<float> batch(values.begin(), values.end(), memory.get());
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, batch.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost) << "pageable: the driver would stage every upload";
  auto array = cuda_->memory().allocate({4096}, false);
  cuda_->host_link().upload(batch, *array);
  EXPECT_EQ(host_copy(cuda_->host_link(), *array), values);
  array.reset();
  cuda_.reset();  // the batch's memory is still the resource's
  batch.assign(8192, 1.0f);
  EXPECT_EQ(batch.back(), 1.0f);
}

// The input batch's upload is queued: from page-locked memory (the data reader's blocks) and from
// pageable memory (through a slot) alike, it waits for nothing, lands behind what the stream held,
// and is counted as a host transfer.
TEST_F(CudaArrayDeviceTest, QueuedUploadsWaitForNothing) {
  const std::vector<float> values = random_floats(4096, 14);
  std::pmr::vector<float> page_locked(values.begin(), values.end(), cuda_->host_link().upload_memory().get());
  std::vector<float> pageable = values;
  auto from_page_locked = cuda_->memory().allocate({4096}, true);
  auto from_pageable = cuda_->memory().allocate({4096}, true);
  const int64_t transfers_before = cuda_->host_link().host_transfers().count();
  const int64_t waits_before = *cuda_->clock().host_waits();
  hold_stream(context_->stream(), 0.2);
  cuda_->host_link().upload_queued(page_locked, *from_page_locked);
  cuda_->host_link().upload_queued(pageable, *from_pageable);
  EXPECT_EQ(cudaStreamQuery(context_->stream()), cudaErrorNotReady) << "an upload waited for the held stream";
  EXPECT_EQ(*cuda_->clock().host_waits(), waits_before);
  EXPECT_EQ(cuda_->host_link().host_transfers().count() - transfers_before, 2);
  EXPECT_EQ(cuda_->host_link().host_transfers().count_of(HostTransferPurpose::input), 2);
  pageable.assign(pageable.size(), -1.0f);  // copied into a slot: the source may change now
  EXPECT_EQ(host_copy(cuda_->host_link(), *from_page_locked), values);
  EXPECT_EQ(host_copy(cuda_->host_link(), *from_pageable), values);
}

}  // namespace
}  // namespace splitbrain::exec::cuda
