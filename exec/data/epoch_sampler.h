#pragma once
// Which samples make up each training step. Every epoch is a seeded shuffle of the whole training
// set, cut into global batches in order; every rank computes the same order alone (no broadcast),
// and then reads only its shard of the batch (shard_of_batch), so the data a rank touches follows
// the layout of the batch dimension, whatever the plan.
//
// A partial last batch is dropped: steps_per_epoch = floor(samples / global_batch). Every step then
// has the full global batch the plan was made for (a short batch would change every local shape and
// every collective's size), and the dropped samples differ per epoch, so none is lost for good.

#include <cstdint>
#include <span>
#include <vector>

namespace splitbrain::exec::data {

class EpochSampler {
 public:
  // Throws InputError when global_batch is not positive or exceeds sample_count (no full batch).
  EpochSampler(int64_t sample_count, int64_t global_batch, uint64_t seed);

  int64_t sample_count() const { return sample_count_; }
  int64_t global_batch() const { return global_batch_; }
  int64_t steps_per_epoch() const { return sample_count_ / global_batch_; }

  // The epoch's order: a permutation of [0, sample_count), a pure function of (seed, epoch).
  std::vector<int64_t> epoch_order(int64_t epoch) const;

  // Global sample indices of batch `step` (0 <= step < steps_per_epoch()) of `epoch`: positions
  // [step * B, (step + 1) * B) of epoch_order(epoch). The order of the last epoch asked for is kept,
  // so stepping through an epoch shuffles once. Throws std::out_of_range for a bad epoch or step.
  std::vector<int64_t> batch(int64_t epoch, int64_t step);
  // The same, counting steps across epochs: iteration i is step i % steps_per_epoch() of epoch
  // i / steps_per_epoch().
  std::vector<int64_t> batch_at_iteration(int64_t iteration);

 private:
  int64_t sample_count_;
  int64_t global_batch_;
  uint64_t seed_;
  int64_t cached_epoch_ = -1;
  std::vector<int64_t> cached_order_;
};

// A rank's part of a global batch: positions [begin, end) of the batch dimension (the runtime takes
// the range from the layout of the input). Throws std::out_of_range unless
// 0 <= begin <= end <= batch.size().
std::span<const int64_t> shard_of_batch(std::span<const int64_t> batch, int64_t begin, int64_t end);

}  // namespace splitbrain::exec::data
