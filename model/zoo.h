#pragma once
// The built-in models. A zoo spec is a name, optionally with size options:
//   "vgg16", "gpt2-small", "gpt:layers=4,hidden=256,heads=4,seq=128", "mlp:hidden=1024".

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace splitbrain::model {

// An integer option and the values it takes: the range keeps every count the model makes
// inside 64 bits and its graph small enough to build (the largest is many times today's nets).
struct ZooOption {
  std::string name;
  int64_t default_value = 0;
  int64_t min_value = 1;
  int64_t max_value = 1;
  std::string help;
};

using ZooOptions = std::map<std::string, int64_t, std::less<>>;

struct ZooEntry {
  std::string name;
  std::string description;
  std::vector<ZooOption> options;
  std::function<Model(const std::string& model_name, const ZooOptions& options)> build;
};

std::span<const ZooEntry> zoo_entries();
// True when the part of `spec` before any ':' names a zoo entry.
bool is_zoo_spec(std::string_view spec);
// Builds the model for a spec; throws ModelError for an unknown name or option, an option given
// twice, or a value that is not an integer in the option's range.
Model build_zoo_model(std::string_view spec);

}  // namespace splitbrain::model
