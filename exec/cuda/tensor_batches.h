#pragma once
// Many tensors updated or cleared by one kernel launch (optimizer_kernels.h's *_all): the
// tensors' arrays travel in the launch itself, as a kernel parameter of at most 4 KB, so nothing
// is uploaded and no table in device memory must outlive the kernels that read it (apex's
// multi_tensor_apply hands its lists over the same way). Each tensor is cut into chunks of
// kElementsPerChunk elements; a block takes one chunk at a time and finds its tensor by bisection.
//
// Included by .cu files (C++17) and by the C++20 code that fills the batches.

#include <cstdint>
#include <vector>

#include "exec/kernels/host_device_function.h"
#include "plans/optimizer_launches.h"

namespace splitbrain::exec::cuda {

constexpr int64_t kElementsPerChunk = 4096;
constexpr int kTensorsPerBatch = plans::kTensorsPerOptimizerLaunch;

// A tensor's arrays (a kernel uses those it needs; null otherwise) and its place in the batch.
struct ChunkedTensor {
  int64_t elements = 0;
  int64_t first_chunk = 0;  // chunks of the batch's tensors before it
  float* first = nullptr;
  const float* second = nullptr;
  float* third = nullptr;
  float* fourth = nullptr;
};

struct TensorBatch {
  ChunkedTensor tensors[kTensorsPerBatch];
  int count = 0;
  int64_t chunks = 0;  // of all its tensors
};
// Kernel parameters may take 4 KB on every architecture and CUDA version we build for.
static_assert(sizeof(TensorBatch) <= 4096, "a TensorBatch must fit in a kernel's parameters");

// The elements [begin, end) of one tensor that one chunk covers.
struct ChunkElements {
  int tensor = 0;  // in the batch
  int64_t begin = 0;
  int64_t end = 0;
};

// Chunk `chunk` (0 <= chunk < batch.chunks) of `batch`: the last tensor whose first chunk is at
// or before it, and its elements there.
SB_HOST_DEVICE inline ChunkElements chunk_elements(const TensorBatch& batch, int64_t chunk) {
  int low = 0;
  int high = batch.count - 1;
  while (low < high) {
    const int middle = (low + high + 1) / 2;
    if (batch.tensors[middle].first_chunk <= chunk) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  const ChunkedTensor& tensor = batch.tensors[low];
  const int64_t begin = (chunk - tensor.first_chunk) * kElementsPerChunk;
  const int64_t end = begin + kElementsPerChunk < tensor.elements ? begin + kElementsPerChunk : tensor.elements;
  return {low, begin, end};
}

// `tensors` in batches of at most kTensorsPerBatch, in order, each tensor's chunks numbered after
// those of the batch's tensors before it; tensors without elements are left out.
std::vector<TensorBatch> tensor_batches(const std::vector<ChunkedTensor>& tensors);

}  // namespace splitbrain::exec::cuda
