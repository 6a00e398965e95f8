// The StepInterpreter's instructions of the step's end: gradient buckets packed, reduced (run
// blocking where the program waits right away, started non-blocking where it overlaps them with
// the backward), unpacked; the optimizer's update; ZeRO 1-2's parameter slices cut and gathered.

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "exec/runtime/flat_packing.h"
#include "exec/runtime/step_interpreter.h"

namespace splitbrain::exec {

using plans::BufferRole;
using plans::StepInstruction;

void StepInterpreter::pack(const StepInstruction& instruction) {
  comm::LocalArray& flat = buffers_.at(instruction.writes.at(0));
  std::vector<const comm::LocalArray*> parts;
  for (int b : instruction.reads) parts.push_back(&buffers_.at(b));
  const auto bucket = static_cast<size_t>(instruction.bucket);
  if (buffers_.describe(instruction.writes[0]).role == BufferRole::parameter_slice) {
    // ZeRO 1-2: this rank's slice of the bucket's (whole) parameters, for the update.
    const ZeroBucketSlice& z = r_.zero.of_bucket(bucket);
    cut_slice(parts, z.member * z.slice_elements, flat);
    return;
  }
  if (r_.plan.zero_stage < 3 || r_.zero.bucket_of_layer.empty() ||
      r_.zero.bucket_of_layer[static_cast<size_t>(r_.compiled.buckets[bucket].layers.front())] < 0) {
    pack_flat(parts, flat);
    return;
  }
  // ZeRO 3: rank-major, so the reduce-scatter hands each rank its own parameters' gradients.
  const ZeroBucketSlice& z = r_.zero.of_bucket(bucket);
  std::vector<std::vector<const comm::LocalArray*>> layers;
  for (int v : r_.compiled.buckets[bucket].layers) {
    auto& layer = layers.emplace_back();
    for (int b : instruction.reads) {
      if (buffers_.describe(b).layer == v) layer.push_back(&buffers_.at(b));
    }
  }
  pack_rank_major(layers, z.layer_offsets, z.layer_slices, z.group, z.slice_elements, flat);
}

void StepInterpreter::unpack(const StepInstruction& instruction) {
  std::vector<comm::LocalArray*> parts;
  for (int b : instruction.writes) parts.push_back(&buffers_.at(b));
  unpack_flat(buffers_.at(instruction.reads.at(0)), parts);
}

void StepInterpreter::reduce(int index, const StepInstruction& instruction) {
  comm::LocalArray& flat = buffers_.at(instruction.reads.at(0));
  comm::LocalArray& into = buffers_.at(instruction.writes.at(0));
  const bool in_place = instruction.reads[0] == instruction.writes[0];
  if (plans::waited_at_once(program_, index)) {
    comm::LocalArray result = r_.communicator.run(instruction.collectives.at(0), flat, "gradients");
    for (size_t i = 1; i < instruction.collectives.size(); ++i) {
      result = r_.communicator.run(instruction.collectives[i], result, "gradients");
    }
    check_same_size(into, result.values.size(), "a bucket's reduction");
    into.values = std::move(result.values);
    return;
  }
  // Overlapped: one all-reduce (in place) or one reduce-scatter, the plan's only collective.
  const plans::Collective& c = instruction.collectives.at(0);
  into.values.resize(static_cast<size_t>(comm::element_count(into.shape)));
  pending_reductions_[index] = in_place ? r_.engine.start_all_reduce(c.axes, flat.values)
                                        : r_.engine.start_reduce_scatter(c.axes, flat.values, into.values);
  r_.communicator.counter().add("gradients", c.kind, plans::bytes_sent(c, r_.communicator.index_in_group(c)));
}

void StepInterpreter::update(const StepInstruction& instruction) {
  if (instruction.writes.size() != instruction.reads.size()) {
    throw std::logic_error("step program: the update pairs each parameter with one gradient");
  }
  // The optimizer keeps its state in registration order: the whole parameters in model order,
  // then one slice per bucket of the stage.
  auto order = [&](int buffer) {
    const plans::StepBuffer& b = buffers_.describe(buffer);
    if (b.role == BufferRole::parameter) return std::tuple{0, b.layer, b.index};
    return std::tuple{1, static_cast<int>(r_.zero.position_of_bucket(static_cast<size_t>(b.bucket))), 0};
  };
  std::vector<size_t> pairs(instruction.writes.size());
  for (size_t i = 0; i < pairs.size(); ++i) pairs[i] = i;
  std::sort(pairs.begin(), pairs.end(),
            [&](size_t a, size_t b) { return order(instruction.writes[a]) < order(instruction.writes[b]); });
  std::vector<comm::LocalArray*> values;
  std::vector<const comm::LocalArray*> grads;
  for (size_t i : pairs) {
    values.push_back(&buffers_.at(instruction.writes[i]));
    grads.push_back(&buffers_.at(instruction.reads[i]));
  }
  r_.optimizer.step(values, grads);
  // The next step's backward accumulates into the kept gradients from zero.
  for (int b : program_.resident) {
    if (buffers_.describe(b).role == BufferRole::parameter_gradient) {
      std::fill(buffers_.at(b).values.begin(), buffers_.at(b).values.end(), 0.0f);
    }
  }
}

void StepInterpreter::gather_bucket(const StepInstruction& instruction) {
  comm::LocalArray whole = r_.communicator.run(instruction.collectives.at(0), buffers_.at(instruction.reads.at(0)),
                                               "gradients");
  comm::LocalArray& into = buffers_.at(instruction.writes.at(0));
  check_same_size(into, whole.values.size(), "a bucket's gather");
  into.values = std::move(whole.values);
}

}  // namespace splitbrain::exec
