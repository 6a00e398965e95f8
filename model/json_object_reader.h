#pragma once
// Strict reading of one JSON object: typed getters that name the field in their errors, and a
// final check that rejects keys nobody asked for (a typo must not be silently ignored).

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace splitbrain {

class JsonObjectReader {
 public:
  // `where` prefixes every error, e.g. "net.json: layer 'conv1'". Throws InputError if `object`
  // is not a JSON object.
  JsonObjectReader(const nlohmann::json& object, std::string where);

  bool has(std::string_view key) const;
  std::string required_string(std::string_view key);
  std::string optional_string(std::string_view key, std::string fallback);
  int64_t required_int(std::string_view key);
  int64_t optional_int(std::string_view key, int64_t fallback);
  double optional_number(std::string_view key, double fallback);
  double required_number(std::string_view key);
  bool optional_bool(std::string_view key, bool fallback);
  std::vector<int64_t> required_int_list(std::string_view key);
  std::vector<std::string> optional_string_list(std::string_view key);
  // The raw value, for nested objects and arrays the caller reads itself.
  const nlohmann::json& required(std::string_view key);

  // Throws naming the first key that no getter asked for, and the keys that are allowed.
  void reject_unknown_keys() const;

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json* find(std::string_view key);
  const nlohmann::json& object_;
  std::string where_;
  std::set<std::string, std::less<>> asked_;
};

}  // namespace splitbrain
