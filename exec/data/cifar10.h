#pragma once
// CIFAR-10 (Krizhevsky 2009), binary version: 32x32 colour images of 10 classes. Each file is a
// run of 3073-byte records: one label byte, then 1024 red, 1024 green and 1024 blue bytes (row-major
// planes, i.e. CHW). Training: data_batch_1.bin .. data_batch_5.bin (10000 records each);
// test: test_batch.bin.

#include <filesystem>
#include <memory>

#include "exec/data/dataset.h"

namespace splitbrain::exec::data {

inline constexpr int32_t kCifar10Classes = 10;
inline constexpr int64_t kCifar10RecordBytes = 1 + 3 * 32 * 32;

// Reads the split's files from `dir`, or from dir/cifar-10-batches-bin when `dir` is the folder the
// tarball was extracted in. Files may be gzipped. Pixels are normalised with cifar10_normalization().
// Throws InputError naming the folder or file for a missing folder or file, a size that is not a
// positive whole number of records, or a label outside 0..9.
std::unique_ptr<Dataset> load_cifar10(const std::filesystem::path& dir, Split split);

}  // namespace splitbrain::exec::data
