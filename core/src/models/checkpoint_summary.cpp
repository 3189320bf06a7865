// A checkpoint's description for people. See checkpoint.h.

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "dstudio/analysis/metrics_row.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/common/text.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
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
  for (const auto& [key, value] : analysis::metrics::read_metrics_columns(info.metrics))
    add("Training", key.c_str(), general_number(value));
  add("Software", "Written by", info.software.empty() ? "(not recorded)" : info.software);
  return rows;
}

}  // namespace dstudio::models
