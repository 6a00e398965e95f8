#pragma once
// The bits of dropout's split-independent mask (dropout.h), written once so that every backend
// drops exactly the same elements: a kernel evaluates dropout_kept(stream, threshold, global
// index) per element. The hash is SplitMix64's finaliser (Steele et al. 2014, exec/data/
// seeded_hash.h), chained over (seed, step, layer); the element index is mixed in last. Inline:
// it runs once per element.

#include <cstdint>

#include "exec/data/seeded_hash.h"
#include "exec/kernels/dropout.h"

namespace splitbrain::exec::kernels {

// One hash per (seed, step, layer): the data pipeline's counter-based hash over those keys.
constexpr uint64_t dropout_stream(const DropoutKey& key) { return data::hash_keys(key.seed, {key.step, key.layer}); }

// Drop iff the hash's top 32 bits fall below p * 2^32 (p = 1 drops all: threshold 2^32).
// Throws KernelArgumentError unless 0 <= p <= 1.
uint64_t dropout_threshold(double p);

constexpr bool dropout_kept(uint64_t stream, uint64_t threshold, uint64_t index) {
  return (data::mix64(stream ^ index) >> 32) >= threshold;
}

// The factor kept elements are scaled by: 1 / (1 - p), and 0 when everything is dropped.
inline float dropout_keep_scale(double p) { return p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f; }

// Whether global element `index` is kept (p = drop probability, 0 <= p <= 1).
bool dropout_keeps(const DropoutKey& key, double p, uint64_t index);

// Throws KernelArgumentError unless the block's ranks agree and it lies inside the global shape.
void check_dropout_block(const DropoutBlock& block);

}  // namespace splitbrain::exec::kernels
