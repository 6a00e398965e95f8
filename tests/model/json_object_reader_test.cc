// The shared strict JSON reader: typed getters, nested paths in messages, unknown and duplicate
// keys, and the caller's choice of exception type.

#include "model/json_object_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "model/errors.h"

namespace splitbrain {
namespace {
using nlohmann::json;

// A type of our own, to show the reader throws what the caller picked and nothing else.
class TestError : public InputError {
 public:
  using InputError::InputError;
};

// Runs `read`, expecting a TestError whose message is exactly `expected`.
template <class Read>
void expect_message(Read read, const std::string& expected) {
  try {
    read();
    FAIL() << "expected an error: " << expected;
  } catch (const TestError& error) {
    EXPECT_EQ(std::string(error.what()), expected);
  }
}

const json kDocument = json::parse(R"({
  "name": "n", "count": 3, "big": 8.589934592e10, "ratio": 0.5, "flag": true,
  "shape": [2, 3], "tags": ["a", "b"],
  "inner": {"deep": {"x": 1}},
  "items": [{"v": 1}, {"v": "two"}]
})");

TEST(JsonObjectReader, TypedGettersAndFallbacks) {
  JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
  EXPECT_TRUE(reader.has("name"));
  EXPECT_EQ(reader.required_string("name"), "n");
  EXPECT_EQ(reader.required_int("count"), 3);
  EXPECT_EQ(reader.required_int32("count"), 3);
  EXPECT_EQ(reader.required_int("big"), 85'899'345'920);  // exponent form, still whole
  EXPECT_EQ(reader.required_number("ratio"), 0.5);
  EXPECT_EQ(reader.required_number("count"), 3.0);  // an integer is a number too
  EXPECT_TRUE(reader.required_bool("flag"));
  EXPECT_EQ(reader.required_int_list("shape"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reader.optional_string_list("tags"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(reader.optional_string("absent", "dflt"), "dflt");
  EXPECT_EQ(reader.optional_int("absent", -1), -1);
  EXPECT_EQ(reader.optional_number("absent", 2.5), 2.5);
  EXPECT_FALSE(reader.optional_bool("absent", false));
  EXPECT_TRUE(reader.optional_string_list("absent").empty());
  EXPECT_FALSE(reader.optional_array("absent").has_value());
  EXPECT_EQ(reader.optional(""), nullptr);
}

TEST(JsonObjectReader, ErrorsNameWhereAndField) {
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "net.json: layer 'fc'", throwing<TestError>);
        reader.required_int("name");
      },
      "net.json: layer 'fc': name: expected an integer, got string \"n\"");
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
        reader.required_string("missing");
      },
      "doc.json: missing: missing required field");
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
        reader.required_int("ratio");
      },
      "doc.json: ratio: expected an integer, got number 0.5");
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
        reader.optional_bool("count", false);
      },
      "doc.json: count: expected true or false, got integer 3");
  expect_message([] { JsonObjectReader reader(json::array(), "doc.json", throwing<TestError>); },
                 "doc.json: expected an object, got an array");
}

TEST(JsonObjectReader, ChildReadersExtendThePath) {
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
        reader.object("inner").object("deep").required_string("x");
      },
      "doc.json: inner.deep.x: expected a string, got integer 1");
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
        const JsonArrayReader items = reader.array("items");
        EXPECT_EQ(items.size(), 2u);
        EXPECT_EQ(items.object_at(0).required_int("v"), 1);
        items.object_at(1).required_int("v");
      },
      "doc.json: items[1].v: expected an integer, got string \"two\"");
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
        reader.required_int_list("tags");
      },
      "doc.json: tags[0]: expected an integer, got string \"a\"");
  expect_message(
      [] {
        JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
        reader.array("inner");
      },
      "doc.json: inner: expected an array, got an object");
}

TEST(JsonObjectReader, UnknownKeysAreRejectedListingTheAllowedOnes) {
  const json document = json::parse(R"({"kernel": 3, "stirde": 2})");
  JsonObjectReader reader(document, "net.json: layer 'c'", throwing<TestError>);
  reader.required_int("kernel");
  reader.optional_int("stride", 1);
  expect_message([&] { reader.reject_unknown_keys(); },
                 "net.json: layer 'c': stirde: unknown key (allowed here: kernel, stride)");
  // Nested: the unknown key is named by its full path.
  expect_message(
      [] {
        JsonObjectReader root(kDocument, "doc.json", throwing<TestError>);
        JsonObjectReader deep = root.object("inner").object("deep");
        deep.reject_unknown_keys();
      },
      "doc.json: inner.deep.x: unknown key (this object takes no keys)");
}

