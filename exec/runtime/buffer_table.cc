#include "exec/runtime/buffer_table.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace splitbrain::exec {

using plans::BufferRole;

BufferTable::BufferTable(const plans::StepProgram& program, const plans::CompiledPlan& compiled,
                         const std::vector<OpContext>& contexts, std::vector<LayerParameters>& parameters,
                         const ZeroSlices& zero, DeviceMemory& device, MemoryTracker& memory, MixedPrecision precision)
    : program_(program),
      compiled_(compiled),
      contexts_(contexts),
      parameters_(parameters),
      zero_(zero),
      device_(device),
      memory_(memory),
      precision_(precision),
      arrays_(program.buffers.size()),
      resident_(program.buffers.size(), false) {
  for (int b : program.resident) resident_[static_cast<size_t>(b)] = true;
}

TrackedArray* BufferTable::model_state_of(const plans::StepBuffer& buffer) {
  auto slot = [&](std::vector<TrackedArray>& arrays) {
    const auto k = static_cast<size_t>(buffer.index);
    if (arrays.size() <= k) arrays.resize(k + 1);
    return &arrays[k];
  };
  LayerParameters* layer = buffer.layer >= 0 ? &parameters_[static_cast<size_t>(buffer.layer)] : nullptr;
  switch (buffer.role) {
    case BufferRole::parameter:
    case BufferRole::whole_parameter:
      return slot(layer->values);
    case BufferRole::parameter_gradient:
    case BufferRole::whole_parameter_gradient:
      return slot(layer->grads);
    default:
      return nullptr;
  }
}

void BufferTable::bind_model_states() {
  for (int b : program_.resident) {
    const plans::StepBuffer& buffer = describe(b);
    TrackedArray& array = arrays_[static_cast<size_t>(b)];
    if (buffer.role == BufferRole::gradient_slice) {
      array = zero_.of_bucket(static_cast<size_t>(buffer.bucket)).grad_slice;
    } else if (buffer.role == BufferRole::parameter_slice) {
      array = zero_.of_bucket(static_cast<size_t>(buffer.bucket)).param_slice;
    } else if (TrackedArray* state = model_state_of(buffer)) {
      array = *state;
    }
  }
}

std::vector<int64_t> BufferTable::shape_of(const plans::StepBuffer& buffer) const {
  const auto context = [&](int layer) -> const OpContext& { return contexts_[static_cast<size_t>(layer)]; };
  const auto index = static_cast<size_t>(buffer.index);
  switch (buffer.role) {
    case BufferRole::output:
    case BufferRole::output_gradient:
    case BufferRole::received_gradient:
      return context(buffer.layer).output_shape;
    case BufferRole::input_copy:
    case BufferRole::input_gradient:
      return context(buffer.layer).input_shapes.at(index);
    case BufferRole::received: {
      const int producer = context(buffer.layer).model->layer(buffer.layer).inputs.at(index);
      return context(producer).output_shape;
    }
    case BufferRole::whole_parameter:
    case BufferRole::whole_parameter_gradient:
    case BufferRole::tied_gradient:
      return context(buffer.layer).parameter_shapes.at(index);
    case BufferRole::gathered_parameters: {
      const auto v = static_cast<size_t>(buffer.layer);
      const ZeroBucketSlice& z = zero_.buckets.at(static_cast<size_t>(zero_.bucket_of_layer[v]));
      return {z.layer_slices.at(static_cast<size_t>(zero_.position_in_bucket[v])) * z.group};
    }
    case BufferRole::bucket:
    case BufferRole::gathered_bucket:
      return {compiled_.buckets.at(static_cast<size_t>(buffer.bucket)).padded_elements};
    case BufferRole::reduced_slice:
    case BufferRole::parameter_slice:
      return {zero_.of_bucket(static_cast<size_t>(buffer.bucket)).slice_elements};
    default:
      throw std::logic_error(
          fmt::format("step program: no array for a buffer of role {}", static_cast<int>(buffer.role)));
  }
}

void BufferTable::allocate(int buffer) {
  const plans::StepBuffer& described = describe(buffer);
  if (described.role == BufferRole::kept_by_op) return;  // the op's own storage
  TrackedArray& array = arrays_[static_cast<size_t>(buffer)];
  if (array) throw std::logic_error(fmt::format("step program: buffer {} allocated twice", buffer));
  const model::Model& model = *contexts_.front().model;
  array = make_tracked(device_, memory_, described.category, shape_of(described),
                       plans::allocated_zeroed(model, described), precision_.buffer_bytes(model, described));
  if (TrackedArray* state = model_state_of(described)) *state = array;
}

void BufferTable::release(int buffer) {
  const plans::StepBuffer& described = describe(buffer);
  if (described.role == BufferRole::kept_by_op) return;
  if (TrackedArray* state = model_state_of(described)) state->reset();
  arrays_[static_cast<size_t>(buffer)].reset();
}

DeviceArray& BufferTable::at(int buffer) {
  if (buffer < 0 || static_cast<size_t>(buffer) >= arrays_.size() || !arrays_[static_cast<size_t>(buffer)]) {
    throw std::logic_error(fmt::format("step program: buffer {} is read or written while it does not exist", buffer));
  }
  return *arrays_[static_cast<size_t>(buffer)];
}

void BufferTable::check_all_released() const {
  std::string held;
  for (size_t b = 0; b < arrays_.size(); ++b) {
    if (arrays_[b] && !resident_[b]) {
      held += fmt::format(" {}", b);
    }
  }
  if (!held.empty()) throw std::logic_error("step program: buffers still allocated at the end:" + held);
}

}  // namespace splitbrain::exec
