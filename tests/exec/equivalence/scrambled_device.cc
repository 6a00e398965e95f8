#include "tests/exec/equivalence/scrambled_device.h"

#include <cstring>
#include <utility>

#include "exec/runtime/collectives_in_device_memory.h"
#include "plans/collective_residence.h"

namespace splitbrain::equivalence {
namespace {

using exec::DeviceArray;

class ScrambledArray final : public exec::HostArray {
 public:
  ScrambledArray(std::vector<int64_t> shape, bool zeroed, uint32_t key)
      : HostArray(std::move(shape), zeroed), key_(key) {
    flip();
  }
  // Scrambles plain values, unscrambles scrambled ones.
  void flip() {
    for (float& value : array.values) {
      uint32_t bits = 0;
      std::memcpy(&bits, &value, sizeof bits);
      bits ^= key_;
      std::memcpy(&value, &bits, sizeof bits);
    }
  }
  int users = 0;  // Device calls using the array now: plain while any does

 private:
  uint32_t key_;
};

// The arrays a Device call uses, plain for as long as this lives.
class InUse {
 public:
  InUse() = default;
  InUse(std::initializer_list<const DeviceArray*> arrays) {
    for (const DeviceArray* array : arrays) add(array);
  }
  InUse(InUse&& other) noexcept : held_(std::move(other.held_)) { other.held_.clear(); }
  InUse& operator=(InUse&&) = delete;
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;
  ~InUse() { release(); }

  template <typename Arrays>
  InUse& add_all(const Arrays& arrays) {
    for (const DeviceArray* array : arrays) add(array);
    return *this;
  }
  void add(const DeviceArray* array) {
    // The arrays are the double's own: the const of a read-only argument is the runtime's view.
    auto* scrambled = dynamic_cast<ScrambledArray*>(const_cast<DeviceArray*>(array));
    if (scrambled == nullptr) return;  // a released tensor's shape
    if (scrambled->users++ == 0) scrambled->flip();
    held_.push_back(scrambled);
  }
  void release() {
    for (ScrambledArray* array : held_) {
      if (--array->users == 0) array->flip();
    }
    held_.clear();
  }

 private:
  std::vector<ScrambledArray*> held_;
};

// A non-blocking operation whose arrays stay plain until it completes.
class HeldPending final : public exec::comm::PendingCollective {
 public:
  HeldPending(std::unique_ptr<exec::comm::PendingCollective> inner, InUse arrays)
      : inner_(std::move(inner)), arrays_(std::move(arrays)) {}
  bool test() override {
    const bool done = inner_->test();
    if (done) arrays_.release();
    return done;
  }
  void wait() override {
    inner_->wait();
    arrays_.release();
  }

 private:
  std::unique_ptr<exec::comm::PendingCollective> inner_;
  InUse arrays_;
};

}  // namespace

bool ScrambledDevice::scrambled(const DeviceArray& array) {
  const auto* s = dynamic_cast<const ScrambledArray*>(&array);
  return s != nullptr && s->users == 0;
}

std::unique_ptr<DeviceArray> ScrambledDevice::allocate(std::vector<int64_t> shape, bool zeroed) {
  next_key_ = next_key_ * 1664525u + 1013904223u;  // every array its own key
  return std::make_unique<ScrambledArray>(std::move(shape), zeroed, next_key_ | 0x40000000u);
}

void ScrambledDevice::upload_values(std::span<const float> host, DeviceArray& into) {
  InUse use{&into};
  HostDevice::upload_values(host, into);
}

void ScrambledDevice::download_values(const DeviceArray& from, std::span<float> host) {
  InUse use{&from};
  HostDevice::download_values(from, host);
}

void ScrambledDevice::fill(DeviceArray& array, int64_t first, int64_t count, float value) {
  InUse use{&array};
  HostDevice::fill(array, first, count, value);
}

void ScrambledDevice::copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                           int64_t count) {
  InUse use{&from, &into};
  HostDevice::copy(from, from_first, into, into_first, count);
}

void ScrambledDevice::add(const DeviceArray& from, DeviceArray& into) {
  InUse use{&from, &into};
  HostDevice::add(from, into);
}

void ScrambledDevice::copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) {
  InUse use{&from, &block};
  HostDevice::copy_block(from, offset, block);
}

void ScrambledDevice::add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) {
  InUse use{&block, &into};
  HostDevice::add_block(block, into, offset);
}

void ScrambledDevice::copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                                const exec::kernels::RowCopy& rows) {
  InUse use{&from, &into};
  HostDevice::copy_rows(from, from_first, into, into_first, rows);
}

void ScrambledDevice::pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) {
  InUse use{&flat};
  use.add_all(parts);
  HostDevice::pack(parts, flat);
}

