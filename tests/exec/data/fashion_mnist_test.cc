// Fashion-MNIST reader: tiny IDX files we write (gzipped and plain) read back exactly, each kind
// of bad file is an InputError naming the file and the fault, and the real files when installed.

#include "exec/data/fashion_mnist.h"

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

// Three 2x3 images; pixel p of image i is 40 * i + p, labels 0, 9, 4.
const std::vector<uint8_t> kPixels = {0, 1, 2, 3, 4, 5, 40, 41, 42, 43, 44, 45, 80, 81, 82, 83, 84, 255};
const std::vector<uint8_t> kLabels = {0, 9, 4};

void write_set(const std::filesystem::path& dir, const std::string& prefix, bool gzipped,
               const std::vector<uint8_t>& images, const std::vector<uint8_t>& labels) {
  const std::string suffix = gzipped ? ".gz" : "";
  testing::write_bytes(dir / (prefix + "-images-idx3-ubyte" + suffix), gzipped ? testing::gzip_bytes(images) : images);
  testing::write_bytes(dir / (prefix + "-labels-idx1-ubyte" + suffix), gzipped ? testing::gzip_bytes(labels) : labels);
}

void write_good_set(const std::filesystem::path& dir, bool gzipped) {
  write_set(dir, "train", gzipped, testing::idx_images(3, 2, 3, kPixels), testing::idx_labels(kLabels));
}

// Runs `load` and returns the InputError's message (failing the test if none is thrown).
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

void expect_reads_back(const Dataset& dataset) {
  ASSERT_EQ(dataset.sample_count(), 3);
  EXPECT_EQ(dataset.sample_shape(), (SampleShape{1, 2, 3}));
  EXPECT_EQ(dataset.class_count(), 10);
  const std::array<int64_t, 4> indices = {2, 0, 1, 2};
  std::vector<float> images(4 * 6);
  std::array<int32_t, 4> labels{};
  dataset.read(indices, images.data(), labels.data());
  for (size_t i = 0; i < indices.size(); ++i) {
    EXPECT_EQ(labels[i], kLabels[static_cast<size_t>(indices[i])]);
    for (size_t p = 0; p < 6; ++p) {
      const float byte = kPixels[static_cast<size_t>(indices[i]) * 6 + p];
      EXPECT_FLOAT_EQ(images[i * 6 + p], (byte / 255.0f - 0.2860f) / 0.3530f) << "sample " << i << " pixel " << p;
    }
  }
}

TEST(FashionMnist, ReadsGzippedIdxExactly) {
  ScratchDir dir;
  write_good_set(dir.path(), true);
  expect_reads_back(*load_fashion_mnist(dir.path(), Split::kTrain));
}

TEST(FashionMnist, ReadsPlainIdxExactly) {
  ScratchDir dir;
  write_good_set(dir.path(), false);
  expect_reads_back(*load_fashion_mnist(dir.path(), Split::kTrain));
}

TEST(FashionMnist, TestSplitUsesT10kFiles) {
  ScratchDir dir;
  write_set(dir.path(), "t10k", true, testing::idx_images(3, 2, 3, kPixels), testing::idx_labels(kLabels));
  expect_reads_back(*load_fashion_mnist(dir.path(), Split::kTest));
}

TEST(FashionMnist, IndexOutsideTheSetIsAnError) {
  ScratchDir dir;
  write_good_set(dir.path(), true);
  const auto dataset = load_fashion_mnist(dir.path(), Split::kTrain);
  std::vector<float> images(6);
  int32_t label = 0;
  const std::array<int64_t, 1> bad = {3};
  EXPECT_THROW(dataset->read(bad, images.data(), &label), std::out_of_range);
}

TEST(FashionMnist, BadMagicNamesFileAndNumbers) {
  ScratchDir dir;
  write_set(dir.path(), "train", true, testing::idx_images(3, 2, 3, kPixels, 0x1234), testing::idx_labels(kLabels));
  EXPECT_THAT(
      input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
      AllOf(HasSubstr("train-images-idx3-ubyte.gz: magic number 0x00001234, expected 0x00000803 (IDX images)")));
}

TEST(FashionMnist, TruncatedImageDataIsReported) {
  ScratchDir dir;
  std::vector<uint8_t> images = testing::idx_images(3, 2, 3, kPixels);
  images.resize(images.size() - 5);
  write_set(dir.path(), "train", false, images, testing::idx_labels(kLabels));
  EXPECT_THAT(input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
              AllOf(HasSubstr("train-images-idx3-ubyte: 13 bytes of data, expected 18 (3 images of 2x3)"),
                    HasSubstr("truncated")));
}