TEST(JsonObjectReader, IntegersMustBeWholeAndInRange) {
  const json document = json::parse(R"({"half": 2.5, "huge": 1e300, "wide": 3000000000,
                                        "unsigned": 18446744073709551615})");
  JsonObjectReader reader(document, "doc.json", throwing<TestError>);
  EXPECT_EQ(reader.required_int("wide"), 3'000'000'000);
  expect_message([&] { reader.required_int("half"); }, "doc.json: half: expected an integer, got number 2.5");
  expect_message([&] { reader.required_int32("wide"); },
                 "doc.json: wide: 3000000000 is out of range (at most 2147483647)");
  expect_message([&] { reader.required_int("unsigned"); }, "doc.json: unsigned: 18446744073709551615 is out of range");
  EXPECT_THROW(reader.required_int("huge"), TestError);
}

TEST(JsonObjectReader, TheCallerPicksTheExceptionType) {
  JsonObjectReader plain(kDocument, "doc.json");
  EXPECT_THROW(plain.required_int("name"), InputError);
  JsonObjectReader model(kDocument, "doc.json", throwing<ModelError>);
  EXPECT_THROW(model.required_int("name"), ModelError);
  JsonObjectReader custom(kDocument, "doc.json", throwing<TestError>);
  EXPECT_THROW(custom.required_int("name"), TestError);
  EXPECT_THROW(custom.array("items").fail(0, "bad"), TestError);
}

TEST(JsonObjectReader, CallerChecksReadTheSameAsReaderErrors) {
  JsonObjectReader reader(kDocument, "doc.json", throwing<TestError>);
  JsonObjectReader inner = reader.object("inner");
  expect_message([&] { inner.fail("deep", "must be shallow"); }, "doc.json: inner.deep: must be shallow");
  expect_message([&] { inner.fail_here("is wrong"); }, "doc.json: inner: is wrong");
  expect_message([&] { reader.array("items").fail(3, "no such item"); }, "doc.json: items[3]: no such item");
}

// A long string is cut before a multi-byte character, never inside it (a cut sequence is not
// UTF-8, and printing it threw); bytes that are not UTF-8 at all print as U+FFFD.
TEST(DescribeJson, CutsLongStringsBetweenCharacters) {
  const std::string head(39, 'C');
  EXPECT_EQ(describe_json(json(head + "\xC5\xBC(")), "string \"" + head + "...\"");
  EXPECT_EQ(describe_json(json(head + "C\xC5\xBC(")), "string \"" + head + "C...\"");
  EXPECT_EQ(describe_json(json(std::string("a\xFF"
                                           "b"))),
            "string \"a\xEF\xBF\xBD"
            "b\"");
}

TEST(ParseJsonStrict, ParsesValidText) {
  const json document = parse_json_strict(R"({"a": [1, {"b": 2}], "c": {"a": 3}})", "doc.json");
  EXPECT_EQ(document["a"][1]["b"], 2);
  EXPECT_EQ(document["c"]["a"], 3);  // equal keys in different objects are fine
}

TEST(ParseJsonStrict, DuplicateKeysAreNamedWithTheirPath) {
  expect_message([] { parse_json_strict(R"({"name": 1, "name": 2})", "doc.json", throwing<TestError>); },
                 "doc.json: duplicate key 'name'");
  expect_message(
      [] {
        parse_json_strict(R"({"levels": [{"a": 1}, [0, 1], {"link": {"x": 1, "x": 2}}]})", "doc.json",
                          throwing<TestError>);
      },
      "doc.json: levels[2].link: duplicate key 'x'");
}

TEST(ParseJsonStrict, SyntaxErrorsGiveLineAndColumn) {
  try {
    parse_json_strict("{\"a\": 1,\n  \"b\": ]}", "doc.json", throwing<TestError>);
    FAIL() << "accepted malformed JSON";
  } catch (const TestError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("doc.json:2:8: not valid JSON: syntax error", 0), 0u) << message;
  }
}

}  // namespace
}  // namespace splitbrain
