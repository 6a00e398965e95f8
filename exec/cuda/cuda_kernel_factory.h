#pragma once
// The CUDA backend's kernels: cuDNN, cuBLAS and own kernels, all on the one CudaContext (device,
// stream, handles, staging) this factory shares with them, so the context lives as long as the
// factory and the factory outlives every kernel it makes (kernels::KernelFactory's rule).

#include <memory>

#include "exec/cuda/cuda_context.h"
#include "exec/kernels/kernel_factory.h"

namespace splitbrain::exec::cuda {

// The makers, one per kind of exec/kernels/kernel_kinds.h, each defined in the file of its
// kernel: `std::unique_ptr<Kernel> cuda::make_<name>(CudaContext& context, params...)`.
#define SPLITBRAIN_DECLARE_CUDA_KERNEL_MAKER(name, Kernel, params, args) \
  std::unique_ptr<Kernel> make_##name SPLITBRAIN_KERNEL_PREPEND(CudaContext& context, params);
SPLITBRAIN_KERNEL_KINDS(SPLITBRAIN_DECLARE_CUDA_KERNEL_MAKER)
#undef SPLITBRAIN_DECLARE_CUDA_KERNEL_MAKER

class CudaKernelFactory final : public kernels::KernelFactory {
 public:
  explicit CudaKernelFactory(std::shared_ptr<CudaContext> context);

  // Each forwards to its maker (qualified: the member of the same name would hide it).
#define SPLITBRAIN_CUDA_KERNEL_FACTORY_OVERRIDE(name, Kernel, params, args) \
  std::unique_ptr<Kernel> make_##name params override {                     \
    return cuda::make_##name SPLITBRAIN_KERNEL_PREPEND(*context_, args);    \
  }
  SPLITBRAIN_KERNEL_KINDS(SPLITBRAIN_CUDA_KERNEL_FACTORY_OVERRIDE)
#undef SPLITBRAIN_CUDA_KERNEL_FACTORY_OVERRIDE

 private:
  std::shared_ptr<CudaContext> context_;
};

}  // namespace splitbrain::exec::cuda
