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

struct Settings {
  std::int64_t steps = 10;
  double beta = 0.9;
  std::string activation = "relu";
  Shape shape = Shape::Round;
  std::map<std::string, double> options;
  std::string plugin;
  bool operator==(const Settings&) const = default;
};

// A table of settings a user writes: unknown keys refused, usage errors, described fields.
const JsonFields<Settings>& settings() {
  static const auto f = [] {
    JsonFields<Settings> t;
    t.field("steps", &Settings::steps, {1.0, 1e9})
        .says("optimiser steps")
        .field("beta", &Settings::beta, {0.0, 1.0, false, /*below=*/true})
        .says("a decay")
        .field("activation", &Settings::activation)
        .says("the nonlinearity")
        .choices([] {
          return std::vector<std::string>{"relu", "gelu"};
        })
        .named("shape", &Settings::shape, kShapes)
        .says("its shape")
        .field("options", &Settings::options, {0.0})
        .written_if([](const Settings& s) { return !s.options.empty(); })
        .field("plugin", &Settings::plugin)
        .written_if([](const Settings& s) { return !s.plugin.empty(); })
        .refuse_unknown_keys()
        .errors_as<UsageError>();
    return t;
  }();
  return f;
}

TEST(JsonFields, SettingsAUserWritesAreCheckedAsUsageErrors) {
  const auto fails = [](const char* text) -> std::string {
    try {
      (void)settings().read(nlohmann::json::parse(text), "training configuration");
    } catch (const UsageError& e) {
      return e.what();
    } catch (const Error& e) {
      return std::string("(not a usage error) ") + e.what();
    }
    return "(read)";
  };
  EXPECT_EQ(fails(R"({"stepz": 3})"), "training configuration: unknown key 'stepz'");
  EXPECT_EQ(fails(R"({"beta": 1})"), "training configuration: beta must be below 1 (is 1)");
  EXPECT_EQ(fails(R"({"activation": "tanh"})"),
            "training configuration: activation is 'tanh', not one of relu, gelu");
  EXPECT_EQ(fails(R"({"steps": 2.5})"), "training configuration: steps is not a whole number");
  EXPECT_EQ(fails(R"({"steps": 1e300})"), "training configuration: steps is too large");
  EXPECT_EQ(fails(R"({"options": {"a": -1}})"),
            "training configuration: options.a must be at least 0 (is -1)");
  EXPECT_EQ(fails(R"({"options": [1]})"), "training configuration: options is not a JSON object");
  // A whole number written with an exponent is one.
  EXPECT_EQ(settings().read(nlohmann::json::parse(R"({"steps": 1e5})"), "t").steps, 100000);
  EXPECT_EQ(settings().read(nlohmann::json::parse(R"({"beta": 0.5, "options": {"w": 2}})"), "t"),
            (Settings{10, 0.5, "relu", Shape::Round, {{"w", 2.0}}, ""}));
  // check() is a read of what write() gives: a value set in code is held to the same table.
  Settings wrong;
  wrong.activation = "tanh";
  EXPECT_THROW(settings().check(wrong, "t"), UsageError);
  EXPECT_NO_THROW(settings().check(Settings{}, "t"));
}

TEST(JsonFields, FieldsWrittenOnlyWhenSetAndTheDescribedOnesListed) {
  Settings s;
  EXPECT_EQ(settings().write(s).dump(),
            R"({"steps":10,"beta":0.9,"activation":"relu","shape":"round"})");
  s.plugin = "p";
  s.options = {{"w", 1.5}};
  const auto j = settings().write(s);
  EXPECT_EQ(j.dump(), R"({"steps":10,"beta":0.9,"activation":"relu","shape":"round",)"
                      R"("options":{"w":1.5},"plugin":"p"})");
  EXPECT_EQ(settings().read(nlohmann::json::parse(j.dump()), "t"), s);
  const auto described = settings().described();
  ASSERT_EQ(described.size(), 4u);
  EXPECT_EQ(described[0].key, "steps");
  EXPECT_EQ(described[0].description, "optimiser steps");
  EXPECT_EQ(described[0].range.min, 1.0);
  EXPECT_TRUE(described[1].range.below);
  EXPECT_EQ(described[2].choices, (std::vector<std::string>{"relu", "gelu"}));
  EXPECT_EQ(described[3].choices, (std::vector<std::string>{"round", "square"}));
  // A copied table checks its choices as the original does.
  const JsonFields<Settings> copy = settings();
  EXPECT_THROW((void)copy.read(nlohmann::json::parse(R"({"activation": "x"})"), "t"), UsageError);
}

struct Maybe {
  std::optional<int> episode;
  std::optional<std::string> title;
  bool operator==(const Maybe&) const = default;
};

