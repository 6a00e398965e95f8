#pragma once
// The IDX format of (Fashion-)MNIST: a big-endian header (magic 0x000008NN, where 08 means
// unsigned bytes and NN the number of dimensions), one big-endian uint32 per dimension, then the
// bytes row-major. Gzipped or plain (data_file.h decides by content).

#include <cstdint>
#include <filesystem>
#include <vector>

namespace splitbrain::exec::data {

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension

struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t columns = 0;
  std::vector<uint8_t> pixels;  // count * rows * columns
};

// Throws InputError naming the file for a bad magic number, a zero dimension, or a size that does
// not match the header ("... 1000 bytes of data, expected 47040000 (60000 images of 28x28)").
IdxImages read_idx_images(const std::filesystem::path& path);
std::vector<uint8_t> read_idx_labels(const std::filesystem::path& path);

}  // namespace splitbrain::exec::data
