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

#include "exec/cuda/tensor_batches.h"

namespace splitbrain::exec::cuda {

// PyTorch's SGD with momentum and L2 weight decay: g' = g + decay p; buf = g' on the first step,
// else momentum buf + g'; p -= lr buf. The hyper-parameters are plans::OptimizerConfig's.
void sgd_momentum_update(cudaStream_t stream, int64_t elements, double learning_rate, double momentum,
                         double weight_decay, int64_t step, float* params, const float* grads, float* momentum_buffer);

// PyTorch's Adam with L2 weight decay and bias-corrected moments.
void adam_update(cudaStream_t stream, int64_t elements, double learning_rate, double beta1, double beta2,
                 double epsilon, double weight_decay, int64_t step, float* params, const float* grads,
                 float* first_moment, float* second_moment);

// Many tensors in one launch each of at most kTensorsPerBatch (CudaKernels::update_all,
// zero_all: tensor_batches.h): a step's host then queues one kernel for a model's parameters where
// one per parameter would cost a launch's host time each (vgg11's 22 updates and 22 gradient
// clears: about a twentieth of an H200's step at batch 64, where the host paces it).
// A tensor's arrays: first = parameters,
// second = gradients, third = the first moment, fourth = Adam's second moment; bit for bit the
// one-tensor kernels above.
void sgd_momentum_update_all(cudaStream_t stream, const TensorBatch& batch, double learning_rate, double momentum,
                             double weight_decay, int64_t step);
void adam_update_all(cudaStream_t stream, const TensorBatch& batch, double learning_rate, double beta1, double beta2,
                     double epsilon, double weight_decay, int64_t step);
// Every tensor's `first` array set to zero.
void zero_all(cudaStream_t stream, const TensorBatch& batch);

}  // namespace splitbrain::exec::cuda
