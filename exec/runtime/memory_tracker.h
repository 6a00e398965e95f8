#pragma once
// Tracks the bytes the executor holds per category, in the simulator's vocabulary (params,
// grads, optimizer, activations, buffers), with the peak of each and of their sum, so `compare`
// can line measured memory up with predicted memory category by category.

#include <array>
#include <cstdint>
#include <string_view>

#include "plans/step_program.h"

namespace splitbrain::exec {

// The step program's categories (plans/step_program.h), so tracked and predicted memory share
// one vocabulary by construction.
using plans::kMemoryCategories;
using plans::memory_category_name;
using plans::MemoryCategory;

class MemoryTracker {
 public:
  void allocate(MemoryCategory category, int64_t bytes);
  void release(MemoryCategory category, int64_t bytes);
  int64_t current(MemoryCategory category) const { return current_[index(category)]; }
  int64_t peak(MemoryCategory category) const { return peak_[index(category)]; }
  int64_t peak_total() const { return peak_total_; }
  int64_t current_total() const { return total_; }

 private:
  static size_t index(MemoryCategory category) { return static_cast<size_t>(category); }
  std::array<int64_t, kMemoryCategories> current_{};
  std::array<int64_t, kMemoryCategories> peak_{};
  int64_t total_ = 0;
  int64_t peak_total_ = 0;
};

// The peak resident set size of this process, in bytes (from /proc/self/status VmHWM).
int64_t peak_resident_bytes();

}  // namespace splitbrain::exec
