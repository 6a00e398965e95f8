// Batched matrix product of two activations, [..., M, K] x [..., K, N] (or [..., N, K] with
// transpose_b). The rules allow only the batch role, so each rank multiplies whole matrices of
// its samples; every leading dimension is a batch of independent products.

#include <fmt/format.h>

#include <stdexcept>

#include "exec/kernels/batched_matmul.h"
#include "exec/ops/op_factories.h"

namespace splitbrain::exec::ops {
namespace {

class MatmulOp final : public LayerOp {
 public:
  // Forward C = A op(B); backward dA = dC op(B)^T and dB = A^T dC (or dC^T A when B is stored
  // transposed). The transposes are flags of the batched products, so nothing is copied here.
  MatmulOp(kernels::KernelFactory& factory, int64_t batch, int64_t m, int64_t k, int64_t n, bool transpose_b)
      : forward_(factory.make_batched_matmul({batch, m, k, n, false, transpose_b, 1.0f})),
        grad_a_(factory.make_batched_matmul({batch, m, n, k, false, !transpose_b, 1.0f})),
        grad_b_(factory.make_batched_matmul(transpose_b
                                                ? kernels::BatchedMatmulShape{batch, n, m, k, true, false, 1.0f}
                                                : kernels::BatchedMatmulShape{batch, k, m, n, true, false, 1.0f})),
        transpose_b_(transpose_b) {}

  void forward(int, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan>,
               TensorSpan output) override {
    forward_->run(inputs[0].data(), inputs[1].data(), output.data());
  }

  void backward(int, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan>) override {
    if (input_grads.empty()) return;
    const float* a = inputs[0].data();
    const float* b = inputs[1].data();
    const float* dc = output_grad.data();
    grad_a_->run(dc, b, input_grads[0].data());
    if (transpose_b_) {
      grad_b_->run(dc, a, input_grads[1].data());
    } else {
      grad_b_->run(a, dc, input_grads[1].data());
    }
  }

 private:
  std::unique_ptr<kernels::BatchedMatmulKernel> forward_;
  std::unique_ptr<kernels::BatchedMatmulKernel> grad_a_;
  std::unique_ptr<kernels::BatchedMatmulKernel> grad_b_;
  bool transpose_b_;
};

}  // namespace

std::unique_ptr<LayerOp> make_matmul_op(kernels::KernelFactory& factory, const OpContext& op) {
  const bool transpose_b = op.model->layer(op.layer).attr<model::MatMulAttrs>().transpose_b;
  const auto& a = op.input_shapes[0];
  const auto& b = op.input_shapes[1];
  const size_t r = a.size();
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < r; ++d) batch *= a[d];
  const int64_t m = a[r - 2];
  const int64_t k = a[r - 1];
  const int64_t n = transpose_b ? b[r - 2] : b[r - 1];
  if (comm::element_count(op.output_shape) != batch * m * n) {
    throw std::logic_error(fmt::format("layer '{}': local output does not hold {} products of {} x {}",
                                       op.model->layer(op.layer).name, batch, m, n));
  }
  return std::make_unique<MatmulOp>(factory, batch, m, k, n, transpose_b);
}

}  // namespace splitbrain::exec::ops
