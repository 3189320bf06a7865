// One description per serialised type: a field table writes a type in its order, reads it back
// exactly, keeps defaults for keys a file lacks, and names the key of the first wrong value.

#include "dstudio/common/json_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dstudio {
namespace {

using testing::HasSubstr;

enum class Shape { Round, Square };
const EnumNames<Shape> kShapes{{Shape::Round, "round"}, {Shape::Square, "square"}};

struct Inner {
  double weight = 1.5;
  bool operator==(const Inner&) const = default;
};

struct Sample {
  std::string name = "unnamed";
  int count = 3;
  std::uint64_t seed = 0;
  double rate = 0.25;
  bool on = false;
  Shape shape = Shape::Round;
  std::vector<float> values;
  Inner inner;
  bool operator==(const Sample&) const = default;
};

const JsonFields<Inner>& inner_fields() {
  static const auto f = [] {
    JsonFields<Inner> t;
    t.field("weight", &Inner::weight, {0.0, 10.0});
    return t;
  }();
  return f;
}

const JsonFields<Sample>& fields() {
  static const auto f = [] {
    JsonFields<Sample> t;
    t.field("name", &Sample::name)
        .field("count", &Sample::count, {1.0, 100.0})
        .field("seed", &Sample::seed)
        .field("rate", &Sample::rate, {0.0, 1.0, true})
        .field("on", &Sample::on)
        .named("shape", &Sample::shape, kShapes)
        .field("values", &Sample::values)
        .object("inner", &Sample::inner, inner_fields());
    return t;
  }();
  return f;
}

TEST(JsonFields, WritesInTheTablesOrderAndReadsBackExactly) {
  Sample s;
  s.name = "b";
  s.count = 7;
  s.seed = 18446744073709551615ULL;
  s.rate = 0.1;
  s.on = true;
  s.shape = Shape::Square;
  s.values = {1.0f, -2.5f};
  s.inner.weight = 9.0;
  const auto j = fields().write(s);
  EXPECT_EQ(j.dump(), R"({"name":"b","count":7,"seed":18446744073709551615,"rate":0.1,"on":true,)"
                      R"("shape":"square","values":[1.0,-2.5],"inner":{"weight":9.0}})");
  EXPECT_EQ(fields().read(nlohmann::json::parse(j.dump()), "f"), s);
  EXPECT_EQ(fields().keys().size(), 8u);
}

TEST(JsonFields, AKeyAFileLacksKeepsItsDefaultAndUnknownKeysAreLeftAlone) {
  const auto s = fields().read(nlohmann::json::parse(R"({"count": 5, "later": [1, 2]})"), "f");
  Sample expected;
  expected.count = 5;
  EXPECT_EQ(s, expected);
  // Nested objects too: a missing key inside keeps the default of the value read over.
  const auto t = fields().read(nlohmann::json::parse(R"({"inner": {}})"), "f");
  EXPECT_EQ(t.inner.weight, 1.5);
}

TEST(JsonFields, TheFirstWrongValueIsNamedByItsKey) {
  const auto fails = [](const char* text) {
    try {
      (void)fields().read(nlohmann::json::parse(text), "run.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(read)");
  };
  EXPECT_EQ(fails(R"({"count": "3"})"), "run.json: count is not a number");
  EXPECT_EQ(fails(R"({"count": 2.5})"), "run.json: count is not a whole number");
  EXPECT_EQ(fails(R"({"count": 0})"), "run.json: count must be at least 1 (is 0)");
  EXPECT_EQ(fails(R"({"count": 101})"), "run.json: count must be at most 100 (is 101)");
  EXPECT_EQ(fails(R"({"count": 9999999999})"), "run.json: count is too large");
  EXPECT_EQ(fails(R"({"count": -9999999999})"), "run.json: count is out of range");
  EXPECT_EQ(fails(R"({"seed": -1})"), "run.json: seed is out of range");
  EXPECT_EQ(fails(R"({"rate": 0})"), "run.json: rate must be above 0 (is 0)");
  EXPECT_EQ(fails(R"({"on": 1})"), "run.json: on is not true or false");
  EXPECT_EQ(fails(R"({"name": 4})"), "run.json: name is not a text");
  EXPECT_EQ(fails(R"({"shape": "oval"})"), "run.json: shape is 'oval', not one of round, square");
  EXPECT_EQ(fails(R"({"values": [1, "x"]})"), "run.json: values[1] is not a number");
  EXPECT_EQ(fails(R"({"values": 3})"), "run.json: values is not a list");
  EXPECT_EQ(fails(R"({"inner": {"weight": 11}})"),
            "run.json: inner: weight must be at most 10 (is 11)");
  EXPECT_EQ(fails(R"({"inner": "x"})"), "run.json: inner: not a JSON object");
  EXPECT_EQ(fails(R"([1])"), "run.json: not a JSON object");
}

TEST(EnumNames, NamesParseAndList) {
  EXPECT_STREQ(kShapes.name(Shape::Square), "square");
  EXPECT_EQ(kShapes.parse("round"), Shape::Round);
  EXPECT_FALSE(kShapes.parse("Round"));
  EXPECT_EQ(kShapes.joined("|"), "round|square");
  EXPECT_THROW((void)kShapes.name(static_cast<Shape>(7)), Error);
}

}  // namespace
}  // namespace dstudio
