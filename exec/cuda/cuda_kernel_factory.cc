#include "exec/cuda/cuda_kernel_factory.h"

#include <stdexcept>

#include "exec/cuda/pooled_block.h"

namespace splitbrain::exec::cuda {

CudaKernelFactory::CudaKernelFactory(std::shared_ptr<CudaContext> context) : context_(std::move(context)) {
  if (context_ == nullptr) throw std::invalid_argument("CudaKernelFactory: no CudaContext");
}

namespace {

// Kept state in the rank's device memory, from the context's pool.
class DeviceKeptBuffer final : public kernels::KeptBuffer {
 public:
  DeviceKeptBuffer(const std::shared_ptr<DeviceMemoryPool>& pool, int64_t bytes)
      : block_(pool, static_cast<std::size_t>(bytes)) {}
  std::byte* data() override { return static_cast<std::byte*>(block_.data()); }
  int64_t bytes() const override { return static_cast<int64_t>(block_.bytes()); }

 private:
  PooledBlock block_;
};

}  // namespace

std::unique_ptr<kernels::KeptBuffer> make_kept_buffer(CudaContext& context, int64_t bytes) {
  if (bytes < 0) throw std::invalid_argument("CudaKernelFactory::make_kept_buffer: negative size");
  return std::make_unique<DeviceKeptBuffer>(context.memory(), bytes);
}

}  // namespace splitbrain::exec::cuda
