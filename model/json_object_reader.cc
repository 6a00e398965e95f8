#include "model/json_object_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

namespace splitbrain {
namespace {
using nlohmann::json;

// Doubles hold every integer up to 2^53 exactly; past that "9.007199254740993e15" would be
// read as a neighbouring integer without any error, so exponent-form integers stop there.
constexpr double kLargestExactInteger = 9007199254740992.0;

[[noreturn]] void raise(JsonErrorFactory make_error, std::string_view where, std::string_view path,
                        std::string_view problem) {
  std::string message;
  if (!where.empty()) message = fmt::format("{}: ", where);
  if (!path.empty()) message += fmt::format("{}: ", path);
  message += problem;
  std::rethrow_exception(make_error(std::move(message)));
}

std::string child_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string element_path(std::string_view parent, size_t index) { return fmt::format("{}[{}]", parent, index); }

// Where one value sits, for the conversions below: both readers convert values the same way.
struct ValueSite {
  JsonErrorFactory make_error;
  std::string_view where;
  std::string path;

  [[noreturn]] void fail(std::string_view problem) const { raise(make_error, where, path, problem); }
  [[noreturn]] void expected(std::string_view what, const json& got) const {
    fail(fmt::format("expected {}, got {}", what, describe_json(got)));
  }
};

std::string as_string(const json& value, const ValueSite& site) {
  if (!value.is_string()) site.expected("a string", value);
  return value.get<std::string>();
}

int64_t as_int(const json& value, const ValueSite& site) {
  if (value.is_number_unsigned()) {
    const uint64_t unsigned_value = value.get<uint64_t>();
    if (unsigned_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      site.fail(fmt::format("{} is out of range", unsigned_value));
    }
    return static_cast<int64_t>(unsigned_value);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::trunc(number) != number) site.expected("an integer", value);
    if (std::fabs(number) > kLargestExactInteger) {
      site.fail(fmt::format("{} is too large for the exponent form; write the integer out in full", value.dump()));
    }
    return static_cast<int64_t>(number);
  }
  site.expected("an integer", value);
}

int as_int32(const json& value, const ValueSite& site) {
  const int64_t wide = as_int(value, site);
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
    site.fail(fmt::format("{} is out of range (at most {})", wide, std::numeric_limits<int>::max()));
  }
  return static_cast<int>(wide);
}

double as_number(const json& value, const ValueSite& site) {
  if (!value.is_number()) site.expected("a number", value);
  return value.get<double>();
}

bool as_bool(const json& value, const ValueSite& site) {
  if (!value.is_boolean()) site.expected("true or false", value);
  return value.get<bool>();
}

}  // namespace

std::string describe_json(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return fmt::format("integer {}", value.dump());
    case json::value_t::number_float:
      return fmt::format("number {}", value.dump());
    case json::value_t::string: {
      // Long strings are cut: the message should point at the value, not reprint a document.
      constexpr size_t kShown = 40;
      std::string text = value.get<std::string>();
      if (text.size() > kShown) {
        // Cut before a character, not inside one: back off UTF-8 continuation bytes (10xxxxxx).
        size_t cut = kShown;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
        text = text.substr(0, cut) + "...";
      }
      // Whatever bytes remain that are not UTF-8 print as U+FFFD rather than throw.
      return fmt::format("string {}", json(text).dump(-1, ' ', false, json::error_handler_t::replace));
    }
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return value.type_name();
  }
}

namespace {

// The checking pass of parse_json_strict: nlohmann's SAX events, with the open containers
// tracked to name the value at fault (for an object its current key, for an array its current
// index). A SAX pass builds nothing, so it stays linear in the text (nlohmann 3.11's callback
// parser is quadratic in the number of objects in an array).
class StrictChecker final : public nlohmann::json_sax<json> {
 public:
  StrictChecker(std::string_view text, std::string_view source, JsonErrorFactory make_error)
      : text_(text), source_(source), make_error_(make_error) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    if (!open_.back().keys.insert(key).second) {
      raise(make_error_, source_, path_of_value(open_.size() - 1), fmt::format("duplicate key '{}'", key));
    }
    open_.back().key = key;
    return true;
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& error) override {
    std::string reason = error.what();
    if (error.id == 406) {
      // A number beyond double's range (1e999, a 400-digit integer), the value being read now.
      if (!open_.empty() && !open_.back().is_object) ++open_.back().items;
      if (const size_t start = reason.find("number overflow"); start != std::string::npos)
        reason = reason.substr(start);
      if (reason.size() > 80) reason = reason.substr(0, 77) + "...";
      raise(make_error_, source_, path_of_value(open_.size()), "number out of range (" + reason + ")");
    }
    if (const size_t start = reason.find("syntax error"); start != std::string::npos) reason = reason.substr(start);
    std::rethrow_exception(make_error_(fmt::format("{}:{}: not valid JSON: {}", source_, position(byte), reason)));
  }

