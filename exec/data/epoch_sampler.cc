#include "exec/data/epoch_sampler.h"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>
#include <utility>

#include "exec/data/seeded_hash.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

// A uniform draw in [0, bound) without modulo bias: reject the lowest (2^64 mod bound) values.
// Written out (not std::uniform_int_distribution) so the order is the same with every library.
uint64_t uniform_below(uint64_t bound, uint64_t& state) {
  const uint64_t threshold = (0 - bound) % bound;  // == 2^64 mod bound
  while (true) {
    state += 1;
    const uint64_t r = mix64(state);
    if (r >= threshold) return r % bound;
  }
}

}  // namespace

EpochSampler::EpochSampler(int64_t sample_count, int64_t global_batch, uint64_t seed)
    : sample_count_(sample_count), global_batch_(global_batch), seed_(seed) {
  if (global_batch_ < 1) throw InputError(fmt::format("global batch {} must be positive", global_batch_));
  if (global_batch_ > sample_count_) {
    throw InputError(
        fmt::format("global batch {} is larger than the data set's {} samples (the partial last "
                    "batch is dropped, so no step would remain)",
                    global_batch_, sample_count_));
  }
}

std::vector<int64_t> EpochSampler::epoch_order(int64_t epoch) const {
  if (epoch < 0) throw std::out_of_range(fmt::format("epoch {} is negative", epoch));
  std::vector<int64_t> order(static_cast<size_t>(sample_count_));
  std::iota(order.begin(), order.end(), int64_t{0});
  // Fisher-Yates from the back; the generator is a counter through mix64, keyed by (seed, epoch).
  uint64_t state = hash_keys(seed_, {static_cast<uint64_t>(epoch)});
  for (size_t i = order.size() - 1; i > 0; --i) {
    const auto j = static_cast<size_t>(uniform_below(static_cast<uint64_t>(i) + 1, state));
    std::swap(order[i], order[j]);
  }
  return order;
}

std::vector<int64_t> EpochSampler::batch(int64_t epoch, int64_t step) {
  if (step < 0 || step >= steps_per_epoch()) {
    throw std::out_of_range(fmt::format("step {} outside [0, {}) steps per epoch", step, steps_per_epoch()));
  }
  if (epoch != cached_epoch_) {
    cached_order_ = epoch_order(epoch);
    cached_epoch_ = epoch;
  }
  const auto first = cached_order_.begin() + step * global_batch_;
  return std::vector<int64_t>(first, first + global_batch_);
}

std::vector<int64_t> EpochSampler::batch_at_iteration(int64_t iteration) {
  if (iteration < 0) throw std::out_of_range(fmt::format("iteration {} is negative", iteration));
  return batch(iteration / steps_per_epoch(), iteration % steps_per_epoch());
}

std::span<const int64_t> shard_of_batch(std::span<const int64_t> batch, int64_t begin, int64_t end) {
  if (begin < 0 || begin > end || end > static_cast<int64_t>(batch.size())) {
    throw std::out_of_range(
        fmt::format("batch shard [{}, {}) outside a batch of {} samples", begin, end, batch.size()));
  }
  return batch.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
}

}  // namespace splitbrain::exec::data
