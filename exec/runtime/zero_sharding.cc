// ZeRO in the Trainer (Rajbhandari et al. 2020), exactly as the compiled plan lists it, so the
// bytes equal the simulator's and the memory per category equals sim::stage_memory:
//   stage 1: each bucket of gradients is reduce-scattered over its sync group; the rank updates
//            its slice of the bucket (optimizer state only for that slice) and the updated slices
//            are all-gathered back into the whole parameters;
//   stage 2: as 1, and the gradients kept between backward and the update are the slice only;
//            the whole ones are a bucket buffer from the layer's backward to the reduce-scatter;
//   stage 3: as 2, and the parameters too are kept as the slice only: each layer's are gathered
//            (the plan's parameter_gathers) before its forward and again before its backward,
//            and freed after use; nothing is gathered at the step's end.
// Stage 3 slices per layer (each layer padded to the group, as its gather is), and packs a
// bucket rank-major: member r's part of the bucket is r's slice of every layer, one after another,
// so the reduce-scatter hands each rank the gradients of exactly the parameters it holds.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "exec/runtime/zero_sharding.h"

namespace splitbrain::exec {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

int64_t element_total(const std::vector<TrackedArray>& arrays) {
  int64_t total = 0;
  for (const TrackedArray& a : arrays) total += static_cast<int64_t>(a->values.size());
  return total;
}
}  // namespace

bool Trainer::zero_shards(int layer) const {
  if (plan_.zero_stage == 0) return false;
  const plans::LayerLayouts& layouts = compiled_.layers[static_cast<size_t>(layer)].layouts;
  return !layouts.parameters.empty() && plan_.mesh.group_size(layouts.gradient_sync_axes) > 1;
}

void Trainer::setup_zero() {
  zero_ = std::make_unique<ZeroState>();
  zero_->bucket_of_layer.assign(compiled_.layers.size(), -1);
  zero_->position_in_bucket.assign(compiled_.layers.size(), -1);
  if (plan_.zero_stage == 0) return;
  for (size_t b = 0; b < compiled_.buckets.size(); ++b) {
    const plans::GradientBucket& bucket = compiled_.buckets[b];
    if (bucket.stage != stage_) continue;
    ZeroState::Bucket z;
    z.index = b;
    const plans::Collective& reduction = bucket.reduction.front();
    z.group = reduction.group_size;
    z.member = communicator_.index_in_group(reduction);
    z.slice_elements = bucket.padded_elements / z.group;
    for (size_t position = 0; position < bucket.layers.size(); ++position) {
      const auto v = static_cast<size_t>(bucket.layers[position]);
      zero_->bucket_of_layer[v] = static_cast<int>(zero_->buckets.size());
      zero_->position_in_bucket[v] = static_cast<int>(position);
    }
    // The optimizer updates one slice per bucket, registered after the whole parameters.
    optimizer_->add_parameter(z.slice_elements);
    if (plan_.zero_stage >= 2) z.grad_slice = make_tracked(memory_, MemoryCategory::grads, {z.slice_elements});
    if (plan_.zero_stage >= 3) {
      // Keep this rank's slice of every layer's (initialised, whole) parameters; drop the rest.
      z.param_slice = make_tracked(memory_, MemoryCategory::params, {z.slice_elements});
      int64_t offset = 0;
      for (int v : bucket.layers) {
        std::vector<TrackedArray>& values = parameters_[static_cast<size_t>(v)].values;
        const int64_t slice = round_up(element_total(values), z.group) / z.group;
        std::vector<float> flat;
        for (const TrackedArray& value : values) flat.insert(flat.end(), value->values.begin(), value->values.end());
        flat.resize(static_cast<size_t>(slice * z.group), 0.0f);
        std::copy_n(flat.begin() + z.member * slice, slice, z.param_slice->values.begin() + offset);
        z.layer_offsets.push_back(offset);
        z.layer_slices.push_back(slice);
        offset += slice;
        for (TrackedArray& value : values) value.reset();
      }
      if (offset != z.slice_elements) {
        throw std::logic_error(fmt::format("ZeRO 3: bucket {} holds {} elements per rank, its layers' slices {}", b,
                                           z.slice_elements, offset));
      }
    }
    zero_->buckets.push_back(std::move(z));
  }
}