 private:
  struct Open {
    bool is_object;
    std::set<std::string, std::less<>> keys;
    std::string key;
    size_t items = 0;
  };

  bool value() {
    if (!open_.empty() && !open_.back().is_object) ++open_.back().items;
    return true;
  }
  bool open(bool is_object) {
    value();
    // Input files are a few levels deep; a bound keeps what reads the document from recursing
    // without end on a hostile one.
    if (open_.size() >= kMaxJsonNesting) {
      raise(make_error_, source_, path_of_value(open_.size()),
            fmt::format("nested deeper than {} levels of objects and arrays", kMaxJsonNesting));
    }
    open_.push_back({is_object, {}, {}, 0});
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
  // The path of the value being read in the first `containers` open containers.
  std::string path_of_value(size_t containers) const {
    std::string path;
    for (size_t i = 0; i < containers; ++i) {
      path = open_[i].is_object ? child_path(path, open_[i].key) : element_path(path, open_[i].items - 1);
    }
    return path;
  }
  // A 1-based byte offset as line:column, for editors.
  std::string position(size_t byte) const {
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i + 1 < byte && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return fmt::format("{}:{}", line, column);
  }

  std::string_view text_;
  std::string_view source_;
  JsonErrorFactory make_error_;
  std::vector<Open> open_;
};

}  // namespace

nlohmann::json parse_json_strict(std::string_view text, std::string_view source, JsonErrorFactory make_error) {
  StrictChecker checker(text, source, make_error);
  json::sax_parse(text.begin(), text.end(), &checker);
  // Checked: the plain parse cannot fail now.
  return json::parse(text.begin(), text.end());
}

// ---- JsonObjectReader ----

JsonObjectReader::JsonObjectReader(const json& object, std::string where, JsonErrorFactory make_error)
    : JsonObjectReader(object, std::move(where), "", make_error) {}

JsonObjectReader::JsonObjectReader(const json& object, std::string where, std::string path, JsonErrorFactory make_error)
    : object_(object), where_(std::move(where)), path_(std::move(path)), make_error_(make_error) {
  if (!object_.is_object()) fail_here(fmt::format("expected an object, got {}", describe_json(object_)));
}

std::string JsonObjectReader::path_of(std::string_view key) const { return child_path(path_, key); }

void JsonObjectReader::fail(std::string_view key, std::string_view problem) const {
  raise(make_error_, where_, path_of(key), problem);
}

void JsonObjectReader::fail_here(std::string_view problem) const { raise(make_error_, where_, path_, problem); }

bool JsonObjectReader::has(std::string_view key) const { return object_.contains(key); }

