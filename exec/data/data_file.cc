#include "exec/data/data_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

std::vector<uint8_t> read_raw(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(fmt::format("{}: file not found", path.string()));
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not a file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) throw InputError(fmt::format("{}: cannot determine the file size", path.string()));
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (!in) throw InputError(fmt::format("{}: read failed: {}", path.string(), std::strerror(errno)));
  return bytes;
}

bool is_gzip(const std::vector<uint8_t>& bytes) { return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b; }

// Inflates a gzip file (one or more members, as gzip(1) allows) into memory. zlib checks the
// CRC-32 and length in each member's trailer, so silent corruption is caught here too.
std::vector<uint8_t> gunzip(const std::filesystem::path& path, const std::vector<uint8_t>& compressed) {
  // zlib counts in uInt (32 bits); the data sets are far below that, so refuse rather than chunk.
  if (compressed.size() > std::numeric_limits<uInt>::max()) {
    throw InputError(fmt::format("{}: compressed file larger than 4 GiB is not supported", path.string()));
  }
  std::vector<uint8_t> out(std::max<size_t>(compressed.size() * 4, 1024));
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header and trailer, not a raw zlib stream.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    throw InputError(fmt::format("{}: cannot start the gzip decoder", path.string()));
  }
  stream.next_in = const_cast<Bytef*>(compressed.data());
  stream.avail_in = static_cast<uInt>(compressed.size());
  size_t produced = 0;
  int status = Z_OK;
  while (true) {
    if (produced == out.size()) out.resize(out.size() * 2);
    const size_t room = std::min<size_t>(out.size() - produced, std::numeric_limits<uInt>::max());
    stream.next_out = out.data() + produced;
    stream.avail_out = static_cast<uInt>(room);
    status = inflate(&stream, Z_NO_FLUSH);
    produced += room - stream.avail_out;
    if (status == Z_STREAM_END) {
      if (stream.avail_in == 0) break;
      // Another gzip member follows (concatenated .gz files are valid gzip).
      if (inflateReset(&stream) != Z_OK)
        status = Z_STREAM_ERROR;
      else
        continue;
    }
    if (status == Z_BUF_ERROR && stream.avail_in == 0) {
      inflateEnd(&stream);
      throw InputError(
          fmt::format("{}: gzip stream is truncated (ends after {} decompressed bytes)", path.string(), produced));
    }
    if (status != Z_OK && status != Z_BUF_ERROR) {
      const std::string reason = stream.msg != nullptr ? stream.msg : fmt::format("zlib error {}", status);
      inflateEnd(&stream);
      throw InputError(fmt::format("{}: gzip data is corrupt: {}", path.string(), reason));
    }
  }
  inflateEnd(&stream);
  out.resize(produced);
  return out;
}

}  // namespace

std::vector<uint8_t> read_data_file(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes = read_raw(path);
  return is_gzip(bytes) ? gunzip(path, bytes) : bytes;
}

std::filesystem::path find_data_file(const std::vector<std::filesystem::path>& candidates) {
  std::error_code ec;
  for (const auto& candidate : candidates) {
    if (std::filesystem::exists(candidate, ec)) return candidate;
  }
  if (candidates.empty()) throw InputError("no data file to look for");
  std::string tried;
  for (size_t i = 1; i < candidates.size(); ++i) tried += (i > 1 ? ", " : "") + candidates[i].filename().string();
  throw InputError(fmt::format("{}: file not found{}", candidates.front().string(),
                               tried.empty() ? "" : fmt::format(" (also tried {})", tried)));
}

}  // namespace splitbrain::exec::data