void Trainer::gather_parameters(int layer, StepSeconds& seconds) {
  if (plan_.zero_stage < 3 || !zero_shards(layer)) return;
  const auto start = std::chrono::steady_clock::now();
  const auto v = static_cast<size_t>(layer);
  const ZeroState::Bucket& z = zero_->buckets[static_cast<size_t>(zero_->bucket_of_layer[v])];
  const auto position = static_cast<size_t>(zero_->position_in_bucket[v]);
  const int64_t slice = z.layer_slices[position];
  comm::LocalArray mine{{slice}, {}};
  const auto first = z.param_slice->values.begin() + z.layer_offsets[position];
  mine.values.assign(first, first + slice);
  const plans::Collective& gather = compiled_.layers[v].parameter_gathers.front();
  memory_.allocate(MemoryCategory::buffers, gather.buffer_bytes);
  const comm::LocalArray whole = communicator_.run(gather, mine, plan_.model->layer(layer).name + "/parameter_gather");
  // The gathered parameters are a working copy (the kept parameters are the slice), unpacked
  // from the padded gather buffer, which goes after (as the step program holds them).
  std::vector<TrackedArray>& values = parameters_[v].values;
  const auto& shapes = contexts_[v].parameter_shapes;
  values.clear();
  size_t at = 0;
  for (const auto& shape : shapes) {
    TrackedArray value = make_tracked(memory_, MemoryCategory::buffers, shape);
    std::copy_n(whole.values.begin() + static_cast<std::ptrdiff_t>(at), value->values.size(), value->values.begin());
    at += value->values.size();
    values.push_back(std::move(value));
  }
  memory_.release(MemoryCategory::buffers, gather.buffer_bytes);
  seconds.communication += seconds_since(start);
  record(fmt::format("gather {}", plan_.model->layer(layer).name), true, start);
}

void Trainer::release_gathered_parameters(int layer) {
  if (plan_.zero_stage < 3 || !zero_shards(layer)) return;
  for (TrackedArray& value : parameters_[static_cast<size_t>(layer)].values) value.reset();
}

void Trainer::ensure_gradient_accumulators(int layer) {
  if (plan_.zero_stage < 2 || !zero_shards(layer)) return;
  std::vector<TrackedArray>& grads = parameters_[static_cast<size_t>(layer)].grads;
  const auto& shapes = contexts_[static_cast<size_t>(layer)].parameter_shapes;
  grads.resize(shapes.size());
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (!grads[k]) grads[k] = make_tracked(memory_, MemoryCategory::buffers, shapes[k]);
  }
}

std::vector<float> Trainer::pack_for_reduce_scatter(size_t zero_bucket) {
  const ZeroState::Bucket& z = zero_->buckets[zero_bucket];
  const plans::GradientBucket& bucket = compiled_.buckets[z.index];
  std::vector<float> flat;
  if (plan_.zero_stage < 3) {
    flat = pack_bucket(bucket);
  } else {
    // Rank-major: member r's block is r's slice of each layer in bucket order.
    flat.assign(static_cast<size_t>(bucket.padded_elements), 0.0f);
    for (size_t position = 0; position < bucket.layers.size(); ++position) {
      std::vector<float> layer;
      for (const TrackedArray& grad : parameters_[static_cast<size_t>(bucket.layers[position])].grads) {
        layer.insert(layer.end(), grad->values.begin(), grad->values.end());
      }
      const int64_t slice = z.layer_slices[position];
      layer.resize(static_cast<size_t>(slice * z.group), 0.0f);
      for (int member = 0; member < z.group; ++member) {
        std::copy_n(layer.begin() + member * slice, slice,
                    flat.begin() + member * z.slice_elements + z.layer_offsets[position]);
      }
    }
  }
  if (plan_.zero_stage >= 2) {
    for (int v : bucket.layers) {
      for (TrackedArray& grad : parameters_[static_cast<size_t>(v)].grads) grad.reset();
    }
  }
  return flat;
}

