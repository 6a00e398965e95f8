#include "exec/cuda/cuda_array.h"

#include <cstddef>
#include <stdexcept>
#include <utility>

namespace splitbrain::exec::cuda {

CudaArray::CudaArray(std::vector<int64_t> shape, const std::shared_ptr<DeviceMemoryPool>& pool)
    : DeviceArray(std::move(shape)), block_(pool, static_cast<std::size_t>(elements()) * sizeof(float)) {}

float* CudaArray::data_of(DeviceArray& array) {
  auto* cuda = dynamic_cast<CudaArray*>(&array);
  if (cuda == nullptr)
    throw std::logic_error("CudaArrayDevice: an array of another device, or a released tensor, is used");
  return cuda->data();
}

const float* CudaArray::data_of(const DeviceArray& array) {
  const auto* cuda = dynamic_cast<const CudaArray*>(&array);
  if (cuda == nullptr)
    throw std::logic_error("CudaArrayDevice: an array of another device, or a released tensor, is read");
  return cuda->data();
}

}  // namespace splitbrain::exec::cuda
