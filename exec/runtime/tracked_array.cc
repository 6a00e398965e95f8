#include "exec/runtime/tracked_array.h"

namespace splitbrain::exec {

TrackedArray adopt_tracked(MemoryTracker& memory, MemoryCategory category, comm::LocalArray array) {
  const auto bytes = static_cast<int64_t>(array.values.size() * sizeof(float));
  memory.allocate(category, bytes);
  return TrackedArray(new comm::LocalArray(std::move(array)), [&memory, category, bytes](comm::LocalArray* p) {
    memory.release(category, bytes);
    delete p;
  });
}

TrackedArray make_tracked(MemoryTracker& memory, MemoryCategory category, std::vector<int64_t> shape) {
  comm::LocalArray array;
  array.values.assign(static_cast<size_t>(comm::element_count(shape)), 0.0f);
  array.shape = std::move(shape);
  return adopt_tracked(memory, category, std::move(array));
}

TrackedArray make_unfilled_tracked(MemoryTracker& memory, MemoryCategory category, std::vector<int64_t> shape) {
  const int64_t bytes = comm::element_count(shape) * static_cast<int64_t>(sizeof(float));
  memory.allocate(category, bytes);
  return TrackedArray(new comm::LocalArray{std::move(shape), {}}, [&memory, category, bytes](comm::LocalArray* p) {
    memory.release(category, bytes);
    delete p;
  });
}

}  // namespace splitbrain::exec
