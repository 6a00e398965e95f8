#pragma once
// ChunkedTensorTable: the device copy of a many-tensor kernel's table (optimizer_kernels.h's
// ChunkedTensor list). A step updates the same parameters in the same memory every time, so the
// table is uploaded once and reused: each call compares the tensors with the copy it holds and
// uploads only when they differ (a counted host transfer, CudaContext::count_host_transfer).

#include <cuda_runtime_api.h>

#include <span>
#include <vector>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/optimizer_kernels.h"

namespace splitbrain::exec::cuda {

// Numbers each tensor's chunks after those of the tensors before it (first_chunk); returns the
// chunks of all of them.
int64_t number_chunks(std::span<ChunkedTensor> tensors);

class ChunkedTensorTable {
 public:
  explicit ChunkedTensorTable(CudaContext& context) : context_(context) {}
  ~ChunkedTensorTable();
  ChunkedTensorTable(const ChunkedTensorTable&) = delete;
  ChunkedTensorTable& operator=(const ChunkedTensorTable&) = delete;

  // `tensors` (numbered) in device memory, for kernels queued next on the context's stream.
  // Before overwriting an older table it waits for the stream: kernels queued earlier may still
  // read it.
  const ChunkedTensor* on_device(std::span<const ChunkedTensor> tensors);

 private:
  CudaContext& context_;
  std::vector<ChunkedTensor> held_;  // what the device copy holds
  ChunkedTensor* device_ = nullptr;
  size_t capacity_ = 0;  // tensors the device copy has room for
};

}  // namespace splitbrain::exec::cuda
