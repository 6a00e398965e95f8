#include "exec/cuda/linear.h"

#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/kernels/shape_checks.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

// Row-major [r, c] is column-major [c, r] with leading dimension c, so every product below is
// written for the transposes: y^T = W x^T, dx^T = W^T dy^T, dW^T = x^T dy.

namespace {

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

}  // namespace

LinearKernel::LinearKernel(CudaContext& context, const kernels::LinearShape& shape)
    : context_(context),
      shape_(kernels::checked(shape)),
      output_desc_(shape.rows, shape.out_features, 1, 1),
      bias_desc_(1, shape.out_features, 1, 1),
      ones_(float_bytes(shape.rows)),
      graphs_(context) {
  const std::vector<float> ones(static_cast<std::size_t>(shape.rows), 1.0f);
  upload(context.stream(), ones.data(), ones_.bytes(), ones_);
  context.synchronize();
}

void LinearKernel::forward(const float* x, const float* w, const float* b, float* y) {
  const bool with_bias = shape_.bias && b != nullptr;
  graphs_.queue({kForwardPass, key_word(x), key_word(w), key_word(with_bias ? b : nullptr), key_word(y)}, [&] {
    const int64_t rows = shape_.rows, in = shape_.in_features, out = shape_.out_features;
    const float one = 1.0f, zero = 0.0f;
    // y^T [out, rows] = W [out, in] . x^T [in, rows]; W's buffer is W^T column-major.
    SB_CUBLAS_CHECK(
        cublasSgemm_64(context_.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &one, w, in, x, in, &zero, y, out));
    if (with_bias)
      SB_CUDNN_CHECK(cudnnAddTensor(context_.cudnn(), &one, bias_desc_.get(), b, &one, output_desc_.get(), y));
  });
}

void LinearKernel::backward_data(const float* dy, const float* w, float* dx) {
  graphs_.queue({kBackwardDataPass, key_word(dy), key_word(w), key_word(dx)}, [&] {
    const int64_t rows = shape_.rows, in = shape_.in_features, out = shape_.out_features;
    const float one = 1.0f, zero = 0.0f;
    // dx^T [in, rows] = W^T [in, out] . dy^T [out, rows].
    SB_CUBLAS_CHECK(cublasSgemm_64(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, in, rows, out, &one, w, in, dy, out,
                                   &zero, dx, in));
  });
}

void LinearKernel::weight_gradients(const float* x, const float* dy, float beta, float* dw, float* db, bool with_bias) {
  graphs_.queue({kWeightGradientsPass, key_word(x), key_word(dy), key_word(beta), key_word(dw),
                 key_word(with_bias ? db : nullptr)},
                [&] {
                  const int64_t rows = shape_.rows, in = shape_.in_features, out = shape_.out_features;
                  const float one = 1.0f;
                  // dW^T [in, out] = x^T [in, rows] . dy [rows, out].
                  SB_CUBLAS_CHECK(cublasSgemm_64(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, in, out, rows, &one, x,
                                                 in, dy, out, &beta, dw, in));
                  // db [out] = dy^T [out, rows] . ones [rows].
                  if (with_bias)
                    SB_CUBLAS_CHECK(cublasSgemv_64(context_.cublas(), CUBLAS_OP_N, out, rows, &one, dy, out,
                                                   ones_.as<float>(), 1, &beta, db, 1));
                });
}

void LinearKernel::backward_weights(const float* x, const float* dy, float* dw, float* db) {
  weight_gradients(x, dy, 0.0f, dw, db, shape_.bias);
}

void LinearKernel::accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) {
  weight_gradients(x, dy, 1.0f, dw, db, db != nullptr);
}

std::unique_ptr<kernels::LinearKernel> make_linear(CudaContext& context, const kernels::LinearShape& shape) {
  return std::make_unique<LinearKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
