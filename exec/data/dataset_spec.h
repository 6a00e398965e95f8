#pragma once
// The --data argument of `splitbrain run`:
//   fashion-mnist             the IDX files in kDefaultFashionMnistDir
//   fashion-mnist:DIR         the IDX files in DIR
//   cifar10:DIR               the CIFAR-10 binary batches in DIR
//   synthetic                 generated data (synthetic.h) of the caller's default shape and classes
//                             (`run` passes its model's input shape and class count)
//   synthetic:KEY=VALUE,...   keys: classes, shape (CxHxW), samples (training), test-samples, seed;
//                             a key not given keeps the default
// Parsing checks the text only; open_dataset touches the files.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "exec/data/dataset.h"
#include "exec/data/synthetic.h"

namespace splitbrain::exec::data {

enum class DatasetKind { kFashionMnist, kCifar10, kSynthetic };

struct DatasetSpec {
  DatasetKind kind = DatasetKind::kSynthetic;
  std::filesystem::path directory;  // fashion-mnist, cifar10
  SyntheticOptions synthetic;       // synthetic
};

// Throws InputError for an unknown name (listing the choices), a missing or empty folder where one
// is required, or an unknown, repeated or malformed synthetic option. `synthetic_defaults` are the
// synthetic options the text does not set.
DatasetSpec parse_dataset_spec(std::string_view text, const SyntheticOptions& synthetic_defaults = {});

// Loads (or, for synthetic, sets up) the split. Throws InputError as the readers do.
std::unique_ptr<Dataset> open_dataset(const DatasetSpec& spec, Split split);

}  // namespace splitbrain::exec::data