void Trainer::start_sharded_bucket(size_t b) {
  size_t zero_bucket = 0;
  while (zero_->buckets[zero_bucket].index != b) ++zero_bucket;
  const ZeroState::Bucket& z = zero_->buckets[zero_bucket];
  const plans::GradientBucket& bucket = compiled_.buckets[b];
  const plans::Collective& c = bucket.reduction.front();
  memory_.allocate(MemoryCategory::buffers, bucket.padded_elements * 4);
  // Stage 1's reduced slice is a buffer of its own from the start (stages 2-3: the kept slice).
  if (plan_.zero_stage == 1) memory_.allocate(MemoryCategory::buffers, z.slice_elements * 4);
  PendingBucket pending{b, pack_for_reduce_scatter(zero_bucket), nullptr, {}};
  pending.slice.resize(static_cast<size_t>(z.slice_elements));
  // Member i receives the i-th contiguous piece, as in the blocking reduce-scatter of a flat
  // buffer. Both vectors keep their storage when the record moves into pending_.
  pending.reduction = backend_.collectives->start_reduce_scatter(c.axes, pending.flat, pending.slice);
  communicator_.counter().add("gradients", c.kind, plans::bytes_sent(c, z.member));
  pending_.push_back(std::move(pending));
}

void Trainer::update_sharded(StepSeconds& seconds) {
  const auto sync_start = std::chrono::steady_clock::now();
  // Stage 1 keeps whole gradients, so the reduced slice is a temporary.
  std::vector<TrackedArray> reduced_slices(zero_->buckets.size());
  auto deliver = [&](size_t zero_bucket, std::vector<float> slice) {
    ZeroState::Bucket& z = zero_->buckets[zero_bucket];
    if (plan_.zero_stage >= 2) {
      z.grad_slice->values = std::move(slice);
    } else {
      memory_.release(MemoryCategory::buffers, z.slice_elements * 4);  // counted since the reduction began
      reduced_slices[zero_bucket] = adopt_tracked(memory_, MemoryCategory::buffers, {{z.slice_elements}, std::move(slice)});
    }
  };
  if (overlap_) {
    // Started during backward; only what backward did not hide is waited for here.
    for (PendingBucket& pending : pending_) {
      pending.reduction->wait();
      memory_.release(MemoryCategory::buffers, compiled_.buckets[pending.bucket].padded_elements * 4);
      size_t zero_bucket = 0;
      while (zero_->buckets[zero_bucket].index != pending.bucket) ++zero_bucket;
      deliver(zero_bucket, std::move(pending.slice));
    }
    pending_.clear();
  } else {
    for (size_t i = 0; i < zero_->buckets.size(); ++i) {
      const plans::GradientBucket& bucket = compiled_.buckets[zero_->buckets[i].index];
      memory_.allocate(MemoryCategory::buffers, bucket.padded_elements * 4);
      if (plan_.zero_stage == 1) memory_.allocate(MemoryCategory::buffers, zero_->buckets[i].slice_elements * 4);
      const comm::LocalArray flat{{bucket.padded_elements}, pack_for_reduce_scatter(i)};
      comm::LocalArray reduced = communicator_.run(bucket.reduction.front(), flat, "gradients");
      memory_.release(MemoryCategory::buffers, bucket.padded_elements * 4);
      deliver(i, std::move(reduced.values));
    }
  }
  seconds.gradient_sync += seconds_since(sync_start);
  record("gradient buckets", true, sync_start);

  // The update, in the optimizer's registration order: whole parameters (layers ZeRO leaves
  // whole) in model order, then one slice per bucket.
  const auto optimizer_start = std::chrono::steady_clock::now();
  std::vector<comm::LocalArray*> values;
  std::vector<const comm::LocalArray*> grads;
  for (size_t v = 0; v < parameters_.size(); ++v) {
    if (zero_->bucket_of_layer[v] >= 0) continue;
    for (TrackedArray& value : parameters_[v].values) values.push_back(value.get());
    for (TrackedArray& grad : parameters_[v].grads) grads.push_back(grad.get());
  }
  // Stages 1-2: this rank's slice of the whole parameters, cut from the bucket's packing.
  std::vector<TrackedArray> param_slices;
  for (size_t i = 0; i < zero_->buckets.size(); ++i) {
    ZeroState::Bucket& z = zero_->buckets[i];
    if (plan_.zero_stage >= 3) {
      values.push_back(z.param_slice.get());
    } else {
      const plans::GradientBucket& bucket = compiled_.buckets[z.index];
      std::vector<float> flat;
      flat.reserve(static_cast<size_t>(bucket.padded_elements));
      for (int v : bucket.layers) {
        for (const TrackedArray& value : parameters_[static_cast<size_t>(v)].values) {
          flat.insert(flat.end(), value->values.begin(), value->values.end());
        }
      }
      flat.resize(static_cast<size_t>(bucket.padded_elements), 0.0f);
      comm::LocalArray slice{{z.slice_elements}, {}};
      const auto first = flat.begin() + z.member * z.slice_elements;
      slice.values.assign(first, first + z.slice_elements);
      param_slices.push_back(adopt_tracked(memory_, MemoryCategory::buffers, std::move(slice)));
      values.push_back(param_slices.back().get());
    }
    grads.push_back(plan_.zero_stage >= 2 ? z.grad_slice.get() : reduced_slices[i].get());
  }
  optimizer_->step(values, grads);
  for (LayerParameters& params : parameters_) {
    for (TrackedArray& grad : params.grads) {
      if (grad) std::fill(grad->values.begin(), grad->values.end(), 0.0f);
    }
  }
  reduced_slices.clear();
  seconds.optimizer += seconds_since(optimizer_start);
  record("optimizer step", false, optimizer_start);

  if (plan_.zero_stage >= 3) return;  // the slices are the parameters; layers gather them on use
  const auto gather_start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < zero_->buckets.size(); ++i) {
    const plans::GradientBucket& bucket = compiled_.buckets[zero_->buckets[i].index];
    memory_.allocate(MemoryCategory::buffers, bucket.padded_elements * 4);
    const comm::LocalArray whole = communicator_.run(bucket.gather.front(), *param_slices[i], "gradients");
    size_t at = 0;
    for (int v : bucket.layers) {
      for (TrackedArray& value : parameters_[static_cast<size_t>(v)].values) {
        std::copy_n(whole.values.begin() + static_cast<std::ptrdiff_t>(at), value->values.size(), value->values.begin());
        at += value->values.size();
      }
    }
    memory_.release(MemoryCategory::buffers, bucket.padded_elements * 4);
  }
  seconds.gradient_sync += seconds_since(gather_start);
  record("parameter gathers", true, gather_start);
}

