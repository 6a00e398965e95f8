// CIFAR-10 reader: tiny binary batches read back exactly (records in file order across the five
// training files, per-channel normalisation), and bad files are InputErrors naming the file.

#include "exec/data/cifar10.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>

#include "data_test_files.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::ScratchDir;

// Labels per training file; file f holds labels[f] (record r of the whole set = r-th in this list).
const std::vector<std::vector<uint8_t>> kTrainLabels = {{3, 1}, {0}, {9, 9, 2}, {5}, {7}};

void write_train(const std::filesystem::path& dir) {
  for (size_t f = 0; f < kTrainLabels.size(); ++f) {
    testing::write_bytes(dir / ("data_batch_" + std::to_string(f + 1) + ".bin"),
                         testing::cifar_records(kTrainLabels[f]));
  }
}

template <typename Load>
std::string input_error_of(Load load) {
  try {
    load();
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

TEST(Cifar10, ReadsTrainingBatchesInOrder) {
  ScratchDir dir;
  write_train(dir.path());
  const auto dataset = load_cifar10(dir.path(), Split::kTrain);
  ASSERT_EQ(dataset->sample_count(), 8);
  EXPECT_EQ(dataset->sample_shape(), (SampleShape{3, 32, 32}));
  EXPECT_EQ(dataset->class_count(), 10);
  const std::array<int64_t, 3> indices = {7, 0, 5};  // last record of file 5, first of file 1, last of file 3
  std::vector<float> images(indices.size() * 3072);
  std::array<int32_t, 3> labels{};
  dataset->read(indices, images.data(), labels.data());
  EXPECT_EQ(labels, (std::array<int32_t, 3>{7, 3, 2}));
  // Record position within its own file: sample 7 -> 0 in file 5, 0 -> 0 in file 1, 5 -> 2 in file 3.
  const std::array<size_t, 3> record_in_file = {0, 0, 2};
  const std::array<float, 3> mean = {0.4914f, 0.4822f, 0.4465f};
  const std::array<float, 3> stddev = {0.2470f, 0.2435f, 0.2616f};
  for (size_t i = 0; i < indices.size(); ++i) {
    for (size_t p = 0; p < 3072; p += 97) {
      const size_t channel = p / 1024;
      const auto byte = static_cast<float>((record_in_file[i] * 7 + p) % 256);
      EXPECT_FLOAT_EQ(images[i * 3072 + p], (byte / 255.0f - mean[channel]) / stddev[channel]) << i << " " << p;
    }
  }
}

TEST(Cifar10, FindsTheTarballsSubfolder) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "cifar-10-batches-bin");
  testing::write_bytes(dir.path() / "cifar-10-batches-bin" / "test_batch.bin", testing::cifar_records({4, 6}));
  const auto dataset = load_cifar10(dir.path(), Split::kTest);
  EXPECT_EQ(dataset->sample_count(), 2);
}

TEST(Cifar10, SizeNotAWholeNumberOfRecordsIsReported) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = testing::cifar_records({4, 6});
  bytes.pop_back();
  testing::write_bytes(dir.path() / "test_batch.bin", bytes);
  EXPECT_THAT(input_error_of([&] { load_cifar10(dir.path(), Split::kTest); }),
              HasSubstr("test_batch.bin: 6145 bytes, expected a positive multiple of 3073"));
}

TEST(Cifar10, LabelOutOfRangeIsReported) {
  ScratchDir dir;
  testing::write_bytes(dir.path() / "test_batch.bin", testing::cifar_records({4, 6, 12}));
  EXPECT_THAT(input_error_of([&] { load_cifar10(dir.path(), Split::kTest); }),
              HasSubstr("test_batch.bin: label 12 of record 2 is outside 0..9"));
}

TEST(Cifar10, MissingBatchFileIsReported) {
  ScratchDir dir;
  write_train(dir.path());
  std::filesystem::remove(dir.path() / "data_batch_4.bin");
  EXPECT_THAT(input_error_of([&] { load_cifar10(dir.path(), Split::kTrain); }),
              HasSubstr("data_batch_4.bin: file not found"));
}

TEST(Cifar10, MissingFolderIsReported) {
  ScratchDir dir;
  EXPECT_THAT(input_error_of([&] { load_cifar10(dir.path() / "nowhere", Split::kTest); }),
              AllOf(HasSubstr("nowhere: CIFAR-10 folder not found"), HasSubstr("cifar10:DIR")));
}

}  // namespace
}  // namespace splitbrain::exec::data
