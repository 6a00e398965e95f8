#include "exec/data/idx_file.h"

#include <fmt/format.h>

#include <initializer_list>
#include <limits>
#include <string_view>

#include "exec/data/data_file.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

uint32_t big_endian_u32(const std::vector<uint8_t>& bytes, size_t offset) {
  return (uint32_t{bytes[offset]} << 24) | (uint32_t{bytes[offset + 1]} << 16) | (uint32_t{bytes[offset + 2]} << 8) |
         uint32_t{bytes[offset + 3]};
}

// Checks the magic number and returns the dimensions; `what` names the expected content.
std::vector<int64_t> read_header(const std::filesystem::path& path, const std::vector<uint8_t>& bytes,
                                 uint32_t expected_magic, std::string_view what) {
  const size_t dimensions = expected_magic & 0xff;
  const size_t header_bytes = 4 * (1 + dimensions);
  if (bytes.size() < 4) {
    throw InputError(fmt::format("{}: {} bytes, too short for an IDX header ({})", path.string(), bytes.size(), what));
  }
  const uint32_t magic = big_endian_u32(bytes, 0);
  if (magic != expected_magic) {
    throw InputError(
        fmt::format("{}: magic number {:#010x}, expected {:#010x} ({})", path.string(), magic, expected_magic, what));
  }
  if (bytes.size() < header_bytes) {
    throw InputError(fmt::format("{}: truncated IDX header: {} bytes, expected at least {}", path.string(),
                                 bytes.size(), header_bytes));
  }
  std::vector<int64_t> sizes;
  for (size_t d = 0; d < dimensions; ++d) {
    sizes.push_back(int64_t{big_endian_u32(bytes, 4 * (1 + d))});
    if (sizes.back() == 0) throw InputError(fmt::format("{}: IDX dimension {} is 0", path.string(), d));
  }
  return sizes;
}

uint64_t saturating_product(std::initializer_list<int64_t> factors) {
  uint64_t product = 1;
  for (const int64_t factor : factors) {
    const auto f = static_cast<uint64_t>(factor);
    if (f != 0 && product > std::numeric_limits<uint64_t>::max() / f) return std::numeric_limits<uint64_t>::max();
    product *= f;
  }
  return product;
}

void check_payload(const std::filesystem::path& path, const std::vector<uint8_t>& bytes, size_t header_bytes,
                   uint64_t expected, const std::string& what) {
  const uint64_t payload = bytes.size() - header_bytes;
  if (payload != expected) {
    throw InputError(fmt::format("{}: {} bytes of data, expected {} ({}){}", path.string(), payload, expected, what,
                                 payload < expected ? ": file is truncated" : ": file has trailing bytes"));
  }
}

}  // namespace

IdxImages read_idx_images(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes = read_data_file(path);
  const std::vector<int64_t> sizes = read_header(path, bytes, kIdxImagesMagic, "IDX images");
  // Dimensions are uint32, so a hostile header could overflow the product: saturate instead, and
  // the size check then reports the file as truncated.
  const uint64_t expected = saturating_product({sizes[0], sizes[1], sizes[2]});
  check_payload(path, bytes, 16, expected, fmt::format("{} images of {}x{}", sizes[0], sizes[1], sizes[2]));
  IdxImages images{sizes[0], sizes[1], sizes[2], {}};
  bytes.erase(bytes.begin(), bytes.begin() + 16);
  images.pixels = std::move(bytes);
  return images;
}

std::vector<uint8_t> read_idx_labels(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes = read_data_file(path);
  const std::vector<int64_t> sizes = read_header(path, bytes, kIdxLabelsMagic, "IDX labels");
  check_payload(path, bytes, 8, static_cast<uint64_t>(sizes[0]), fmt::format("{} labels", sizes[0]));
  bytes.erase(bytes.begin(), bytes.begin() + 8);
  return bytes;
}

}  // namespace splitbrain::exec::data
