#include "tests/exec/equivalence/scrambled_array.h"

#include <cstring>
#include <utility>

namespace splitbrain::equivalence {

ScrambledArray::ScrambledArray(std::vector<int64_t> shape, bool zeroed, uint32_t key)
    : HostArray(std::move(shape), zeroed), key_(key) {
  flip();
}

void ScrambledArray::flip() {
  for (float& value : array.values) {
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    bits ^= key_;
    std::memcpy(&value, &bits, sizeof bits);
  }
}

bool ScrambledArray::scrambled(const exec::DeviceArray& array) {
  const auto* s = dynamic_cast<const ScrambledArray*>(&array);
  return s != nullptr && s->users == 0;
}

InUse::InUse(std::initializer_list<const exec::DeviceArray*> arrays) {
  for (const exec::DeviceArray* array : arrays) add(array);
}

void InUse::add(const exec::DeviceArray* array) {
  // The arrays are the double's own: the const of a read-only argument is the runtime's view.
  auto* scrambled = dynamic_cast<ScrambledArray*>(const_cast<exec::DeviceArray*>(array));
  if (scrambled == nullptr) return;  // a released tensor's shape
  if (scrambled->users++ == 0) scrambled->flip();
  held_.push_back(scrambled);
}

void InUse::release() {
  for (ScrambledArray* array : held_) {
    if (--array->users == 0) array->flip();
  }
  held_.clear();
}

bool HeldPending::test() {
  const bool done = inner_->test();
  if (done) arrays_.release();
  return done;
}

void HeldPending::wait() {
  inner_->wait();
  arrays_.release();
}

}  // namespace splitbrain::equivalence
