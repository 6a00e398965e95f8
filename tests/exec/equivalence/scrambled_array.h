#pragma once
// The arrays of the scrambled test device (scrambled_device.h): host arrays whose memory is
// scrambled (each 32-bit word XORed with the array's own key) whenever no Device call is using
// them, and the guards its concerns hold while a call uses them.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/runtime/host_array.h"

namespace splitbrain::equivalence {

class ScrambledArray final : public exec::HostArray {
 public:
  ScrambledArray(std::vector<int64_t> shape, bool zeroed, uint32_t key);
  // Scrambles plain values, unscrambles scrambled ones.
  void flip();
  // Whether `array` holds scrambled values now (it is not in use by a Device call).
  static bool scrambled(const exec::DeviceArray& array);

  int users = 0;  // Device calls using the array now: plain while any does

 private:
  uint32_t key_;
};

// The arrays a Device call uses, plain for as long as this lives.
class InUse {
 public:
  InUse() = default;
  InUse(std::initializer_list<const exec::DeviceArray*> arrays);
  InUse(InUse&& other) noexcept : held_(std::move(other.held_)) { other.held_.clear(); }
  InUse& operator=(InUse&&) = delete;
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;
  ~InUse() { release(); }

  template <typename Arrays>
  InUse& add_all(const Arrays& arrays) {
    for (const exec::DeviceArray* array : arrays) add(array);
    return *this;
  }
  void add(const exec::DeviceArray* array);
  void release();

 private:
  std::vector<ScrambledArray*> held_;
};

// A non-blocking operation whose arrays stay plain until it completes.
class HeldPending final : public exec::comm::PendingCollective {
 public:
  HeldPending(std::unique_ptr<exec::comm::PendingCollective> inner, InUse arrays)
      : inner_(std::move(inner)), arrays_(std::move(arrays)) {}
  bool test() override;
  void wait() override;

 private:
  std::unique_ptr<exec::comm::PendingCollective> inner_;
  InUse arrays_;
};

}  // namespace splitbrain::equivalence
