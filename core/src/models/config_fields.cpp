// The fields of the variant and training configurations. See config_fields.h.

#include "dstudio/models/config_fields.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {
constexpr double kAny = -std::numeric_limits<double>::infinity();

// A JSON value as a table shows it: numbers in their shortest text that reads back the same.
std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_unsigned()) return std::to_string(v.get<unsigned long long>());
  if (v.is_number_float()) {
    const double x = v.get<double>();
    char text[40];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(text, sizeof text, "%.*g", digits, x);
      if (std::strtod(text, nullptr) == x) break;
    }
    return text;
  }
  return v.dump();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> run_config_values(const VariantConfig& variant, const TrainingConfig& training) {
  const auto v = nlohmann::json::parse(to_json(variant));
  const auto t = nlohmann::json::parse(to_json(training));
  std::vector<std::pair<std::string, std::string>> out;
  if (v.contains("variant")) out.emplace_back("variant", value_text(v["variant"]));
  for (const auto& f : variant_fields())
    if (v.contains(f.key) && uses_field(variant, f.key)) out.emplace_back(f.key, value_text(v[f.key]));
  for (const auto& f : training_fields())
    if (t.contains(f.key)) out.emplace_back(f.key, value_text(t[f.key]));
  return out;
}

const std::vector<ConfigField>& variant_fields() {
  // Rebuilt when plugins add mixers (they load at start-up, before anything shows a form).
  static std::mutex mutex;
  static std::vector<ConfigField> fields;
  static std::vector<std::string> mixers;
  std::lock_guard lock(mutex);
  if (!fields.empty() && mixers == mixer_names()) return fields;
  mixers = mixer_names();
  fields = {
      {"context_length", "K: steps in a window", {}, 1},
      {"max_ep_len", "size of the timestep embedding", {}, 1},
      {"hidden", "H: width of every token", {}, 1},
      {"layers", "N: MetaFormer blocks", {}, 1},
      {"heads", "attention heads (hidden must be a multiple)", {}, 1},
      {"mlp_ratio", "MLP inner width = mlp_ratio x H", {}, 1},
      {"activation", "the MLP's nonlinearity: relu (DT) or gelu (DC, DHi, UDC)", {"relu", "gelu"}, kAny},
      {"dropout", "embedding, residual and MLP dropout, in [0, 1)", {}, 0},
      {"attention_dropout", "dropout of the attention weights, in [0, 1)", {}, 0},
      {"action_tanh", "squash predicted actions with tanh", {}, kAny},
      {"tokenizer", "how (R, s, a) become tokens", tokenizer_names(), kAny},
      {"merger", "DHi's token merger (merged tokenizer only)", merger_names(), kAny},
      {"return_embedding", "UDT: width of sigmoid(Linear(1, w)(R))", {}, 1},
      {"mixer", "how tokens exchange information", mixers, kAny},
      {"hybrid", "DC hybrid: the last block uses causal attention", {}, kAny},
      {"conv_window", "DC: filter length L in tokens", {}, 1},
      {"single_filter", "DC 1-filter: one filter for every token type", {}, kAny},
      {"mixer_projection", "DC's optional Linear(H, H) after the mixer", {}, kAny},
      {"gaussian_w", "GDT: w >= 0", {}, 0},
      {"gaussian_b", "GDT: b <= 0 penalises the token itself", {}, kAny},
      {"pool_size", "DHi: P, tokens pooled", {}, 1},
      {"gated_kernel", "UDC: depthwise kernel size", {}, 1},
  };
  return fields;
}

const std::vector<ConfigField>& training_fields() {
  static const std::vector<ConfigField> fields = {
      {"steps", "optimiser steps", {}, 1},
      {"batch_size", "windows in a batch", {}, 1},
      {"learning_rate", "peak learning rate of AdamW", {}, 0, /*above=*/true},
      {"weight_decay", "AdamW's decoupled weight decay", {}, kAny},
      {"beta1", "AdamW's first-moment decay", {}, kAny},
      {"beta2", "AdamW's second-moment decay", {}, kAny},
      {"warmup_steps", "lr x min(1, (step + 1) / warmup)", {}, kAny},
      {"cosine_decay", "after warmup, decay to 0 along a half cosine", {}, kAny},
      {"grad_clip", "gradient-norm clip", {}, kAny},
      {"rtg_scale", "returns-to-go are divided by this", {}, kAny},
      {"pct_traj", "fraction of the best trajectories sampled", {}, kAny},
      {"seed", "seeds the initial weights, the batches and dropout", {}, kAny},
      {"threads", "workers, each computing part of every batch on its own core", {}, 1},
      {"log_every", "steps per metrics row and per live point", {}, 1},
      {"checkpoint_every", "steps between checkpoints; 0: only at the end", {}, kAny},
      {"eval_every", "steps between evaluations (rollouts and attention entropy); 0: never", {}, kAny},
  };
  return fields;
}

const ConfigField* config_field(const std::string& key) {
  for (const auto* list : {&variant_fields(), &training_fields()})
    for (const auto& f : *list)
      if (f.key == key) return &f;
  return nullptr;
}

std::vector<std::string> hier_mergers() {
  std::vector<std::string> out{"none"};
  for (auto& m : merger_names()) out.push_back(std::move(m));
  return out;
}

// The mixers of HiFormer's grid (its Table 1), then those of plugins.
std::vector<std::string> hier_mixers() {
  std::vector<std::string> out{"none", "attention", "linear-attention", "conv", "pooling"};
  for (auto& m : mixer_registry().names()) out.push_back(std::move(m));
  return out;
}

}  // namespace dstudio::models
