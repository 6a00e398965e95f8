// moe on the CUDA backend: no kernel yet. The maker refuses by name when the layer's op is built,
// before the first step, so a plan holding a mixture-of-experts layer stops with exit code 2 and
// the way to run it (the CPU backend) instead of failing inside a step.

#include <fmt/format.h>

#include <memory>

#include "exec/cuda/cuda_kernel_factory.h"
#include "exec/kernels/moe.h"
#include "model/errors.h"

namespace splitbrain::exec::cuda {

std::unique_ptr<kernels::MoeKernel> make_moe(CudaContext& /*context*/, const kernels::MoeShape& shape) {
  kernels::checked(shape);
  throw InputError(
      fmt::format("the CUDA backend cannot run moe layers yet ({} experts, top {}); run them with "
                  "--backend cpu",
                  shape.experts, shape.top_k));
}

}  // namespace splitbrain::exec::cuda
