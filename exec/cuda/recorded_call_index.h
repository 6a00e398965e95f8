#pragma once
// Which recording of a kernel's calls to replay: recordings kept by the arguments they were made
// for (a key of every pointer and scalar the calls read), at most `capacity` of them, the least
// recently used forgotten first. A step whose allocator hands out the same blocks every step
// (device_memory_pool.h) calls a kernel with the same few argument sets each step (one per pass
// and micro-batch), so a handful suffice; a call whose arguments never come back costs one
// recording and drops out. Plain C++, so the host tests check it without a GPU.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <vector>

namespace splitbrain::exec::cuda {

using CallKey = std::vector<std::uintptr_t>;

template <class Recording>
class RecordedCallIndex {
 public:
  explicit RecordedCallIndex(std::size_t capacity) : capacity_(capacity) {
    if (capacity == 0) throw std::invalid_argument("RecordedCallIndex: capacity must be positive");
  }

  // The recording made for `key`, now the most recently used; null when there is none.
  Recording* find(const CallKey& key) {
    for (auto entry = entries_.begin(); entry != entries_.end(); ++entry) {
      if (entry->first != key) continue;
      // Most recently used last: move it there, keeping the others' order.
      std::rotate(entry, std::next(entry), entries_.end());
      return &entries_.back().second;
    }
    return nullptr;
  }

  // Keeps `recording` for `key` (which has none), forgetting the least recently used one when
  // full; returns it.
  Recording& insert(CallKey key, Recording recording) {
    if (entries_.size() == capacity_) entries_.erase(entries_.begin());
    entries_.emplace_back(std::move(key), std::move(recording));
    return entries_.back().second;
  }

  std::size_t size() const { return entries_.size(); }

 private:
  std::size_t capacity_;
  std::vector<std::pair<CallKey, Recording>> entries_;  // least recently used first
};

}  // namespace splitbrain::exec::cuda
