#include "exec/data/dataset_spec.h"

#include <fmt/format.h>

#include <charconv>
#include <set>
#include <vector>

#include "exec/data/cifar10.h"
#include "exec/data/fashion_mnist.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

constexpr std::string_view kChoices =
    "fashion-mnist, fashion-mnist:DIR, cifar10:DIR, synthetic, synthetic:classes=N,shape=CxHxW,samples=N,"
    "test-samples=N,seed=N";

std::vector<std::string_view> split_on(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// A whole non-negative decimal number, or an InputError naming the option.
uint64_t parse_number(std::string_view spec, std::string_view key, std::string_view value) {
  uint64_t number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    throw InputError(fmt::format("data '{}': {}={} is not a whole non-negative number", spec, key, value));
  }
  return number;
}

int64_t parse_count(std::string_view spec, std::string_view key, std::string_view value,
                    uint64_t most = uint64_t{1} << 40, std::string_view most_text = "2^40") {
  const uint64_t number = parse_number(spec, key, value);
  if (number < 1 || number > most) {
    throw InputError(fmt::format("data '{}': {}={} must be between 1 and {}", spec, key, value, most_text));
  }
  return static_cast<int64_t>(number);
}

// Each epoch shuffles the sample indices (8 B each): 2^27 samples make a 1 GiB permutation,
// ten times ImageNet's training set.
constexpr uint64_t kMostSamples = uint64_t{1} << 27;

SampleShape parse_shape(std::string_view spec, std::string_view value) {
  const std::vector<std::string_view> dims = split_on(value, 'x');
  if (dims.size() != 3) {
    throw InputError(fmt::format("data '{}': shape={} must be CxHxW, e.g. 3x32x32", spec, value));
  }
  return {parse_count(spec, "shape", dims[0]), parse_count(spec, "shape", dims[1]),
          parse_count(spec, "shape", dims[2])};
}

SyntheticOptions parse_synthetic(std::string_view spec, std::string_view options_text,
                                 const SyntheticOptions& defaults) {
  SyntheticOptions options = defaults;
  if (options_text.empty()) return options;
  std::set<std::string_view> seen;
  for (const std::string_view option : split_on(options_text, ',')) {
    const size_t equals = option.find('=');
    if (equals == std::string_view::npos) {
      throw InputError(fmt::format("data '{}': option '{}' is not KEY=VALUE", spec, option));
    }
    const std::string_view key = option.substr(0, equals);
    const std::string_view value = option.substr(equals + 1);
    if (!seen.insert(key).second) throw InputError(fmt::format("data '{}': {} given twice", spec, key));
    if (key == "classes") {
      const int64_t classes = parse_count(spec, key, value);
      if (classes > (int64_t{1} << 24)) throw InputError(fmt::format("data '{}': classes={} is too many", spec, value));
      options.classes = static_cast<int32_t>(classes);
    } else if (key == "shape") {
      options.shape = parse_shape(spec, value);
    } else if (key == "samples") {
      options.train_samples = parse_count(spec, key, value, kMostSamples, "2^27");
    } else if (key == "test-samples") {
      options.test_samples = parse_count(spec, key, value, kMostSamples, "2^27");
    } else if (key == "seed") {
      options.seed = parse_number(spec, key, value);
    } else {
      throw InputError(
          fmt::format("data '{}': unknown synthetic option '{}' (choices: classes, shape, samples, "
                      "test-samples, seed)",
                      spec, key));
    }
  }
  return options;
}

}  // namespace

DatasetSpec parse_dataset_spec(std::string_view text, const SyntheticOptions& synthetic_defaults) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const bool has_argument = colon != std::string_view::npos;
  const std::string_view argument = has_argument ? text.substr(colon + 1) : std::string_view{};
  DatasetSpec spec;
  if (name == "fashion-mnist") {
    if (has_argument && argument.empty()) throw InputError(fmt::format("data '{}': empty folder after ':'", text));
    spec.kind = DatasetKind::kFashionMnist;
    spec.directory = has_argument ? std::filesystem::path(argument) : std::filesystem::path(kDefaultFashionMnistDir);
  } else if (name == "cifar10") {
    if (argument.empty()) throw InputError(fmt::format("data '{}': cifar10 needs its folder, as cifar10:DIR", text));
    spec.kind = DatasetKind::kCifar10;
    spec.directory = argument;
  } else if (name == "synthetic") {
    spec.kind = DatasetKind::kSynthetic;
    spec.synthetic = parse_synthetic(text, argument, synthetic_defaults);
    // Constructing checks the combination (at least 2 classes, sizes) now, before any run starts.
    static_cast<void>(SyntheticDataset(spec.synthetic, Split::kTrain));
    static_cast<void>(SyntheticDataset(spec.synthetic, Split::kTest));
  } else {
    throw InputError(fmt::format("unknown data '{}' (choices: {})", text, kChoices));
  }
  return spec;
}

std::unique_ptr<Dataset> open_dataset(const DatasetSpec& spec, Split split) {
  switch (spec.kind) {
    case DatasetKind::kFashionMnist:
      return load_fashion_mnist(spec.directory, split);
    case DatasetKind::kCifar10:
      return load_cifar10(spec.directory, split);
    case DatasetKind::kSynthetic:
      return std::make_unique<SyntheticDataset>(spec.synthetic, split);
  }
  throw InputError("unknown data set kind");
}

}  // namespace splitbrain::exec::data
