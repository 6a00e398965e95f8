#pragma once
// Strict reading of JSON input files (models, clusters, ...), shared so every format reports
// bad input the same way:
//
//   "<where>: <path>: <problem>"     e.g. "net.json: layer 'fc': out_feature: unknown key ..."
//                                         "x.json: levels[1].link.latency_seconds: missing ..."
//
// `where` names the document (a file, plus e.g. "layer 'fc'"); `path` is the field inside it,
// grown by child readers ("device.efficiency.conv", "levels[1]"). Typed getters name the field
// in their errors, and reject_unknown_keys() refuses keys nobody asked for, because a misspelt
// key would otherwise be silently ignored and a default used in its place.
//
// The exception type is the caller's choice (throwing<ClusterError>, throwing<ModelError>), so
// each format keeps its own error type while sharing one reader. It is a factory rather than
// a class template so the reader's code stays in the .cc file.

#include <concepts>
#include <cstdint>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/errors.h"

namespace splitbrain {

// Builds the exception a failed read throws, from the full message.
using JsonErrorFactory = std::exception_ptr (*)(std::string message);

template <std::derived_from<InputError> Error>
std::exception_ptr throwing(std::string message) {
  return std::make_exception_ptr(Error(std::move(message)));
}

// A short description of a value for "expected X, got Y": `string "big"`, `integer 5`,
// `an object`. Containers are not dumped: they can be arbitrarily large.
std::string describe_json(const nlohmann::json& value);

// Objects and arrays nested deeper than this in an input file are refused.
constexpr size_t kMaxJsonNesting = 64;

// Parses `text`, throwing (via `make_error`) on a syntax error, reported as
// "<source>:<line>:<column>: not valid JSON: ...", on a duplicate key, reported with the path of
// the object that repeats it (nlohmann would silently keep the last of two equal keys), on a
// number beyond double's range and on nesting deeper than kMaxJsonNesting, each with the path of
// the value.
nlohmann::json parse_json_strict(std::string_view text, std::string_view source,
                                 JsonErrorFactory make_error = throwing<InputError>);

class JsonArrayReader;

// One JSON object being read. Holds a reference: the document must outlive the reader.
class JsonObjectReader {
 public:
  // A reader for a whole document (or a piece the caller names itself, e.g. a model layer).
  // Throws if `object` is not a JSON object.
  JsonObjectReader(const nlohmann::json& object, std::string where, JsonErrorFactory make_error = throwing<InputError>);

  bool has(std::string_view key) const;  // does not count as asking for the key
  // The raw value, marking `key` as known; nullptr when absent.
  const nlohmann::json* optional(std::string_view key);
  const nlohmann::json& required(std::string_view key);

  std::string required_string(std::string_view key);
  std::string optional_string(std::string_view key, std::string fallback);
  // Integers may be written 85899345920 or 8.589934592e10; a fraction is an error.
  int64_t required_int(std::string_view key);
  int64_t optional_int(std::string_view key, int64_t fallback);
  int required_int32(std::string_view key);  // also rejects values that do not fit in an int
  double required_number(std::string_view key);
  double optional_number(std::string_view key, double fallback);
  bool required_bool(std::string_view key);
  bool optional_bool(std::string_view key, bool fallback);
  std::vector<int64_t> required_int_list(std::string_view key);
  std::vector<std::string> optional_string_list(std::string_view key);  // empty when absent

  // Child readers: their errors carry this reader's `where` and the extended path.
  JsonObjectReader object(std::string_view key);
  JsonArrayReader array(std::string_view key);
  std::optional<JsonArrayReader> optional_array(std::string_view key);

  // Throws naming the first key that no getter asked for, and the keys that are allowed.
  void reject_unknown_keys() const;

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;
  [[noreturn]] void fail_here(std::string_view problem) const;  // about the object itself

  const std::string& where() const { return where_; }
  const std::string& path() const { return path_; }
  std::string path_of(std::string_view key) const;

 private:
  friend class JsonArrayReader;
  JsonObjectReader(const nlohmann::json& object, std::string where, std::string path, JsonErrorFactory make_error);

  const nlohmann::json& object_;
  std::string where_;
  std::string path_;
  JsonErrorFactory make_error_;
  std::set<std::string, std::less<>> asked_;
};

// One JSON array being read; elements are named "<path>[<index>]" in errors.
class JsonArrayReader {
 public:
  size_t size() const { return array_.size(); }
  const nlohmann::json& at(size_t index) const;

  JsonObjectReader object_at(size_t index) const;
  std::string string_at(size_t index) const;
  int64_t int_at(size_t index) const;
  int int32_at(size_t index) const;
  double number_at(size_t index) const;

  [[noreturn]] void fail(size_t index, std::string_view problem) const;
  const std::string& path() const { return path_; }
  std::string path_at(size_t index) const;

 private:
  friend class JsonObjectReader;
  JsonArrayReader(const nlohmann::json& array, std::string where, std::string path, JsonErrorFactory make_error);

  const nlohmann::json& array_;
  std::string where_;
  std::string path_;
  JsonErrorFactory make_error_;
};

}  // namespace splitbrain
