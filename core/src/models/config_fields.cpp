// The fields of the variant and training configurations. See config_fields.h.

#include "dstudio/models/config_fields.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>

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

std::vector<std::pair<std::string, std::string>> run_config_values(const VariantConfig& variant,
                                                                   const TrainingConfig& training) {
  const auto v = nlohmann::json::parse(to_json(variant));
  const auto t = nlohmann::json::parse(to_json(training));
  std::vector<std::pair<std::string, std::string>> out;
  if (v.contains("variant")) out.emplace_back("variant", value_text(v["variant"]));
  for (const auto& f : variant_fields())
    if (v.contains(f.key) && uses_field(variant, f.key))
      out.emplace_back(f.key, value_text(v[f.key]));
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
      {"context_length", "K: steps in a window", {}, 1, false, 1000},
      {"max_ep_len", "size of the timestep embedding", {}, 1, false, 1000000},
      {"hidden", "H: width of every token", {}, 1, false, 8192},
      {"layers", "N: MetaFormer blocks", {}, 1, false, 128},
      {"heads", "attention heads (hidden must be a multiple)", {}, 1, false, 256},
      {"mlp_ratio", "MLP inner width = mlp_ratio x H", {}, 1, false, 64},
      {"activation",
       "the MLP's nonlinearity: relu (DT) or gelu (DC, DHi, UDC)",
       {"relu", "gelu"},
       kAny},
      {"dropout",
       "embedding, residual and MLP dropout, in [0, 1)",
       {},
       0,
       false,
       1,
       /*below=*/true},
      {"attention_dropout",
       "dropout of the attention weights, in [0, 1)",
       {},
       0,
       false,
       1,
       /*below=*/true},
      {"action_tanh", "squash predicted actions with tanh", {}, kAny},
      {"tokenizer", "how (R, s, a) become tokens", tokenizer_names(), kAny},
      {"merger", "DHi's token merger (merged tokenizer only)", merger_names(), kAny},
      {"return_embedding", "UDT: width of sigmoid(Linear(1, w)(R))", {}, 1, false, 8192},
      {"mixer", "how tokens exchange information", mixers, kAny},
      {"hybrid", "DC hybrid: the last block uses causal attention", {}, kAny},
      {"conv_window", "DC: filter length L in tokens", {}, 1, false, 3000},
      {"single_filter", "DC 1-filter: one filter for every token type", {}, kAny},
      {"mixer_projection", "DC's optional Linear(H, H) after the mixer", {}, kAny},
      {"gaussian_w", "GDT: w >= 0", {}, 0, false, 1e6},
      {"gaussian_b", "GDT: b <= 0 penalises the token itself", {}, -1e6, false, 1e6},
      {"pool_size", "DHi: P, tokens pooled", {}, 1, false, 3000},
      {"gated_kernel", "UDC: depthwise kernel size", {}, 1, false, 3000},
  };
  return fields;
}

const std::vector<ConfigField>& training_fields() {
  constexpr double kSteps = static_cast<double>(kMaxTrainingSteps);
  static const std::vector<ConfigField> fields = {
      {"steps", "optimiser steps", {}, 1, false, kSteps},
      {"batch_size", "windows in a batch", {}, 1, false, 65536},
      {"learning_rate", "peak learning rate of AdamW", {}, 0, /*above=*/true, 1},
      {"weight_decay", "AdamW's decoupled weight decay", {}, 0, false, 10},
      {"beta1", "AdamW's first-moment decay", {}, 0, false, 1, /*below=*/true},
      {"beta2", "AdamW's second-moment decay", {}, 0, false, 1, /*below=*/true},
      {"warmup_steps", "lr x min(1, (step + 1) / warmup)", {}, 0, false, kSteps},
      {"cosine_decay", "after warmup, decay to 0 along a half cosine", {}, kAny},
      {"grad_clip", "gradient-norm clip", {}, 0, /*above=*/true, 1e6},
      {"rtg_scale", "returns-to-go are divided by this", {}, 0, /*above=*/true, 1e9},
      {"reward_shift",
       "added to every reward before returns-to-go are counted (IQL and CORL: -1 on AntMaze)",
       {},
       -1e6,
       false,
       1e6},
      {"pct_traj", "fraction of the best trajectories sampled", {}, 0, /*above=*/true, 1},
      {"seed",
       "seeds the initial weights, the batches and dropout",
       {},
       0,
       false,
       9223372036854775807.0},
      {"threads", "workers, each computing part of every batch on its own core", {}, 1, false, 64},
      {"log_every", "steps per metrics row and per live point", {}, 1, false, kSteps},
      {"checkpoint_every", "steps between checkpoints; 0: only at the end", {}, 0, false, kSteps},
      {"eval_every",
       "steps between evaluations (rollouts and attention entropy); 0: never",
       {},
       0,
       false,
       kSteps},
  };
  return fields;
}

std::string range_text(const ConfigField& f) {
  const auto text = [](double v) {
    if (v >= 9.2e18) return std::string("2^63 - 1");
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    return value_text(nlohmann::json(v));
  };
  // Appended piece by piece: GCC 12's -Wrestrict misreads `"(" + std::string` at -O3.
  std::string out;
  if (std::isfinite(f.minimum)) {
    out += f.above ? '(' : '[';
    out += text(f.minimum);
  } else {
    out += "(-inf";
  }
  out += ", ";
  out += std::isfinite(f.maximum) ? text(f.maximum) + (f.below ? ")" : "]") : "inf)";
  return out;
}

bool in_range(const ConfigField& f, double v) {
  if (std::isnan(v)) return false;
  if (f.above ? !(v > f.minimum) : v < f.minimum) return false;
  if (f.below ? !(v < f.maximum) : v > f.maximum) return false;
  return true;
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

std::vector<std::string> hier_mixers() {
  std::vector<std::string> out;
  for (const auto& m : mixer_registry().all())
    if (m->in_hier_grid) out.push_back(m->name);
  return out;
}

}  // namespace dstudio::models
