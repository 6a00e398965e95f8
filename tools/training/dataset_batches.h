#pragma once
// Feeds the runtime from a data set: step i's global batch is the sampler's i-th batch (a seeded
// shuffle per epoch, the same on every rank), and each rank reads only the samples it holds.
//
// Each block of samples (step, first, count) is read once: the runtime asks for its images when
// the step starts and for its labels at the loss, and both come from that one read. With
// BatchPrefetch::next_step, serving a block starts reading the same block of the next step on a
// worker thread, as a training loader's workers do, so a step's reading overlaps the step before
// it; for a backend whose host is idle while the device computes (cuda). One worker reads in
// turn, into the memory of the blocks already served (block_reader.h). The images are read into
// `image_memory`, the backend's memory to upload from (exec::HostLink::upload_memory: page-locked on
// a GPU, so a batch's upload is the copy engine's alone); the process's heap when null.

#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <span>
#include <tuple>
#include <vector>

#include "exec/data/dataset.h"
#include "exec/data/epoch_sampler.h"
#include "exec/runtime/batch_source.h"
#include "tools/training/block_reader.h"

namespace splitbrain::tools {

enum class BatchPrefetch { none, next_step };

class DatasetBatches final : public exec::BatchSource {
 public:
  DatasetBatches(std::unique_ptr<exec::data::Dataset> dataset, int64_t global_batch, uint64_t seed,
                 BatchPrefetch prefetch = BatchPrefetch::none,
                 std::shared_ptr<std::pmr::memory_resource> image_memory = nullptr);
  DatasetBatches(const DatasetBatches&) = delete;
  DatasetBatches& operator=(const DatasetBatches&) = delete;

  void images(int64_t step, int64_t first, int64_t count, float* out) override;
  std::span<const float> images_held(int64_t step, int64_t first, int64_t count) override;
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) override;
  const exec::data::Dataset& dataset() const { return *dataset_; }

 private:
  // The block read (or being read) for `key`; starts the next step's read when prefetching.
  const SampleBlock& block(const BlockKey& key);
  std::vector<int64_t> sample_indices(const BlockKey& key);
  // Memory of a served block, or a new block in image_memory_.
  SampleBlock spare_block();
  // `key`'s block read on this thread.
  SampleBlock read_now(const BlockKey& key);

  std::unique_ptr<exec::data::Dataset> dataset_;
  // Before the blocks: they give their memory back to it.
  std::shared_ptr<std::pmr::memory_resource> image_memory_;
  exec::data::EpochSampler sampler_;
  int64_t cached_step_ = -1;
  std::vector<int64_t> batch_;
  std::map<BlockKey, SampleBlock> read_;  // this step's blocks
  std::vector<SampleBlock> spare_;        // earlier steps' blocks, their memory for the next reads
  std::unique_ptr<BlockReader> reader_;   // with BatchPrefetch::next_step: the next step's blocks
};

}  // namespace splitbrain::tools
