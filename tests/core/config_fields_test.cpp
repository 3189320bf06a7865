// The configuration fields said once in core: they cover every key of the JSON, their choices
// and minimums are the ones the configuration itself accepts.

#include "dstudio/models/config_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "dstudio/common/error.h"
#include "dstudio/models/training_config.h"
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
    below[f.key] = at[f.key].is_number_integer() ? json(static_cast<int>(f.minimum) - 1)
                                                 : json(f.minimum - 0.01);
    EXPECT_THROW(variant_from_json(below.dump()).validate(), UsageError)
        << f.key << " below its minimum";
  }
}

// Rates and scales must be above zero; the other floors are allowed values.
TEST(ConfigFields, RatesAndScalesMustBeAboveTheirMinimum) {
  const std::set<std::string> above = {"learning_rate", "grad_clip", "rtg_scale", "pct_traj"};
  EXPECT_EQ(config_field("learning_rate")->minimum, 0.0);
  for (const auto* list : {&variant_fields(), &training_fields()})
    for (const auto& f : *list) EXPECT_EQ(f.above, above.count(f.key) > 0) << f.key;
}

// Every number has an upper bound too, and the variant's are enforced by validate().
TEST(ConfigFields, TheMaximumIsWhereValidationStops) {
  for (const auto& f : variant_fields()) {
    if (!std::isfinite(f.minimum) || !f.choices.empty()) continue;
    ASSERT_TRUE(std::isfinite(f.maximum)) << f.key;
    auto at = json::parse(to_json(make_variant("dt")));
    const bool integer = at[f.key].is_number_integer();
    if (f.key == "heads") at["hidden"] = static_cast<int>(f.maximum);  // heads must divide hidden
    const double top = f.below ? f.maximum - 0.01 : f.maximum;
    at[f.key] = integer ? json(static_cast<long long>(top)) : json(top);
    EXPECT_NO_THROW(variant_from_json(at.dump()).validate()) << f.key << " at its maximum";
    auto over = at;
    over[f.key] = integer ? json(static_cast<long long>(f.maximum) + 1)
                          : json(f.below ? f.maximum : f.maximum + 0.01);
    EXPECT_THROW(variant_from_json(over.dump()).validate(), UsageError)
        << f.key << " above its maximum";
  }
  auto j = json::parse(to_json(make_variant("dt")));
  j["hidden"] = 2.5;
  EXPECT_THROW(variant_from_json(j.dump()), UsageError);
  j["hidden"] = 1e12;
  EXPECT_THROW(variant_from_json(j.dump()), UsageError);
  // Not an object, or names that are not strings: refused as configurations, nothing else escapes.
  for (const char* text : {"[]", "3", "\"dt\"", "{\"variant\": 2}",
                           "{\"plugin\": \"p\", \"plugin_version\": 1}", "{\"plugin\": 7}"})
    EXPECT_THROW(variant_from_json(text), UsageError) << text;
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
  // A variant's own mixer is not one of the grid's: hier refuses it by name.
  EXPECT_THAT([] { (void)make_variant("hier", "conv", "gated-conv"); },
              testing::ThrowsMessage<UsageError>(
                  testing::HasSubstr("hier: the mixer 'gated-conv' is not one of its grid's")));
}

// A runs table's values: the variant, the fields it uses, every training field, as exact text.
TEST(ConfigFields, ARunsConfigurationReadsAsTextOfTheFieldsItUses) {
  TrainingConfig training;
  training.learning_rate = 1e-4;
  training.batch_size = 64;
  training.cosine_decay = true;
  const auto values = [](const VariantConfig& v, const TrainingConfig& t) {
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : run_config_values(v, t))
      EXPECT_TRUE(out.emplace(key, value).second) << key << " twice";
    return out;
  };
  auto dt = make_variant("dt");
  dt.hidden = 96;
  const auto a = values(dt, training);
  EXPECT_EQ(run_config_values(dt, training).front(),
            (std::pair<std::string, std::string>{"variant", "dt"}));
  EXPECT_EQ(a.at("hidden"), "96");
  EXPECT_EQ(a.at("learning_rate"), "0.0001");
  EXPECT_EQ(a.at("batch_size"), "64");
  EXPECT_EQ(a.at("cosine_decay"), "true");
  EXPECT_EQ(a.at("activation"), "relu");
  EXPECT_EQ(a.count("gaussian_w"), 0u) << "DT has no Gaussian bias";
  EXPECT_EQ(
      a.size(), 1 + training_fields().size() + [&] {
        std::size_t used = 0;
        for (const auto& f : variant_fields()) used += uses_field(dt, f.key);
        return used;
      }());
  // Every value reads back as the configuration holds it.
  training.weight_decay =
      0.1 + 0.2;  // not 0.3 in binary: its text keeps the digits that tell it apart
  const auto b = values(make_variant("gdt"), training);
  EXPECT_EQ(std::stod(b.at("weight_decay")), 0.1 + 0.2);
  EXPECT_EQ(b.at("variant"), "gdt");
  EXPECT_TRUE(b.count("gaussian_w"));
  EXPECT_EQ(std::stod(b.at("gaussian_w")), make_variant("gdt").gaussian_w);
}

}  // namespace
}  // namespace dstudio::models
