#include "exec/runtime/tracked_array.h"

namespace splitbrain::exec {

TrackedArray make_tracked(DeviceMemory& device, MemoryTracker& memory, MemoryCategory category,
                          std::vector<int64_t> shape, bool zeroed, int64_t element_bytes) {
  std::unique_ptr<DeviceArray> array = device.allocate(std::move(shape), zeroed);
  const int64_t bytes = array->elements() * element_bytes;
  memory.allocate(category, bytes);
  return TrackedArray(array.release(), [&memory, category, bytes](DeviceArray* p) {
    memory.release(category, bytes);
    delete p;
  });
}

}  // namespace splitbrain::exec
