#pragma once
// The parameter updates of exec/runtime/optimizer.cc on DEVICE pointers (parameters, gradients and
// optimizer state resident on the GPU), queued on `stream`. Bit for bit the CPU's results: the
// same operations in the same order and precision (float where it computes in float, double where
// it promotes), each rounded on its own (no fused multiply-add, which nvcc would otherwise
// contract to), and the bias corrections computed on the host with the same std::pow.
//
// `step` is the optimizer's step count including this step (1 on the first update), as
// Optimizer::steps_ after its increment.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splitbrain::exec::cuda {

// PyTorch's SGD with momentum and L2 weight decay: g' = g + decay p; buf = g' on the first step,
// else momentum buf + g'; p -= lr buf. The hyper-parameters are plans::OptimizerConfig's.
void sgd_momentum_update(cudaStream_t stream, int64_t elements, double learning_rate, double momentum,
                         double weight_decay, int64_t step, float* params, const float* grads, float* momentum_buffer);

// PyTorch's Adam with L2 weight decay and bias-corrected moments.
void adam_update(cudaStream_t stream, int64_t elements, double learning_rate, double beta1, double beta2,
                 double epsilon, double weight_decay, int64_t step, float* params, const float* grads,
                 float* first_moment, float* second_moment);

// Many tensors in one launch (CudaArrayDevice::update_all, zero_all): a step's host then queues
// one kernel for all its parameters where it queued one per parameter (vgg11's 22 updates and
// 22 gradient clears took an H200's host ~190 us a step at batch 64, where the whole step was
// ~3.7 ms). Each tensor is cut into chunks of kElementsPerChunk; one block takes one chunk at a
// time. A tensor's arrays are `first`..`fourth` (a kernel uses those it needs; null otherwise).
constexpr int64_t kElementsPerChunk = 4096;
struct ChunkedTensor {
  int64_t elements = 0;
  int64_t first_chunk = 0;  // chunks of the tensors before it
  float* first = nullptr;
  const float* second = nullptr;
  float* third = nullptr;
  float* fourth = nullptr;
};
// `table`: `count` tensors in DEVICE memory (chunked_tensor_table.h), first_chunk in ascending
// order, `chunks` in all. The updates: first = parameters, second = gradients, third = the first
// moment, fourth = Adam's second moment; bit for bit the one-tensor kernels above.
void sgd_momentum_update_all(cudaStream_t stream, const ChunkedTensor* table, int count, int64_t chunks,
                             double learning_rate, double momentum, double weight_decay, int64_t step);
void adam_update_all(cudaStream_t stream, const ChunkedTensor* table, int count, int64_t chunks, double learning_rate,
                     double beta1, double beta2, double epsilon, double weight_decay, int64_t step);
// Every tensor's `first` array set to zero.
void zero_all(cudaStream_t stream, const ChunkedTensor* table, int count, int64_t chunks);

}  // namespace splitbrain::exec::cuda
