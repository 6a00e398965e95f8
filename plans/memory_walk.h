#pragma once
// The memory a step program holds: its resident buffers, then every alloc and free in program
// order. The peaks of this walk are the predicted memory of the rank (what the simulator
// reports and what the executor's tracked memory must equal), so nothing else re-derives
// lifetimes.

#include <array>
#include <cstdint>

#include "plans/step_program.h"

namespace splitbrain::plans {

struct MemoryPeaks {
  std::array<int64_t, kMemoryCategories> category{};  // each category's own peak
  int64_t total = 0;                                  // the peak of all categories together
  int64_t of(MemoryCategory c) const { return category[static_cast<size_t>(c)]; }
};

// The bytes alive per category as buffers come and go, and their peaks.
class MemoryCounter {
 public:
  void change(const StepBuffer& buffer, bool allocate);
  const MemoryPeaks& peaks() const { return peaks_; }

 private:
  std::array<int64_t, kMemoryCategories> live_{};
  int64_t live_total_ = 0;
  MemoryPeaks peaks_;
};

// Throws std::logic_error for an alloc of a live buffer or a free of a dead one.
MemoryPeaks walk_memory(const StepProgram& program);

}  // namespace splitbrain::plans
