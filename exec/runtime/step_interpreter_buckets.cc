// The StepInterpreter's instructions of the step's end: gradient buckets packed, reduced (run
// blocking where the program waits right away, started non-blocking where it overlaps them with
// the backward), unpacked; the optimizer's update; ZeRO 1-2's parameter slices cut and gathered.

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>
#include <tuple>

#include "exec/runtime/flat_packing.h"
#include "exec/runtime/step_interpreter.h"

namespace splitbrain::exec {

using plans::BufferRole;
using plans::StepInstruction;

void StepInterpreter::pack(const StepInstruction& instruction) {
  DeviceArray& flat = buffers_.at(instruction.writes.at(0));
  std::vector<const DeviceArray*> parts;
  for (int b : instruction.reads) parts.push_back(&buffers_.at(b));
  const auto bucket = static_cast<size_t>(instruction.bucket);
  if (buffers_.describe(instruction.writes[0]).role == BufferRole::parameter_slice) {
    // ZeRO 1-2: this rank's slice of the bucket's (whole) parameters, for the update.
    const ZeroBucketSlice& z = r_.zero.of_bucket(bucket);
    cut_slice(r_.device.memory(), parts, z.member * z.slice_elements, z.slice_elements, flat, 0);
    return;
  }
  if (r_.plan.zero_stage < 3 || r_.zero.bucket_of_layer.empty() ||
      r_.zero.bucket_of_layer[static_cast<size_t>(r_.compiled.buckets[bucket].layers.front())] < 0) {
    r_.device.memory().pack(parts, flat);
    return;
  }
  // ZeRO 3: rank-major, so the reduce-scatter hands each rank its own parameters' gradients.
  const ZeroBucketSlice& z = r_.zero.of_bucket(bucket);
  std::vector<std::vector<const DeviceArray*>> layers;
  for (int v : r_.compiled.buckets[bucket].layers) {
    auto& layer = layers.emplace_back();
    for (int b : instruction.reads) {
      if (buffers_.describe(b).layer == v) layer.push_back(&buffers_.at(b));
    }
  }
  pack_rank_major(r_.device.memory(), layers, z.layer_offsets, z.layer_slices, z.group, z.slice_elements, flat);
}

void StepInterpreter::unpack(const StepInstruction& instruction) {
  std::vector<DeviceArray*> parts;
  for (int b : instruction.writes) parts.push_back(&buffers_.at(b));
  r_.device.memory().unpack(buffers_.at(instruction.reads.at(0)), parts);
}

void StepInterpreter::reduce(int index, const StepInstruction& instruction) {
  DeviceArray& flat = buffers_.at(instruction.reads.at(0));
  DeviceArray& into = buffers_.at(instruction.writes.at(0));
  const bool in_place = instruction.reads[0] == instruction.writes[0];
  // A bf16 bucket (2-byte elements) reduces blocking through the Communicator's bf16 path: the
  // engines' started reductions are fp32 only.
  if (plans::waited_at_once(program_, index) || instruction.collectives.at(0).element_bytes != 4) {
    r_.device.collectives().run_collectives(r_.communicator, instruction.collectives, flat, into, "gradients");
    return;
  }
  // Overlapped: one all-reduce (in place) or one reduce-scatter, the plan's only collective.
  const plans::Collective& c = instruction.collectives.at(0);
  pending_reductions_[index] = in_place ? r_.device.collectives().start_all_reduce(r_.engine, c.axes, flat)
                                        : r_.device.collectives().start_reduce_scatter(r_.engine, c.axes, flat, into);
  r_.communicator.count("gradients", c);
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
  std::vector<DeviceArray*> values;
  std::vector<const DeviceArray*> grads;
  for (size_t i : pairs) {
    values.push_back(&buffers_.at(instruction.writes[i]));
    grads.push_back(&buffers_.at(instruction.reads[i]));
  }
  r_.optimizer.step(values, grads);
  // The next step's backward accumulates into the kept gradients from zero.
  std::vector<DeviceArray*> kept_gradients;
  for (int b : program_.resident) {
    if (buffers_.describe(b).role == BufferRole::parameter_gradient) kept_gradients.push_back(&buffers_.at(b));
  }
  r_.device.memory().zero_all(kept_gradients);
}

void StepInterpreter::gather_bucket(const StepInstruction& instruction) {
  r_.device.collectives().run_collectives(r_.communicator, std::span(&instruction.collectives.at(0), 1),
                                          buffers_.at(instruction.reads.at(0)), buffers_.at(instruction.writes.at(0)),
                                          "gradients");
}

}  // namespace splitbrain::exec