const json* JsonObjectReader::optional(std::string_view key) {
  asked_.emplace(key);
  const auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

const json& JsonObjectReader::required(std::string_view key) {
  const json* value = optional(key);
  if (value == nullptr) fail(key, "missing required field");
  return *value;
}

std::string JsonObjectReader::required_string(std::string_view key) {
  return as_string(required(key), {make_error_, where_, path_of(key)});
}

std::string JsonObjectReader::optional_string(std::string_view key, std::string fallback) {
  const json* value = optional(key);
  return value == nullptr ? fallback : as_string(*value, {make_error_, where_, path_of(key)});
}

int64_t JsonObjectReader::required_int(std::string_view key) {
  return as_int(required(key), {make_error_, where_, path_of(key)});
}

int64_t JsonObjectReader::optional_int(std::string_view key, int64_t fallback) {
  const json* value = optional(key);
  return value == nullptr ? fallback : as_int(*value, {make_error_, where_, path_of(key)});
}

int JsonObjectReader::required_int32(std::string_view key) {
  return as_int32(required(key), {make_error_, where_, path_of(key)});
}

double JsonObjectReader::required_number(std::string_view key) {
  return as_number(required(key), {make_error_, where_, path_of(key)});
}

double JsonObjectReader::optional_number(std::string_view key, double fallback) {
  const json* value = optional(key);
  return value == nullptr ? fallback : as_number(*value, {make_error_, where_, path_of(key)});
}

bool JsonObjectReader::required_bool(std::string_view key) {
  return as_bool(required(key), {make_error_, where_, path_of(key)});
}

bool JsonObjectReader::optional_bool(std::string_view key, bool fallback) {
  const json* value = optional(key);
  return value == nullptr ? fallback : as_bool(*value, {make_error_, where_, path_of(key)});
}

std::vector<int64_t> JsonObjectReader::required_int_list(std::string_view key) {
  const json& value = required(key);
  if (!value.is_array()) fail(key, fmt::format("expected a list of integers, got {}", describe_json(value)));
  const JsonArrayReader list(value, where_, path_of(key), make_error_);
  std::vector<int64_t> numbers;
  for (size_t i = 0; i < list.size(); ++i) numbers.push_back(list.int_at(i));
  return numbers;
}

std::vector<std::string> JsonObjectReader::optional_string_list(std::string_view key) {
  const json* value = optional(key);
  if (value == nullptr) return {};
  if (!value->is_array()) fail(key, fmt::format("expected a list of strings, got {}", describe_json(*value)));
  const JsonArrayReader list(*value, where_, path_of(key), make_error_);
  std::vector<std::string> strings;
  for (size_t i = 0; i < list.size(); ++i) strings.push_back(list.string_at(i));
  return strings;
}

JsonObjectReader JsonObjectReader::object(std::string_view key) {
  return JsonObjectReader(required(key), where_, path_of(key), make_error_);
}

JsonArrayReader JsonObjectReader::array(std::string_view key) {
  return JsonArrayReader(required(key), where_, path_of(key), make_error_);
}

std::optional<JsonArrayReader> JsonObjectReader::optional_array(std::string_view key) {
  const json* value = optional(key);
  if (value == nullptr) return std::nullopt;
  return JsonArrayReader(*value, where_, path_of(key), make_error_);
}

void JsonObjectReader::reject_unknown_keys() const {
  for (const auto& [key, unused] : object_.items()) {
    if (asked_.contains(key)) continue;
    if (asked_.empty()) fail(key, "unknown key (this object takes no keys)");
    fail(key, fmt::format("unknown key (allowed here: {})", fmt::join(asked_, ", ")));
  }
}

// ---- JsonArrayReader ----

JsonArrayReader::JsonArrayReader(const json& array, std::string where, std::string path, JsonErrorFactory make_error)
    : array_(array), where_(std::move(where)), path_(std::move(path)), make_error_(make_error) {
  if (!array_.is_array()) {
    raise(make_error_, where_, path_, fmt::format("expected an array, got {}", describe_json(array_)));
  }
}

std::string JsonArrayReader::path_at(size_t index) const { return element_path(path_, index); }

void JsonArrayReader::fail(size_t index, std::string_view problem) const {
  raise(make_error_, where_, path_at(index), problem);
}

const json& JsonArrayReader::at(size_t index) const {
  if (index >= array_.size()) fail(index, fmt::format("out of range: the array has {} items", array_.size()));
  return array_[index];
}

JsonObjectReader JsonArrayReader::object_at(size_t index) const {
  return JsonObjectReader(at(index), where_, path_at(index), make_error_);
}

std::string JsonArrayReader::string_at(size_t index) const {
  return as_string(at(index), {make_error_, where_, path_at(index)});
}

int64_t JsonArrayReader::int_at(size_t index) const { return as_int(at(index), {make_error_, where_, path_at(index)}); }

int JsonArrayReader::int32_at(size_t index) const { return as_int32(at(index), {make_error_, where_, path_at(index)}); }

double JsonArrayReader::number_at(size_t index) const {
  return as_number(at(index), {make_error_, where_, path_at(index)});
}

}  // namespace splitbrain
