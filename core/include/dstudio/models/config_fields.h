#pragma once
/// \file
/// What each field of a variant's and a training run's configuration is, for every place that
/// shows or edits them (the studio's training form, help texts): its meaning in the papers' words,
/// the names a text takes, and the range of a number. These lists are read off the field tables
/// that also write and read the configurations' JSON, so each field is described once. Also the
/// token mergers and mixers of the `hier` variant. No LibTorch.

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace dstudio::models {

struct ConfigField {
  std::string key;                   ///< as in the configuration's JSON
  std::string description;           ///< what it means, in the papers' words
  std::vector<std::string> choices;  ///< the names a text field takes; empty for free fields
  double minimum = -std::numeric_limits<double>::infinity();  ///< smallest valid value of a number
  bool above =
      false;  ///< the value must be above `minimum`, not at it (a learning rate of 0 is refused)
  double maximum = std::numeric_limits<double>::infinity();  ///< largest valid value of a number
  bool below = false;  ///< the value must be below `maximum`, not at it (Adam's betas stay under 1)
};

/// The range of a number field as text: "[1, 64]", "(0, 1]", "[0, inf)".
std::string range_text(const ConfigField& field);
/// Whether `value` is in the field's range.
bool in_range(const ConfigField& field, double value);

/// The fields of VariantConfig that a user sets (not `variant` and the dataset's shapes), in the
/// order of its JSON.
const std::vector<ConfigField>& variant_fields();
/// The fields of TrainingConfig, in the order of its JSON.
const std::vector<ConfigField>& training_fields();
/// The field named `key` of either list, or nullptr.
const ConfigField* config_field(const std::string& key);

struct VariantConfig;
struct TrainingConfig;

/// A run's configuration as text, one (key, value) a field: "variant", then the variant's fields
/// that it uses (uses_field), then the training fields, in their JSON's order. Numbers as their
/// shortest exact text ("0.0001", "64"), flags as true/false. What a runs table shows and groups
/// runs by.
std::vector<std::pair<std::string, std::string>> run_config_values(const VariantConfig& variant,
                                                                   const TrainingConfig& training);

/// The token mergers `make_variant("hier", merger, …)` takes; "none" (DT's triplets) first.
std::vector<std::string> hier_mergers();
/// The token mixers `make_variant("hier", …, mixer)` takes.
std::vector<std::string> hier_mixers();

}  // namespace dstudio::models
