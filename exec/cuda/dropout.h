#pragma once
// Dropout on the GPU: the twin of cpu::dropout_{forward,backward}, same key, block and mask
// types, with the context as an extra first argument. The mask is the CPU's bit for bit: the
// (seed, step, layer) key is hashed on the host with data::hash_keys (the CPU's chain of
// SplitMix64 finalisers) and each thread mixes in its element's GLOBAL row-major index with the
// same finaliser (seeded_hash_device.h), so the same plan drops the same elements on either
// backend and on any number of ranks. Own kernel: cuDNN's dropout draws from a stateful RNG.
//
// Host arrays in and out (see cuda_context.h), staged in the context's staging buffers; the
// call synchronises, so x == y and dx == dy are allowed as on the CPU.

#include <cstdint>

#include "exec/cpu/dropout.h"
#include "exec/cuda/cuda_context.h"

namespace splitbrain::exec::cuda {

using DropoutKey = cpu::DropoutKey;
using DropoutBlock = cpu::DropoutBlock;

// mask[i] = 1 for kept local elements, 0 for dropped; y = x * mask / (1 - p) (0 when p = 1).
// Blocks of rank above 8 are refused (cpu::KernelArgumentError).
void dropout_forward(CudaContext& context, const DropoutKey& key, double p, const DropoutBlock& block, const float* x,
                     float* y, uint8_t* mask);

// dx = dy * mask / (1 - p).
void dropout_backward(CudaContext& context, double p, int64_t elements, const uint8_t* mask, const float* dy,
                      float* dx);

}  // namespace splitbrain::exec::cuda
