// A checkpoint's description for people. See checkpoint.h.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/common/text.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {

// A description's numbers are checked before they are converted: a double outside a float's or an
// integer's range is undefined behaviour in the conversion, not merely a wrong value.
std::vector<float> float_array(const nlohmann::json& value, const char* name) {
  if (!value.is_array()) throw CheckpointError(std::string(name) + " is not an array");
  std::vector<float> out;
  out.reserve(value.size());
  for (const auto& v : value) {
    if (!v.is_number())
      throw CheckpointError(std::string(name) + " holds a value that is not a number");
    const double d = v.get<double>();
    if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max())))
      throw CheckpointError(std::string(name) + " holds " + general_number(d) +
                            ", not a finite single-precision number");
    out.push_back(static_cast<float>(d));
  }
  return out;
}

std::int64_t whole_step(const nlohmann::json& value) {
  if (!value.is_number_integer()) throw CheckpointError("its step is not a whole number");
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw CheckpointError("its step is too large");
  return value.get<std::int64_t>();
}

}  // namespace

CheckpointInfo checkpoint_info_from_description(const std::string& where,
                                                const std::string& json_text) {
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("format") || !j["format"].is_string() ||
      j["format"] != "dstudio-checkpoint-1")
    throw CheckpointError(where + ": not a Decision Studio checkpoint (no description inside)");
  CheckpointInfo info;
  info.path = where;
  try {
    info.variant = variant_from_json(j.at("variant").dump());
    info.training = training_from_json(j.at("training").dump());
    info.dataset_path = j.at("dataset").at("path");
    info.dataset_fingerprint = j.at("dataset").at("fingerprint");
    info.env_id = j.at("dataset").at("env_id");
    info.state_mean = float_array(j.at("dataset").at("state_mean"), "its state mean");
    info.state_std = float_array(j.at("dataset").at("state_std"), "its state standard deviation");
    info.rtg_scale = j.at("rtg_scale").get<double>();
    info.step = whole_step(j.at("step"));
    info.metrics = j.at("metrics").dump();
    info.software = j.at("software");
  } catch (const MissingPluginError& e) {
    throw CheckpointError(where + ": " + e.what());
  } catch (const CheckpointError& e) {
    throw CheckpointError(where + ": its description is inconsistent: " + e.what());
  } catch (const std::exception& e) {
    throw CheckpointError(where + ": its description is incomplete (" + e.what() + ")");
  }
  std::string problem;
  const auto dims = static_cast<std::size_t>(std::max(info.variant.state_dim, 0));
  if (info.state_mean.size() != dims || info.state_std.size() != dims)
    problem = "it holds " + std::to_string(info.state_mean.size()) + " state means and " +
              std::to_string(info.state_std.size()) + " standard deviations for " +
              std::to_string(dims) + " state dimensions";
  for (std::size_t i = 0; problem.empty() && i < info.state_mean.size(); ++i)
    if (!std::isfinite(info.state_mean[i]))
      problem = "state mean " + std::to_string(i) + " is not a finite number";
  for (std::size_t i = 0; problem.empty() && i < info.state_std.size(); ++i)
    if (!(info.state_std[i] > 0.0F) || !std::isfinite(info.state_std[i]))
      problem = "state standard deviation " + std::to_string(i) + " is not positive";
  if (problem.empty() && !(info.rtg_scale > 0.0 && std::isfinite(info.rtg_scale)))
    problem = "its rtg scale is not positive";
  if (problem.empty() && info.step < 0) problem = "its step is negative";
  if (problem.empty() && !nlohmann::json::parse(info.metrics).is_object())
    problem = "its metrics are not a JSON object";
  if (!problem.empty())
    throw CheckpointError(where + ": its description is inconsistent: " + problem);
  return info;
}

std::string checkpoint_label(const std::filesystem::path& path) {
  const std::string stem = path.stem().string();
  if (stem.rfind("checkpoint", 0) != 0) return stem;
  const auto folder =
      std::filesystem::absolute(path).lexically_normal().parent_path().filename().string();
  if (folder.empty()) return stem;
  const std::string rest = stem.substr(std::string("checkpoint").size());
  if (rest.empty()) return folder;
  if (rest.size() > 1 && rest[0] == '-' &&
      rest.find_first_not_of("0123456789", 1) == std::string::npos)
    return folder + " step " + rest.substr(1);
  return stem;  // checkpointed-something: a name of its own
}

std::vector<CheckpointSummaryRow> summarize(const CheckpointInfo& info) {
  const auto& c = info.variant;
  const auto& t = info.training;
  std::vector<CheckpointSummaryRow> rows;
  auto add = [&rows](const char* section, const char* field, std::string value) {
    rows.push_back({section, field, std::move(value)});
  };
  add("Model", "Variant", c.variant);
  add("Model", "Tokens",
      std::string(to_string(c.tokenizer)) +
          (c.tokenizer == Tokenizer::Merged ? std::string(", merger ") + to_string(c.merger) : ""));
  add("Model", "Mixer", c.mixer);
  if (!c.plugin.empty()) add("Model", "Plugin", c.plugin + " " + c.plugin_version);
  std::string shape = std::to_string(c.layers);
  shape += " layers x ";
  shape += std::to_string(c.hidden);
  shape += " hidden, ";
  shape += std::to_string(c.heads);
  shape += c.heads == 1 ? " head" : " heads";
  add("Model", "Blocks", shape);
  add("Model", "Context K",
      std::to_string(c.context_length) + " steps (" + std::to_string(c.tokens()) + " tokens)");
  add("Model", "State / action", std::to_string(c.state_dim) + " / " + std::to_string(c.act_dim));
  add("Data", "Dataset", info.dataset_path.empty() ? "(none)" : info.dataset_path);
  // One of the studio's own datasets: which, and the command that makes it again.
  if (const auto made = info.dataset_path.empty()
                            ? std::nullopt
                            : behaviour::identify_default_dataset(info.dataset_path))
    add("Data", "Made by", made->label + ": " + made->command);
  add("Data", "Fingerprint",
      info.dataset_fingerprint.empty() ? "(none)" : info.dataset_fingerprint);
  add("Data", "Environment", info.env_id.empty() ? "(none)" : info.env_id);
  add("Data", "Return-to-go scale", general_number(info.rtg_scale));
  // Only a model trained with a shift says so: its returns-to-go and targets are in other units.
  if (t.reward_shift != 0.0) add("Data", "Reward shift", reward_shift_note(t.reward_shift));
  add("Training", "Step", std::to_string(info.step) + " of " + std::to_string(t.steps));
  std::string optimiser = "AdamW, lr ";
  optimiser += general_number(t.learning_rate);
  optimiser += ", batch ";
  optimiser += std::to_string(t.batch_size);
  optimiser += ", warmup ";
  optimiser += std::to_string(t.warmup_steps);
  add("Training", "Optimiser", optimiser);
  add("Training", "Seed", std::to_string(t.seed));
  const auto metrics =
      nlohmann::json::parse(info.metrics.empty() ? "{}" : info.metrics, nullptr, false);
  if (metrics.is_object())
    for (const auto& [key, value] : metrics.items())
      if (value.is_number() && key != "step")
        add("Training", key.c_str(), general_number(value.get<double>()));
  add("Software", "Written by", info.software.empty() ? "(not recorded)" : info.software);
  return rows;
}

}  // namespace dstudio::models
