#pragma once
// BlockReader: reads blocks of samples on one worker thread, in the order they are asked for,
// into memory handed back from blocks already served. A training loop that reads the next step
// while the device computes the current one (DatasetBatches with BatchPrefetch::next_step) then
// costs its host no thread start, no allocation and no page faults per step: on a GPU each of
// those is host time at the start of a step, before its first kernel can be queued.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

#include "exec/data/dataset.h"

namespace splitbrain::tools {

// The images (NCHW float32) and labels of a block of samples. The images live in the memory the
// block was made with (a GPU's page-locked memory, exec::HostLink::upload_memory), and a moved block
// keeps it. Not assignable: assigning one polymorphic-allocator vector to another of a different
// memory copies the elements into the target's memory, which would quietly move a batch out of
// page-locked memory; blocks are only ever moved into new ones.
struct SampleBlock {
  SampleBlock() = default;
  explicit SampleBlock(std::pmr::memory_resource* image_memory) : images(image_memory) {}
  SampleBlock(SampleBlock&&) noexcept = default;
  SampleBlock& operator=(SampleBlock&&) = delete;

  std::pmr::vector<float> images;
  std::vector<int32_t> labels;
};

// Reads `indices` into `block`, resizing its arrays (their memory is reused where it suffices).
void read_block(const exec::data::Dataset& dataset, const std::vector<int64_t>& indices, SampleBlock& block);

using BlockKey = std::tuple<int64_t, int64_t, int64_t>;  // step, first sample, samples

class BlockReader {
 public:
  // `dataset` must outlive the reader; Dataset::read is const and touches no shared state.
  explicit BlockReader(const exec::data::Dataset& dataset);
  ~BlockReader();  // lets the read in progress finish; drops the queued ones
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  // Queues a read of `indices` into `storage` under `key`.
  void start(const BlockKey& key, std::vector<int64_t> indices, SampleBlock storage);
  // Whether `key` is queued, being read or read and not yet taken.
  bool has(const BlockKey& key) const;
  // The block read under `key`, once it is; rethrows what the read threw. std::logic_error for
  // a key not had.
  SampleBlock take(const BlockKey& key);

 private:
  struct Job {
    BlockKey key;
    std::vector<int64_t> indices;
    SampleBlock block;
  };
  struct Done {
    SampleBlock block;
    std::exception_ptr error;
  };
  void work();
  bool has_locked(const BlockKey& key) const;

  const exec::data::Dataset& dataset_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queued_;
  std::optional<BlockKey> in_progress_;  // the job the worker holds
  std::map<BlockKey, Done> done_;
  bool stopping_ = false;
  std::thread worker_;  // last: it starts once everything above exists
};

}  // namespace splitbrain::tools
