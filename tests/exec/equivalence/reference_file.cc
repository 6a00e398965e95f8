#include "tests/exec/equivalence/reference_file.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace splitbrain::equivalence {

void write_reference(const std::string& path, const Reference& reference) {
  nlohmann::json file;
  file["model"] = reference.model_spec;
  file["global_batch"] = reference.global_batch;
  file["losses"] = reference.losses;
  file["accuracy"] = reference.accuracy;
  file["evaluation_loss"] = reference.evaluation_loss;
  file["parameters"] = nlohmann::json::array();
  for (const GlobalParameter& p : reference.parameters) {
    file["parameters"].push_back(
        {{"layer", p.layer}, {"index", p.index}, {"name", p.name}, {"shape", p.shape}, {"values", p.values}});
  }
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary);
    if (!out) throw std::runtime_error("cannot write " + temporary);
    out << file.dump() << '\n';
    if (!out) throw std::runtime_error("failed writing " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + temporary + " to " + path);
}

Reference read_reference(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read the 1-rank reference " + path +
                             " (ctest runs exec_equivalence_reference first to write it)");
  }
  try {
    const nlohmann::json file = nlohmann::json::parse(in);
    Reference reference;
    reference.model_spec = file.at("model").get<std::string>();
    reference.global_batch = file.at("global_batch").get<int64_t>();
    reference.losses = file.at("losses").get<std::vector<double>>();
    reference.accuracy = file.at("accuracy").get<double>();
    reference.evaluation_loss = file.at("evaluation_loss").get<double>();
    for (const nlohmann::json& p : file.at("parameters")) {
      GlobalParameter parameter;
      parameter.layer = p.at("layer").get<int>();
      parameter.index = p.at("index").get<int>();
      parameter.name = p.at("name").get<std::string>();
      parameter.shape = p.at("shape").get<std::vector<int64_t>>();
      parameter.values = p.at("values").get<std::vector<float>>();
      reference.parameters.push_back(std::move(parameter));
    }
    return reference;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace splitbrain::equivalence