std::vector<std::vector<float>> Trainer::local_parameter_values(int layer) {
  const auto v = static_cast<size_t>(layer);
  std::vector<std::vector<float>> out;
  if (plan_.zero_stage < 3 || !zero_shards(layer) || !on_my_stage(layer)) {
    for (const TrackedArray& value : parameters_[v].values) out.push_back(value->values);
    return out;
  }
  const ZeroState::Bucket& z = zero_->buckets[static_cast<size_t>(zero_->bucket_of_layer[v])];
  const auto position = static_cast<size_t>(zero_->position_in_bucket[v]);
  const int64_t slice = z.layer_slices[position];
  const auto mine_first = z.param_slice->values.begin() + z.layer_offsets[position];
  const comm::LocalArray mine{{slice}, std::vector<float>(mine_first, mine_first + slice)};
  const plans::Collective& gather = compiled_.layers[v].parameter_gathers.front();
  // The engine directly, not the Communicator: a checkpoint's gather is not the plan's traffic.
  const std::vector<float> whole =
      comm::to_floats(backend_.collectives->all_gather(gather.axes, comm::to_bytes(mine), 0)).values;
  size_t at = 0;
  for (const auto& shape : contexts_[v].parameter_shapes) {
    const auto elements = static_cast<size_t>(comm::element_count(shape));
    const auto first = whole.begin() + static_cast<std::ptrdiff_t>(at);
    out.emplace_back(first, first + static_cast<std::ptrdiff_t>(elements));
    at += elements;
  }
  return out;
}

std::vector<std::vector<float>*> Trainer::sharded_state() {
  std::vector<std::vector<float>*> arrays;
  if (!zero_) return arrays;
  for (ZeroState::Bucket& z : zero_->buckets) {
    if (z.param_slice) arrays.push_back(&z.param_slice->values);
  }
  return arrays;
}

}  // namespace splitbrain::exec
