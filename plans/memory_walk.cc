#include "plans/memory_walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace splitbrain::plans {

MemoryPeaks walk_memory(const StepProgram& program) {
  std::array<int64_t, kMemoryCategories> live{};
  int64_t live_total = 0;
  MemoryPeaks peaks;
  std::vector<bool> alive(program.buffers.size(), false);
  auto change = [&](int buffer, bool allocate) {
    const StepBuffer& b = program.buffers.at(static_cast<size_t>(buffer));
    if (alive[static_cast<size_t>(buffer)] == allocate) {
      throw std::logic_error(fmt::format("step program of rank {}: buffer {} {}", program.rank, buffer,
                                         allocate ? "allocated while alive" : "freed while not alive"));
    }
    alive[static_cast<size_t>(buffer)] = allocate;
    const int64_t delta = allocate ? b.bytes : -b.bytes;
    const auto c = static_cast<size_t>(b.category);
    live[c] += delta;
    live_total += delta;
    peaks.category[c] = std::max(peaks.category[c], live[c]);
    peaks.total = std::max(peaks.total, live_total);
  };
  for (int buffer : program.resident) change(buffer, true);
  for (const StepInstruction& instruction : program.instructions) {
    if (instruction.op == StepOp::alloc) change(instruction.buffer, true);
    if (instruction.op == StepOp::free) change(instruction.buffer, false);
  }
  return peaks;
}

}  // namespace splitbrain::plans
