#pragma once
// Helpers for the exec/data tests: a scratch folder per test, and writers for tiny IDX and
// CIFAR-10 files (gzipped with zlib or plain), so the readers are checked against bytes we chose.

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace splitbrain::exec::data::testing {

// A fresh folder under the system temp folder, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() / (std::string("splitbrain-data-") + info->test_suite_name() + "-" +
                                                      info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// gzip(1)-compatible bytes (header, deflate, CRC trailer) via zlib's gzip wrapper.
inline std::vector<uint8_t> gzip_bytes(const std::vector<uint8_t>& plain) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::vector<uint8_t> out(deflateBound(&stream, static_cast<uLong>(plain.size())) + 64);
  stream.next_in = const_cast<Bytef*>(plain.data());
  stream.avail_in = static_cast<uInt>(plain.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  out.resize(stream.total_out);
  return out;
}

inline void append_big_endian(std::vector<uint8_t>& bytes, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(value >> shift));
}

inline std::vector<uint8_t> idx_images(uint32_t count, uint32_t rows, uint32_t columns,
                                       const std::vector<uint8_t>& pixels, uint32_t magic = 0x00000803) {
  std::vector<uint8_t> bytes;
  append_big_endian(bytes, magic);
  append_big_endian(bytes, count);
  append_big_endian(bytes, rows);
  append_big_endian(bytes, columns);
  bytes.insert(bytes.end(), pixels.begin(), pixels.end());
  return bytes;
}

inline std::vector<uint8_t> idx_labels(const std::vector<uint8_t>& labels, uint32_t magic = 0x00000801) {
  std::vector<uint8_t> bytes;
  append_big_endian(bytes, magic);
  append_big_endian(bytes, static_cast<uint32_t>(labels.size()));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

// CIFAR-10 records: label byte, then 3072 pixel bytes; pixel p of record r is (r * 7 + p) % 256.
inline std::vector<uint8_t> cifar_records(const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> bytes;
  for (size_t r = 0; r < labels.size(); ++r) {
    bytes.push_back(labels[r]);
    for (size_t p = 0; p < 3072; ++p) bytes.push_back(static_cast<uint8_t>((r * 7 + p) % 256));
  }
  return bytes;
}

}  // namespace splitbrain::exec::data::testing
