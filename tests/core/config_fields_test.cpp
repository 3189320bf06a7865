// The configuration fields said once in core: they cover every key of the JSON, their choices
// and minimums are the ones the configuration itself accepts.

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "dstudio/common/error.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {
namespace {

using nlohmann::json;

std::set<std::string> keys_of(const std::vector<ConfigField>& fields) {
  std::set<std::string> out;
  for (const auto& f : fields) out.insert(f.key);
  return out;
}

TEST(ConfigFields, DescribeEveryKeyAUserSetsAndNoOther) {
  std::set<std::string> json_keys;
  const auto dt = json::parse(to_json(make_variant("dt")));
  for (const auto& [key, value] : dt.items())
    if (key != "variant" && key != "state_dim" && key != "act_dim") json_keys.insert(key);
  EXPECT_EQ(keys_of(variant_fields()), json_keys);
  for (const auto& f : variant_fields()) EXPECT_FALSE(f.description.empty()) << f.key;
  for (const auto& f : training_fields()) EXPECT_FALSE(f.description.empty()) << f.key;
  EXPECT_EQ(config_field("hidden")->description, "H: width of every token");
  EXPECT_EQ(config_field("warmup_steps"), &training_fields()[6]);
  EXPECT_EQ(config_field("no such key"), nullptr);
}

TEST(ConfigFields, EveryChoiceIsAcceptedAndAnythingElseRefused) {
  for (const auto& f : variant_fields()) {
    for (const auto& choice : f.choices) {
      auto j = json::parse(to_json(make_variant("dt")));
      j[f.key] = choice;
      EXPECT_NO_THROW(variant_from_json(j.dump())) << f.key << " = " << choice;
    }
    if (f.choices.empty()) continue;
    auto j = json::parse(to_json(make_variant("dt")));
    j[f.key] = "no-such-choice";
    EXPECT_THROW(variant_from_json(j.dump()).validate(), UsageError) << f.key;
  }
  EXPECT_EQ(config_field("mixer")->choices.size(), 8u);  // every mixer of the papers
}

TEST(ConfigFields, TheMinimumIsWhereValidationStarts) {
  for (const auto& f : variant_fields()) {
    if (!std::isfinite(f.minimum) || !f.choices.empty()) continue;
    auto at = json::parse(to_json(make_variant("dt")));
    if (f.key == "heads") at["hidden"] = 128;  // heads must divide hidden: 1 does
    at[f.key] = at[f.key].is_number_integer() ? json(static_cast<int>(f.minimum)) : json(f.minimum);
    EXPECT_NO_THROW(variant_from_json(at.dump()).validate()) << f.key << " at its minimum";
    auto below = at;
    below[f.key] = at[f.key].is_number_integer() ? json(static_cast<int>(f.minimum) - 1) : json(f.minimum - 0.01);
    EXPECT_THROW(variant_from_json(below.dump()).validate(), UsageError) << f.key << " below its minimum";
  }
}

TEST(ConfigFields, OnlyTheLearningRateMustBeAboveItsMinimum) {
  EXPECT_TRUE(config_field("learning_rate")->above);
  EXPECT_EQ(config_field("learning_rate")->minimum, 0.0);
  for (const auto* list : {&variant_fields(), &training_fields()})
    for (const auto& f : *list) {
      if (f.key != "learning_rate") {
        EXPECT_FALSE(f.above) << f.key;
      }
    }
}

TEST(ConfigFields, EveryHierMergerAndMixerMakesAVariant) {
  EXPECT_EQ(hier_mergers().front(), "none");
  EXPECT_EQ(hier_mergers().size(), merger_names().size() + 1);
  for (const auto& merger : hier_mergers())
    for (const auto& mixer : hier_mixers()) {
      const auto c = make_variant("hier", merger, mixer);
      EXPECT_NO_THROW(c.validate()) << merger << " + " << mixer;
      EXPECT_EQ(c.tokenizer, merger == "none" ? Tokenizer::Triplet : Tokenizer::Merged);
    }
}

}  // namespace
}  // namespace dstudio::models
