#include "exec/cuda/conv_algorithm_file.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "model/errors.h"
#include "model/file_io.h"

namespace splitbrain::exec::cuda {
namespace {

constexpr const char* kFormat = "splitbrain-conv-algorithms";
constexpr int kVersion = 1;

// The algorithm enums of each pass as the file stores them: their numeric values, which cuDNN
// keeps stable (they are its API's), checked against each enum's count on reading.
struct Field {
  const char* name;
  int count;  // algorithms of the pass: a stored value must be below it
};
constexpr Field kForward{"forward", CUDNN_CONVOLUTION_FWD_ALGO_COUNT};
constexpr Field kBackwardData{"backward_data", CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT};
constexpr Field kBackwardFilter{"backward_filter", CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT};

nlohmann::ordered_json to_json(const ConvAlgorithms& a) {
  return {{kForward.name, static_cast<int>(a.forward)},
          {"forward_workspace_bytes", a.forward_workspace_bytes},
          {kBackwardData.name, static_cast<int>(a.backward_data)},
          {"backward_data_workspace_bytes", a.backward_data_workspace_bytes},
          {kBackwardFilter.name, static_cast<int>(a.backward_filter)},
          {"backward_filter_workspace_bytes", a.backward_filter_workspace_bytes}};
}

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", path_, field, what));
  }

  const nlohmann::json& member(const nlohmann::json& object, const std::string& field, const std::string& where) const {
    if (!object.is_object() || !object.contains(field)) fail(where + field, "missing");
    return object.at(field);
  }

  int algorithm(const nlohmann::json& choice, const Field& field, const std::string& where) const {
    const nlohmann::json& value = member(choice, field.name, where);
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() >= field.count)
      fail(where + field.name, fmt::format("must be an algorithm number in [0, {})", field.count));
    return value.get<int>();
  }

  std::size_t bytes(const nlohmann::json& choice, const std::string& field, const std::string& where) const {
    const nlohmann::json& value = member(choice, field, where);
    if (!value.is_number_unsigned()) fail(where + field, "must be a byte count (an integer >= 0)");
    return value.get<std::size_t>();
  }

 private:
  std::string path_;
};

}  // namespace

void write_conv_algorithm_file(const std::string& path, const ConvAlgorithmFile& file) {
  nlohmann::ordered_json choices = nlohmann::ordered_json::object();
  for (const auto& [key, chosen] : file.choices) choices[key] = to_json(chosen);
  const nlohmann::ordered_json document = {
      {"format", kFormat}, {"version", kVersion}, {"gpu", file.gpu}, {"choices", choices}};
  write_file_atomically(path, document.dump(2) + "\n");
}

ConvAlgorithmFile read_conv_algorithm_file(const std::string& path) {
  const Reader reader(path);
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(read_text_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    reader.fail("(file)", fmt::format("not JSON: {}", e.what()));
  }
  if (!document.is_object() || document.value("format", "") != kFormat)
    reader.fail("format", fmt::format("must be \"{}\"", kFormat));
  if (document.value("version", 0) != kVersion) reader.fail("version", fmt::format("must be {}", kVersion));
  ConvAlgorithmFile file;
  const nlohmann::json& gpu = reader.member(document, "gpu", "");
  if (!gpu.is_string() || gpu.get<std::string>().empty()) reader.fail("gpu", "must name the GPU");
  file.gpu = gpu.get<std::string>();
  const nlohmann::json& choices = reader.member(document, "choices", "");
  if (!choices.is_object()) reader.fail("choices", "must be an object of choices by convolution");
  for (const auto& [key, choice] : choices.items()) {
    const std::string where = "choices." + key + ".";
    ConvAlgorithms chosen;
    chosen.forward = static_cast<cudnnConvolutionFwdAlgo_t>(reader.algorithm(choice, kForward, where));
    chosen.forward_workspace_bytes = reader.bytes(choice, "forward_workspace_bytes", where);
    chosen.backward_data = static_cast<cudnnConvolutionBwdDataAlgo_t>(reader.algorithm(choice, kBackwardData, where));
    chosen.backward_data_workspace_bytes = reader.bytes(choice, "backward_data_workspace_bytes", where);
    chosen.backward_filter =
        static_cast<cudnnConvolutionBwdFilterAlgo_t>(reader.algorithm(choice, kBackwardFilter, where));
    chosen.backward_filter_workspace_bytes = reader.bytes(choice, "backward_filter_workspace_bytes", where);
    file.choices.emplace(key, chosen);
  }
  return file;
}

}  // namespace splitbrain::exec::cuda