void ScrambledDevice::unpack(const DeviceArray& flat, std::span<DeviceArray* const> parts) {
  InUse use{&flat};
  use.add_all(parts);
  HostDevice::unpack(flat, parts);
}

void ScrambledDevice::forward(exec::LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
                              std::span<const DeviceArray* const> params, DeviceArray& output) {
  InUse use{&output};
  use.add_all(inputs).add_all(params);
  HostDevice::forward(op, micro, step, inputs, params, output);
}

void ScrambledDevice::backward(exec::LayerOp& op, int micro, std::span<const DeviceArray* const> inputs,
                               const DeviceArray& output, const DeviceArray& output_grad,
                               std::span<const DeviceArray* const> params, std::span<DeviceArray* const> input_grads,
                               std::span<DeviceArray* const> param_grads) {
  InUse use{&output, &output_grad};
  use.add_all(inputs).add_all(params).add_all(input_grads).add_all(param_grads);
  HostDevice::backward(op, micro, inputs, output, output_grad, params, input_grads, param_grads);
}

void ScrambledDevice::update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter,
                             const DeviceArray& gradient, DeviceArray& first_moment, DeviceArray* second_moment) {
  InUse use{&parameter, &gradient, &first_moment, second_moment};
  HostDevice::update(config, step, parameter, gradient, first_moment, second_moment);
}

void ScrambledDevice::run_collectives(exec::comm::Communicator& communicator,
                                      std::span<const plans::Collective> collectives, const DeviceArray& input,
                                      DeviceArray& output, std::string_view label) {
  // As a GPU with NCCL runs them: in the device's memory, through its own calls.
  if (plans::runs_on_device_memory(collectives)) {
    exec::run_collectives_in_device_memory(*this, communicator, collectives, input, output, label);
    return;
  }
  InUse use{&input, &output};
  HostDevice::run_collectives(communicator, collectives, input, output, label);
}

void ScrambledDevice::redistribute(exec::comm::Communicator& communicator,
                                   std::span<const plans::RedistributionStep> steps,
                                   std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                                   std::string_view label) {
  exec::redistribute_in_device_memory(*this, communicator, steps, global_shape, input, output, label);
}

std::unique_ptr<exec::comm::PendingCollective> ScrambledDevice::start_all_reduce(exec::comm::CollectiveEngine& engine,
                                                                                 const std::vector<int>& axes,
                                                                                 DeviceArray& buffer) {
  InUse use{&buffer};
  auto pending = HostDevice::start_all_reduce(engine, axes, buffer);
  return std::make_unique<HeldPending>(std::move(pending), std::move(use));
}

std::unique_ptr<exec::comm::PendingCollective> ScrambledDevice::start_reduce_scatter(
    exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input, DeviceArray& output) {
  InUse use{&input, &output};
  auto pending = HostDevice::start_reduce_scatter(engine, axes, input, output);
  return std::make_unique<HeldPending>(std::move(pending), std::move(use));
}

void ScrambledDevice::all_gather(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                 const DeviceArray& input, DeviceArray& output) {
  InUse use{&input, &output};
  HostDevice::all_gather(engine, axes, input, output);
}

void ScrambledDevice::all_to_all(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                 const DeviceArray& input, DeviceArray& output) {
  InUse use{&input, &output};
  HostDevice::all_to_all(engine, axes, input, output);
}

std::unique_ptr<exec::comm::PendingCollective> ScrambledDevice::start_send(exec::comm::CollectiveEngine& engine,
                                                                           const std::vector<int>& axes,
                                                                           int destination, int tag,
                                                                           const DeviceArray& array) {
  // As a GPU with NCCL sends: held back and grouped with the next receive, matched in order.
  InUse use{&array};
  auto pending = grouped_hand_overs_ ? hand_overs_.start_send(engine, axes, destination, array)
                                     : HostDevice::start_send(engine, axes, destination, tag, array);
  return std::make_unique<HeldPending>(std::move(pending), std::move(use));
}

void ScrambledDevice::receive(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                              DeviceArray& into) {
  InUse use{&into};
  if (grouped_hand_overs_) {
    use.add_all(std::exchange(held_receives_, {}));  // their group is posted now
    hand_overs_.receive(engine, axes, source, into);
  } else {
    HostDevice::receive(engine, axes, source, tag, into);
  }
}

void ScrambledDevice::hold_receive(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, int source,
                                   int tag, DeviceArray& into) {
  if (!grouped_hand_overs_) {
    receive(engine, axes, source, tag, into);
    return;
  }
  hand_overs_.hold_receive(engine, axes, source, into);
  held_receives_.push_back(&into);
}

}  // namespace splitbrain::equivalence
