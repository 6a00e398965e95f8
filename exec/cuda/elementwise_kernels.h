#pragma once
// Own elementwise kernels of the CUDA backend, on device pointers, queued on `stream`: the ops
// cuDNN has no (matching) primitive for. Launchers are host functions, callable from .cc files.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splitbrain::exec::cuda {

// y[i] = value for i < elements.
void fill_on_device(cudaStream_t stream, int64_t elements, float value, float* y);

// GELU, tanh form, with the CPU (oneDNN eltwise_gelu_tanh) formula:
// y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); backward dx = dy * dy/dx from the input x.
void gelu_tanh_forward(cudaStream_t stream, int64_t elements, const float* x, float* y);
void gelu_tanh_backward(cudaStream_t stream, int64_t elements, const float* x, const float* dy, float* dx);

// Where the local block lies in the global tensor, row-major, rank <= kMaxDropoutRank.
constexpr int kMaxDropoutRank = 8;
struct DropoutGeometry {
  int rank = 1;
  int64_t local_shape[kMaxDropoutRank] = {};
  int64_t offset[kMaxDropoutRank] = {};
  int64_t global_stride[kMaxDropoutRank] = {};
};

// mask[i] = keep(global index of local i), y = keep ? x * scale : 0. `stream_key` is
// kernels::dropout_stream(key); `threshold` = kernels::dropout_threshold(p).
void dropout_forward_on_device(cudaStream_t stream, const DropoutGeometry& geometry, int64_t elements,
                               uint64_t stream_key, uint64_t threshold, float scale, const float* x, float* y,
                               uint8_t* mask);
// dx = mask ? dy * scale : 0.
void dropout_backward_on_device(cudaStream_t stream, int64_t elements, const uint8_t* mask, float scale,
                                const float* dy, float* dx);

// From log-softmax rows [rows, classes] (cuDNN's CUDNN_SOFTMAX_LOG): row_loss[r] =
// -log_probs[r, label[r]] (finite where the softmax underflows) and probs = exp(log_probs) in place.
void softmax_from_log_with_loss(cudaStream_t stream, int64_t rows, int64_t classes, const int32_t* labels,
                                float* log_probs_to_probs, double* row_loss);
// *loss = scale * the sum of row_loss[0, rows), in double and in an order fixed by `rows` alone (one
// block of threads: the same sum on every run), and loss_float[i] = (float) *loss for i < floats.
void sum_row_losses(cudaStream_t stream, int64_t rows, const double* row_loss, double scale, double* loss,
                    float* loss_float, int64_t floats);
// dlogits = (probs - onehot(label)) * scale.
void softmax_cross_entropy_grad(cudaStream_t stream, int64_t rows, int64_t classes, const float* probs,
                                const int32_t* labels, float scale, float* dlogits);

}  // namespace splitbrain::exec::cuda
