// The many-tensor kernels' index arithmetic, run on the host: the batches the launches take and
// the chunk lookup each block does (the very inline function the kernels call) must visit every
// element of every tensor exactly once, whatever the sizes: empty tensors, one element either side
// of a chunk's end, more tensors than a batch holds.

#include "exec/cuda/tensor_batches.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace splitbrain::exec::cuda {
namespace {

// Tensors of the given sizes; their `first` pointers are only names here (never read).
std::vector<ChunkedTensor> tensors_of(const std::vector<int64_t>& sizes) {
  std::vector<ChunkedTensor> tensors;
  for (size_t i = 0; i < sizes.size(); ++i) {
    ChunkedTensor tensor;
    tensor.elements = sizes[i];
    tensor.first = reinterpret_cast<float*>((i + 1) * 64);
    tensors.push_back(tensor);
  }
  return tensors;
}

// How often each element of each tensor (named by `first`) is visited by the kernels' loop.
std::map<float*, std::vector<int>> visits(const std::vector<TensorBatch>& batches) {
  std::map<float*, std::vector<int>> seen;
  for (const TensorBatch& batch : batches) {
    EXPECT_GT(batch.count, 0);
    EXPECT_LE(batch.count, kTensorsPerBatch);
    for (int64_t chunk = 0; chunk < batch.chunks; ++chunk) {
      const ChunkElements span = chunk_elements(batch, chunk);
      const ChunkedTensor& tensor = batch.tensors[span.tensor];
      EXPECT_LT(span.begin, span.end) << "chunk " << chunk << " covers nothing";
      std::vector<int>& counts = seen[tensor.first];
      counts.resize(static_cast<size_t>(tensor.elements));
      for (int64_t k = span.begin; k < span.end; ++k) ++counts.at(static_cast<size_t>(k));
    }
  }
  return seen;
}

void expect_every_element_once(const std::vector<int64_t>& sizes) {
  const std::vector<ChunkedTensor> tensors = tensors_of(sizes);
  const std::map<float*, std::vector<int>> seen = visits(tensor_batches(tensors));
  for (const ChunkedTensor& tensor : tensors) {
    if (tensor.elements == 0) {
      EXPECT_FALSE(seen.contains(tensor.first));
      continue;
    }
    ASSERT_TRUE(seen.contains(tensor.first)) << "a tensor of " << tensor.elements << " elements is never visited";
    EXPECT_EQ(seen.at(tensor.first), std::vector<int>(static_cast<size_t>(tensor.elements), 1))
        << "a tensor of " << tensor.elements << " elements";
  }
}

TEST(TensorBatches, EveryElementOnceAtChunkEdgesAndAroundEmptyTensors) {
  expect_every_element_once(
      {1, kElementsPerChunk - 1, kElementsPerChunk, kElementsPerChunk + 1, 3, 5 * kElementsPerChunk + 17});
  expect_every_element_once({0, 5, 0, 0, kElementsPerChunk, 0});
  expect_every_element_once({0});
  expect_every_element_once({});
}

TEST(TensorBatches, MoreTensorsThanABatchHoldsGoInOrderIntoFullBatches) {
  const std::vector<ChunkedTensor> tensors = tensors_of(std::vector<int64_t>(2 * kTensorsPerBatch + 5, 7));
  const std::vector<TensorBatch> batches = tensor_batches(tensors);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(static_cast<int>(batches.size()), plans::optimizer_launches(static_cast<int>(tensors.size())))
      << "the simulator prices as many launches";
  EXPECT_EQ(batches[0].count, kTensorsPerBatch);
  EXPECT_EQ(batches[1].count, kTensorsPerBatch);
  EXPECT_EQ(batches[2].count, 5);
  EXPECT_EQ(batches[1].tensors[0].first, tensors[kTensorsPerBatch].first);
  EXPECT_EQ(batches[1].tensors[0].first_chunk, 0);  // numbered within its batch
  expect_every_element_once(std::vector<int64_t>(2 * kTensorsPerBatch + 5, 7));
}

TEST(TensorBatches, RandomSizesAreEachVisitedOnce) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> count(0, 3 * kTensorsPerBatch);
  std::uniform_int_distribution<int64_t> size(0, 3 * kElementsPerChunk);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<int64_t> sizes(static_cast<size_t>(count(random)));
    for (int64_t& s : sizes) s = random() % 4 == 0 ? 0 : size(random);
    expect_every_element_once(sizes);
  }
}

}  // namespace
}  // namespace splitbrain::exec::cuda
