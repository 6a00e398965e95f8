#pragma once
// Fashion-MNIST (Xiao, Rasul, Vollgraf 2017): 28x28 grey images of 10 clothing classes, 60000 for
// training and 10000 for testing, in four IDX files. Debian's dataset-fashion-mnist package
// installs the gzipped originals in kDefaultFashionMnistDir.

#include <filesystem>
#include <memory>

#include "exec/data/dataset.h"

namespace splitbrain::exec::data {

inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr int32_t kFashionMnistClasses = 10;

// Reads <dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (the .gz name first) into memory.
// Pixels are normalised with fashion_mnist_normalization(). Throws InputError naming the folder or
// file for a missing folder or file, a corrupt file, image and label counts that differ, or a
// label outside 0..9.
std::unique_ptr<Dataset> load_fashion_mnist(const std::filesystem::path& dir, Split split);

}  // namespace splitbrain::exec::data
