#pragma once
// CudaMemory: CudaArrayDevice's arrays (DeviceMemory, exec/runtime/device_memory.h): CudaArrays
// from the rank's caching allocator, and every copy, fill and sum queued on the context's compute
// stream (the layer kernels' stream), so they run in the step program's order without the host
// waiting.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "exec/cuda/cuda_array.h"
#include "exec/cuda/cuda_context.h"
#include "exec/runtime/device_memory.h"

namespace splitbrain::exec::cuda {

class CudaMemory final : public DeviceMemory {
 public:
  // On `context`'s device and stream; reads the driver's used bytes now, so memory_use() counts
  // from here.
  explicit CudaMemory(CudaContext& context);

  std::unique_ptr<DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) override;
  // The pool's figures and cudaMemGetInfo's used bytes beyond those at construction.
  std::optional<DeviceMemoryUse> memory_use() const override;
  void fill(DeviceArray& array, int64_t first, int64_t count, float value) override;
  void copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first, int64_t count) override;
  void add(const DeviceArray& from, DeviceArray& into) override;
  void copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) override;
  void add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) override;
  void copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                 const kernels::RowCopy& rows) override;
  // In the many-tensor kernel's batches (tensor_batches.h): one launch per batch, not per array.
  void zero_all(std::span<DeviceArray* const> arrays) override;

 private:
  CudaContext& context_;
  int64_t driver_used_at_start_bytes_;
};

}  // namespace splitbrain::exec::cuda
