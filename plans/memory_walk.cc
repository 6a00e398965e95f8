#include "plans/memory_walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace splitbrain::plans {

void MemoryCounter::change(const StepBuffer& buffer, bool allocate) {
  const int64_t delta = allocate ? buffer.bytes : -buffer.bytes;
  const auto c = static_cast<size_t>(buffer.category);
  live_[c] += delta;
  live_total_ += delta;
  peaks_.category[c] = std::max(peaks_.category[c], live_[c]);
  peaks_.total = std::max(peaks_.total, live_total_);
}

MemoryPeaks walk_memory(const StepProgram& program) {
  MemoryCounter counter;
  std::vector<bool> alive(program.buffers.size(), false);
  auto change = [&](int buffer, bool allocate) {
    if (alive.at(static_cast<size_t>(buffer)) == allocate) {
      throw std::logic_error(fmt::format("step program of rank {}: buffer {} {}", program.rank, buffer,
                                         allocate ? "allocated while alive" : "freed while not alive"));
    }
    alive[static_cast<size_t>(buffer)] = allocate;
    counter.change(program.buffers[static_cast<size_t>(buffer)], allocate);
  };
  for (int buffer : program.resident) change(buffer, true);
  for (const StepInstruction& instruction : program.instructions) {
    if (instruction.op == StepOp::alloc) change(instruction.buffer, true);
    if (instruction.op == StepOp::free) change(instruction.buffer, false);
  }
  return counter.peaks();
}

}  // namespace splitbrain::plans