TEST(JsonFields, AnOptionalValueIsNullWhenItHoldsNothing) {
  JsonFields<Maybe> t;
  t.field("episode", &Maybe::episode, {0.0, 10.0}).field("title", &Maybe::title);
  EXPECT_EQ(t.write(Maybe{}).dump(), R"({"episode":null,"title":null})");
  const Maybe set{3, "x"};
  EXPECT_EQ(t.write(set).dump(), R"({"episode":3,"title":"x"})");
  EXPECT_EQ(t.read(nlohmann::json::parse(t.write(set).dump()), "f"), set);
  EXPECT_EQ(t.read(nlohmann::json::parse(R"({"episode":null})"), "f", set),
            (Maybe{std::nullopt, "x"}));
  EXPECT_THROW((void)t.read(nlohmann::json::parse(R"({"episode":11})"), "f"), Error);
}

struct Note {
  int version = 1;
  std::optional<Shape> shape;
  std::optional<Inner> inner;
  std::string title;
  std::vector<std::string> tags;
  std::string place;
  bool operator==(const Note&) const = default;
};

// A table of a file with rules beyond kinds and ranges: a required version checked first, keys
// left out when empty, texts and lists of bounded size, a key that another one's value calls for.
const JsonFields<Note>& notes() {
  static const auto f = [] {
    JsonFields<Note> t;
    t.field("version", &Note::version, {1})
        .required("not a note")
        .checked([](const Note& n, const std::string& where) {
          if (n.version > 2) JsonFields<Note>::refuse(where + " is newer");
        })
        .named("shape", &Note::shape, kShapes)
        .omitted_when_empty()
        .object("inner", &Note::inner, inner_fields())
        .omitted_when_empty()
        .field("title", &Note::title)
        .text({1, 10, /*one_line=*/true})
        .omitted_when_empty()
        .field("tags", &Note::tags)
        .at_most(2)
        .text({1, 4})
        .omitted_when_empty()
        .field("place", &Note::place)
        .required("a square note has a place",
                  [](const Note& n) { return n.shape == Shape::Square; });
    return t;
  }();
  return f;
}

struct Made {
  std::string path, hash, writer, title;
  int version = 1;
  bool operator==(const Made&) const = default;
};

// A file's own checks: a required key, a pair of fields that need each other, a text written as
// null when empty, and a version refused naming the program that wrote the file.
const JsonFields<Made>& made() {
  static const auto f = [] {
    JsonFields<Made> t;
    t.field("version", &Made::version)
        .required()
        .checked([](const Made& m, const std::string& where) {
          if (m.version > 2)
            JsonFields<Made>::refuse(where + " is " + std::to_string(m.version) + ", written by " +
                                     m.writer);
        })
        .field("path", &Made::path)
        .field("hash", &Made::hash)
        .checked([](const Made& m, const std::string& where) {
          if (m.hash.empty() != m.path.empty())
            JsonFields<Made>::refuse(where + " goes with a path");
        })
        .field("title", &Made::title)
        .empty_as_null()
        .field("writer", &Made::writer)
        .read_first();
    return t;
  }();
  return f;
}

TEST(JsonFields, RequiredKeysEmptyValuesLeftOutAndRulesOfTexts) {
  const auto fails = [](const std::string& text) -> std::string {
    try {
      (void)notes().read(nlohmann::json::parse(text), "note");
    } catch (const Error& e) {
      return e.what();
    }
    return "(read)";
  };
  // Nothing empty is written, but what is not a list or a text (an object, a value) is.
  EXPECT_EQ(notes().write(Note{}).dump(), R"({"version":1,"place":""})");
  const Note full{2, Shape::Square, Inner{2.0}, "a title", {"x", "yz"}, "here"};
  const auto j = notes().write(full);
  EXPECT_EQ(j.dump(), R"({"version":2,"shape":"square","inner":{"weight":2.0},"title":"a title",)"
                      R"("tags":["x","yz"],"place":"here"})");
  EXPECT_EQ(notes().read(nlohmann::json::parse(j.dump()), "note"), full);
  EXPECT_EQ(notes().read(nlohmann::json::parse(R"({"version": 1, "inner": {}})"), "note").inner,
            Inner{});

  EXPECT_EQ(fails(R"({"title": "t"})"), "note: no version (not a note)");
  EXPECT_EQ(fails(R"({"version": 3, "title": 5})"), "note: version is newer");  // checked first
  EXPECT_EQ(fails(R"({"version": 1, "shape": null})"), "note: shape is null");
  EXPECT_EQ(fails(R"({"version": 1, "inner": null})"), "note: inner is null");
  EXPECT_EQ(fails(R"({"version": 1, "title": ""})"), "note: title is empty");
  EXPECT_EQ(fails(R"({"version": 1, "title": "eleven byte"})"),
            "note: title is 11 bytes long, at most 10");
  EXPECT_EQ(fails(R"({"version": 1, "title": "a\nb"})"), "note: title is more than one line");
  EXPECT_EQ(fails(R"({"version": 1, "title": "a\u0000b"})"), "note: title holds a NUL character");
  EXPECT_EQ(fails(R"({"version": 1, "title": 3})"), "note: title is not a text");
  EXPECT_EQ(fails(R"({"version": 1, "tags": ["a", "b", "c"]})"),
            "note: tags has 3 items, at most 2");
  EXPECT_EQ(fails(R"({"version": 1, "tags": ["a", "bcdef"]})"),
            "note: tags[1] is 5 bytes long, at most 4");
  EXPECT_EQ(fails(R"({"version": 1, "shape": "square"})"),
            "note: no place (a square note has a place)");
  EXPECT_EQ(fails(R"({"version": 1, "shape": "round"})"), "(read)");
  // A long value is cut in a message; a cut never splits a UTF-8 character.
  std::string long_name;
  for (int i = 0; i < 30; ++i) long_name += "\u00e9";
  const auto message = fails(R"({"version": 1, "shape": ")" + long_name + "\"}");
  EXPECT_THAT(message, HasSubstr("..."));
  EXPECT_LT(message.size(), 120u);
  EXPECT_NO_THROW((void)nlohmann::json(message).dump());
}

