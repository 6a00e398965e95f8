#include "exec/data/cifar10.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "exec/data/byte_image_dataset.h"
#include "exec/data/data_file.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

std::vector<std::string> split_files(Split split) {
  if (split == Split::kTest) return {"test_batch.bin"};
  return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"};
}

// Appends one batch file's records: labels to `labels`, the 3072 pixel bytes to `pixels`.
void append_batch(const std::filesystem::path& path, std::vector<uint8_t>& pixels, std::vector<uint8_t>& labels) {
  const std::vector<uint8_t> bytes = read_data_file(path);
  const auto record = static_cast<size_t>(kCifar10RecordBytes);
  if (bytes.empty() || bytes.size() % record != 0) {
    throw InputError(
        fmt::format("{}: {} bytes, expected a positive multiple of {} (1 label byte + 3072 pixel "
                    "bytes per record; 30730000 for a full batch)",
                    path.string(), bytes.size(), record));
  }
  const size_t records = bytes.size() / record;
  pixels.reserve(pixels.size() + records * (record - 1));
  for (size_t r = 0; r < records; ++r) {
    const uint8_t* begin = bytes.data() + r * record;
    if (begin[0] >= kCifar10Classes) {
      throw InputError(
          fmt::format("{}: label {} of record {} is outside 0..{}", path.string(), begin[0], r, kCifar10Classes - 1));
    }
    labels.push_back(begin[0]);
    pixels.insert(pixels.end(), begin + 1, begin + record);
  }
}

}  // namespace

std::unique_ptr<Dataset> load_cifar10(const std::filesystem::path& dir, Split split) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw InputError(
        fmt::format("{}: CIFAR-10 folder not found (give the folder holding data_batch_1.bin .. "
                    "test_batch.bin of the binary version as cifar10:DIR)",
                    dir.string()));
  }
  const std::vector<std::string> names = split_files(split);
  std::filesystem::path folder = dir;
  if (!std::filesystem::exists(folder / names.front(), ec) &&
      std::filesystem::exists(dir / "cifar-10-batches-bin" / names.front(), ec)) {
    folder = dir / "cifar-10-batches-bin";
  }
  std::vector<uint8_t> pixels;
  std::vector<uint8_t> labels;
  for (const std::string& name : names) {
    append_batch(find_data_file({folder / name, folder / (name + ".gz")}), pixels, labels);
  }
  return std::make_unique<ByteImageDataset>(fmt::format("cifar10 {} ({})", to_string(split), dir.string()),
                                            SampleShape{3, 32, 32}, kCifar10Classes, cifar10_normalization(),
                                            std::move(pixels), std::move(labels));
}

}  // namespace splitbrain::exec::data
