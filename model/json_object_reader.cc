#include "model/json_object_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.h"

namespace splitbrain {

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string where)
    : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) throw InputError(fmt::format("{}: expected a JSON object, got {}", where_, object_.type_name()));
}

void JsonObjectReader::fail(std::string_view key, std::string_view problem) const {
  throw InputError(fmt::format("{}: field '{}': {}", where_, key, problem));
}

bool JsonObjectReader::has(std::string_view key) const { return object_.contains(key); }

const nlohmann::json* JsonObjectReader::find(std::string_view key) {
  asked_.emplace(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

const nlohmann::json& JsonObjectReader::required(std::string_view key) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) fail(key, "is required");
  return *value;
}

std::string JsonObjectReader::required_string(std::string_view key) {
  const nlohmann::json& value = required(key);
  if (!value.is_string()) fail(key, fmt::format("expected a string, got {}", value.dump()));
  return value.get<std::string>();
}

std::string JsonObjectReader::optional_string(std::string_view key, std::string fallback) {
  return find(key) == nullptr ? fallback : required_string(key);
}

int64_t JsonObjectReader::required_int(std::string_view key) {
  const nlohmann::json& value = required(key);
  if (!value.is_number_integer()) fail(key, fmt::format("expected an integer, got {}", value.dump()));
  return value.get<int64_t>();
}

int64_t JsonObjectReader::optional_int(std::string_view key, int64_t fallback) {
  return find(key) == nullptr ? fallback : required_int(key);
}

double JsonObjectReader::required_number(std::string_view key) {
  const nlohmann::json& value = required(key);
  if (!value.is_number()) fail(key, fmt::format("expected a number, got {}", value.dump()));
  return value.get<double>();
}

double JsonObjectReader::optional_number(std::string_view key, double fallback) {
  return find(key) == nullptr ? fallback : required_number(key);
}

bool JsonObjectReader::optional_bool(std::string_view key, bool fallback) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) fail(key, fmt::format("expected true or false, got {}", value->dump()));
  return value->get<bool>();
}

std::vector<int64_t> JsonObjectReader::required_int_list(std::string_view key) {
  const nlohmann::json& value = required(key);
  if (!value.is_array()) fail(key, fmt::format("expected a list of integers, got {}", value.dump()));
  std::vector<int64_t> list;
  for (const nlohmann::json& item : value) {
    if (!item.is_number_integer()) fail(key, fmt::format("expected a list of integers, got {}", value.dump()));
    list.push_back(item.get<int64_t>());
  }
  return list;
}

std::vector<std::string> JsonObjectReader::optional_string_list(std::string_view key) {
  const nlohmann::json* value = find(key);
  if (value == nullptr) return {};
  if (!value->is_array()) fail(key, fmt::format("expected a list of strings, got {}", value->dump()));
  std::vector<std::string> list;
  for (const nlohmann::json& item : *value) {
    if (!item.is_string()) fail(key, fmt::format("expected a list of strings, got {}", value->dump()));
    list.push_back(item.get<std::string>());
  }
  return list;
}

void JsonObjectReader::reject_unknown_keys() const {
  for (const auto& [key, value] : object_.items()) {
    if (!asked_.contains(key)) {
      fail(key, fmt::format("unknown key (allowed here: {})", fmt::join(asked_, ", ")));
    }
  }
}

}  // namespace splitbrain
