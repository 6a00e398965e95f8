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

}  // namespace splitbrain::exec::cuda
