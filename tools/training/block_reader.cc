#include "tools/training/block_reader.h"

#include <stdexcept>
#include <utility>

namespace splitbrain::tools {

void read_block(const exec::data::Dataset& dataset, const std::vector<int64_t>& indices, SampleBlock& block) {
  block.images.resize(indices.size() * static_cast<size_t>(dataset.sample_shape().elements()));
  block.labels.resize(indices.size());
  dataset.read(indices, block.images.data(), block.labels.data());
}

BlockReader::BlockReader(const exec::data::Dataset& dataset) : dataset_(dataset), worker_([this] { work(); }) {}

BlockReader::~BlockReader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void BlockReader::start(const BlockKey& key, std::vector<int64_t> indices, SampleBlock storage) {
  {
    std::lock_guard lock(mutex_);
    queued_.push_back({key, std::move(indices), std::move(storage)});
  }
  changed_.notify_all();
}

bool BlockReader::has(const BlockKey& key) const {
  std::lock_guard lock(mutex_);
  return has_locked(key);
}

bool BlockReader::has_locked(const BlockKey& key) const {
  if (done_.count(key) != 0 || in_progress_ == key) return true;
  for (const Job& job : queued_)
    if (job.key == key) return true;
  return false;
}

SampleBlock BlockReader::take(const BlockKey& key) {
  std::unique_lock lock(mutex_);
  if (!has_locked(key)) throw std::logic_error("BlockReader::take: that block was never asked for");
  changed_.wait(lock, [&] { return done_.count(key) != 0; });
  Done done = std::move(done_.at(key));
  done_.erase(key);
  if (done.error) std::rethrow_exception(done.error);
  return std::move(done.block);
}

void BlockReader::work() {
  while (true) {
    std::optional<Job> job;  // moved in, never assigned: its block keeps its memory
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
      if (stopping_) return;
      job.emplace(std::move(queued_.front()));
      queued_.pop_front();
      in_progress_ = job->key;
    }
    std::exception_ptr error;
    try {
      read_block(dataset_, job->indices, job->block);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      in_progress_.reset();
      done_.emplace(job->key, Done{std::move(job->block), error});
    }
    changed_.notify_all();
  }
}

}  // namespace splitbrain::tools
