#include "exec/data/fashion_mnist.h"

#include <fmt/format.h>

#include <string>

#include "exec/data/byte_image_dataset.h"
#include "exec/data/data_file.h"
#include "exec/data/idx_file.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

// The .gz name as distributed first, then the extracted name torchvision and others leave behind.
std::filesystem::path locate(const std::filesystem::path& dir, const std::string& stem) {
  return find_data_file({dir / (stem + ".gz"), dir / stem});
}

}  // namespace

std::unique_ptr<Dataset> load_fashion_mnist(const std::filesystem::path& dir, Split split) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw InputError(
        fmt::format("{}: Fashion-MNIST folder not found (install the dataset-fashion-mnist package, or give the folder "
                    "holding the IDX files as fashion-mnist:DIR)",
                    dir.string()));
  }
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  const std::filesystem::path images_path = locate(dir, prefix + "-images-idx3-ubyte");
  const std::filesystem::path labels_path = locate(dir, prefix + "-labels-idx1-ubyte");
  IdxImages images = read_idx_images(images_path);
  std::vector<uint8_t> labels = read_idx_labels(labels_path);
  if (images.count != static_cast<int64_t>(labels.size())) {
    throw InputError(fmt::format("{}: {} labels, but {} holds {} images", labels_path.string(), labels.size(),
                                 images_path.filename().string(), images.count));
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= kFashionMnistClasses) {
      throw InputError(fmt::format("{}: label {} of sample {} is outside 0..{}", labels_path.string(), labels[i], i,
                                   kFashionMnistClasses - 1));
    }
  }
  return std::make_unique<ByteImageDataset>(fmt::format("fashion-mnist {} ({})", to_string(split), dir.string()),
                                            SampleShape{1, images.rows, images.columns}, kFashionMnistClasses,
                                            fashion_mnist_normalization(), std::move(images.pixels), std::move(labels));
}

}  // namespace splitbrain::exec::data
