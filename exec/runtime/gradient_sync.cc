// Gradient synchronisation of the Trainer: the compiled plan's buckets, reduced with their
// collectives after backward, or (overlap) started with the engine's non-blocking all-reduce as
// soon as backward has produced a bucket's last gradient and nudged between layers so it
// progresses meanwhile.

#include <algorithm>
#include <chrono>

#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

std::vector<float> Trainer::pack_bucket(const plans::GradientBucket& bucket) {
  std::vector<float> flat;
  flat.reserve(static_cast<size_t>(bucket.padded_elements));
  for (int v : bucket.layers) {
    for (const TrackedArray& grad : parameters_[static_cast<size_t>(v)].grads) {
      flat.insert(flat.end(), grad->values.begin(), grad->values.end());
    }
  }
  flat.resize(static_cast<size_t>(bucket.padded_elements), 0.0f);
  return flat;
}

void Trainer::unpack_bucket(const plans::GradientBucket& bucket, const std::vector<float>& flat) {
  size_t at = 0;
  for (int v : bucket.layers) {
    for (const TrackedArray& grad : parameters_[static_cast<size_t>(v)].grads) {
      std::copy_n(flat.begin() + static_cast<std::ptrdiff_t>(at), grad->values.size(), grad->values.begin());
      at += grad->values.size();
    }
  }
}

void Trainer::start_bucket(size_t b) {
  if (plan_.zero_stage > 0) {
    start_sharded_bucket(b);
    return;
  }
  const plans::GradientBucket& bucket = compiled_.buckets[b];
  const plans::Collective& c = bucket.reduction.front();
  PendingBucket pending{b, pack_bucket(bucket), nullptr, {}};
  memory_.allocate(MemoryCategory::buffers, bucket.padded_elements * 4);
  // `flat` keeps its storage when the record moves into pending_, so the engine's view stays valid.
  pending.reduction = backend_.collectives->start_all_reduce(c.axes, pending.flat);
  communicator_.counter().add("gradients", c.kind, plans::bytes_sent(c, communicator_.index_in_group(c)));
  pending_.push_back(std::move(pending));
}

void Trainer::progress_buckets() {
  for (PendingBucket& pending : pending_) pending.reduction->test();
}

void Trainer::synchronise_gradients(StepSeconds& seconds) {
  const auto start = std::chrono::steady_clock::now();
  if (overlap_) {
    // Only what backward did not hide is waited for here: the exposed part of the sync.
    for (PendingBucket& pending : pending_) {
      pending.reduction->wait();
      const plans::GradientBucket& bucket = compiled_.buckets[pending.bucket];
      unpack_bucket(bucket, pending.flat);
      memory_.release(MemoryCategory::buffers, bucket.padded_elements * 4);
    }
    pending_.clear();
  } else {
    for (const plans::GradientBucket& bucket : compiled_.buckets) {
      if (bucket.stage != stage_) continue;
      // Pack the bucket's gradients, reduce them with the plan's collectives, unpack.
      comm::LocalArray flat{{bucket.padded_elements}, pack_bucket(bucket)};
      memory_.allocate(MemoryCategory::buffers, bucket.padded_elements * 4);
      for (const plans::Collective& c : bucket.reduction) flat = communicator_.run(c, flat, "gradients");
      unpack_bucket(bucket, flat.values);
      memory_.release(MemoryCategory::buffers, bucket.padded_elements * 4);
    }
  }
  seconds.gradient_sync += seconds_since(start);
  record("gradient buckets", true, start);
}

}  // namespace splitbrain::exec