TEST(FashionMnist, TruncatedGzipStreamIsReported) {
  ScratchDir dir;
  write_good_set(dir.path(), true);
  const std::filesystem::path path = dir.path() / "train-images-idx3-ubyte.gz";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);
  EXPECT_THAT(input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
              AllOf(HasSubstr("train-images-idx3-ubyte.gz"), HasSubstr("gzip stream is truncated")));
}

TEST(FashionMnist, LabelOutOfRangeIsReported) {
  ScratchDir dir;
  write_set(dir.path(), "train", true, testing::idx_images(3, 2, 3, kPixels), testing::idx_labels({0, 10, 4}));
  EXPECT_THAT(input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
              HasSubstr("train-labels-idx1-ubyte.gz: label 10 of sample 1 is outside 0..9"));
}

TEST(FashionMnist, ImageAndLabelCountMismatchIsReported) {
  ScratchDir dir;
  write_set(dir.path(), "train", true, testing::idx_images(3, 2, 3, kPixels), testing::idx_labels({0, 9}));
  EXPECT_THAT(input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
              HasSubstr("train-labels-idx1-ubyte.gz: 2 labels, but train-images-idx3-ubyte.gz holds 3 images"));
}

TEST(FashionMnist, MissingFileIsReported) {
  ScratchDir dir;
  write_good_set(dir.path(), true);
  std::filesystem::remove(dir.path() / "train-labels-idx1-ubyte.gz");
  EXPECT_THAT(
      input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
      AllOf(HasSubstr("train-labels-idx1-ubyte.gz: file not found"), HasSubstr("also tried train-labels-idx1-ubyte")));
}

TEST(FashionMnist, MissingFolderIsReported) {
  ScratchDir dir;
  EXPECT_THAT(input_error_of([&] { load_fashion_mnist(dir.path() / "nowhere", Split::kTrain); }),
              AllOf(HasSubstr("nowhere: Fashion-MNIST folder not found"), HasSubstr("dataset-fashion-mnist")));
}

TEST(FashionMnist, CorruptGzipDataIsReported) {
  ScratchDir dir;
  write_good_set(dir.path(), true);
  // The gzip magic followed by garbage: a deflate stream zlib must reject.
  testing::write_bytes(
      dir.path() / "train-images-idx3-ubyte.gz",
      {0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  EXPECT_THAT(input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
              AllOf(HasSubstr("train-images-idx3-ubyte.gz: gzip data is corrupt")));
}

TEST(FashionMnist, GarbageWithoutGzipMagicFailsTheIdxCheck) {
  ScratchDir dir;
  write_good_set(dir.path(), true);
  testing::write_bytes(dir.path() / "train-images-idx3-ubyte.gz",
                       {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
  EXPECT_THAT(input_error_of([&] { load_fashion_mnist(dir.path(), Split::kTrain); }),
              HasSubstr("train-images-idx3-ubyte.gz: magic number 0x68656c6c, expected 0x00000803 (IDX images)"));
}

TEST(FashionMnist, RealFilesWhenInstalled) {
  const std::filesystem::path dir = kDefaultFashionMnistDir;
  if (!std::filesystem::exists(dir / "train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << dir.string() << " not installed (Debian package dataset-fashion-mnist); real-data check skipped";
  }
  const auto train = load_fashion_mnist(dir, Split::kTrain);
  const auto test = load_fashion_mnist(dir, Split::kTest);
  EXPECT_EQ(train->sample_count(), 60000);
  EXPECT_EQ(test->sample_count(), 10000);
  EXPECT_EQ(train->sample_shape(), (SampleShape{1, 28, 28}));
  EXPECT_EQ(test->sample_shape(), (SampleShape{1, 28, 28}));
  for (const auto* dataset : {train.get(), test.get()}) {
    const int64_t count = dataset->sample_count();
    std::vector<int64_t> all(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) all[static_cast<size_t>(i)] = i;
    std::vector<float> images(static_cast<size_t>(count) * 784);
    std::vector<int32_t> labels(static_cast<size_t>(count));
    dataset->read(all, images.data(), labels.data());
    std::array<int64_t, 10> histogram{};
    for (const int32_t label : labels) ++histogram.at(static_cast<size_t>(label));
    for (const int64_t per_class : histogram) EXPECT_EQ(per_class, count / 10) << dataset->description();
    // The published mean and std are of the training pixels, so normalised they are ~0 and ~1.
    if (dataset == train.get()) {
      double sum = 0, squares = 0;
      for (const float x : images) {
        sum += x;
        squares += double{x} * x;
      }
      const double mean = sum / static_cast<double>(images.size());
      EXPECT_NEAR(mean, 0.0, 1e-3);
      EXPECT_NEAR(squares / static_cast<double>(images.size()) - mean * mean, 1.0, 2e-3);
    }
  }
}

}  // namespace
}  // namespace splitbrain::exec::data
