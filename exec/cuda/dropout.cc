#include "exec/cuda/dropout.h"

#include <string>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/elementwise_kernels.h"
#include "exec/kernels/dropout_mask.h"
#include "exec/kernels/kernel_argument_error.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

// The block as the device kernel walks it (checked first: the shared check, then the device
// kernel's rank limit).
DropoutGeometry geometry(const kernels::DropoutBlock& b) {
  kernels::check_dropout_block(b);
  const std::size_t rank = b.global_shape.size();
  if (rank > static_cast<std::size_t>(kMaxDropoutRank))
    throw kernels::KernelArgumentError("dropout: the CUDA kernel takes blocks of rank <= " +
                                       std::to_string(kMaxDropoutRank) + ", got " + std::to_string(rank));
  DropoutGeometry g;
  g.rank = static_cast<int>(rank);
  int64_t stride = 1;
  for (std::size_t d = rank; d-- > 0;) {
    g.local_shape[d] = b.local_shape[d];
    g.offset[d] = b.offset[d];
    g.global_stride[d] = stride;
    stride *= b.global_shape[d];
  }
  return g;
}

}  // namespace

DropoutKernel::DropoutKernel(CudaContext& context, double probability)
    : context_(context),
      probability_(probability),
      threshold_(kernels::dropout_threshold(probability)),
      keep_scale_(kernels::dropout_keep_scale(probability)) {}

void DropoutKernel::forward(const kernels::DropoutKey& key, const kernels::DropoutBlock& block, const float* x,
                            float* y, uint8_t* mask) {
  const DropoutGeometry g = geometry(block);
  const int64_t elements = block.local_elements();
  if (elements == 0) return;
  dropout_forward_on_device(context_.stream(), g, elements, kernels::dropout_stream(key), threshold_, keep_scale_, x, y,
                            mask);
}

void DropoutKernel::backward(int64_t elements, const uint8_t* mask, const float* dy, float* dx) {
  if (elements <= 0) return;
  dropout_backward_on_device(context_.stream(), elements, mask, keep_scale_, dy, dx);
}

std::unique_ptr<kernels::DropoutKernel> make_dropout(CudaContext& context, double probability) {
  return std::make_unique<DropoutKernel>(context, probability);
}

}  // namespace splitbrain::exec::cuda