TEST(JsonFields, WholeNumbersInMessagesAreWrittenInFull) {
  const auto message = [](const char* text) -> std::string {
    try {
      (void)settings().read(nlohmann::json::parse(text), "t");
    } catch (const Error& e) {
      return e.what();
    }
    return "(read)";
  };
  EXPECT_EQ(message(R"({"steps": 2000000000})"),
            "t: steps must be at most 1000000000 (is 2000000000)");
  EXPECT_EQ(message(R"({"beta": -0.5})"), "t: beta must be at least 0 (is -0.5)");
}

TEST(JsonFields, RequiredKeysChecksNullTextsAndFieldsReadFirst) {
  const auto fails = [](const char* text) -> std::string {
    try {
      (void)made().read(nlohmann::json::parse(text), "m.json");
    } catch (const Error& e) {
      return e.what();
    }
    return "(read)";
  };
  EXPECT_EQ(fails(R"({})"), "m.json: no version");
  // A check runs when its key is absent too: a path without its hash is refused.
  EXPECT_EQ(fails(R"({"version": 1, "path": "a"})"), "m.json: hash goes with a path");
  EXPECT_EQ(fails(R"({"version": 1, "hash": "h"})"), "m.json: hash goes with a path");
  // The writer is read before the version, whose check names it, though written after it; and
  // the version is refused before a later field is read.
  EXPECT_EQ(fails(R"({"version": 3, "writer": "w", "path": 5})"),
            "m.json: version is 3, written by w");
  EXPECT_EQ(fails(R"({"version": 1, "title": 4})"), "m.json: title is not a text");

  Made m;
  EXPECT_EQ(made().write(m).dump(),
            R"({"version":1,"path":"","hash":"","title":null,"writer":""})");
  EXPECT_EQ(made().read(nlohmann::json::parse(made().write(m).dump()), "m"), m);
  m.title = "t";
  m.path = "p";
  m.hash = "h";
  EXPECT_EQ(made().write(m).dump(),
            R"({"version":1,"path":"p","hash":"h","title":"t","writer":""})");
  EXPECT_EQ(made().read(nlohmann::json::parse(made().write(m).dump()), "m"), m);
  // Null reads as the empty text; a title never given keeps the value read over.
  EXPECT_EQ(made().read(nlohmann::json::parse(R"({"version": 1, "title": null})"), "m", m).title,
            "");
  EXPECT_EQ(made()
                .read(nlohmann::json::parse(R"({"version": 1, "path": "p", "hash": "h"})"), "m", m)
                .title,
            "t");
}

struct Free {
  std::string overrides = "{}";
  bool operator==(const Free&) const = default;
};

TEST(JsonFields, AnObjectIsReadInTheFilesOrder) {
  JsonFields<Free> t;
  t.computed(
      "overrides", [](const Free& f) { return nlohmann::ordered_json::parse(f.overrides); },
      [](Free& f, const nlohmann::ordered_json& v, const std::string&) { f.overrides = v.dump(); });
  const auto read =
      t.read(nlohmann::ordered_json::parse(R"({"overrides": {"b": 1, "a": 2}})"), "f");
  EXPECT_EQ(read.overrides, R"({"b":1,"a":2})");
  EXPECT_EQ(t.write(read).dump(), R"({"overrides":{"b":1,"a":2}})");
}

TEST(EnumNames, NamesParseAndList) {
  EXPECT_STREQ(kShapes.name(Shape::Square), "square");
  EXPECT_EQ(kShapes.parse("round"), Shape::Round);
  EXPECT_FALSE(kShapes.parse("Round"));
  EXPECT_EQ(kShapes.joined("|"), "round|square");
  EXPECT_EQ(kShapes.names(), (std::vector<std::string>{"round", "square"}));
  EXPECT_THROW((void)kShapes.name(static_cast<Shape>(7)), Error);
}

}  // namespace
}  // namespace dstudio
