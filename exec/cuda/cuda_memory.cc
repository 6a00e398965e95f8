#include "exec/cuda/cuda_memory.h"

#include <cstddef>
#include <stdexcept>
#include <utility>

#include "exec/cuda/array_kernel.h"
#include "exec/cuda/cuda_check.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/cuda/optimizer_kernels.h"
#include "exec/cuda/tensor_batches.h"

namespace splitbrain::exec::cuda {
namespace {

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

// Bytes in use on the current device, all processes and libraries together, as the driver counts.
int64_t driver_used_bytes() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<int64_t>(total_bytes - free_bytes);
}

float* memory(DeviceArray& array) { return CudaArray::data_of(array); }
const float* memory(const DeviceArray& array) { return CudaArray::data_of(array); }

}  // namespace

CudaMemory::CudaMemory(CudaContext& context) : context_(context), driver_used_at_start_bytes_(driver_used_bytes()) {}

std::optional<DeviceMemoryUse> CudaMemory::memory_use() const {
  const DeviceMemoryPool& pool = *context_.memory();
  return DeviceMemoryUse{pool.peak_in_use_bytes(), pool.reserved_bytes(),
                         driver_used_bytes() - driver_used_at_start_bytes_};
}

std::unique_ptr<DeviceArray> CudaMemory::allocate(std::vector<int64_t> shape, bool zeroed) {
  auto array = std::make_unique<CudaArray>(std::move(shape), context_.memory());
  if (zeroed && array->elements() > 0)
    SB_CUDA_CHECK(cudaMemsetAsync(array->data(), 0, float_bytes(array->elements()), context_.stream()));
  return array;
}

void CudaMemory::fill(DeviceArray& array, int64_t first, int64_t count, float value) {
  check_element_range(array, first, count, "fill");
  if (count == 0) return;
  float* start = memory(array) + first;
  if (value == 0.0f) {
    SB_CUDA_CHECK(cudaMemsetAsync(start, 0, float_bytes(count), context_.stream()));
  } else {
    fill_on_device(context_.stream(), count, value, start);
  }
}

void CudaMemory::copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                      int64_t count) {
  check_element_range(from, from_first, count, "copy");
  check_element_range(into, into_first, count, "copy");
  if (count == 0) return;
  SB_CUDA_CHECK(cudaMemcpyAsync(memory(into) + into_first, memory(from) + from_first, float_bytes(count),
                                cudaMemcpyDeviceToDevice, context_.stream()));
}

void CudaMemory::add(const DeviceArray& from, DeviceArray& into) {
  if (from.elements() != into.elements()) throw std::logic_error("CudaMemory::add: arrays of different sizes");
  const float one = 1.0f;
  SB_CUBLAS_CHECK(cublasSaxpy_64(context_.cublas(), from.elements(), &one, memory(from), 1, memory(into), 1));
}

void CudaMemory::copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) {
  check_block_inside(block, from, offset, "copy_block");
  const int64_t rows = block.shape()[0], columns = block.shape()[1], whole_columns = from.shape()[1];
  if (rows == 0 || columns == 0) return;
  SB_CUDA_CHECK(cudaMemcpy2DAsync(memory(block), float_bytes(columns),
                                  memory(from) + offset[0] * whole_columns + offset[1], float_bytes(whole_columns),
                                  float_bytes(columns), static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice,
                                  context_.stream()));
}

void CudaMemory::copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                           const kernels::RowCopy& rows) {
  check_rows_inside(from, from_first, into, into_first, rows);
  queue_row_copy(context_.stream(), memory(from) + from_first, memory(into) + into_first, rows);
}

void CudaMemory::add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) {
  check_block_inside(block, into, offset, "add_block");
  const int64_t rows = block.shape()[0], columns = block.shape()[1], whole_columns = into.shape()[1];
  if (rows == 0 || columns == 0) return;
  // Row-major [rows, columns] with leading dimension ld is column-major [columns, rows]: C = A + C
  // with C the block's window of `into` (cublasSgeam allows C to be B, same leading dimension).
  float* window = memory(into) + offset[0] * whole_columns + offset[1];
  const float one = 1.0f;
  SB_CUBLAS_CHECK(cublasSgeam(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(columns),
                              static_cast<int>(rows), &one, memory(block), static_cast<int>(columns), &one, window,
                              static_cast<int>(whole_columns), window, static_cast<int>(whole_columns)));
}

void CudaMemory::zero_all(std::span<DeviceArray* const> arrays) {
  std::vector<ChunkedTensor> tensors;
  for (DeviceArray* array : arrays)
    tensors.push_back({array->elements(), 0, memory(*array), nullptr, nullptr, nullptr});
  for (const TensorBatch& batch : tensor_batches(tensors)) cuda::zero_all(context_.stream(), batch);
}

}  // namespace splitbrain::exec::cuda
