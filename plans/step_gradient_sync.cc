#include "plans/step_gradient_sync.h"

#include <fmt/format.h>

#include <algorithm>

namespace splitbrain::plans {
namespace {

// Bucket buffers are fp32 in the executor whatever the model dtype.
constexpr int64_t kBucketElementBytes = 4;

}  // namespace

GradientSync::GradientSync(const Plan& plan, const CompiledPlan& compiled, const StepFacts& facts,
                           ProgramWriter& writer)
    : plan_(plan), compiled_(compiled), facts_(facts), writer_(writer) {
  whole_gradients_.resize(compiled.layers.size());
  bucket_started_.assign(compiled.buckets.size(), false);
  swapped_.assign(compiled.layers.size(), false);
  for (size_t v = 0; v < compiled.layers.size(); ++v) {
    if (const std::optional<TiedCopy>& copy = compiled.layers[v].tied_copy) {
      swapped_[v] = true;
      swapped_[static_cast<size_t>(copy->table)] = true;
    }
  }
}

void GradientSync::ensure_whole_gradients(int layer) {
  auto& whole = whole_gradients_[static_cast<size_t>(layer)];
  if (plan_.zero_stage < 2 || !facts_.zero_shards(layer) || !whole.empty()) return;
  const std::vector<ParameterShard>& shards = compiled_.layers[static_cast<size_t>(layer)].layouts.parameters;
  for (size_t k = 0; k < shards.size(); ++k) {
    whole.push_back(writer_.make({.bytes = shards[k].local_elements * gradient_element_bytes(plan_),
                                  .category = MemoryCategory::buffers,
                                  .role = BufferRole::whole_parameter_gradient,
                                  .layer = layer,
                                  .index = static_cast<int>(k)}));
  }
}

SmallIndexList GradientSync::gradient_buffers(int layer) const {
  const auto& whole = whole_gradients_[static_cast<size_t>(layer)];
  return whole.empty() ? facts_.gradient_buffers(layer) : whole;
}

void GradientSync::start_buckets_completed_by(int layer) {
  for (size_t b = 0; b < compiled_.buckets.size(); ++b) {
    const GradientBucket& bucket = compiled_.buckets[b];
    // Buckets list their layers in backward order: the last one finishes last. A bucket with a
    // tied table's gradient waits for the swap after the passes (swap_tied_gradients): a stage
    // must not block on the other stage's gradient while that stage still waits for its passes.
    if (bucket.stage == facts_.stage() && bucket.layers.back() == layer && !holds_swapped_gradient(bucket)) start(b);
  }
}

bool GradientSync::holds_swapped_gradient(const GradientBucket& bucket) const {
  return std::any_of(bucket.layers.begin(), bucket.layers.end(),
                     [&](int v) { return swapped_[static_cast<size_t>(v)]; });
}

void GradientSync::start(size_t b) {
  const GradientBucket& bucket = compiled_.buckets[b];
  // ZeRO 3 as FSDP2 runs it: before the next bucket's input is made, the reduce-scatter started
  // before is waited for and its input let go, so one bucket's input is alive at a time instead
  // of every bucket's until the end of the passes.
  if (plan_.zero_stage >= 3) {
    for (Started& earlier : started_) {
      if (!earlier.finished) finish(earlier);
    }
  }
  Started started{.bucket = b};
  started.flat = writer_.make({.bytes = bucket.padded_elements * kBucketElementBytes,
                               .category = MemoryCategory::buffers,
                               .role = BufferRole::bucket,
                               .bucket = static_cast<int>(b)});
  const bool zero = plan_.zero_stage > 0;
  int destination = started.flat;
  if (zero && plan_.zero_stage >= 2) {
    destination = facts_.gradient_slice(b);
  } else if (zero) {
    started.reduced = writer_.make({.bytes = facts_.slice_elements(b) * kBucketElementBytes,
                                    .category = MemoryCategory::buffers,
                                    .role = BufferRole::reduced_slice,
                                    .bucket = static_cast<int>(b)});
    destination = started.reduced;
  }
  StepInstruction pack{.op = StepOp::pack, .bucket = static_cast<int>(b), .writes = {started.flat}};
  for (int v : bucket.layers) {
    for (int g : gradient_buffers(v)) pack.reads.push_back(g);
  }
  writer_.emit(std::move(pack));
  if (zero && plan_.zero_stage >= 2) {
    // The whole gradients are packed: only the slice the reduce-scatter delivers stays.
    for (int v : bucket.layers) {
      for (int g : whole_gradients_[static_cast<size_t>(v)]) writer_.drop(g);
      whole_gradients_[static_cast<size_t>(v)].clear();
    }
  }
  StepInstruction reduce{.op = StepOp::reduce,
                         .stream = Stream::communication,
                         .bucket = static_cast<int>(b),
                         .reads = {started.flat},
                         .writes = {destination},
                         .collectives = bucket.reduction};
  started.reduce = writer_.emit(std::move(reduce));
  bucket_started_[b] = true;
  started_.push_back(started);
}

void GradientSync::finish(Started& started) {
  started.finished = true;
  writer_.emit(
      {.op = StepOp::wait, .stream = Stream::communication, .waits_for = started.reduce, .after = {started.reduce}});
  if (plan_.zero_stage == 0) {
    StepInstruction unpack{.op = StepOp::unpack, .bucket = static_cast<int>(started.bucket), .reads = {started.flat}};
    for (int v : compiled_.buckets[started.bucket].layers) {
      for (int g : facts_.gradient_buffers(v)) unpack.writes.push_back(g);
    }
    writer_.emit(std::move(unpack));
  }
  writer_.drop(started.flat);
}

void GradientSync::swap_tied_gradients() {
  // On this rank's own gradients, before the buckets holding them are reduced: the two stages'
  // ranks at the same mesh coordinates hold the same block (plans/tied_weights.h), and both
  // buckets are then reduced over the same axes, so each sums every contribution once.
  for (int v = 0; v < static_cast<int>(compiled_.layers.size()); ++v) {
    const std::optional<TiedCopy>& copy = compiled_.layers[static_cast<size_t>(v)].tied_copy;
    if (!copy) continue;
    const bool holds_head = facts_.on_stage(v);
    if (!holds_head && !facts_.on_stage(copy->table)) continue;
    // Both stages send first (the sends do not block), then receive: no order to deadlock on.
    const int owner = holds_head ? v : copy->table;
    const int gradient = gradient_buffers(owner).at(0);
    const Collective& out = holds_head ? copy->to_table : copy->to_head;
    const Collective& in = holds_head ? copy->to_head : copy->to_table;
    // Messages are named by the head and a position its one input leaves free, per direction.
    const int out_index = holds_head ? kTiedToTable : kTiedToHead;
    const int in_index = holds_head ? kTiedToHead : kTiedToTable;
    const int other = writer_.make({.bytes = out.buffer_bytes,
                                    .category = MemoryCategory::buffers,
                                    .role = BufferRole::tied_gradient,
                                    .layer = owner,
                                    .index = 0});
    writer_.hold(gradient);
    const int send = writer_.emit({.op = StepOp::send,
                                   .stream = Stream::communication,
                                   .layer = v,
                                   .micro_batch = 0,
                                   .index = out_index,
                                   .reads = {gradient},
                                   .collectives = {out}});
    writer_.emit({.op = StepOp::recv,
                  .stream = Stream::communication,
                  .layer = v,
                  .micro_batch = 0,
                  .index = in_index,
                  .writes = {other},
                  .collectives = {in}});
    writer_.wait_and_release(send);
    writer_.emit({.op = StepOp::accumulate, .reads = {other}, .writes = {gradient}});
    writer_.drop(other);
  }
}

void GradientSync::finish_step() {
  swap_tied_gradients();
  if (facts_.buckets_overlap()) {
    // The buckets the swap held back start now, behind those started during the backward.
    for (size_t b = 0; b < compiled_.buckets.size(); ++b) {
      if (compiled_.buckets[b].stage == facts_.stage() && !bucket_started_[b]) start(b);
    }
    for (Started& started : started_) {
      if (!started.finished) finish(started);
    }
  } else {
    for (size_t b = 0; b < compiled_.buckets.size(); ++b) {
      if (compiled_.buckets[b].stage != facts_.stage()) continue;
      start(b);
      finish(started_.back());
    }
  }
  // The update: whole parameters where ZeRO leaves them whole, one slice per bucket under ZeRO.
  StepInstruction update{.op = StepOp::optimizer};
  for (int v = 0; v < static_cast<int>(compiled_.layers.size()); ++v) {
    if (!facts_.on_stage(v) || facts_.zero_shards(v)) continue;
    for (int p : facts_.parameter_buffers(v)) update.writes.push_back(p);
    for (int g : facts_.gradient_buffers(v)) update.reads.push_back(g);
  }
  std::vector<int> parameter_slices;  // ZeRO 1-2: cut from the whole parameters for the update
  for (const Started& started : started_) {
    if (plan_.zero_stage == 0) continue;
    const size_t b = started.bucket;
    if (plan_.zero_stage >= 3) {
      update.writes.push_back(facts_.parameter_slice(b));
    } else {
      const int slice = writer_.make({.bytes = facts_.slice_elements(b) * kBucketElementBytes,
                                      .category = MemoryCategory::buffers,
                                      .role = BufferRole::parameter_slice,
                                      .bucket = static_cast<int>(b)});
      StepInstruction cut{.op = StepOp::pack, .bucket = static_cast<int>(b), .writes = {slice}};
      for (int v : compiled_.buckets[b].layers) {
        for (int p : facts_.parameter_buffers(v)) cut.reads.push_back(p);
      }
      writer_.emit(std::move(cut));
      parameter_slices.push_back(slice);
      update.writes.push_back(slice);
    }
    update.reads.push_back(plan_.zero_stage >= 2 ? facts_.gradient_slice(b) : started.reduced);
  }
  writer_.emit(std::move(update));
  for (const Started& started : started_) writer_.drop(started.reduced);
  for (size_t i = 0; i < parameter_slices.size(); ++i) {
    const size_t b = started_[i].bucket;
    const GradientBucket& bucket = compiled_.buckets[b];
    const int whole = writer_.make({.bytes = bucket.padded_elements * kBucketElementBytes,
                                    .category = MemoryCategory::buffers,
                                    .role = BufferRole::gathered_bucket,
                                    .bucket = static_cast<int>(b)});
    writer_.emit({.op = StepOp::gather_params,
                  .stream = Stream::communication,
                  .bucket = static_cast<int>(b),
                  .reads = {parameter_slices[i]},
                  .writes = {whole},
                  .collectives = bucket.gather});
    StepInstruction unpack{.op = StepOp::unpack, .bucket = static_cast<int>(b), .reads = {whole}};
    for (int v : bucket.layers) {
      for (int p : facts_.parameter_buffers(v)) unpack.writes.push_back(p);
    }
    writer_.emit(std::move(unpack));
    writer_.drop(whole);
  }
  for (int slice : parameter_slices) writer_.drop(slice);
}

}  // namespace splitbrain::plans
