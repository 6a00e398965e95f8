// BlockReader reads queued blocks in order on its worker, into the memory it is handed, and a
// read's error reaches the caller that takes the block; taking a block never asked for is a bug.

#include "tools/training/block_reader.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "exec/data/synthetic.h"

namespace splitbrain::tools {
namespace {

exec::data::SyntheticDataset small_data() {
  exec::data::SyntheticOptions options;
  options.shape = {1, 4, 4};
  options.train_samples = 10;
  return {options, exec::data::Split::kTrain};
}

TEST(BlockReader, ReadsQueuedBlocksIntoTheMemoryHandedIn) {
  const exec::data::SyntheticDataset dataset = small_data();
  BlockReader reader(dataset);
  SampleBlock storage;
  storage.images.reserve(1000);
  const float* memory = storage.images.data();
  reader.start({0, 0, 3}, {4, 1, 7}, std::move(storage));
  reader.start({1, 0, 2}, {0, 9}, {});
  EXPECT_TRUE(reader.has({0, 0, 3}));
  EXPECT_FALSE(reader.has({2, 0, 3}));
  for (const auto& [key, indices] : std::vector<std::pair<BlockKey, std::vector<int64_t>>>{
           {{1, 0, 2}, {0, 9}}, {{0, 0, 3}, {4, 1, 7}}}) {  // taken in another order than read
    SampleBlock expected;
    read_block(dataset, indices, expected);
    const SampleBlock block = reader.take(key);
    EXPECT_EQ(block.images, expected.images);
    EXPECT_EQ(block.labels, expected.labels);
    if (std::get<0>(key) == 0) {
      EXPECT_EQ(block.images.data(), memory) << "the handed-in memory is reused";
    }
    EXPECT_FALSE(reader.has(key));
  }
}

TEST(BlockReader, AReadsErrorReachesTheTaker) {
  const exec::data::SyntheticDataset dataset = small_data();
  BlockReader reader(dataset);
  reader.start({0, 0, 1}, {10}, {});  // one past the last sample
  EXPECT_ANY_THROW(reader.take({0, 0, 1}));
  EXPECT_THROW(reader.take({5, 0, 1}), std::logic_error);
}

}  // namespace
}  // namespace splitbrain::tools
