#include "exec/runtime/zero_sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "exec/runtime/flat_packing.h"

namespace splitbrain::exec {
namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

int64_t element_total(const std::vector<TrackedArray>& arrays) {
  int64_t total = 0;
  for (const TrackedArray& a : arrays) total += a->elements();
  return total;
}

}  // namespace

const ZeroBucketSlice& ZeroSlices::of_bucket(size_t bucket) const { return buckets[position_of_bucket(bucket)]; }

size_t ZeroSlices::position_of_bucket(size_t bucket) const {
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].index == bucket) return i;
  }
  throw std::logic_error(fmt::format("ZeRO: this rank keeps no slice of gradient bucket {}", bucket));
}

bool zero_shards(const plans::Plan& plan, const plans::CompiledPlan& compiled, int layer) {
  if (plan.zero_stage == 0) return false;
  const plans::LayerLayouts& layouts = compiled.layers[static_cast<size_t>(layer)].layouts;
  return !layouts.parameters.empty() && plan.mesh.group_size(layouts.gradient_sync_axes) > 1;
}

ZeroSlices make_zero_slices(const plans::Plan& plan, const plans::CompiledPlan& compiled, int stage,
                            comm::Communicator& communicator, std::vector<LayerParameters>& parameters,
                            Optimizer& optimizer, DeviceMemory& device, MemoryTracker& memory) {
  ZeroSlices zero;
  zero.bucket_of_layer.assign(compiled.layers.size(), -1);
  zero.position_in_bucket.assign(compiled.layers.size(), -1);
  if (plan.zero_stage == 0) return zero;
  for (size_t b = 0; b < compiled.buckets.size(); ++b) {
    const plans::GradientBucket& bucket = compiled.buckets[b];
    if (bucket.stage != stage) continue;
    ZeroBucketSlice z;
    z.index = b;
    const plans::Collective& reduction = bucket.reduction.front();
    z.group = reduction.group_size;
    z.member = communicator.index_in_group(reduction);
    z.slice_elements = bucket.padded_elements / z.group;
    for (size_t position = 0; position < bucket.layers.size(); ++position) {
      const auto v = static_cast<size_t>(bucket.layers[position]);
      zero.bucket_of_layer[v] = static_cast<int>(zero.buckets.size());
      zero.position_in_bucket[v] = static_cast<int>(position);
    }
    optimizer.add_parameter(z.slice_elements);
    if (plan.zero_stage >= 2) z.grad_slice = make_tracked(device, memory, MemoryCategory::grads, {z.slice_elements});
    if (plan.zero_stage >= 3) {
      z.param_slice = make_tracked(device, memory, MemoryCategory::params, {z.slice_elements});
      int64_t offset = 0;
      for (int v : bucket.layers) {
        std::vector<TrackedArray>& values = parameters[static_cast<size_t>(v)].values;
        const int64_t slice = round_up(element_total(values), z.group) / z.group;
        std::vector<const DeviceArray*> parts;
        for (const TrackedArray& value : values) parts.push_back(value.get());
        cut_slice(device, parts, z.member * slice, slice, *z.param_slice, offset);
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
    zero.buckets.push_back(std::move(z));
  }
  return zero;
}

}  // namespace splitbrain::exec
