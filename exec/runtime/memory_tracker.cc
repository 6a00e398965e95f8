#include "exec/runtime/memory_tracker.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

namespace splitbrain::exec {

void MemoryTracker::allocate(MemoryCategory category, int64_t bytes) {
  current_[index(category)] += bytes;
  total_ += bytes;
  peak_[index(category)] = std::max(peak_[index(category)], current_[index(category)]);
  peak_total_ = std::max(peak_total_, total_);
}

void MemoryTracker::release(MemoryCategory category, int64_t bytes) {
  if (bytes > current_[index(category)]) throw std::logic_error("MemoryTracker: releasing more than was allocated");
  current_[index(category)] -= bytes;
  total_ -= bytes;
}

int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // reported in kB
  }
  return 0;
}

}  // namespace splitbrain::exec
